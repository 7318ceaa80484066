package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCollectCLI_endpointDownFailsFast: with AWS_ENDPOINT_URL where nothing listens,
// collect and scan fail within seconds with "connection refused" naming the endpoint,
// instead of half a minute of retries; no snapshot is written and no scan recorded, so
// nothing reads as an empty account.
func TestCollectCLI_endpointDownFailsFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	_ = ln.Close()
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "", "AWS_REGION": "us-east-1",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": filepath.Join(dir, "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "no-aws-credentials"),
		"AWS_ENDPOINT_URL": endpoint, "AWS_EC2_METADATA_DISABLED": "true", "XDG_STATE_HOME": filepath.Join(dir, "state"),
	} {
		t.Setenv(k, v)
	}
	snap, db := filepath.Join(dir, "snap.json"), filepath.Join(dir, "warden.db")
	for _, args := range [][]string{
		{"collect", "--aws", "--region", "us-east-1", "--out", snap},
		{"scan", "--aws", "--region", "us-east-1", "--db", db},
	} {
		begin := time.Now()
		code, _, stderr := warden(t, "", args...)
		if d := time.Since(begin); d > 5*time.Second {
			t.Errorf("%s took %v to report the endpoint down", args[0], d)
		}
		if code != exitError || !strings.Contains(stderr, "connection refused") || !strings.Contains(stderr, "nothing answers at "+endpoint) {
			t.Errorf("%s: exit %d, want %d with connection refused at %s:\n%s", args[0], code, exitError, endpoint, stderr)
		}
	}
	if _, err := os.Stat(snap); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("collect wrote a snapshot: %v", err)
	}
	assertNoScans(t, db)
}
