package profile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"time"

	"github.com/warden-sec/warden/internal/atomicfile"
)

// liveHeap is the runtime metric HeapPeak follows: the heap the last GC found live, which
// is what a heap profile's in-use figures describe.
const liveHeap = "/gc/heap/live:bytes"

// HeapPeak watches the live heap every period and writes a heap profile to path whenever
// the heap has grown a tenth past the last profile's, so that the file holds the run's
// peak: what a long run held at its highest, rather than what is left at its end.
//
// Where the system tells a process its resident set (Linux), it also writes, whenever
// the resident set has grown a twentieth past the last, a heap profile (path.rss.pprof)
// and the runtime's memory classes (path.rss.txt) at that moment: the resident set's peak
// is often not the live heap's, and the classes say how much of it was Go's at all. stop
// ends the watch and returns the last write's error, if any; it must be called once.
func HeapPeak(path string, period time.Duration) (stop func() error, err error) {
	if err := writeHeap(path); err != nil { // the path is checked before the run starts
		return nil, err
	}
	done, finished := make(chan struct{}), make(chan error, 1)
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		sample := []metrics.Sample{{Name: liveHeap}}
		var last, lastRSS uint64
		var werr error
		for {
			select {
			case <-done:
				finished <- werr
				return
			case <-t.C:
			}
			if rss := residentKiB(); rss > lastRSS+lastRSS/20 {
				// The resident set's peak need not be the live heap's: what it held
				// then, by the runtime's classes, says whether it was Go's heap.
				lastRSS = rss
				text := breakdown(time.Now(), rss)
				if err := atomicfile.Write(path+".rss.txt", func(w io.Writer) error { _, err := w.Write(text); return err }); err != nil {
					werr = fmt.Errorf("memory breakdown: %w", err)
				}
				if err := writeHeap(path + ".rss.pprof"); err != nil {
					werr = err
				}
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				continue
			}
			if live := sample[0].Value.Uint64(); live > last+last/10 {
				last = live
				werr = writeHeap(path)
			}
		}
	}()
	return func() error { close(done); return <-finished }, nil
}

// writeHeap replaces the file at path with a heap profile, whole: a run stopped while
// writing leaves the previous profile, never half of one.
func writeHeap(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".heap-*")
	if err != nil {
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	return nil
}
