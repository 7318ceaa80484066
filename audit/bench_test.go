package audit_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// BenchmarkAppend appends one entry per transaction, as a state change does.
func BenchmarkAppend(b *testing.B) {
	for name, mk := range storetest.Backends(b) {
		b.Run(name, func(b *testing.B) {
			f := newFixture(b, mk)
			ctx := context.Background()
			ev := audit.Event{Actor: "bob", Kind: audit.KindActionApplied, Subject: "action/0123456789abcdef",
				Data: map[string]any{"remediator": "aws.ec2.revoke_ingress", "target": "arn:aws:ec2:eu-west-1:123456789012:security-group/sg-0abc", "ok": true}}
			b.ResetTimer()
			for b.Loop() {
				if err := f.st.InTx(ctx, func(tx *store.Tx) error {
					_, err := f.log.Append(ctx, tx, ev)
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// BenchmarkAppendAll appends 1,000 finding events per transaction, as a scan that
// opens many findings does.
func BenchmarkAppendAll(b *testing.B) {
	for name, mk := range storetest.Backends(b) {
		b.Run(name, func(b *testing.B) {
			f := newFixture(b, mk)
			ctx := context.Background()
			evs := make([]audit.Event, 1000)
			for i := range evs {
				evs[i] = audit.Event{Actor: "warden", Kind: audit.KindFindingOpened, Subject: fmt.Sprintf("%064x", i),
					Data: map[string]any{"scan": "scan/7", "policy": "AWS-NET-001", "severity": "high", "resource": fmt.Sprintf("arn:aws:ec2:eu-west-1:123456789012:security-group/sg-%017d", i)}}
			}
			b.ResetTimer()
			for b.Loop() {
				if err := f.st.InTx(ctx, func(tx *store.Tx) error {
					_, err := f.log.AppendAll(ctx, tx, evs)
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// BenchmarkVerify verifies a log of $WARDEN_AUDIT_BENCH_ENTRIES entries (default
// 1,000,000) on SQLite; the log is built once, in a cache directory, so that repeated
// runs measure verification only:
//
//	go test ./audit -run '^$' -bench BenchmarkVerify -benchtime 3x
func BenchmarkVerify(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("WARDEN_AUDIT_BENCH_ENTRIES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	path := fmt.Sprintf("%s/warden-audit-bench/%d/warden.db", dir, n)
	st, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	l := audit.New(st, audit.Options{})
	built := SeedLog(b, st, l, n)
	b.Logf("log of %d entries at %s (%s)", n, path, built)
	b.ResetTimer()
	for b.Loop() {
		rep, err := l.Verify(ctx, nil)
		if err != nil || rep.Entries != int64(n) {
			b.Fatalf("Verify = %+v, %v", rep, err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/verify")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// SeedLog appends entries to l until it holds n, 10,000 per transaction, and says how
// long that took.
func SeedLog(tb testing.TB, st *store.Store, l *audit.Log, n int) string {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	var have int64
	rep, err := l.Verify(ctx, nil)
	if err != nil {
		tb.Fatalf("the cached log does not verify: %v", err)
	}
	have = rep.Entries
	if have >= int64(n) {
		return "cached"
	}
	for have < int64(n) {
		err := st.InTx(ctx, func(tx *store.Tx) error {
			for i := 0; i < 10_000 && have < int64(n); i++ {
				if _, err := l.Append(ctx, tx, audit.Event{Actor: "bench", Kind: audit.KindFindingOpened,
					Subject: "finding/" + strconv.FormatInt(have, 16), Data: map[string]any{"policy": "WARDEN-AWS-NET-001", "n": have}}); err != nil {
					return err
				}
				have++
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return fmt.Sprintf("built in %s", time.Since(start).Round(time.Millisecond))
}
