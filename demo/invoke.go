package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// InstallHint is what the demo says when the warden it ran as is no command a shell
// can call: a 'go run' build, deleted when it exits.
const InstallHint = "install it first: go install ./cmd/warden (it lands in $(go env GOPATH)/bin; put that folder on your PATH)"

// invocation is how the commands the demo prints call warden: "warden" when the running
// binary is the warden on the PATH; the running binary's path when it is a file that
// stays (a build in ./bin); else "warden", with the hint that it must be installed
// first (a 'go run' build lives in a temporary go-build folder that is gone once the
// demo exits).
func invocation(exe, onPath string, tmpDirs []string, rel func(string) string) (cmd, hint string) {
	if exe == "" {
		return "warden", InstallHint
	}
	if onPath != "" && sameFile(exe, onPath) {
		return "warden", ""
	}
	if goBuild(exe, tmpDirs) {
		return "warden", InstallHint
	}
	return shellQuote(rel(exe)), ""
}

// runningWarden is invocation for this process.
func (d *run) runningWarden() (cmd, hint string) {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	onPath, err := exec.LookPath("warden")
	if err != nil {
		onPath = ""
	}
	tmp := []string{os.TempDir()}
	if g := os.Getenv("GOTMPDIR"); g != "" {
		tmp = append(tmp, g)
	}
	return invocation(exe, onPath, tmp, d.rel)
}

// sameFile reports whether two paths name one file, links followed.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}

// goBuild reports whether exe lies in a go-build folder of one of the temporary
// directories, where 'go run' and 'go test' build their binaries.
func goBuild(exe string, tmpDirs []string) bool {
	for _, tmp := range tmpDirs {
		for _, dir := range []string{tmp, evalOr(tmp)} {
			r, err := filepath.Rel(dir, exe)
			if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				continue
			}
			if strings.HasPrefix(strings.Split(filepath.ToSlash(r), "/")[0], "go-build") {
				return true
			}
		}
	}
	return false
}

// evalOr is path with its links followed, or path itself.
func evalOr(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return path
}
