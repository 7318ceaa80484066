package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/internal/secret"
	"github.com/warden-sec/warden/internal/yamlerr"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediators/certs"
	"github.com/warden-sec/warden/slackgate"
	"github.com/warden-sec/warden/store"
)

// Where a secret comes from, as SecretSource.From says it.
const (
	FromEnv  = "env"  // an environment variable
	FromFile = "file" // a file
	FromNone = "none" // nowhere: missing, not needed, or not used
)

// SecretSource says where one secret warden needs would come from, never what it is:
// the environment variable or the file, the file's mode, and whether the value there
// has the right form.
type SecretSource struct {
	// Name is what the secret is ("Slack bot token").
	Name string `json:"name"`
	// From is FromEnv, FromFile or FromNone.
	From string `json:"from"`
	// Env is the variable read first; File the file read when it is not set, named in
	// the config by Field (on Line), or by warden's default.
	Env   string `json:"env,omitempty"`
	File  string `json:"file,omitempty"`
	Field string `json:"field,omitempty"`
	Line  int    `json:"line,omitempty"`
	// Mode is the file's permission bits ("0600"), when it was found.
	Mode string `json:"mode,omitempty"`
	// OK is false when warden would refuse what it found there, or needs the secret and
	// found none; Note says why, or what follows from where it is.
	OK   bool   `json:"ok"`
	Note string `json:"note,omitempty"`
}

// inlineDBSecret says what is wrong with a db: that holds a credential itself, or "".
// The message never quotes the DSN: it holds the password.
func inlineDBSecret(dsn string) string {
	if inline, _ := store.DSNCredentials(dsn); !inline {
		return ""
	}
	return "the PostgreSQL DSN holds a password: secrets are never written in the config " +
		"(give it in $PGPASSWORD or a passfile, ~/.pgpass or passfile=, and remove it from db:; shown: " + store.RedactDSN(dsn) + ")"
}

// secretChecker probes each secret and reports the problems it finds.
type secretChecker struct {
	r        *Report
	keyLines map[string]int
	auditKey string
}

func (sc *secretChecker) problem(line int, field, level, msg string) {
	if line == 0 {
		line = lineOf(sc.keyLines, field)
	}
	sc.r.Problems = append(sc.r.Problems, Problem{File: sc.r.File, Line: line, Field: field, Level: level, Message: msg})
}

// check probes every secret of c.
func (sc *secretChecker) check(c *Config) {
	if c.Slack == nil {
		for _, n := range []string{"Slack bot token", "Slack signing secret"} {
			sc.add(SecretSource{Name: n, From: FromNone, OK: true, Note: "not used: no slack: section"})
		}
	} else {
		tok, sig := slackgate.SecretSources(*c.Slack)
		sc.fromSource("Slack bot token", tok, true, "")
		sc.fromSource("Slack signing secret", sig, true, "")
	}
	sc.fromSource("events token", daemon.TokenSource(c.Daemon.EventsTokenFile), false,
		"not set: warden serve turns /v1/events and /v1/reconcile off")
	sc.database(c)
	sc.auditKeyFile()
	sc.archiveKey(c)
	sc.replicaKey(c)
}

// replicaKey says where warden serve's key for signing web and Slack decisions comes
// from: $WARDEN_REPLICA_KEY, else gates.replica_key_file, else replica.key beside the
// default database, which serve creates on first start; and warns when its public half
// is not listed under gates.signers' @replicas, as web and Slack decisions are refused
// until it is.
func (sc *secretChecker) replicaKey(c *Config) {
	s := SecretSource{Name: "replica signing key", Env: sign.ReplicaKeyEnv, From: FromNone}
	if !c.Gates.Checked() {
		s.OK, s.Note = true, "not used: gates.unchecked_names"
		sc.add(s)
		return
	}
	var key ssh.Signer
	var err error
	switch text := os.Getenv(sign.ReplicaKeyEnv); {
	case text != "":
		s.From = FromEnv
		key, err = sign.ParsePrivateKey([]byte(text), "$"+sign.ReplicaKeyEnv)
	default:
		if c.Gates.ReplicaKeyFile != "" {
			s.Field = "gates.replica_key_file"
			s.Line = sc.keyLines[s.Field]
		}
		s.File, _ = c.Gates.ReplicaKeyPath()
		if _, serr := os.Stat(s.File); s.File == "" || errors.Is(serr, fs.ErrNotExist) {
			s.OK, s.Note = true, "none yet: warden serve creates "+s.File+" on first start; list "+s.File+".pub under gates.signers.@replicas"
			sc.add(s)
			return
		}
		s.From, s.Mode = FromFile, fileMode(s.File)
		key, err = sign.ReadReplicaKey(s.File)
	}
	sc.judge(&s, err, "")
	if key != nil {
		if !c.Gates.ListsReplicaKey(key.PublicKey()) {
			s.Note = "not listed under gates.signers.@replicas: web and Slack decisions are refused until " + sign.AuthorizedKey(key.PublicKey()) + " is"
			sc.problem(sc.keyLines["gates.signers"], "gates.signers", LevelWarning, "the replica signing key's public half is "+s.Note)
		}
	}
	sc.add(s)
}

func (sc *secretChecker) add(s SecretSource) { sc.r.Secrets = append(sc.r.Secrets, s) }

// fromSource probes a secret read by secret.Load: the environment first, else the file.
// Load's errors name the variable or the file and what is wrong, never the value.
func (sc *secretChecker) fromSource(name string, src secret.Source, required bool, absent string) {
	s := SecretSource{Name: name, Env: src.Env, File: src.Path, Field: src.Field, Line: sc.keyLines[src.Field]}
	_, err := secret.Load(os.Getenv, src)
	switch {
	case os.Getenv(src.Env) != "":
		s.From = FromEnv
		if src.Path != "" {
			s.Note = fmt.Sprintf("$%s wins: the file %s is not read", src.Env, src.Path)
		}
	case src.Path != "":
		s.From = FromFile
		s.Mode = fileMode(src.Path)
	default:
		s.From = FromNone
		if !required {
			s.OK, s.Note = true, absent
			sc.add(s)
			return
		}
	}
	s.OK = err == nil
	if err != nil {
		sc.problem(lineOf(sc.keyLines, src.Field), name, LevelError, err.Error())
		// Where it was looked for is said beside the note already.
		s.Note = strings.TrimPrefix(strings.TrimPrefix(err.Error(), src.Env+": "), src.Field+" "+src.Path+": ")
	}
	sc.add(s)
}

// database says where a PostgreSQL password comes from: pgx takes it from the DSN (a
// problem: the config never holds one), else $PGPASSWORD, else the passfile (passfile=,
// $PGPASSFILE, ~/.pgpass). A SQLite history needs none.
func (sc *secretChecker) database(c *Config) {
	s := SecretSource{Name: "database password", From: FromNone, Env: "PGPASSWORD", Field: "db", Line: sc.keyLines["db"], OK: true}
	if !store.IsPostgres(c.DB) {
		s.Env, s.Note = "", "not needed: the history is a SQLite file"
		sc.add(s)
		return
	}
	inline, passfile := store.DSNCredentials(c.DB)
	switch {
	case inline:
		// validate reported it already, at db:'s line.
		s.OK, s.Note = false, "written in db:, where it is refused"
	case os.Getenv("PGPASSWORD") != "":
		s.From = FromEnv
	default:
		if passfile == "" {
			passfile = os.Getenv("PGPASSFILE")
		}
		if passfile == "" {
			if home, err := os.UserHomeDir(); err == nil {
				passfile = filepath.Join(home, ".pgpass")
			}
		}
		s.File = passfile
		if passfile == "" || fileMode(passfile) == "" {
			s.Note = "none: $PGPASSWORD is not set and there is no passfile; fine if the server authenticates warden otherwise (certificate, peer, trust)"
			break
		}
		s.From, s.Mode = FromFile, fileMode(passfile)
		if msg := groupReadable(passfile); msg != "" {
			s.Note = msg + " (libpq ignores such a passfile)"
			sc.problem(s.Line, "db", LevelWarning, "passfile "+passfile+": "+s.Note)
		}
	}
	sc.add(s)
}

// auditKeyFile says where the checkpoint signing key comes from: $WARDEN_AUDIT_KEY,
// else the key file, which warden audit checkpoint creates (serve never does).
func (sc *secretChecker) auditKeyFile() {
	s := SecretSource{Name: "audit checkpoint key", Env: audit.KeyEnv, From: FromNone}
	if text := os.Getenv(audit.KeyEnv); text != "" {
		s.From = FromEnv
		_, _, err := audit.ParseKey(text)
		sc.judge(&s, err, "$"+audit.KeyEnv)
		sc.add(s)
		return
	}
	path := sc.auditKey
	if path == "" {
		p, err := audit.DefaultKeyPath()
		if err != nil {
			s.OK, s.Note = false, fmt.Sprintf("no key file to look at: %v", err)
			sc.problem(0, s.Name, LevelError, s.Note)
			sc.add(s)
			return
		}
		path = p
	}
	s.File = path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		s.OK, s.Note = true, "none yet: warden audit checkpoint creates "+path+"; until then warden serve signs no checkpoints"
		sc.add(s)
		return
	}
	s.From, s.Mode = FromFile, fileMode(path)
	text, err := secret.ReadFile(path)
	if err == nil {
		_, _, err = audit.ParseKey(text)
	}
	sc.judge(&s, err, "audit key "+path)
	sc.add(s)
}

// archiveKey says where the certificate archive key comes from: the file
// certs.archive_key_file, else $WARDEN_CERTS_ARCHIVE_KEY; renewal needs it.
func (sc *secretChecker) archiveKey(c *Config) {
	s := SecretSource{Name: "certs archive key", Env: certs.ArchiveKeyEnv, From: FromNone, Field: "certs.archive_key_file"}
	if c.Certs == nil {
		s.OK, s.Note = true, "not used: no certs: section"
		sc.add(s)
		return
	}
	s.Line = sc.keyLines[s.Field]
	switch {
	case c.Certs.ArchiveKeyFile != "":
		s.From, s.File, s.Mode = FromFile, c.Certs.ArchiveKeyFile, fileMode(c.Certs.ArchiveKeyFile)
	case os.Getenv(certs.ArchiveKeyEnv) != "":
		s.From = FromEnv
	}
	err := c.Certs.CheckArchiveKey()
	if ce, ok := errors.AsType[*yamlerr.Error](err); ok {
		// Its field and line are said apart from the message.
		err = errors.New(ce.Msg)
	}
	sc.judge(&s, err, "")
	if err == nil && s.From == FromFile {
		// Renewal reads the file whatever its mode; the check warns, as it would refuse.
		if msg := groupReadable(s.File); msg != "" {
			s.Note = msg
			sc.problem(s.Line, s.Field, LevelWarning, "archive key file "+s.File+": "+msg)
		}
	}
	sc.add(s)
}

// judge records err, a reason warden would refuse the secret, as a problem.
func (sc *secretChecker) judge(s *SecretSource, err error, prefix string) {
	s.OK = err == nil
	if err == nil {
		return
	}
	s.Note = err.Error()
	if prefix != "" {
		s.Note = prefix + ": " + s.Note
	}
	field := s.Field
	if field == "" {
		field = s.Name
	}
	sc.problem(s.Line, field, LevelError, s.Note)
}

// lineOf is the line of a key ("slack.bot_token_file"), or of the nearest enclosing key
// the file has (slack:), or 0.
func lineOf(keyLines map[string]int, field string) int {
	for {
		if l, ok := keyLines[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			return 0
		}
		field = field[:i]
	}
}

// fileMode is the permission bits of the file at path ("0600"), or "" when it cannot be
// looked at.
func fileMode(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%04o", fi.Mode().Perm())
}

// groupReadable says what is wrong with a secret file its group or others may read, or
// "".
func groupReadable(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("mode %04o lets group or others read it: chmod 600 %s", fi.Mode().Perm(), path)
}
