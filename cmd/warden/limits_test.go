package main

import (
	"net"
	"strings"
	"testing"
)

func TestScan_limitsComeFromTheFlags(t *testing.T) {
	dir := t.TempDir()
	snap := write(t, dir, "s.json", `{"version": 1, "collected_at": "2026-11-30T12:00:00Z", "resources": [
{"uid": "arn:aws:iam::1:root", "type": "aws.iam.root_user", "account": "1", "region": "global", "name": "`+strings.Repeat("r", 4096)+`",
 "attributes": {"mfa_active": true, "access_keys_active": 0}}]}`)
	code, _, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db", "--max-value-size", "1KiB")
	if code != 2 || !strings.Contains(stderr, "line 2: resources[0].name: a string is over 1 KiB") || !strings.Contains(stderr, "--max-value-size") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming line 2, the field and the flag", code, stderr)
	}
	if code, _, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db"); code != 0 {
		t.Fatalf("with the default limits: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db", "--max-resource-size", "2KiB"); code != 2 || !strings.Contains(stderr, "resources[0]: the resource is over 2 KiB") {
		t.Fatalf("exit %d, stderr %q; want the resource refused", code, stderr)
	}
	if code, _, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db", "--max-value-size", "big"); code != 2 || !strings.Contains(stderr, `"big" is not a size`) {
		t.Fatalf("exit %d, stderr %q; want a bad size refused", code, stderr)
	}
}

// A scan that could not read a scope is not clean: with nothing at or above --fail-on
// among what it read, it exits 2, not 0.
func TestScan_unreadScopeIsNeverClean(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	code, stdout, stderr := warden(t, "", "scan", "--tls", addr, "--timeout", "2s", "--no-db", "--no-progress")
	if code != 2 || !strings.Contains(stderr, "scan incomplete: 1 scope could not be read in full") {
		t.Fatalf("exit %d, stderr %q; want 2 and the unread scope named", code, stderr)
	}
	if !strings.Contains(stdout, "tls/"+addr) {
		t.Errorf("the report does not list the unread scope:\n%s", stdout)
	}
	// Findings at or above --fail-on still exit 1 when some scope failed (acme has one).
	if code, _, stderr := warden(t, "", "scan", "--snapshot", acme, "--no-db", "--now", "2026-11-30T12:00:00Z"); code != 1 {
		t.Fatalf("acme: exit %d, stderr %q; want 1", code, stderr)
	}
}

// A key created after the snapshot was taken would look young: the scan refuses it.
func TestScan_refusesTimesAfterCollectedAt(t *testing.T) {
	snap := write(t, t.TempDir(), "s.json", `{"version": 1, "collected_at": "2026-11-30T12:00:00Z", "resources": [
{"uid": "arn:aws:iam::1:user/a/accesskey/AKIA1", "type": "aws.iam.access_key", "account": "1", "region": "global",
 "attributes": {"status": "Active", "created": "2199-01-01T00:00:00Z"}}]}`)
	code, _, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db")
	if code != 2 || !strings.Contains(stderr, "line 3: resources[0].attributes.created") || !strings.Contains(stderr, "after the snapshot's collected_at") {
		t.Fatalf("exit %d, stderr %q; want the future creation time refused", code, stderr)
	}
}
