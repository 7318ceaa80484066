// Package profile writes Go profiles of a command's run, for `go tool pprof`: its CPU
// (warden's hidden --cpuprofile) and its heap at its highest (the hidden --memprofile).
package profile

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

// CPU starts profiling into the file at path, created or truncated; stop ends the
// profile and closes the file, and must be called once, whatever the run's outcome.
//
// Each SIGUSR1 the process receives meanwhile ends the file and goes on into the next,
// path.1, path.2, …, so that a long run's phases can be profiled apart (the sweep
// benchmark's unchanged sweeps after its first; where signals exist).
func CPU(path string) (stop func(), err error) {
	f, err := startCPU(path)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	next := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		if f == nil {
			return // stopped
		}
		pprof.StopCPUProfile()
		f.Close()
		nf, err := startCPU(path + "." + strconv.Itoa(n))
		if err != nil {
			fmt.Fprintf(os.Stderr, "--cpuprofile: %v\n", err)
		}
		f = nf // nil on an error: the profile ends there
	}
	stopRotating := onRotate(next)
	return func() {
		stopRotating()
		mu.Lock()
		defer mu.Unlock()
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
			f = nil
		}
	}, nil
}

// startCPU starts a CPU profile into a new file at path.
func startCPU(path string) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Start starts the profiles a command asked for: a CPU profile into cpuPath and a heap
// profile at its peak into heapPath, each only if its path is not empty. stop ends
// both; its error is the heap profile's last write's.
func Start(cpuPath, heapPath string) (stop func() error, err error) {
	stopCPU, stopHeap := func() {}, func() error { return nil }
	if cpuPath != "" {
		if stopCPU, err = CPU(cpuPath); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	if heapPath != "" {
		if stopHeap, err = HeapPeak(heapPath, time.Second); err != nil {
			stopCPU()
			return nil, fmt.Errorf("--memprofile: %w", err)
		}
	}
	return func() error { stopCPU(); return stopHeap() }, nil
}
