package engine_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// memoPolicy is a user policy on security groups whose deny calls the user library's f.
func memoPolicy(lib string) fstest.MapFS {
	return fstest.MapFS{
		"lib.rego": {Data: []byte("package acme.lib\n\n" + lib)},
		"p.rego": {Data: []byte(`# METADATA
# title: Memo probe
# custom:
#   id: ACME-MEMO-1
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   remediation: {action: notify, risk: none}
package acme.memo_probe

import data.acme.lib

deny contains sprintf("%s: %v", [input.resource.name, lib.f(input.resource.attributes.description)]) if {
	lib.f(input.resource.attributes.description)
}
`)},
	}
}

func TestNew_refusesMemoOnWhatMayDifferBetweenResources(t *testing.T) {
	tests := []struct{ name, lib, want string }{
		{"reads input", "# METADATA\n# custom:\n#   memo: true\nf(x) := x + count(input.resource.attributes)\n", "lib.rego:6:1: data.acme.lib.f cannot be memo: true: data.acme.lib.f reads input at lib.rego:6"},
		{"reads input through a rule", "# METADATA\n# custom:\n#   memo: true\nf(x) := x + g\n\ng := count(input.resource.attributes)\n", "data.acme.lib.g reads input at lib.rego:8"},
		{"reads the clock", "# METADATA\n# custom:\n#   memo: true\nf(x) := x + time.now_ns()\n", "calls the non-deterministic time.now_ns"},
		{"not a function", "f(x) := x\n\n# METADATA\n# custom:\n#   memo: true\ng := 1\n", "memo: true needs a function"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: memoPolicy(tc.lib)}}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A memoized function gives what it would give without the memo: a value, undefined, or
// an error (never remembered).
func TestMemo_sameResultsAsEvaluation(t *testing.T) {
	lib := `# METADATA
# custom:
#   memo: true
f(x) := upper(x) if {
	x != ""
	x != "bad"
}

f(x) := to_number(x) if x == "bad"
`
	sgs := func(ns ...string) []snapshot.Resource {
		var out []snapshot.Resource
		for i, n := range ns {
			out = append(out, snapshot.Resource{UID: "sg-" + string(rune('a'+i)), Type: "aws.ec2.security_group", Name: string(rune('a' + i)), Account: "1", Region: "r", Scope: "aws/1/ec2/r", Attributes: map[string]any{"description": n}})
		}
		return out
	}
	res := sgs("p", "q", "p", "", "", "bad", "bad", "p")
	var got [2]string
	for i, baseline := range []bool{true, false} {
		e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: memoPolicy(lib)}}, Baseline: baseline})
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Evaluate(context.Background(), snapshot.Header{CollectedAt: benchNow}, benchNow, res)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, f := range r.Findings {
			b.WriteString(f.Resource + " " + f.Message + "\n")
		}
		for _, ee := range r.EvalErrors {
			b.WriteString(ee.Resource + " error\n")
		}
		got[i] = b.String()
		if !baseline {
			st := e.MemoStats()
			if len(st) != 1 || st[0].Function != "data.acme.lib.f" || st[0].Hits == 0 {
				t.Fatalf("MemoStats = %+v, want hits of data.acme.lib.f", st)
			}
			// Values and undefined are remembered: evaluating them again misses nothing.
			// An error is not: "bad" is evaluated again.
			misses := func(res []snapshot.Resource) int64 {
				before := e.MemoStats()[0].Misses
				if _, err := e.Evaluate(context.Background(), snapshot.Header{CollectedAt: benchNow}, benchNow, res); err != nil {
					t.Fatal(err)
				}
				return e.MemoStats()[0].Misses - before
			}
			if n := misses(sgs("q", "", "p")); n != 0 {
				t.Errorf("evaluating remembered arguments again missed %d times", n)
			}
			if n := misses(sgs("bad")); n == 0 {
				t.Errorf("an error was remembered")
			}
		}
	}
	want := "sg-a a: P\nsg-b b: Q\nsg-c c: P\nsg-h h: P\nsg-f error\nsg-g error\n"
	if got[0] != want || got[1] != want {
		t.Errorf("without memo:\n%s\nwith memo:\n%s\nwant:\n%s", got[0], got[1], want)
	}
}

// The pack with and without the memo finds the same in the acme organisation and a
// synthetic mix, and the memo is used.
func TestFastPath_sameFindingsAsTopdown(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Resources: 3000, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	acme, err := os.ReadFile("../fixtures/acme/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, snap := range map[string][]byte{"acme": acme, "synthetic": buf.Bytes()} {
		t.Run(name, func(t *testing.T) {
			var out [2][]byte
			for i, baseline := range []bool{true, false} {
				e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Baseline: baseline})
				if err != nil {
					t.Fatal(err)
				}
				res, err := e.Scan(context.Background(), snapshot.NewReader(bytes.NewReader(snap), name), engine.Options{})
				if err != nil {
					t.Fatal(err)
				}
				out[i] = decisions(t, res)
				if !baseline {
					var hits int64
					for _, s := range e.MemoStats() {
						hits += s.Hits
					}
					if hits == 0 {
						t.Errorf("the memo was never used: %+v", e.MemoStats())
					}
					if n := e.Fallbacks(); n != 0 {
						t.Errorf("irvm could not finish %d evaluations of the pack", n)
					}
				}
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Errorf("findings differ with the memo:\n%s", diffLines(string(out[0]), string(out[1])))
			}
		})
	}
}

func diffLines(a, b string) string {
	in := map[string]int{}
	for l := range strings.SplitSeq(a, "\n") {
		in[l]++
	}
	var out strings.Builder
	for l := range strings.SplitSeq(b, "\n") {
		if in[l] > 0 {
			in[l]--
			continue
		}
		out.WriteString("+ " + l + "\n")
	}
	for l, n := range in {
		if n > 0 {
			out.WriteString("- " + l + "\n")
		}
	}
	return out.String()
}
