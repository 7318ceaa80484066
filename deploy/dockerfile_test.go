package deploy

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const dockerfilePath = "../Dockerfile"

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	stage int    // index of the FROM it belongs to
	cmd   string // upper case: FROM, RUN, COPY…
	args  string
	line  int
}

// parseDockerfile reads instructions the way Docker's parser splits them: comment
// lines dropped (also inside a continuation), a trailing backslash joining the next
// line. No Docker engine runs here, so the test reads the file's shape.
func parseDockerfile(t *testing.T, data []byte) []instruction {
	t.Helper()
	var out []instruction
	stage := -1
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if body, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		}
		out = append(out, instruction{stage: stage, cmd: cmd, args: strings.Join(strings.Fields(args), " "), line: start})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// linkerVars are main's package-level string variables: what -X can set. The linker
// ignores -X for a variable that does not exist, silently.
func linkerVars(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../cmd/warden/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var vars []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" && len(vs.Values) == 0 {
					for _, n := range vs.Names {
						vars = append(vars, n.Name)
					}
				}
			}
		}
	}
	return vars
}

func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	ins := parseDockerfile(t, data)
	var froms []instruction
	for _, in := range ins {
		if in.cmd == "FROM" {
			froms = append(froms, in)
		}
	}
	if len(froms) < 2 {
		t.Fatalf("%d stages: want a build stage and a runtime stage", len(froms))
	}
	final := len(froms) - 1
	in := func(stage int, cmd string) []instruction {
		var out []instruction
		for _, i := range ins {
			if i.stage == stage && i.cmd == cmd {
				out = append(out, i)
			}
		}
		return out
	}
	buildName := ""
	if f := strings.Fields(froms[0].args); len(f) == 3 && strings.EqualFold(f[1], "AS") {
		buildName = f[2]
	}
	var goBuild instruction
	for _, r := range in(0, "RUN") {
		if strings.Contains(r.args, "go build") {
			goBuild = r
		}
	}
	// main.buildVersion=… and the like in the ldflags.
	xFlag := regexp.MustCompile(`-X ?main\.(\w+)=`)
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"a named Go build stage", func(t *testing.T) {
			if buildName == "" || !strings.HasPrefix(froms[0].args, "golang:") {
				t.Errorf("first stage FROM %s: want golang:… AS <name>", froms[0].args)
			}
		}},
		{"a static, non-root distroless runtime", func(t *testing.T) {
			if !regexp.MustCompile(`^gcr\.io/distroless/static[-\w]*:nonroot(@sha256:[0-9a-f]{64})?$`).MatchString(froms[final].args) {
				t.Errorf("last stage FROM %s: want distroless static, nonroot", froms[final].args)
			}
		}},
		{"the runtime stage runs nothing and copies only from the build", func(t *testing.T) {
			if rs := in(final, "RUN"); len(rs) > 0 {
				t.Errorf("line %d: RUN in the runtime stage (distroless has no shell)", rs[0].line)
			}
			for _, c := range in(final, "COPY") {
				if !strings.HasPrefix(c.args, "--from="+buildName+" ") {
					t.Errorf("line %d: COPY %s: want --from=%s", c.line, c.args, buildName)
				}
			}
			for _, cmd := range []string{"ADD", "VOLUME", "EXPOSE"} {
				if xs := in(final, cmd); len(xs) > 0 {
					t.Errorf("line %d: %s in the runtime stage", xs[0].line, cmd)
				}
			}
		}},
		{"USER nonroot", func(t *testing.T) {
			users := in(final, "USER")
			if len(users) == 0 {
				t.Fatal("no USER in the runtime stage")
			}
			if u := users[len(users)-1].args; !slices.Contains([]string{"nonroot", "nonroot:nonroot", "65532", "65532:65532"}, u) {
				t.Errorf("USER %s, want nonroot", u)
			}
		}},
		{"a static, reproducible go build", func(t *testing.T) {
			if goBuild.cmd == "" {
				t.Fatal("no RUN … go build in the build stage")
			}
			for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-buildvcs=", "-o /out/warden", "./cmd/warden"} {
				if !strings.Contains(goBuild.args, want) {
					t.Errorf("line %d: go build without %s", goBuild.line, want)
				}
			}
			if regexp.MustCompile(`\bdate\b|BUILD_?TIME|\$\(date`).MatchString(goBuild.args) {
				t.Errorf("line %d: the build reads the clock: %s", goBuild.line, goBuild.args)
			}
		}},
		{"every -X names a variable of main", func(t *testing.T) {
			vars := linkerVars(t)
			ms := xFlag.FindAllStringSubmatch(goBuild.args, -1)
			if len(ms) == 0 {
				t.Fatalf("line %d: no -X main.…: the version would not reach warden version", goBuild.line)
			}
			for _, m := range ms {
				if !slices.Contains(vars, m[1]) {
					t.Errorf("-X main.%s: main has no such string variable (it has %v): the linker would ignore it", m[1], vars)
				}
			}
		}},
		{"-buildvcs=false because the context has no .git", func(t *testing.T) {
			if !strings.Contains(goBuild.args, "-buildvcs=false") {
				return
			}
			ignore, err := os.ReadFile("../.dockerignore")
			if err != nil || !slices.Contains(strings.Fields(string(ignore)), ".git") {
				t.Errorf(".dockerignore does not leave .git out (%v): -buildvcs=false would throw away a revision the build could stamp", err)
			}
		}},
		{"the binary and the policy pack reach the image", func(t *testing.T) {
			var entry string
			if es := in(final, "ENTRYPOINT"); len(es) > 0 {
				entry = es[len(es)-1].args
			}
			copies := map[string]string{}
			for _, c := range in(final, "COPY") {
				f := strings.Fields(c.args)
				copies[f[len(f)-2]] = f[len(f)-1]
			}
			if bin := copies["/out/warden"]; bin == "" || entry != `["`+bin+`"]` {
				t.Errorf("the binary is copied to %q, ENTRYPOINT is %s", bin, entry)
			}
			if dst := copies["/out/policies"]; dst != "/usr/share/warden/policies" {
				t.Errorf("the policy pack is copied to %q, want /usr/share/warden/policies", dst)
			}
			made := false
			for _, r := range in(0, "RUN") {
				made = made || (strings.Contains(r.args, "/out/policies") && strings.Contains(r.args, "*.rego") && strings.Contains(r.args, "policies"))
			}
			if !made {
				t.Error("no RUN in the build stage gathers policies/**/*.rego into /out/policies")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}
