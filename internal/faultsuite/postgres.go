// Package faultsuite holds what warden's fault-injection tests need beyond the cloud
// simulator: a private PostgreSQL server that a test may crash and restart without
// disturbing the other packages' tests on the shared CI cluster, and a TCP proxy that
// cuts one process off from the database and restores the link. The suite's cloud
// faults are tested here (cloud_test.go); its database faults drive `warden serve`
// replicas and live with them in cmd/warden (faults_pg_test.go). docs/faults.md says
// what the suite injects and what it asserts.
package faultsuite

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Postgres is a PostgreSQL server of the test's own: initdb'd in a temporary directory,
// listening on a free loopback port, trusting local connections, removed when the test
// ends.
type Postgres struct {
	// DSN connects to its postgres database as its superuser.
	DSN  string
	Port int

	bin, dir, data, logFile string
	// owner runs the server's commands as the postgres OS user: PostgreSQL refuses to
	// run as root.
	owner *user.User
}

// StartPostgres initdbs and starts a private server with the binaries of the newest
// PostgreSQL under /usr/lib/postgresql. Without them it skips the test, unless $CI is
// set: CI installs them (.ci/run), so there their absence fails the test.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		msg := "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (Debian's postgresql package): the database faults need a server of their own"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	slices.SortFunc(bins, func(a, b string) int { return pgVersion(a) - pgVersion(b) })
	p := &Postgres{bin: filepath.Dir(bins[len(bins)-1])}
	// Not t.TempDir(): the server's OS user must reach its directory, and the test's
	// temporary directories are private to root.
	dir, err := os.MkdirTemp("", "warden-faults-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	p.dir, p.data, p.logFile = dir, filepath.Join(dir, "data"), filepath.Join(dir, "server.log")
	if os.Getuid() == 0 {
		if p.owner, err = user.Lookup("postgres"); err != nil {
			t.Fatalf("running as root, the server needs the postgres OS user: %v", err)
		}
		uid, _ := strconv.Atoi(p.owner.Uid)
		gid, _ := strconv.Atoi(p.owner.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("hand %s to the postgres user: %v", dir, err)
		}
	}
	if out, err := p.command("initdb", "-D", p.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p.Port = freePort(t)
	p.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.Port)
	p.Start(t)
	t.Cleanup(func() { _ = p.command("pg_ctl", "-D", p.data, "-m", "immediate", "-w", "stop").Run() })
	return p
}

// Start starts the server and waits until it takes connections.
func (p *Postgres) Start(t testing.TB) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", p.Port, p.dir)
	if out, err := p.command("pg_ctl", "-D", p.data, "-l", p.logFile, "-o", opts, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		t.Fatalf("start PostgreSQL: %v\n%s\n%s", err, out, p.Log())
	}
}

// Stop stops the server: mode "immediate" is a crash (no checkpoint, clients cut at
// once), "fast" a clean shutdown that still disconnects every client.
func (p *Postgres) Stop(t testing.TB, mode string) {
	t.Helper()
	if out, err := p.command("pg_ctl", "-D", p.data, "-m", mode, "-w", "-t", "60", "stop").CombinedOutput(); err != nil {
		t.Fatalf("stop PostgreSQL (%s): %v\n%s", mode, err, out)
	}
}

// Log is what the server wrote to its log, for a failing test to show.
func (p *Postgres) Log() string {
	b, _ := os.ReadFile(p.logFile)
	return string(b)
}

// command runs one of the server's programs, as its OS user when the test is root.
func (p *Postgres) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(p.bin, name)
	if p.owner == nil {
		return exec.Command(path, args...)
	}
	return exec.Command("runuser", append([]string{"-u", p.owner.Username, "--", path}, args...)...)
}

// pgVersion is the major version in a path /usr/lib/postgresql/<version>/bin/….
func pgVersion(path string) int {
	rest := strings.TrimPrefix(path, "/usr/lib/postgresql/")
	v, _ := strconv.Atoi(rest[:max(0, strings.IndexByte(rest, '/'))])
	return v
}

// freePort is a loopback port nobody listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
