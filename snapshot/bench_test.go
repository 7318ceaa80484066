package snapshot_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/snapshot"
)

// BenchmarkReadParse streams a synthetic snapshot through the reader and the checking
// parser, as the engine's workers do (one goroutine). WARDEN_BENCH_SNAPSHOT names a
// snapshot file to read instead, e.g. the 1,000,000-resource one of BENCHMARKS.md.
func BenchmarkReadParse(b *testing.B) {
	var data []byte
	if path := os.Getenv("WARDEN_BENCH_SNAPSHOT"); path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	} else {
		var buf bytes.Buffer
		if err := synth.Write(&buf, synth.Options{Resources: 20000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		data = buf.Bytes()
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		rd := snapshot.NewReader(bytes.NewReader(data), "bench")
		p := snapshot.NewParser("bench")
		n = 0
		for {
			el, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := p.Parse(el); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/resource")
}
