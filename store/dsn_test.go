package store

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// FuzzRedactDSN builds PostgreSQL DSNs around an arbitrary password, in each form a
// user may write one, and checks that neither RedactDSN nor a scrubbed error shows it.
func FuzzRedactDSN(f *testing.F) {
	f.Add("warden", "s3cret", "db.example:5432")
	f.Add("u", "p@ss:w/rd?#%", "127.0.0.1")
	f.Add("", "it's a \\ secret", "h")
	f.Fuzz(func(t *testing.T, user, pass, host string) {
		if len(pass) < 6 || strings.Contains(user, pass) || strings.Contains(host, pass) {
			return // too short, or shown legitimately as another part
		}
		forms := func(pass string) []string {
			kvQuoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pass) + "'"
			return []string{
				(&url.URL{Scheme: "postgres", User: url.UserPassword(user, pass), Host: host, Path: "/db"}).String(),
				(&url.URL{Scheme: "postgresql", Host: host, Path: "/db", RawQuery: url.Values{"password": {pass}, "sslmode": {"disable"}}.Encode()}).String(),
				"host=h user=u password=" + kvQuoted + " dbname=d",
			}
		}
		spelled := []string{pass, url.QueryEscape(pass), url.PathEscape(pass)}
		for _, without := range forms("") {
			for _, p := range spelled {
				if strings.Contains(without, p) {
					return // the DSN's other parts spell it ("@" and the host: "@00000")
				}
			}
		}
		for _, dsn := range forms(pass) {
			shown := RedactDSN(dsn)
			if slices.ContainsFunc(spelled, func(p string) bool { return strings.Contains(shown, p) }) {
				t.Errorf("RedactDSN(%q) = %q shows the password", dsn, shown)
			}
			err := scrub(errorString("connect to "+dsn+" failed for "+pass), dsnSecrets(dsn))
			if strings.Contains(err.Error(), pass) {
				t.Errorf("scrubbed error %q shows the password", err)
			}
		}
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }
