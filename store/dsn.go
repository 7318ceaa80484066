package store

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// redacted replaces every credential in what warden shows of a DSN.
const redacted = "xxxxx"

// libpqKeywords are the connection parameters a PostgreSQL key=value DSN starts with;
// a --db value whose first key is one of them is a DSN, not a SQLite file name.
var libpqKeywords = []string{"host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service",
	"sslmode", "sslcert", "sslkey", "sslpassword", "sslrootcert", "connect_timeout", "application_name",
	"options", "target_session_attrs", "channel_binding", "gssencmode", "require_auth", "client_encoding"}

// isPostgres reports whether dsn names a PostgreSQL server: a postgres:// or
// postgresql:// URL, or a key=value DSN.
func isPostgres(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return true
	}
	// Any libpq keyword makes it a DSN, wherever it stands: taken for a file name, a DSN
	// would create a file named with its password.
	kvs, ok := parseKV(dsn)
	return ok && slices.ContainsFunc(kvs, func(kv keyValue) bool { return slices.Contains(libpqKeywords, kv.key) || secretKey(kv.key) })
}

// secretKey reports whether a DSN parameter holds a credential (password, sslpassword).
func secretKey(k string) bool { return strings.Contains(strings.ToLower(k), "password") }

// RedactDSN returns a history location fit to show in errors and logs: a PostgreSQL
// DSN without its credentials (the URL's password, password and sslpassword parameters,
// key=value passwords), or a SQLite path as it is. A DSN too broken to parse is not
// shown at all: its parts cannot be told apart.
func RedactDSN(dsn string) string {
	switch {
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		u, err := url.Parse(dsn)
		if err != nil {
			return "(unparsable PostgreSQL URL)"
		}
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
		if u.RawQuery != "" {
			// Parameters are split on '&' and also on ';', which some parsers accept.
			var b strings.Builder
			for q := u.RawQuery; q != ""; {
				i := strings.IndexAny(q, "&;")
				p, sep := q, ""
				if i >= 0 {
					p, sep, q = q[:i], q[i:i+1], q[i+1:]
				} else {
					q = ""
				}
				k, _, _ := strings.Cut(p, "=")
				if dk, err := url.QueryUnescape(k); err != nil || secretKey(dk) {
					p = k + "=" + redacted
				}
				b.WriteString(p + sep)
			}
			u.RawQuery = b.String()
		}
		return u.String()
	case isPostgres(dsn):
		kvs, _ := parseKV(dsn)
		out := make([]string, len(kvs))
		for i, kv := range kvs {
			v := kv.value
			if secretKey(kv.key) {
				v = redacted
			} else if v == "" || strings.ContainsAny(v, ` '\`) {
				v = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
			}
			out[i] = kv.key + "=" + v
		}
		return strings.Join(out, " ")
	}
	return dsn
}

type keyValue struct{ key, value string }

// parseKV parses a libpq key=value connection string: keyword = value pairs separated
// by spaces, values optionally single-quoted, with backslash escapes.
func parseKV(s string) ([]keyValue, bool) {
	var out []keyValue
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	for {
		skip()
		if i == len(s) {
			return out, true
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		key := s[start:i]
		skip()
		if key == "" || i == len(s) || s[i] != '=' {
			return nil, false
		}
		i++
		skip()
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' && i+1 < len(s) {
					v.WriteByte(s[i+1])
					i += 2
					continue
				}
				i++
				if c == '\'' {
					closed = true
					break
				}
				v.WriteByte(c)
			}
			if !closed {
				return nil, false
			}
		} else {
			for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteByte(s[i])
				i++
			}
		}
		out = append(out, keyValue{key, v.String()})
	}
}

var (
	urlPasswordRe = regexp.MustCompile(`://[^:/@?#]*:([^@]*)@`)
	kvPasswordRe  = regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'?|[^&;\s]*)`)
)

// dsnSecrets returns the credentials a DSN holds, both as written and decoded, so that
// they can be scrubbed from error messages the database driver builds from the DSN.
func dsnSecrets(dsn string) []string {
	var out []string
	add := func(s string) {
		s = strings.Trim(s, "'")
		if s != "" && s != redacted {
			out = append(out, s)
			// As written in a URL path (userinfo) or query ('+' for a space).
			if d, err := url.PathUnescape(s); err == nil && d != s {
				out = append(out, d)
			}
			if d, err := url.QueryUnescape(s); err == nil && d != s {
				out = append(out, d)
			}
		}
	}
	// The patterns catch what a parser could miss in a malformed DSN; the parsers
	// catch what the patterns cannot decode.
	for _, m := range urlPasswordRe.FindAllStringSubmatch(dsn, -1) {
		add(m[1])
	}
	for _, m := range kvPasswordRe.FindAllStringSubmatch(dsn, -1) {
		add(m[1])
	}
	if u, err := url.Parse(dsn); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		for k, vs := range u.Query() {
			if secretKey(k) {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	if kvs, ok := parseKV(dsn); ok {
		for _, kv := range kvs {
			if secretKey(kv.key) {
				add(kv.value)
			}
		}
	}
	// Longest first, so that a secret containing a shorter one is replaced whole.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// scrubbedError is an error whose message had the DSN's credentials removed. It does not
// unwrap to the original (whose message still holds them), only to a context error,
// so that cancellation is still recognised.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.cause }

// scrub removes secrets from err's message.
func scrub(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	e := &scrubbedError{msg: msg}
	for _, c := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, c) {
			e.cause = c
		}
	}
	return e
}

// IsPostgres reports whether dsn names a PostgreSQL server (a postgres:// URL or a
// key=value DSN) rather than a SQLite file, as Open decides it.
func IsPostgres(dsn string) bool { return isPostgres(dsn) }

// DSNCredentials says where a PostgreSQL DSN's password is to come from, for a check
// that must not read it: inline is true when the DSN holds a credential itself (a
// URL's password, a password or sslpassword parameter); passfile is its passfile
// parameter, if any. It never returns the credential.
func DSNCredentials(dsn string) (inline bool, passfile string) {
	if !isPostgres(dsn) {
		return false, ""
	}
	inline = len(dsnSecrets(dsn)) > 0
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		return inline, u.Query().Get("passfile")
	}
	if kvs, ok := parseKV(dsn); ok {
		for _, kv := range kvs {
			if kv.key == "passfile" {
				passfile = kv.value
			}
		}
	}
	return inline, passfile
}
