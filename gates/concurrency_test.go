package gates_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// race runs each decision in its own goroutine, released together, and returns their
// errors in order.
func race(decisions ...func() error) []error {
	errs := make([]error, len(decisions))
	var start, done sync.WaitGroup
	start.Add(1)
	for i, d := range decisions {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = d()
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

func TestDecide_concurrentApprovers(t *testing.T) {
	tests := []struct {
		name string
		risk findings.Risk
		// accepted is how many of the three approvers' decisions are taken.
		accepted  int
		wantState gates.State
	}{
		// Quorum 1: the first approval decides it; the others find it decided.
		{"quorum 1", findings.RiskMedium, 1, gates.StateApproved},
		// Quorum 2: two approvals decide it; the third finds it decided.
		{"quorum 2", findings.RiskCritical, 2, gates.StateApproved},
	}
	for name, mk := range storetest.Backends(t) {
		for _, handles := range []string{"one store", "two stores"} {
			for _, tt := range tests {
				t.Run(fmt.Sprintf("%s/%s/%s", name, handles, tt.name), func(t *testing.T) {
					e := newEnv(t, mk, testConfig)
					r := e.request("act-1", tt.risk, "h1")
					other := e.gate
					if handles == "two stores" {
						other = e.second()
					}
					gs := []*gates.Gate{e.gate, other, e.gate}
					actors := []string{"bob", "carol", "dave"}
					var fns []func() error
					for i := range actors {
						fns = append(fns, func() error {
							_, err := gs[i].Decide(ctx, r.ID, actors[i], "cli", true, "")
							return err
						})
					}
					ok := 0
					for i, err := range race(fns...) {
						switch {
						case err == nil:
							ok++
						case !errors.Is(err, gates.ErrAlreadyDecided):
							t.Errorf("%s: %v, want success or ErrAlreadyDecided", actors[i], err)
						}
					}
					got := e.get(r.ID)
					if ok != tt.accepted || len(got.Decisions) != tt.accepted || got.State != tt.wantState {
						t.Errorf("%d accepted, %d decisions stored, state %s; want %d, %d, %s", ok, len(got.Decisions), got.State, tt.accepted, tt.accepted, tt.wantState)
					}
					if k := e.kinds(r.ID); k[audit.KindApprovalApproved] != tt.accepted {
						t.Errorf("audit entries = %v, want %d approvals", k, tt.accepted)
					}
					final := 0
					for _, a := range e.entries() {
						if a.Subject == r.ID && a.Data["state"] == string(gates.StateApproved) {
							final++
						}
					}
					if final != 1 {
						t.Errorf("%d audit entries approve the request, want exactly 1", final)
					}
				})
			}
		}
	}
}

func TestDecide_sameApproverAtOnceCountsOnce(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			r := e.request("act-1", findings.RiskCritical, "h1")
			other := e.second()
			var fns []func() error
			for i := range 4 {
				g := e.gate
				if i%2 == 1 {
					g = other
				}
				fns = append(fns, func() error {
					_, err := g.Decide(ctx, r.ID, "bob", "cli", true, "")
					return err
				})
			}
			ok := 0
			for _, err := range race(fns...) {
				if err == nil {
					ok++
				} else if !errors.Is(err, gates.ErrAlreadyDecided) {
					t.Errorf("unexpected error: %v", err)
				}
			}
			got := e.get(r.ID)
			if ok != 1 || len(got.Decisions) != 1 || got.State != gates.StatePending {
				t.Errorf("%d accepted, %d decisions, state %s; want 1, 1, pending (bob counts once of 2)", ok, len(got.Decisions), got.State)
			}
		})
	}
}

func TestDecide_approveAndDenyAtOnce(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			r := e.request("act-1", findings.RiskMedium, "h1")
			other := e.second()
			errs := race(
				func() error { _, err := e.gate.Decide(ctx, r.ID, "bob", "cli", true, ""); return err },
				func() error {
					_, err := other.Decide(ctx, r.ID, "carol", "slack", false, "not in the window")
					return err
				},
			)
			if (errs[0] == nil) == (errs[1] == nil) {
				t.Fatalf("errors %v: want exactly one decision taken", errs)
			}
			got := e.get(r.ID)
			want := gates.StateApproved
			if errs[0] != nil {
				want = gates.StateDenied
			}
			if got.State != want || len(got.Decisions) != 1 {
				t.Errorf("state %s with %d decisions, want %s with 1", got.State, len(got.Decisions), want)
			}
		})
	}
}

func TestRequest_concurrentSameAction(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			other := e.second()
			ids := make([]string, 2)
			gs := []*gates.Gate{e.gate, other}
			sts := []*store.Store{e.st, storetest.Open(t, e.dsn)}
			var fns []func() error
			for i := range gs {
				fns = append(fns, func() error {
					return sts[i].InTx(ctx, func(tx *store.Tx) error {
						r, err := gs[i].Request(ctx, tx, action("act-1", findings.RiskHigh), "h1", "alice")
						ids[i] = r.ID
						return err
					})
				})
			}
			for _, err := range race(fns...) {
				if err != nil {
					t.Fatal(err)
				}
			}
			if ids[0] != ids[1] {
				t.Errorf("two requests for one action and hash: %v", ids)
			}
			if n := rows(t, e.dsn, `SELECT id FROM approval_requests`); n != 1 {
				t.Errorf("%d requests stored, want 1", n)
			}
		})
	}
}
