// Package profile writes Go profiles of a command's run, for `go tool pprof`: its CPU
// (warden's hidden --cpuprofile) and its heap at its highest (the hidden --memprofile).
package profile

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

// CPU starts profiling into the file at path, created or truncated; stop ends the
// profile and closes the file, and must be called once, whatever the run's outcome.
func CPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
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
