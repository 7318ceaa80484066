package reconcile_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store/storetest"
)

// BenchmarkObserve compares one read of the largest synthetic scope evaluated in full
// with the same read where 1% of its resources changed: the daemon's tick between full
// evaluations. go test ./reconcile -bench Observe -benchtime 10x
func BenchmarkObserve(b *testing.B) {
	h, sc, resources := largestScope(b)
	eng, err := pack()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		full    bool
		changed int // per mille
	}{{"full", true, 0}, {"1pct-changed", false, 10}, {"unchanged", false, 0}} {
		b.Run(fmt.Sprintf("%s/%d-resources", c.name, len(resources)), func(b *testing.B) {
			st := storetest.Open(b, storetest.Backends(b)["sqlite"](b))
			now := h.CollectedAt
			clock := func() time.Time { return now }
			full := 24 * time.Hour
			if c.full {
				full = time.Nanosecond
			}
			r := reconcile.New(reconcile.Options{Store: st, Log: audit.New(st, audit.Options{Now: clock}), Engine: eng, Now: clock, FullEvery: full})
			ob := reconcile.Observation{Scope: sc, Resources: resources, Accounts: h.Accounts}
			if _, err := r.Observe(context.Background(), ob); err != nil {
				b.Fatal(err)
			}
			evaluated := 0
			b.ResetTimer()
			for i := range b.N {
				now = now.Add(time.Minute)
				next := ob
				next.Resources = make([]snapshot.Resource, len(ob.Resources))
				copy(next.Resources, ob.Resources)
				for j := range next.Resources {
					if j%1000 < c.changed {
						res := &next.Resources[j]
						res.Tags = maps.Clone(res.Tags)
						if res.Tags == nil {
							res.Tags = map[string]string{}
						}
						res.Tags["bench"] = fmt.Sprint(i)
					}
				}
				out, err := r.Observe(context.Background(), next)
				if err != nil {
					b.Fatal(err)
				}
				evaluated += out.Evaluated
			}
			b.ReportMetric(float64(evaluated)/float64(b.N), "evaluated/op")
		})
	}
}

// BenchmarkObserveFirstRead is a scope's first observation into an empty store: every
// resource evaluated and stored, every finding opened with its audit entry. On SQLite
// its transaction holds the one writer that an event's refresh waits for; a CPU profile
// focused on Reconciler.record shows what that transaction spends.
func BenchmarkObserveFirstRead(b *testing.B) {
	h, sc, resources := largestScope(b)
	eng, err := pack()
	if err != nil {
		b.Fatal(err)
	}
	clock := func() time.Time { return h.CollectedAt }
	ob := reconcile.Observation{Scope: sc, Resources: resources, Accounts: h.Accounts}
	b.Run(fmt.Sprintf("%d-resources", len(resources)), func(b *testing.B) {
		opened := 0
		for range b.N {
			b.StopTimer()
			st := storetest.Open(b, storetest.Backends(b)["sqlite"](b))
			r := reconcile.New(reconcile.Options{Store: st, Log: audit.New(st, audit.Options{Now: clock}), Engine: eng, Now: clock})
			b.StartTimer()
			out, err := r.Observe(context.Background(), ob)
			if err != nil {
				b.Fatal(err)
			}
			opened += len(out.Opened)
		}
		b.ReportMetric(float64(opened)/float64(b.N), "opened/op")
	})
}

// largestScope generates a 20,000-resource snapshot and returns its header, its largest
// scope and that scope's resources.
func largestScope(b *testing.B) (snapshot.Header, snapshot.Scope, []snapshot.Resource) {
	b.Helper()
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Resources: 20000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	h, rs, err := snapshot.ReadAll(&buf, "synth.json")
	if err != nil {
		b.Fatal(err)
	}
	by := map[string][]snapshot.Resource{}
	for _, r := range rs {
		by[r.Scope] = append(by[r.Scope], r)
	}
	var scope string
	for id, rs := range by {
		if len(rs) > len(by[scope]) {
			scope = id
		}
	}
	sc, _ := h.ScopeByID(scope)
	return h, sc, by[scope]
}
