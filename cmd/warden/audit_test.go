package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store/storetest"
)

// auditEnv is a database holding audit entries written by the real commands (an
// apply that fixes the low-risk finding and requests approval for the others, a pause
// and a resume), and the key file the audit commands sign with.
type auditEnv struct {
	*simEnv
	key string
	// outputs collects everything the audit commands printed, to check that the
	// private key never appears in it.
	outputs []string
}

func startAuditEnv(t *testing.T) *auditEnv {
	t.Helper()
	e := &auditEnv{simEnv: startSimEnv(t, cliWorld())}
	e.key = filepath.Join(e.dir, "keys", "audit.key")
	planFile, _ := e.plan(t)
	if code, out, stderr := e.warden(t, "apply", planFile, "--confirm"); code != 0 {
		t.Fatalf("apply --confirm: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := e.warden(t, "pause", "--reason", "audit test"); code != 0 {
		t.Fatalf("pause: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := e.warden(t, "resume"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	return e
}

// audit runs warden audit with the environment's database and key file.
func (e *auditEnv) audit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, out, stderr := warden(t, "", append(append([]string{"audit"}, args...), "--db", e.db, "--audit-key", e.key)...)
	e.outputs = append(e.outputs, out, stderr)
	return code, out, stderr
}

// entries reads the log's entries as the database holds them: seq → kind.
func (e *auditEnv) entries(t *testing.T) map[int64]string {
	t.Helper()
	db, _ := storetest.RawDB(t, e.db)
	rows, err := db.Query(`SELECT seq, kind FROM audit_entries ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var seq int64
		var kind string
		if err := rows.Scan(&seq, &kind); err != nil {
			t.Fatal(err)
		}
		out[seq] = kind
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// verifySummary parses audit verify's summary line: "N entries, M checkpoints, root H".
func verifySummary(t *testing.T, out string) (entries, checkpoints int) {
	t.Helper()
	if _, err := fmt.Sscanf(out, "%d entries, %d checkpoints, root ", &entries, &checkpoints); err != nil {
		t.Fatalf("audit verify printed %q: %v", out, err)
	}
	return entries, checkpoints
}

func TestAuditCLI_verifyCheckpointExportKey(t *testing.T) {
	e := startAuditEnv(t)
	entries := e.entries(t)
	n := len(entries)
	kinds := map[string]bool{}
	for _, k := range entries {
		kinds[k] = true
	}
	for _, k := range []string{audit.KindApprovalRequested, audit.KindActionIntent, audit.KindActionVerified, audit.KindControlPaused, audit.KindControlResumed} {
		if !kinds[k] {
			t.Errorf("no %s entry in the log written by apply, pause and resume: %v", k, kinds)
		}
	}

	// Before any checkpoint, verify needs no key and creates none.
	code, out, stderr := e.audit(t, "verify")
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, out, stderr)
	}
	if got, cps := verifySummary(t, out); got != n || cps != 0 {
		t.Errorf("verify says %d entries, %d checkpoints; the log holds %d and none", got, cps, n)
	}
	if _, err := os.Stat(e.key); err == nil {
		t.Error("verify created the signing key")
	}

	// The verifier key, and the private one in a file of mode 0600.
	code, out, stderr = e.audit(t, "key")
	if code != 0 {
		t.Fatalf("key: exit %d\n%s", code, stderr)
	}
	vkey := strings.TrimSpace(out)
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatalf("audit key printed %q, not a verifier key: %v", out, err)
	}
	info, err := os.Stat(e.key)
	if err != nil {
		t.Fatalf("the key file: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode %04o, want 0600", perm)
	}
	if dir, err := os.Stat(filepath.Dir(e.key)); err != nil || dir.Mode().Perm()&0o077 != 0 {
		t.Errorf("the key's directory: %v, %v; want it closed to others", dir.Mode(), err)
	}
	if code, again, _ := e.audit(t, "key"); code != 0 || strings.TrimSpace(again) != vkey {
		t.Errorf("audit key again: exit %d, %q; want the same key %q", code, again, vkey)
	}

	// A checkpoint: a signed note over the whole log, its first line the origin.
	code, cp, stderr := e.audit(t, "checkpoint")
	if code != 0 {
		t.Fatalf("checkpoint: exit %d\n%s", code, stderr)
	}
	signed, err := note.Open([]byte(cp), note.VerifierList(v))
	if err != nil {
		t.Fatalf("the checkpoint does not verify with the printed key: %v\n%s", err, cp)
	}
	lines := strings.Split(signed.Text, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "warden.audit/") || lines[1] != strconv.Itoa(n) || !strings.HasPrefix(cp, lines[0]+"\n") {
		t.Errorf("checkpoint text %q: want the origin first, then the size %d", signed.Text, n)
	}
	parsed, err := audit.ParseCheckpoint(signed.Text)
	if err != nil || parsed.Size != int64(n) {
		t.Errorf("checkpoint parses as %+v, %v", parsed, err)
	}
	cpFile := write(t, e.dir, "cp-1.txt", cp)
	code, out, stderr = e.audit(t, "verify", "--checkpoint", cpFile)
	if code != 0 {
		t.Fatalf("verify --checkpoint: exit %d\n%s%s", code, out, stderr)
	}
	if got, cps := verifySummary(t, out); got != n || cps != 2 {
		t.Errorf("verify --checkpoint says %d entries, %d checkpoints; want %d and 2 (stored and given)", got, cps, n)
	}

	// Export: the checkpoint, then one line per entry, which a third party verifies
	// with the verifier key alone.
	exportFile := filepath.Join(e.dir, "audit.jsonl")
	if code, out, stderr := e.audit(t, "export", "--out", exportFile); code != 0 || out != "" {
		t.Fatalf("export --out: exit %d, stdout %q\n%s", code, out, stderr)
	}
	b, err := os.ReadFile(exportFile)
	if err != nil {
		t.Fatal(err)
	}
	exported := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(exported) != n+1 {
		t.Fatalf("the export has %d lines, want %d entries + the checkpoint", len(exported), n)
	}
	var head audit.ExportHeader
	if err := json.Unmarshal([]byte(exported[0]), &head); err != nil || head.Format != audit.ExportFormat {
		t.Fatalf("first line %s: %v; want the %s header", exported[0], err, audit.ExportFormat)
	}
	if c, err := note.Open([]byte(head.Checkpoint), note.VerifierList(v)); err != nil || !strings.HasPrefix(c.Text, lines[0]+"\n"+strconv.Itoa(n)+"\n") {
		t.Errorf("the export's checkpoint %q: %v", head.Checkpoint, err)
	}
	for i, l := range exported[1:] {
		var el audit.ExportLine
		if err := json.Unmarshal([]byte(l), &el); err != nil || el.Seq != int64(i) || el.Record == "" {
			t.Errorf("export line %d: %v, %+v; want entry %d", i+2, err, el, i)
		}
	}
	if err := audit.VerifyExport(bytes.NewReader(b), v); err != nil {
		t.Errorf("VerifyExport: %v", err)
	}

	// The same export on stdout.
	code, out, _ = e.audit(t, "export")
	if code != 0 || strings.Count(out, "\n") != n+1 {
		t.Errorf("export to stdout: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
	if err := audit.VerifyExport(strings.NewReader(out), v); err != nil {
		t.Errorf("VerifyExport of stdout: %v", err)
	}

	// The private key never appears in any output.
	key, err := os.ReadFile(e.key)
	if err != nil {
		t.Fatal(err)
	}
	skey := strings.TrimSpace(string(key))
	if !strings.HasPrefix(skey, "PRIVATE+KEY+") {
		t.Fatalf("the key file does not hold a note signer key")
	}
	// PRIVATE+KEY+name+hash+key: the key's base64 may hold '+' itself, so the secret is
	// the whole fifth field, never what follows the last '+' (a few characters that any
	// base64 output may contain by chance).
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || len(parts[4]) < 40 {
		t.Fatalf("the key file's key is not PRIVATE+KEY+name+hash+key")
	}
	secret := parts[4]
	for _, o := range append(e.outputs, string(b)) {
		if strings.Contains(o, skey) || strings.Contains(o, secret) || strings.Contains(o, "PRIVATE") {
			t.Errorf("an audit command printed the private key:\n%s", o)
		}
	}
}

// An entry edited in the database, or the log cut short, makes audit verify exit 1
// naming the entry.
func TestAuditCLI_tamperAndTruncation(t *testing.T) {
	e := startAuditEnv(t)
	n := int64(len(e.entries(t)))
	if n < 4 {
		t.Fatalf("the log holds %d entries, want a few", n)
	}
	code, cp, stderr := e.audit(t, "checkpoint")
	if code != 0 {
		t.Fatalf("checkpoint: exit %d\n%s", code, stderr)
	}
	cpFile := write(t, e.dir, "cp-kept.txt", cp)
	db, _ := storetest.RawDB(t, e.db)

	// An actor rewritten.
	victim := n / 2
	var actor string
	if err := db.QueryRow(`SELECT actor FROM audit_entries WHERE seq = ?`, victim).Scan(&actor); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE audit_entries SET actor = 'mallory' WHERE seq = ?`, victim); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := e.audit(t, "verify")
	if code != exitFindings {
		t.Fatalf("verify after an edit: exit %d, want %d\n%s%s", code, exitFindings, out, stderr)
	}
	first, _, _ := strings.Cut(stderr, "\n")
	if !strings.Contains(first, fmt.Sprintf("entry %d", victim)) {
		t.Errorf("verify after editing entry %d says first:\n%s\nall:\n%s", victim, first, stderr)
	}
	if out != "" {
		t.Errorf("a tampered log got a summary: %q", out)
	}
	code, _, stderr = e.audit(t, "verify", "--checkpoint", cpFile)
	if code != exitFindings || !strings.Contains(stderr, fmt.Sprintf("entry %d", victim)) {
		t.Errorf("verify --checkpoint after an edit: exit %d\n%s", code, stderr)
	}

	// Put back, the log verifies again.
	if _, err := db.Exec(`UPDATE audit_entries SET actor = ? WHERE seq = ?`, actor, victim); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := e.audit(t, "verify", "--checkpoint", cpFile); code != 0 {
		t.Fatalf("verify after undoing the edit: exit %d\n%s%s", code, out, stderr)
	}

	// The last entry deleted with its stored hashes, and the stored checkpoints with
	// them, as someone covering their tracks would: the kept checkpoint still shows it.
	last := n - 1
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM audit_entries WHERE seq = ?`, []any{last}},
		{`DELETE FROM audit_hashes WHERE idx >= ?`, []any{tlog.StoredHashIndex(0, last)}},
		{`DELETE FROM audit_checkpoints`, nil},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	code, out, stderr = e.audit(t, "verify")
	t.Logf("verify of the truncated log without the kept checkpoint: exit %d, %s%s", code, out, stderr)
	code, out, stderr = e.audit(t, "verify", "--checkpoint", cpFile)
	if code != exitFindings {
		t.Fatalf("verify --checkpoint of a truncated log: exit %d, want %d\n%s%s", code, exitFindings, out, stderr)
	}
	for _, want := range []string{fmt.Sprintf("entry %d", last), "given checkpoint 1", "truncated"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("verify of the truncated log does not say %q:\n%s", want, stderr)
		}
	}
}

func TestAuditCLI_errors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(auditKeyEnv, "")
	missing := filepath.Join(dir, "nope.db")
	tests := []struct {
		name  string
		args  []string
		code  int
		inErr string
	}{
		{"verify a missing database", []string{"audit", "verify", "--db", missing}, exitError, "nope.db"},
		{"checkpoint a missing database", []string{"audit", "checkpoint", "--db", missing, "--audit-key", filepath.Join(dir, "k")}, exitError, "nope.db"},
		{"missing checkpoint file", []string{"audit", "verify", "--db", missing, "--checkpoint", filepath.Join(dir, "cp.txt")}, exitError, "--checkpoint"},
		{"key readable by others", []string{"audit", "key", "--audit-key", write(t, dir, "open.key", "PRIVATE+KEY+x+00000000+AAAA\n")}, exitError, "readable by others"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := warden(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.inErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.inErr)
			}
			if strings.Contains(out+stderr, "PRIVATE+KEY") {
				t.Errorf("the key's text was printed: %s%s", out, stderr)
			}
		})
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("an audit command created the missing database")
	}
	if _, err := os.Stat(filepath.Join(dir, "k")); err == nil {
		t.Error("checkpoint of a missing database created its key file")
	}
}
