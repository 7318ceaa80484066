package docs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The machinery of TestDocs (docs_test.go says what the conventions are): a document's
// shell blocks are found, turned into one bash script whose line N is the document's
// line N, and run in a sandbox; the output is cut back into blocks for the report.

// docBlock is one fenced shell block of a document.
type docBlock struct {
	fence      int // line of the opening fence (1-based)
	first      int // line of the block's first line of code
	code       []string
	background bool // preceded by <!-- in another terminal -->
}

// docExits is a line ending in "# exits N": the command before the comment must exit N.
var docExits = regexp.MustCompile(`^(.*\S)\s+#\s*exits\s+(\d+)\b.*$`)

// docComment finds a shell comment before the "# exits N" one.
var docComment = regexp.MustCompile(`\s#`)

// docBackground is the comment that runs the next block in the background.
var docBackground = regexp.MustCompile(`^\s*<!--\s*in another terminal\b.*-->\s*$`)

// parseDocBlocks returns the shell blocks (```sh, ```bash, ```shell) of a Markdown
// document in order; other fences (```text, ```yaml, …) are skipped. A fence may be
// indented (inside a list item): its indentation is taken off its lines.
func parseDocBlocks(text string) ([]docBlock, error) {
	lines := strings.Split(text, "\n")
	var blocks []docBlock
	background := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case docBackground.MatchString(line):
			background = true
			continue
		case strings.TrimSpace(line) == "":
			continue // a blank line between the comment and its block keeps the comment
		case !strings.HasPrefix(trimmed, "```"):
			background = false
			continue
		}
		indent := len(line) - len(trimmed)
		lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		b := docBlock{fence: i + 1, first: i + 2, background: background}
		background = false
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "```" {
				closed = true
				break
			}
			code := lines[i]
			if len(code)-len(strings.TrimLeft(code, " \t")) >= indent {
				code = code[indent:]
			}
			b.code = append(b.code, code)
		}
		if !closed {
			return nil, fmt.Errorf("line %d: the ``` fence is never closed", b.fence)
		}
		switch lang {
		case "":
			return nil, fmt.Errorf("line %d: a ``` fence names its language: sh when its commands run, text when they cannot", b.fence)
		case "sh", "bash", "shell":
			for j, code := range b.code {
				// "# exits N" must be the line's only comment: an earlier one would
				// swallow the check the harness appends to the command.
				if m := docExits.FindStringSubmatch(code); m != nil && docComment.MatchString(m[1]) {
					return nil, fmt.Errorf("line %d: put the explanation after \"# exits %s\", the line's only comment", b.first+j, m[2])
				}
			}
			blocks = append(blocks, b)
		default:
			if b.background {
				return nil, fmt.Errorf("line %d: <!-- in another terminal --> precedes a ```%s block, which never runs", b.fence, lang)
			}
		}
	}
	return blocks, nil
}

// rewriteExits turns every command ending in "# exits N" into one whose exit code is
// checked, on the same lines: `if CMD; then rc=0; else rc=$?; fi; check N rc LINE`. A
// command continued over several lines (a trailing backslash) is wrapped whole.
func rewriteExits(code []string, first int) []string {
	out := append([]string(nil), code...)
	for i, line := range out {
		m := docExits.FindStringSubmatch(line)
		if m == nil || strings.HasSuffix(m[1], "\\") {
			continue
		}
		start := i
		for start > 0 && strings.HasSuffix(strings.TrimRight(out[start-1], " \t"), "\\") {
			start--
		}
		out[i] = m[1] + "; then __docs_rc=0; else __docs_rc=$?; fi; __docs_exits " + m[2] + " \"$__docs_rc\" " + strconv.Itoa(first+i)
		out[start] = "if " + out[start]
	}
	return out
}

// docPrelude is the script's first line: the helpers and traps. The document's line 1
// is its title, never code. Job control (set -m) puts each background job in its own
// process group, so that stopping one stops what it started; at the end every job the
// document left (its background blocks, a `warden serve &` of its own) gets SIGTERM, then
// SIGKILL after 10 s.
const docPrelude = `set -o errtrace; set -m; __docs_bgs=(); ` +
	`__docs_exits() { if [ "$2" != "$1" ]; then echo "::docs-fail $3 exited $2, want $1" >&2; exit 97; fi; }; ` +
	`__docs_stop() { local gs=($(printf '%s\n' "${__docs_bgs[@]}" $(jobs -p) | sort -u)); for g in "${gs[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done; ` +
	`for g in "${gs[@]}"; do for _ in $(seq 100); do kill -0 -- "-$g" 2>/dev/null || break; sleep 0.1; done; kill -KILL -- "-$g" 2>/dev/null || true; done; }; ` +
	`__docs_bg() { bash -euo pipefail "$2" >"$3" 2>&1 & local pid=$!; __docs_bgs+=("$pid"); echo "$pid" >>"$DOCS_STATE/pgids"; ` +
	`for _ in $(seq 1200); do grep -qE '(listening|serving) on https?://' "$3" && return 0; ` +
	`kill -0 "$pid" 2>/dev/null || { echo "::docs-fail $1 the background block exited before it listened:" >&2; cat "$3" >&2; exit 98; }; sleep 0.05; done; ` +
	`echo "::docs-fail $1 the background block did not listen within 60s:" >&2; cat "$3" >&2; exit 98; }; ` +
	`trap '__docs_rc=$?; echo "::docs-fail $LINENO exited $__docs_rc: $BASH_COMMAND" >&2; exit $__docs_rc' ERR; ` +
	`trap '__docs_stop' EXIT; trap 'exit 143' TERM`

// docScript is the bash script running a document's blocks, line for line with the
// document, and the scripts of its background blocks (by file name, written beside it).
func docScript(doc string, blocks []docBlock, stateDir string) (string, map[string]string) {
	n := 1
	for _, b := range blocks {
		n = max(n, b.first+len(b.code))
	}
	lines := make([]string, n+1)
	lines[0] = docPrelude
	bg := map[string]string{}
	for _, b := range blocks {
		if b.background {
			// Its own script, run by __docs_bg; its lines also match the document's.
			sub := make([]string, b.first-1, b.first-1+len(b.code))
			sub = append(sub, b.code...)
			name := fmt.Sprintf("bg-%d.sh", b.fence)
			bg[name] = strings.Join(sub, "\n") + "\n"
			lines[b.fence-1] = fmt.Sprintf(`echo "::docs-block %d $EPOCHREALTIME"; __docs_bg %d %q %q`, b.fence, b.fence,
				filepath.Join(stateDir, name), filepath.Join(stateDir, fmt.Sprintf("bg-%d.log", b.fence)))
			continue
		}
		lines[b.fence-1] = fmt.Sprintf(`echo "::docs-block %d $EPOCHREALTIME"`, b.fence)
		for i, code := range rewriteExits(b.code, b.first) {
			lines[b.first-1+i] = code
		}
	}
	return strings.Join(lines, "\n") + "\n", bg
}

// docRun is the outcome of running one document.
type docRun struct {
	out    string // stdout and stderr, as they came
	err    error
	failAt int    // the document's line a failure was reported at, 0 for none
	reason string // what the failure report says
}

var docFail = regexp.MustCompile(`(?m)^::docs-fail (\d+) (.*)$`)

// runDocScript runs script with bash in dir under env, stopping it after timeout.
func runDocScript(t *testing.T, script, dir, stateDir string, env []string, timeout time.Duration) docRun {
	t.Helper()
	path := filepath.Join(stateDir, "doc.sh")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", path)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// SIGTERM first, so that the script's EXIT trap stops its background blocks.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("the document did not finish within %v (a foreground command that never returns?): %w", timeout, err)
	}
	r := docRun{out: out.String(), err: err}
	if m := docFail.FindStringSubmatch(r.out); m != nil {
		r.failAt, _ = strconv.Atoi(m[1])
		r.reason = m[2]
	}
	return r
}

// stopLeftovers kills what a document left running (a background block whose script
// was itself killed), by the process groups the script recorded.
func stopLeftovers(stateDir string) {
	b, err := os.ReadFile(filepath.Join(stateDir, "pgids"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pg, err := strconv.Atoi(f); err == nil && pg > 1 {
			_ = syscall.Kill(-pg, syscall.SIGKILL)
		}
	}
}

// docMarker is the line the script prints as a block starts: its fence's line and the
// time.
var docMarker = regexp.MustCompile(`^::docs-block (\d+) ([\d.]+)\n?$`)

// blockOutput cuts the run's output of the block whose fence is at line fence.
func blockOutput(out string, fence int) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(out) {
		if m := docMarker.FindStringSubmatch(line); m != nil {
			in = m[1] == strconv.Itoa(fence)
			continue
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// blockTimes says how long each block took, from the markers' times: slow blocks are
// what to shorten when the docs test grows past its two minutes.
func blockTimes(out string, end time.Time) string {
	type mark struct {
		fence string
		at    float64
	}
	var marks []mark
	for line := range strings.Lines(out) {
		if m := docMarker.FindStringSubmatch(line); m != nil {
			at, _ := strconv.ParseFloat(m[2], 64)
			marks = append(marks, mark{m[1], at})
		}
	}
	var parts []string
	for i, m := range marks {
		next := float64(end.UnixMicro()) / 1e6
		if i+1 < len(marks) {
			next = marks[i+1].at
		}
		parts = append(parts, fmt.Sprintf("line %s %.1fs", m.fence, next-m.at))
	}
	return strings.Join(parts, ", ")
}

// failureReport says where a document failed: the block, the line and its command, what
// the block printed, and the output of its background blocks.
func failureReport(doc string, lines []string, blocks []docBlock, r docRun, sandbox, stateDir string) string {
	var b strings.Builder
	var failed *docBlock
	for i := range blocks {
		bl := &blocks[i]
		if r.failAt >= bl.fence && r.failAt < bl.first+len(bl.code)+1 {
			failed = bl
		}
	}
	switch {
	case failed != nil:
		fmt.Fprintf(&b, "%s:%d: the block at line %d failed: %s\n", doc, r.failAt, failed.fence, r.reason)
		if r.failAt >= failed.first && r.failAt <= len(lines) {
			fmt.Fprintf(&b, "  command: %s\n", strings.TrimSpace(lines[r.failAt-1]))
		}
		fmt.Fprintf(&b, "--- its output (the last 60 lines):\n%s\n", tail(blockOutput(r.out, failed.fence), 60))
	default:
		fmt.Fprintf(&b, "%s: %v (%s)\n--- output (the last 60 lines):\n%s\n", doc, r.err, r.reason, tail(r.out, 60))
	}
	for _, bl := range blocks {
		if !bl.background {
			continue
		}
		if log, err := os.ReadFile(filepath.Join(stateDir, fmt.Sprintf("bg-%d.log", bl.fence))); err == nil {
			fmt.Fprintf(&b, "--- the background block at line %d printed:\n%s\n", bl.fence, tail(string(log), 40))
		}
	}
	// Logs the document redirects its own processes to (2> replica-a.log &) say why a
	// server it waits for never answered.
	logs, _ := filepath.Glob(filepath.Join(sandbox, "*.log"))
	for _, l := range logs {
		if text, err := os.ReadFile(l); err == nil {
			fmt.Fprintf(&b, "--- %s (the last 20 lines):\n%s\n", filepath.Base(l), tail(string(text), 20))
		}
	}
	return b.String()
}

func TestDocs_conventions(t *testing.T) {
	doc := strings.Join([]string{
		"# Title",                              // 1
		"```sh",                                // 2
		"warden scan --sim w.yaml   # exits 1", // 3
		"```",                                  // 4
		"<!-- in another terminal -->",         // 5
		"",                                     // 6
		"```sh",                                // 7
		"warden serve",                         // 8
		"```",                                  // 9
		"```text",                              // 10
		"slack only",                           // 11
		"```",                                  // 12
		"- a list item:",                       // 13
		"  ```bash",                            // 14
		"  warden plan \\",                     // 15
		"    --out p.json  # exits 2",          // 16
		"  ```",                                // 17
	}, "\n")
	blocks, err := parseDocBlocks(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 {
		t.Fatalf("%d blocks, want 3 (the text block does not run): %+v", len(blocks), blocks)
	}
	tests := []struct {
		block      docBlock
		fence      int
		background bool
		code       []string
	}{
		{blocks[0], 2, false, []string{`if warden scan --sim w.yaml; then __docs_rc=0; else __docs_rc=$?; fi; __docs_exits 1 "$__docs_rc" 3`}},
		{blocks[1], 7, true, []string{"warden serve"}},
		{blocks[2], 14, false, []string{`if warden plan \`, `  --out p.json; then __docs_rc=0; else __docs_rc=$?; fi; __docs_exits 2 "$__docs_rc" 16`}},
	}
	for _, tt := range tests {
		if tt.block.fence != tt.fence || tt.block.background != tt.background {
			t.Errorf("block at %d (background %v), want %d (%v)", tt.block.fence, tt.block.background, tt.fence, tt.background)
		}
		if got := rewriteExits(tt.block.code, tt.block.first); !slices.Equal(got, tt.code) {
			t.Errorf("block at %d runs\n%q\nwant\n%q", tt.fence, got, tt.code)
		}
	}
	script, bgs := docScript("t.md", blocks, "/state")
	lines := strings.Split(script, "\n")
	if lines[2] != tests[0].code[0] || lines[15] != tests[2].code[1] {
		t.Errorf("the script's lines are not the document's:\n%s", script)
	}
	if bg := bgs["bg-7.sh"]; strings.Split(bg, "\n")[7] != "warden serve" {
		t.Errorf("the background script's line 8 is not the document's:\n%q", bg)
	}
	if _, err := parseDocBlocks("<!-- in another terminal -->\n```text\nx\n```\n"); err == nil {
		t.Error("a background comment before a text block was accepted")
	}
	if _, err := parseDocBlocks("```sh\nwarden scan  # why  # exits 1\n```\n"); err == nil {
		t.Error("a comment before # exits N was accepted")
	}
	if _, err := parseDocBlocks("```\nwarden scan\n```\n"); err == nil {
		t.Error("a fence without a language was accepted: its commands would silently not run")
	}
	if _, err := parseDocBlocks("```sh\nwarden scan\n"); err == nil {
		t.Error("an unclosed fence was accepted")
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
