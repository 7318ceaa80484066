package state_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

var ctx = context.Background()

// fill stores two scopes, three resources (one uid in both scopes) and three findings:
// open (high), unknown (low) and resolved (high).
func fill(t *testing.T, st *store.Store, at time.Time) {
	t.Helper()
	err := st.InTx(ctx, func(tx *store.Tx) error {
		for i, id := range []string{"aws/2/iam", "aws/1/iam"} {
			sc := state.Scope{Scope: snapshot.Scope{ID: id, Provider: "aws", Service: "iam", Status: snapshot.ScopeOK, Resources: 2, Calls: 7 * i},
				ReadAt: at, OKAt: at, EvaluatedWith: "v1", FullAt: at}
			if err := state.PutScope(ctx, tx, sc); err != nil {
				return err
			}
		}
		for _, r := range []struct{ scope, uid, hash string }{
			{"aws/1/iam", "arn:user/a", "h1"}, {"aws/1/iam", "arn:policy/shared", ""}, {"aws/2/iam", "arn:policy/shared", "h3"},
		} {
			res := snapshot.Resource{UID: r.uid, Type: "aws.iam.user", Scope: r.scope}
			if err := state.PutResource(ctx, tx, r.scope, res, r.hash, []byte(`{"uid":"`+r.uid+`","type":"aws.iam.user"}`), at); err != nil {
				return err
			}
		}
		for _, f := range []struct {
			fp, policy, status string
			sev                findings.Severity
		}{{"fp-open", "P1", findings.StatusOpen, findings.High}, {"fp-unknown", "P2", findings.StatusUnknown, findings.Low},
			{"fp-resolved", "P1", findings.StatusResolved, findings.High}} {
			fs := state.Finding{Finding: findings.Finding{Fingerprint: f.fp, Policy: f.policy, Severity: f.sev, Scope: "aws/1/iam",
				Resource: "arn:user/a"}, Status: f.status, OpenedAt: at, SeenAt: at}
			if f.status == findings.StatusResolved {
				fs.ResolvedAt = at.Add(time.Hour)
			}
			if err := state.PutFinding(ctx, tx, fs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// What the dashboard, the evidence, the metrics and the daemon read of the state.
func TestReaders(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			st := storetest.Open(t, dsn(t))
			at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			fill(t, st, at)
			err := st.Read(ctx, func(q *store.Reader) error {
				scopes, err := state.Scopes(ctx, q)
				if err != nil {
					return err
				}
				if len(scopes) != 2 || scopes[0].Scope.ID != "aws/1/iam" || !scopes[0].OKAt.Equal(at) || scopes[0].EvaluatedWith != "v1" {
					t.Errorf("Scopes = %+v, want aws/1/iam first, as stored", scopes)
				}
				ids, err := state.ScopeIDs(ctx, q)
				if slices.Sort(ids); err != nil || !slices.Equal(ids, []string{"aws/1/iam", "aws/2/iam"}) {
					t.Errorf("ScopeIDs = %v, %v", ids, err)
				}
				if calls, err := state.ScopeCalls(ctx, q); err != nil || !maps.Equal(calls, map[string]int{"aws/2/iam": 0, "aws/1/iam": 7}) {
					t.Errorf("ScopeCalls = %v, %v; want aws/1/iam 7, aws/2/iam 0", calls, err)
				}
				if n, err := state.CountScopes(ctx, q); n != 2 || err != nil {
					t.Errorf("CountScopes = %d, %v; want 2", n, err)
				}
				if n, err := state.CountResources(ctx, q); n != 3 || err != nil {
					t.Errorf("CountResources = %d, %v; want 3", n, err)
				}
				if s, err := state.ScopeOf(ctx, q, "arn:policy/shared"); s != "" || err != nil {
					t.Errorf("ScopeOf a uid read in two scopes = %q, %v; want none", s, err)
				}
				if s, err := state.ScopeOf(ctx, q, "arn:user/a"); s != "aws/1/iam" || err != nil {
					t.Errorf("ScopeOf = %q, %v", s, err)
				}
				if h, ok, err := state.ResourceHash(ctx, q, "aws/2/iam", "arn:policy/shared"); h != "h3" || !ok || err != nil {
					t.Errorf("ResourceHash = %q, %v, %v; want h3", h, ok, err)
				}
				if _, ok, err := state.Resource(ctx, q, "aws/2/iam", "arn:user/a"); ok || err != nil {
					t.Errorf("Resource of another scope: %v, %v; want none", ok, err)
				}
				rows, err := state.ResourceRows(ctx, q)
				partial := 0
				for _, r := range rows {
					if r.Hash == "" {
						partial++
					}
				}
				if len(rows) != 3 || partial != 1 || !rows[0].ReadAt.Equal(at) || err != nil {
					t.Errorf("ResourceRows = %+v, %v; want 3, one judged in part", rows, err)
				}

				open, err := state.OpenBySeverity(ctx, q)
				if err != nil || len(open) != 1 || open[findings.High] != 1 {
					t.Errorf("OpenBySeverity = %v, %v; want one high", open, err)
				}
				active, err := state.ActiveFindings(ctx, q, "aws/1/iam", "", nil)
				if err != nil || len(active) != 2 || active["fp-resolved"].Status != "" {
					t.Errorf("ActiveFindings = %v, %v; want the open and the unknown", active, err)
				}
				unknown, err := state.ActiveFindings(ctx, q, "aws/1/iam", "arn:user/a", func(_, status string) bool { return status == findings.StatusUnknown })
				if err != nil || len(unknown) != 1 || unknown["fp-unknown"].Finding.Policy != "P2" {
					t.Errorf("ActiveFindings kept unknown = %v, %v", unknown, err)
				}

				all, err := state.Findings(ctx, q, nil)
				if err != nil || len(all) != 3 {
					t.Fatalf("Findings = %v, %v; want all three", all, err)
				}
				var seen []state.Life
				p1, err := state.Findings(ctx, q, func(l state.Life) bool { seen = append(seen, l); return l.Policy == "P1" })
				if err != nil || len(seen) != 3 || len(p1) != 2 {
					t.Fatalf("Findings of P1: %d of %d lives, %v; want 2 of 3", len(p1), len(seen), err)
				}
				openP1, err := state.FindingsOf(ctx, q, "P1", findings.StatusOpen)
				if err != nil || len(openP1) != 1 || openP1[0].Finding.Fingerprint != "fp-open" || openP1[0].Status != findings.StatusOpen {
					t.Errorf("FindingsOf P1 open = %+v, %v; want fp-open alone", openP1, err)
				}
				if none, err := state.FindingsOf(ctx, q, "P2", findings.StatusOpen); err != nil || len(none) != 0 {
					t.Errorf("FindingsOf P2 open = %+v, %v; want none (its finding is unknown)", none, err)
				}
				for _, f := range p1 {
					if f.Finding.Status != f.Status || (f.Status == findings.StatusResolved) != !f.ResolvedAt.IsZero() {
						t.Errorf("finding %s: status %q, its finding's %q, resolved at %v", f.Finding.Fingerprint, f.Status, f.Finding.Status, f.ResolvedAt)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The daemon asks which scopes hold an open finding among those whose fixes ended, and
// a finding's scope: only open findings count, and a finding never judged has none.
func TestScopesWithOpen(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			st := storetest.Open(t, dsn(t))
			fill(t, st, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
			err := st.Read(ctx, func(q *store.Reader) error {
				for _, tc := range []struct {
					fps  []string
					want []string
				}{
					{[]string{"fp-open", "fp-unknown", "fp-resolved", "fp-never"}, []string{"aws/1/iam"}},
					{[]string{"fp-unknown", "fp-resolved"}, nil},
					{nil, nil},
				} {
					got, err := state.ScopesWithOpen(ctx, q, tc.fps)
					if err != nil {
						return err
					}
					var scopes []string
					for sc := range got {
						scopes = append(scopes, sc)
					}
					if !slices.Equal(scopes, tc.want) {
						t.Errorf("ScopesWithOpen(%v) = %v, want %v", tc.fps, scopes, tc.want)
					}
				}
				if sc, ok, err := state.FindingScope(ctx, q, "fp-resolved"); err != nil || !ok || sc != "aws/1/iam" {
					t.Errorf("FindingScope(fp-resolved) = %q %v %v", sc, ok, err)
				}
				if sc, ok, err := state.FindingScope(ctx, q, "fp-never"); err != nil || ok {
					t.Errorf("FindingScope(fp-never) = %q %v %v, want none", sc, ok, err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A scope's resources are read by uid in batches: those of the scope only, the missing
// left out, and as many as asked for, past the bound on one query's parameters.
func TestResources(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			st := storetest.Open(t, dsn(t))
			at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			fill(t, st, at)
			var many []string
			err := st.InTx(ctx, func(tx *store.Tx) error {
				for i := range 1203 {
					uid := fmt.Sprintf("arn:role/r%04d", i)
					many = append(many, uid)
					res := snapshot.Resource{UID: uid, Type: "aws.iam.role", Scope: "aws/2/iam"}
					if err := state.PutResource(ctx, tx, "aws/2/iam", res, "h", []byte(`{"uid":"`+uid+`","type":"aws.iam.role","name":"r`+strconv.Itoa(i)+`"}`), at); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = st.Read(ctx, func(q *store.Reader) error {
				got, err := state.Resources(ctx, q, "aws/1/iam", []string{"arn:user/a", "arn:policy/shared", "arn:never", many[0]})
				if err != nil {
					return err
				}
				if len(got) != 2 || got["arn:user/a"].UID != "arn:user/a" || got["arn:policy/shared"].UID != "arn:policy/shared" {
					t.Errorf("Resources(aws/1/iam) = %v, want user/a and policy/shared only", got)
				}
				all, err := state.Resources(ctx, q, "aws/2/iam", append(slices.Clone(many), "arn:policy/shared"))
				if err != nil {
					return err
				}
				if len(all) != len(many)+1 {
					t.Errorf("%d resources of aws/2/iam, want %d", len(all), len(many)+1)
				}
				if r := all[many[1202]]; r.Name != "r1202" || r.Type != "aws.iam.role" {
					t.Errorf("the last role reads %+v", r)
				}
				none, err := state.Resources(ctx, q, "aws/2/iam", nil)
				if err != nil || len(none) != 0 {
					t.Errorf("Resources of no uid = %v, %v", none, err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
