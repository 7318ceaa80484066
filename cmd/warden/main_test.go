package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/snapshot"
)

var snapshotReadFile = snapshot.ReadFile

const acme = "../../fixtures/acme/snapshot.json"

func warden(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScan_exitCodes(t *testing.T) {
	dir := t.TempDir()
	clean := write(t, dir, "clean.json", `{"version": 1, "collected_at": "2026-11-30T12:00:00Z", "resources": [
{"uid": "arn:aws:iam::1:root", "type": "aws.iam.root_user", "account": "1", "region": "global", "attributes": {"mfa_active": true, "access_keys_active": 0}}]}`)
	lowOnly := write(t, dir, "low.json", `{"version": 1, "collected_at": "2026-11-30T12:00:00Z", "resources": [
{"uid": "arn:aws:iam::1:user/u", "type": "aws.iam.user", "name": "u", "account": "1", "region": "global",
 "attributes": {"mfa_active": true, "password_enabled": false, "access_keys": [], "attached_policies": [{"arn": "arn:aws:iam::aws:policy/ReadOnlyAccess", "name": "ReadOnlyAccess"}], "inline_policies": []}}]}`)
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"findings at or above high", []string{"scan", "--snapshot", acme, "--no-db"}, 1, ""},
		{"clean snapshot", []string{"scan", "--snapshot", clean, "--no-db"}, 0, ""},
		{"low finding under the threshold", []string{"scan", "--snapshot", lowOnly, "--no-db"}, 0, ""},
		{"low finding with --fail-on low", []string{"scan", "--snapshot", lowOnly, "--no-db", "--fail-on", "low"}, 1, ""},
		{"missing snapshot", []string{"scan", "--snapshot", filepath.Join(dir, "nope.json"), "--no-db"}, 2, "no such file"},
		{"no snapshot flag", []string{"scan", "--no-db"}, 2, "scan needs --snapshot"},
		{"bad fail-on", []string{"scan", "--snapshot", clean, "--no-db", "--fail-on", "severe"}, 2, `unknown severity "severe"`},
		{"bad format", []string{"scan", "--snapshot", clean, "--no-db", "--format", "xml"}, 2, `unknown format "xml"`},
		{"broken snapshot", []string{"scan", "--snapshot", write(t, dir, "broken.json", "{\"version\": 1,\n\"resources\": [\n{\"uid\": \"a\", \"type\": \"aws.iam.usr\"}]}"), "--no-db"}, 2,
			`broken.json: line 3: resources[0].type: unknown resource type "aws.iam.usr" (did you mean "aws.iam.user"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := warden(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.inStderr)
			}
		})
	}
}

func TestScan_brokenPolicyNamesFileLineCol(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "pol/bad.rego", "# METADATA\n# title: x\npackage ours.bad\n\ndeny contains msg if {\n\tmsg := input.resource.\n}\n")
	code, _, stderr := warden(t, "", "scan", "--snapshot", acme, "--no-db", "--policies", filepath.Join(dir, "pol"))
	if code != 2 || !strings.Contains(stderr, filepath.Join(dir, "pol", "bad.rego")+":7:") {
		t.Errorf("exit %d, stderr %q; want 2 and file:line:col", code, stderr)
	}
}

func TestScan_jsonEveryCatalogPolicyAndWaivers(t *testing.T) {
	dir := t.TempDir()
	wf := write(t, dir, "waivers.yaml", `waivers:
  - policy: WARDEN-AWS-IAM-012
    resource: "arn:aws:iam::*:root"
    reason: break-glass MFA tokens are being re-issued
    owner: secops@acme.example
    expires: 2027-01-15
  - policy: WARDEN-GCP-NET-005
    resource: "*"
    reason: default networks are being removed
    owner: netops@acme.example
    expires: 2026-11-01
`)
	code, out, stderr := warden(t, "", "scan", "--snapshot", acme, "--no-db", "--format", "json", "--waivers", wf)
	if code != 1 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var rep struct {
		Findings []struct {
			Policy, Status string
		} `json:"findings"`
		Summary struct {
			Waived int `json:"waived"`
		} `json:"summary"`
		ExpiredWaivers []struct {
			Policy   string `json:"policy"`
			Findings int    `json:"findings"`
		} `json:"expired_waivers"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, f := range rep.Findings {
		ids[f.Policy] = true
		if f.Policy == "WARDEN-AWS-IAM-012" && f.Status != "waived" {
			t.Errorf("IAM-012 finding is %s, want waived", f.Status)
		}
		if f.Policy == "WARDEN-GCP-NET-005" && f.Status != "open" {
			t.Errorf("GCP-NET-005 finding is %s, want open (its waiver expired)", f.Status)
		}
	}
	// Every policy of the pack (119).
	if len(ids) != 119 {
		t.Errorf("%d policies have findings on acme, want all 119", len(ids))
	}
	// The expired waiver covered both projects' default networks.
	if rep.Summary.Waived == 0 || len(rep.ExpiredWaivers) != 1 || rep.ExpiredWaivers[0].Findings != 2 {
		t.Errorf("waived %d, expired %+v", rep.Summary.Waived, rep.ExpiredWaivers)
	}
}

func TestFindingsDiff_afterTwoScans(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	if code, _, stderr := warden(t, "", "findings", "diff", "--db", db); code != 2 || !strings.Contains(stderr, "no scan history") {
		t.Errorf("diff on a missing history: exit %d, %s", code, stderr)
	}
	if code, _, stderr := warden(t, "", "scan", "--snapshot", acme, "--db", db); code != 1 {
		t.Fatalf("scan: exit %d: %s", code, stderr)
	}
	if code, _, stderr := warden(t, "", "findings", "diff", "--db", db); code != 2 || !strings.Contains(stderr, "run warden scan twice") {
		t.Errorf("diff on a history of one scan: exit %d, %s", code, stderr)
	}
	b, err := os.ReadFile(acme)
	if err != nil {
		t.Fatal(err)
	}
	// The second snapshot has lost the failing scope's neighbour: the acme-prod IAM scope
	// failed, so its findings must be unknown, not resolved.
	second := strings.Replace(string(b), `{"id":"aws/111111111111/iam","provider":"aws","account":"111111111111","service":"iam","status":"ok"`,
		`{"id":"aws/111111111111/iam","provider":"aws","account":"111111111111","service":"iam","status":"failed","error":"throttled"`, 1)
	if second == string(b) {
		t.Fatal("fixture scope line not found; update the test")
	}
	var kept []string
	for _, line := range strings.Split(second, "\n") {
		if strings.Contains(line, `"scope":"aws/111111111111/iam"`) {
			continue
		}
		kept = append(kept, line)
	}
	snap2 := write(t, dir, "second.json", fixCommas(kept))
	for _, s := range []string{acme, snap2} {
		if code, _, stderr := warden(t, "", "scan", "--snapshot", s, "--db", db); code != 1 {
			t.Fatalf("scan %s: exit %d: %s", s, code, stderr)
		}
	}
	code, out, stderr := warden(t, "", "findings", "diff", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	var d struct {
		New, Resolved, Open, Unknown []struct{ Scope string }
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Resolved) != 0 {
		t.Errorf("%d findings resolved by a scan whose scope failed", len(d.Resolved))
	}
	if len(d.Unknown) == 0 || len(d.New) != 0 {
		t.Errorf("unknown %d, new %d", len(d.Unknown), len(d.New))
	}
	for _, f := range d.Unknown {
		if f.Scope != "aws/111111111111/iam" {
			t.Errorf("unknown finding in scope %s", f.Scope)
		}
	}
}

// fixCommas repairs the resources array after lines were dropped from it.
func fixCommas(lines []string) string {
	s := strings.Join(lines, "\n")
	return strings.ReplaceAll(strings.ReplaceAll(s, "},\n]", "}\n]"), "[\n,", "[\n")
}

func TestPolicy_listAndTest(t *testing.T) {
	code, out, _ := warden(t, "", "policy", "list", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 119 {
		t.Fatalf("policy list: %d policies, %v", len(list), err)
	}
	code, out, _ = warden(t, "", "policy", "list", "--framework", "cis-gcp-2.0")
	if code != 0 || !strings.Contains(out, "WARDEN-GCP-NET-001") || strings.Contains(out, "WARDEN-AWS-NET-001") {
		t.Errorf("framework filter: exit %d\n%s", code, out)
	}
	code, out, _ = warden(t, "", "policy", "test")
	if code != 0 || !strings.Contains(out, " passed, 0 failed") {
		t.Errorf("policy test: exit %d\n%s", code, out)
	}
}

func TestSynthPipesIntoScan(t *testing.T) {
	code, snap, stderr := warden(t, "", "synth", "--resources", "300", "--seed", "3")
	if code != 0 {
		t.Fatalf("synth: %d %s", code, stderr)
	}
	code, out, stderr := warden(t, snap, "scan", "--snapshot", "-", "--no-db", "--format", "json", "--fail-on", "critical")
	if code != 1 && code != 0 {
		t.Fatalf("scan: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"resources": 300`) {
		t.Errorf("scan of 300 synthetic resources: %s", out[:min(len(out), 400)])
	}
}

func TestCollectAndScanLiveTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	out := filepath.Join(t.TempDir(), "tls.json")
	if code, _, stderr := warden(t, "", "collect", "--tls", addr, "--out", out); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, stderr)
	}
	if _, rs, err := snapshotReadFile(out); err != nil || len(rs) != 1 || rs[0].Attributes["reachable"] != true {
		t.Fatalf("collected %+v, %v", rs, err)
	}
	// httptest's certificate is not signed by a trusted root: CERT-005 (medium).
	code, stdout, stderr := warden(t, "", "scan", "--tls", addr, "--no-db", "--format", "json", "--fail-on", "medium")
	if code != 1 {
		t.Fatalf("scan --tls: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"WARDEN-CERT-005"`) || !strings.Contains(stdout, `"snapshot": "live targets"`) {
		t.Errorf("scan --tls output lacks CERT-005 or the live label:\n%s", stdout[:min(len(stdout), 800)])
	}
	if code, _, stderr := warden(t, "", "collect"); code != 2 || !strings.Contains(stderr, "collect needs a target") {
		t.Errorf("collect without targets: exit %d: %s", code, stderr)
	}
}

// findings diff reads the history the config's db: names, the one scan wrote to; --db
// still wins over it.
func TestFindingsDiff_readsTheConfigsDB(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history", "warden.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := write(t, dir, "warden.yaml", "db: "+db+"\n")
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "elsewhere")) // the default history is not this one
	for range 2 {
		if code, _, stderr := warden(t, "", "scan", "--snapshot", acme, "--config", cfg); code != 1 {
			t.Fatalf("scan: exit %d: %s", code, stderr)
		}
	}
	code, out, stderr := warden(t, "", "findings", "diff", "--config", cfg)
	if code != 0 || !strings.Contains(out, "scan 1 (") || !strings.Contains(out, "0 new, 0 resolved, 280 still open") {
		t.Errorf("diff with the config's db: exit %d\n%s%s", code, out, stderr)
	}
	other := filepath.Join(dir, "other.db")
	if code, _, stderr := warden(t, "", "findings", "diff", "--config", cfg, "--db", other); code != 2 || !strings.Contains(stderr, "other.db") {
		t.Errorf("--db over the config: exit %d, %s; want 2 naming the missing other.db", code, stderr)
	}
}

// The history says when the world was read, also when --now moves the evaluation time.
func TestScan_nowKeepsTheCollectionTimeInTheHistory(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	for _, now := range []string{"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z"} {
		if code, _, stderr := warden(t, "", "scan", "--snapshot", acme, "--db", db, "--now", now); code != 1 {
			t.Fatalf("scan --now %s: exit %d: %s", now, code, stderr)
		}
	}
	code, out, stderr := warden(t, "", "findings", "diff", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	var d struct {
		From, To struct {
			CollectedAt string `json:"collected_at"`
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.From.CollectedAt != "2026-11-30T12:00:00Z" || d.To.CollectedAt != "2026-11-30T12:00:00Z" {
		t.Errorf("history collected_at %s and %s, want the snapshot's 2026-11-30T12:00:00Z", d.From.CollectedAt, d.To.CollectedAt)
	}
}

// policy settings lists every setting with its default, the policies reading it and the
// value a config sets.
func TestPolicy_settings(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "warden.yaml", "settings:\n  root_usage_days: 3\n")
	code, out, stderr := warden(t, "", "policy", "settings", "--config", cfg, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []struct {
		Name    string   `json:"name"`
		Default any      `json:"default"`
		ReadBy  []string `json:"read_by"`
		Value   any      `json:"value"`
		Set     bool     `json:"set"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, r := range rows {
		byName[r.Name] = i
	}
	root, ok := byName["root_usage_days"]
	if !ok || rows[root].Default != 1.0 || !rows[root].Set || rows[root].Value != 3.0 || !slices.Equal(rows[root].ReadBy, []string{"WARDEN-AWS-IAM-025"}) {
		t.Errorf("root_usage_days: %+v (found %v), want default 1, set to 3, read by WARDEN-AWS-IAM-025", rows[root], ok)
	}
	if i, ok := byName["access_key_unused_days"]; !ok || rows[i].Set || rows[i].Default != 90.0 {
		t.Errorf("access_key_unused_days: %+v, want default 90, not set", rows[i])
	}
	code, out, _ = warden(t, "", "policy", "settings")
	if code != 0 || !strings.Contains(out, "password_max_age_days") || !strings.Contains(out, "settings\n") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	if code, _, stderr := warden(t, "", "policy", "settings", "--format", "yaml"); code != 2 || !strings.Contains(stderr, "--format") {
		t.Errorf("--format yaml: exit %d, %s", code, stderr)
	}
}
