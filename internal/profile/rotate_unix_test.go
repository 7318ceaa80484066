//go:build unix

package profile_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/profile"
)

// Each SIGUSR1 ends the profile's file and goes on into the next: two signals, three
// complete profiles.
func TestCPU_nextFileOnSIGUSR1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := profile.CPU(path)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		next := path + "." + string(rune('0'+n))
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := os.Stat(next); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s 5 s after SIGUSR1 number %d", next, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	stop()
	for _, p := range []string{path, path + ".1", path + ".2"} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		// A profile is gzipped protobuf: one ended early fails its gzip checksum.
		zr, err := gzip.NewReader(f)
		if err == nil {
			var b []byte
			b, err = io.ReadAll(zr)
			if err == nil && len(b) == 0 {
				err = io.ErrUnexpectedEOF
			}
		}
		f.Close()
		if err != nil {
			t.Errorf("%s is not a complete profile: %v", p, err)
		}
	}
}
