package profile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/profile"
)

// gzipMagic opens every pprof file: a profile is a gzipped protocol buffer.
var gzipMagic = []byte{0x1f, 0x8b}

func TestHeapPeak_rewritesTheProfileAsTheHeapGrows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pprof")
	stop, err := profile.HeapPeak(path, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no profile written at the start: %v", err)
	}
	// 64 MiB live across a GC: far more than a tenth above the test binary's heap.
	held := make([][]byte, 64)
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fi, err := os.Stat(path)
		if err == nil && fi.ModTime().After(first.ModTime()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the profile was not written again after the heap grew")
		}
		time.Sleep(5 * time.Millisecond)
	}
	runtime.KeepAlive(held)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, gzipMagic) {
		t.Fatalf("profile %s: %d bytes, %v; want a pprof file", path, len(b), err)
	}
	if _, err := os.Stat("/proc/self/status"); err == nil {
		// Linux: the resident set's peak, explained by the runtime's classes.
		b, err := os.ReadFile(path + ".rss.txt")
		if err != nil {
			t.Fatalf("no memory breakdown at the resident set's peak: %v", err)
		}
		for _, want := range []string{"resident set (VmRSS)", "/memory/classes/heap/objects:bytes", "resident beyond Go's"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("the breakdown does not name %q:\n%s", want, b)
			}
		}
		if b, err := os.ReadFile(path + ".rss.pprof"); err != nil || !bytes.HasPrefix(b, gzipMagic) {
			t.Errorf("heap profile at the resident set's peak: %d bytes, %v", len(b), err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".heap-*")); len(left) > 0 {
		t.Errorf("temporary files left beside the profile: %v", left)
	}
}

func TestHeapPeak_namesTheFileItCannotCreate(t *testing.T) {
	if _, err := profile.HeapPeak(filepath.Join(t.TempDir(), "no", "such", "heap.pprof"), time.Second); err == nil {
		t.Error("HeapPeak in a missing directory succeeded")
	}
}
