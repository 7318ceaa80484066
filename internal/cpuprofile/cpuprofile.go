// Package cpuprofile writes a Go CPU profile of a command's run (warden's hidden
// --cpuprofile), for `go tool pprof`.
package cpuprofile

import (
	"os"
	"runtime/pprof"
)

// Start starts profiling into the file at path, created or truncated; stop ends the
// profile and closes the file, and must be called once, whatever the run's outcome.
func Start(path string) (stop func(), err error) {
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
