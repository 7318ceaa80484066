package engine_test

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

var benchNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func builtin(tb testing.TB, workers int) *engine.Engine {
	tb.Helper()
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Workers: workers})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// BenchmarkPolicies measures each resource type's evaluation (all its policies in one
// query) and each policy alone, on a synthetic mix: which policy to make faster.
//
//	go test ./engine -run XXX -bench 'Policies/aws.iam.role' -benchtime 20x
func BenchmarkPolicies(b *testing.B) {
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Resources: 4000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	_, rs, err := snapshot.ReadAll(&buf, "synth")
	if err != nil {
		b.Fatal(err)
	}
	byType := map[string][]snapshot.Resource{}
	for _, r := range rs {
		byType[r.Type] = append(byType[r.Type], r)
	}
	ctx := context.Background()
	e := builtin(b, 1)
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	slices.Sort(types)
	h := snapshot.Header{CollectedAt: benchNow}
	for _, typ := range types {
		res := byType[typ]
		b.Run(typ+"/all", func(b *testing.B) {
			// Allocations are the steadier measure: time moves ±15% with the GC of the
			// compiled pack's heap.
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Evaluate(ctx, h, benchNow, res); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(res))/1000, "µs/resource")
		})
		for _, p := range e.PoliciesFor(typ) {
			one, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Only: []string{p.ID}})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(typ+"/"+p.ID, func(b *testing.B) {
				for b.Loop() {
					if _, err := one.Evaluate(ctx, h, benchNow, res); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(res))/1000, "µs/resource")
			})
		}
	}
}

// BenchmarkScan measures the whole streaming path on a synthetic snapshot held in
// memory: reading, checking, evaluating and sorting.
func BenchmarkScan(b *testing.B) {
	for _, n := range []int{10000} {
		var buf bytes.Buffer
		if err := synth.Write(&buf, synth.Options{Resources: n, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		e := builtin(b, 0)
		b.Run("resources="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Scan(context.Background(), snapshot.NewReader(bytes.NewReader(buf.Bytes()), "synth"), engine.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "µs/resource")
		})
	}
}
