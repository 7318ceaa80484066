package reconcile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/store/storetest"
)

// A waiver added to the file while the daemon runs applies at the scope's next read,
// unchanged resources included (the change re-evaluates the scope); a file that stops
// reading keeps the last waivers that did.
func TestObserve_waiversFileReadAgainWhenItChanges(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "waivers.yaml")
			if err := os.WriteFile(file, []byte("waivers: []\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, dsn(t), reconcile.Options{WaiversFile: file})
			first := e.observe(e.read(iamScope))
			var target findings.Finding
			for _, f := range first.Opened {
				if f.Policy == "WARDEN-AWS-IAM-007" || f.Policy == "WARDEN-AWS-IAM-008" {
					target = f
					break
				}
			}
			if target.Policy == "" {
				t.Fatalf("no finding on the old key among %d opened", len(first.Opened))
			}
			before := e.statuses(iamScope)

			e.advance(5 * time.Minute)
			if again := e.observe(e.read(iamScope)); again.Evaluated != 0 || again.Full {
				t.Fatalf("the same read, the same waivers: %d evaluated (full %v), want none", again.Evaluated, again.Full)
			}
			waiver := "waivers:\n  - policy: " + target.Policy + "\n    resource: \"" + target.Resource + "\"\n    reason: retired with the service\n    owner: alice@acme.example\n    expires: " +
				e.clock().Add(30*24*time.Hour).Format("2006-01-02") + "\n"
			if err := os.WriteFile(file, []byte(waiver), 0o600); err != nil {
				t.Fatal(err)
			}
			e.advance(5 * time.Minute)
			waived := e.observe(e.read(iamScope))
			if !waived.Full {
				t.Errorf("after the waivers changed: full %v, want the scope evaluated in full", waived.Full)
			}
			after := e.statuses(iamScope)
			if after[findings.StatusWaived] != before[findings.StatusWaived]+1 || after[findings.StatusOpen] != before[findings.StatusOpen]-1 {
				t.Errorf("statuses went from %v to %v: want one finding moved from open to waived", before, after)
			}

			// A broken file: the waiver stays, nothing is evaluated again.
			if err := os.WriteFile(file, []byte("waivers:\n  - policy: [\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			e.advance(5 * time.Minute)
			if out := e.observe(e.read(iamScope)); out.Full || out.Evaluated != 0 {
				t.Errorf("a broken waivers file: full %v, %d evaluated; want the last waivers kept, nothing evaluated", out.Full, out.Evaluated)
			}
			if got := e.statuses(iamScope); got[findings.StatusWaived] != after[findings.StatusWaived] {
				t.Errorf("a broken waivers file changed the statuses from %v to %v", after, got)
			}
		})
	}
}
