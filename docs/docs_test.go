package docs

// TestDocs runs every shell command shown in docs/*.md, for real, so that the docs cannot
// rot. The conventions a document follows (docs/README.md says the same to its authors):
//
//   - A ```sh block (or ```bash, ```shell) runs; every other fence (```text, ```yaml,
//     ```rego, …) does not. A command that cannot run here (it needs real Slack, say) goes
//     in a ```text block, and that must stay rare.
//   - A document's blocks run in order, in one bash process, as one reader pasting them into
//     one terminal: `cd`, variables and exports carry from a block to the next. Each runs
//     under `set -euo pipefail`: any command that fails fails the document.
//   - A command whose line ends in `# exits N` must exit N (`warden scan … # exits 1`: it
//     found high findings); a command continued over lines carries it on its last line.
//   - A block preceded by `<!-- in another terminal -->` runs in the background until the
//     document ends (`warden serve`, `warden sim`); the next block starts once it prints
//     that it is listening ("listening on http://…", "serving on http://…"), within 60 s.
//     At the document's end it gets SIGTERM, then SIGKILL after 10 s.
//   - Documents run side by side, so each one listens on ports no other document uses
//     (8080 and 4566 are getting-started's and collectors'; the others pick theirs).
//   - A document that uses $WARDEN_TEST_POSTGRES runs on a fresh schema of that server,
//     and is skipped when it is unset (except under CI, where it fails).
//
// The sandbox, one per document: a temporary working directory holding links to the
// repository's fixtures/, docs/, policies/, go.mod and go.sum (so that paths such as
// fixtures/acme/world.yaml and docs/examples/… and `go tool opa` work as in a checkout);
// HOME and XDG_STATE_HOME inside it; WARDEN_ACTOR=alice; a warden binary built once for
// the run first on PATH; and a simulator of the acme world started by the test, which
// AWS_ENDPOINT_URL points at, with credentials that only the simulator accepts. So
// `warden scan --aws-org` written for a real organisation reads the simulator. GCP has
// no such variable: a command reading GCP names the simulator with --gcp-endpoint.
//
// A failure names the document, the failing block's line, the command and its output.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/store/storetest"
)

// docTimeout bounds one document's run; the whole test aims at under two minutes.
const docTimeout = 3 * time.Minute

func TestDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command of docs/ against the simulator (about two minutes)")
	}
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found")
	}
	bin := buildWarden(t)
	goEnv := goEnvironment(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range docs {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".md"), func(t *testing.T) {
			// Pages run side by side (each in its own sandbox, against its own
			// simulator); the ports a page listens on are its own, so two pages never
			// pick the same one.
			t.Parallel()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := parseDocBlocks(string(b))
			if err != nil {
				t.Fatalf("docs/%s: %v", name, err)
			}
			if len(blocks) == 0 {
				return
			}
			runDoc(t, "docs/"+name, string(b), blocks, root, bin, goEnv)
		})
	}
}

// runDoc runs one document's blocks in a fresh sandbox.
func runDoc(t *testing.T, doc, text string, blocks []docBlock, root, bin string, goEnv []string) {
	start := time.Now()
	sandbox := t.TempDir()
	stateDir := t.TempDir() // the harness's own files, out of the reader's sight
	for _, name := range []string{"fixtures", "docs", "policies", "go.mod", "go.sum"} {
		if err := os.Symlink(filepath.Join(root, name), filepath.Join(sandbox, name)); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(sandbox, "home")
	tmp := filepath.Join(stateDir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	world, err := cloudsim.LoadWorld(filepath.Join(root, "fixtures", "acme", "world.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, simURL := simtest.Start(t, world, cloudsim.Options{})
	env := append(slices.Clone(goEnv),
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home,
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"TMPDIR="+tmp,
		"LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "TZ=UTC",
		"DOCS_STATE="+stateDir,
		"WARDEN_ACTOR=alice",
		// Credentials no real account knows: only the simulator accepts any key.
		"AWS_ENDPOINT_URL="+simURL,
		"AWS_ACCESS_KEY_ID=AKIAWARDENDOCSSIM000",
		"AWS_SECRET_ACCESS_KEY=only-the-warden-simulator-accepts-this",
		"AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE="+filepath.Join(home, ".aws", "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, ".aws", "credentials"),
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=",
	)
	if strings.Contains(text, "WARDEN_TEST_POSTGRES") {
		base := os.Getenv("WARDEN_TEST_POSTGRES")
		if base == "" {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s needs PostgreSQL and WARDEN_TEST_POSTGRES is not set: .ci/run starts one", doc)
			}
			t.Skipf("%s needs PostgreSQL: set WARDEN_TEST_POSTGRES=postgres://user:pass@host/db", doc)
		}
		env = append(env, "WARDEN_TEST_POSTGRES="+storetest.FreshSchema(t, base))
	}
	script, bgs := docScript(doc, blocks, stateDir)
	for name, s := range bgs {
		if err := os.WriteFile(filepath.Join(stateDir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { stopLeftovers(stateDir) })
	r := runDocScript(t, script, sandbox, stateDir, env, docTimeout)
	if r.err != nil {
		t.Fatal(failureReport(doc, strings.Split(text, "\n"), blocks, r, sandbox, stateDir))
	}
	t.Logf("%s: %d blocks ran in %v (%s)", doc, len(blocks), time.Since(start).Round(time.Millisecond), blockTimes(r.out, time.Now()))
}

// buildWarden builds the warden binary once for the whole run (the build cache makes it
// a link), into a directory that goes first on each sandbox's PATH.
func buildWarden(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the docs run the warden binary, built with go: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "warden")
	cmd := exec.Command(goBin, "build", "-o", bin, "../cmd/warden")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/warden: %v\n%s", err, out)
	}
	return bin
}

// goEnvironment is the Go toolchain's settings as this test sees them, for the sandbox:
// its HOME moves, and `go tool opa` must still find the build and module caches.
func goEnvironment(t *testing.T) []string {
	t.Helper()
	names := []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "GOSUMDB", "GONOSUMDB", "GOPRIVATE",
		"GOINSECURE"}
	out, err := exec.Command("go", append([]string{"env", "-json"}, names...)...).Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	var vals map[string]string
	if err := json.Unmarshal(out, &vals); err != nil {
		t.Fatalf("go env: %v", err)
	}
	// The toolchain in use, never a download.
	env := []string{"GOTOOLCHAIN=local"}
	for _, n := range names {
		env = append(env, fmt.Sprintf("%s=%s", n, vals[n]))
	}
	return env
}
