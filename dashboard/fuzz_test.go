package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store/storetest"
	"github.com/warden-sec/warden/waivers"
)

// browserURL is how a browser reads a Location header (WHATWG URL): leading and trailing
// C0 controls and spaces are stripped, tabs and newlines anywhere are removed, and in
// http(s) URLs a backslash is a slash.
func browserURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, s)
	return s
}

// FuzzBack: whatever a form posts as its "back" field, the redirect that follows a form
// stays on the dashboard: the Location a browser resolves names no other host.
func FuzzBack(f *testing.F) {
	for _, s := range []string{"/findings?severity=high", "/approvals", "//evil.example", "/\\evil.example", "https://evil.example/",
		"/%2f%2fevil.example", "/./x", "/../..//evil.example", "/\r\nSet-Cookie: x=1", "", "/ /evil.example"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://warden.acme.example/findings/x")
	f.Fuzz(func(t *testing.T, ref string) {
		r := httptest.NewRequest(http.MethodPost, "/findings/x", strings.NewReader(url.Values{"back": {ref}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		back(w, r, "/findings")
		loc := w.Header().Get("Location")
		if w.Code != http.StatusSeeOther || loc == "" {
			t.Fatalf("back(%q): status %d, Location %q", ref, w.Code, loc)
		}
		u, err := url.Parse(browserURL(loc))
		if err != nil {
			return // a browser does not follow what it cannot parse
		}
		if to := base.ResolveReference(u); to.Host != base.Host || to.Scheme != base.Scheme {
			t.Fatalf("back(%q) redirects to %q, which a browser reads as %s", ref, loc, to)
		}
	})
}

// FuzzFlash: whatever a browser sends in the flash cookie, reading it never panics and
// gives nothing or a message with text; a message the dashboard leaves is read back as
// it was.
func FuzzFlash(f *testing.F) {
	f.Add("Waived WARDEN-AWS-NET-001 on arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1 until 2027-03-31.", true, "")
	f.Add("", false, "e30")
	f.Add("é\u2028<script>", true, "eyJ0ZXh0IjoieCJ9")
	f.Add("x", false, "!!")
	f.Fuzz(func(t *testing.T, text string, isErr bool, raw string) {
		d := &Dashboard{}
		if raw != "" {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.AddCookie(&http.Cookie{Name: flashCookie, Value: raw})
			if fl := d.takeFlash(httptest.NewRecorder(), r); fl != nil && fl.Text == "" {
				t.Fatalf("cookie %q read as an empty message", raw)
			}
		}
		set := httptest.NewRecorder()
		d.setFlash(set, isErr, "%s", text)
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, c := range set.Result().Cookies() {
			r.AddCookie(c)
		}
		got := d.takeFlash(httptest.NewRecorder(), r)
		switch {
		case text == "":
			if got != nil {
				t.Fatalf("an empty message read back as %+v", got)
			}
		case !utf8.ValidString(text):
			// JSON carries it with U+FFFD for the bad bytes; still a message.
			if got == nil || got.Error != isErr {
				t.Fatalf("message %q read back as %+v", text, got)
			}
		case got == nil || got.Text != text || got.Error != isErr:
			t.Fatalf("message %q (error %v) read back as %+v", text, isErr, got)
		}
	})
}

// FuzzAppendWaiver: the findings page adds a waiver to any waiver file the CLI reads
// (readWaiverFile refuses the others), and with any fields AddWaiver lets through the
// file it writes reads back with the CLI's parser, holding the waivers it held, in order,
// and the new one, which waives the finding.
func FuzzAppendWaiver(f *testing.F) {
	files := []string{
		"# Accepted risks: each waiver suppresses one policy's findings on matching resources until it expires.\nwaivers:\n",
		"version: 1\nwaivers:\n  - policy: WARDEN-AWS-NET-001 # bastion\n    resource: \"arn:aws:ec2:*:111111111111:security-group/sg-0bastion*\"\n" +
			"    reason: Bastion; SSH is limited by a network ACL\n    owner: alice@acme.example\n    expires: 2027-03-31\n",
		"waivers: []\n",
		"waivers: ~\n",
		"waivers: [{policy: WARDEN-CERT-*, resource: 'tls://legacy.acme.example:443', reason: r, owner: o, expires: 2026-10-01T00:00:00Z}]\n",
		"",
	}
	for i, file := range files {
		f.Add([]byte(file), "WARDEN-AWS-IAM-001", "arn:aws:iam::111111111111:user/bob", "Break-glass user: \"reviewed\" #4", "alice@acme.example")
		f.Add([]byte(file), "WARDEN-GCP-NET-00"+string(rune('1'+i)), "//compute.googleapis.com/projects/acme-prod-4821/global/firewalls/allow-ssh", "- yes: no", "@bob")
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	expires := now.AddDate(0, 3, 0)
	f.Fuzz(func(t *testing.T, file []byte, policy, resource, reason, owner string) {
		old, err := waivers.Parse(file, "waivers.yaml")
		if err != nil {
			return // readWaiverFile refuses it: fixed by hand, not edited further
		}
		// The page trims its form fields, as the waive handler does.
		policy, resource, reason, owner = strings.TrimSpace(policy), strings.TrimSpace(resource), strings.TrimSpace(reason), strings.TrimSpace(owner)
		if policy == "" || resource == "" || reason == "" || owner == "" || strings.ContainsAny(policy+resource, "*?") ||
			strings.ContainsAny(policy+resource+reason+owner, "\x00\r\n") || !utf8.ValidString(policy+resource+reason+owner) {
			return // AddWaiver refuses these fields
		}
		wv := Waiver{Policy: policy, Resource: resource, Reason: reason, Owner: owner, Expires: expires}
		out, err := appendWaiver(file, wv)
		if err != nil {
			t.Fatalf("appendWaiver to a file the CLI reads: %v\n%s", err, file)
		}
		set, err := waivers.Parse(out, "waivers.yaml")
		if err != nil {
			t.Fatalf("the edited file does not read back: %v\n%s", err, out)
		}
		if len(set.Waivers) != len(old.Waivers)+1 {
			t.Fatalf("%d waivers became %d\n%s", len(old.Waivers), len(set.Waivers), out)
		}
		for i, w := range old.Waivers {
			g := set.Waivers[i]
			if g.Policy != w.Policy || g.Resource != w.Resource || g.Reason != w.Reason || g.Owner != w.Owner || !g.Expires.Equal(w.Expires) {
				t.Fatalf("waiver %d changed: %+v became %+v", i, w, g)
			}
		}
		n := set.Waivers[len(set.Waivers)-1]
		if n.Policy != policy || n.Resource != resource || n.Reason != reason || n.Owner != owner {
			t.Fatalf("the new waiver reads back as %+v, want %+v", n, wv)
		}
		if active, _ := set.Match(policy, resource, now); active == nil {
			t.Fatalf("the edited file does not waive %s on %s\n%s", policy, resource, out)
		}
	})
}

// FuzzTokenSecret: whatever a client sends as a bearer token or a session cookie, the
// dashboard's store accepts exactly the secrets it gave out (a token's for Authenticate
// and StartSession, a session's for Session) and refuses everything else with
// ErrBadToken, never with an error of its own.
func FuzzTokenSecret(f *testing.F) {
	ctx := context.Background()
	st := storetest.Open(f, storetest.Backends(f)["sqlite"](f))
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ts := NewTokens(st, audit.New(st, audit.Options{Now: clock}), clock)
	_, secret, err := ts.Create(ctx, "ci", RoleApprover, "root")
	if err != nil {
		f.Fatal(err)
	}
	_, session, err := ts.StartSession(ctx, secret, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	// Secrets are random, so each run seeds with its own and near misses of them.
	for _, s := range []string{secret, session, secret[:len(secret)-1], secret + " ", tokenPrefix, "", "' OR 1=1 --",
		strings.ToUpper(secret), session[:len(session)-1] + "A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []struct {
			name string
			call func(string) error
			good string
		}{
			{"Authenticate", func(s string) error { _, err := ts.Authenticate(ctx, s); return err }, secret},
			{"Session", func(s string) error { _, err := ts.Session(ctx, s); return err }, session},
		} {
			err := c.call(s)
			if s == c.good {
				if err != nil {
					t.Fatalf("%s refused the secret it gave out: %v", c.name, err)
				}
				continue
			}
			if !errors.Is(err, ErrBadToken) {
				t.Fatalf("%s(%q) = %v, want ErrBadToken", c.name, s, err)
			}
		}
	})
}
