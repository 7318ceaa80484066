package cloudsim_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/policies"
)

// Two implementations, one answer: the simulator's policy evaluation (iam_eval.go) and
// warden's Rego library (policies/lib/iam.rego) must decide the same documents the same
// way. The library has no function that takes a resource: allows_action_on_all_resources
// (doc, action) says whether doc allows action on every resource, and allows_action(doc,
// action) whether on some resource. So the fuzz compares
//   - the simulator on a request whose resource is "*" (an operation without
//     resource-level permissions) with allows_action_on_all_resources: equal;
//   - the simulator on concrete resources with allows_action: whenever the simulator
//     allows some resource, the library must say the action is allowed somewhere.
// Documents are drawn from a small grammar: 1–3 statements, Allow or Deny, Action or
// NotAction and Resource or NotResource lists, no Condition. The resource alphabet leaves
// out the patterns the library reads as "every resource of a service" (arn:aws:s3:::*,
// arn:aws:iam::*:role/*, */*) since, for those, "every resource" and "*" are different
// questions; TestRegoDivergences records where the two disagree and why.

// regoLibrary is warden's Rego library, prepared once per query.
var regoLibrary = struct {
	once          sync.Once
	err           error
	allResources  rego.PreparedEvalQuery
	someResources rego.PreparedEvalQuery
}{}

func libraryQueries(t testing.TB) (allRes, someRes rego.PreparedEvalQuery) {
	l := &regoLibrary
	l.once.Do(func() {
		var mods []func(*rego.Rego)
		l.err = fs.WalkDir(policies.FS, "lib", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") || strings.HasSuffix(p, "_test.rego") {
				return err
			}
			src, err := fs.ReadFile(policies.FS, p)
			mods = append(mods, rego.Module("policies/"+p, string(src)))
			return err
		})
		if l.err != nil {
			return
		}
		prepare := func(q string) rego.PreparedEvalQuery {
			pq, err := rego.New(append([]func(*rego.Rego){rego.Query(q)}, mods...)...).PrepareForEval(context.Background())
			if err != nil && l.err == nil {
				l.err = err
			}
			return pq
		}
		l.allResources = prepare("data.warden.lib.iam.allows_action_on_all_resources(input.doc, input.action)")
		l.someResources = prepare("data.warden.lib.iam.allows_action(input.doc, input.action)")
	})
	if l.err != nil {
		t.Fatalf("loading the Rego library: %v", l.err)
	}
	return l.allResources, l.someResources
}

// regoHolds evaluates a prepared library function on a document and an action.
func regoHolds(t testing.TB, q rego.PreparedEvalQuery, doc, action string) bool {
	t.Helper()
	var d any
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	rs, err := q.Eval(context.Background(), rego.EvalInput(map[string]any{"doc": d, "action": action}))
	if err != nil {
		t.Fatalf("rego: %v", err)
	}
	return rs.Allowed()
}

// The grammar's alphabets.
var (
	fuzzActionPatterns = []string{"*", "s3:*", "s3:Get*", "s3:GetObject", "s3:ListBucket", "S3:listbucket", "s3:?etObject",
		"ec2:Describe*", "ec2:DescribeSecurityGroups", "ec2:*Groups", "iam:*", "iam:List*", "iam:ListUsers", "iam:PassRole",
		"sts:AssumeRole", "*:Get*", "s?:*", "*Object", "iam:*User*", "EC2:describeregions"}
	fuzzResourcePatterns = []string{"*", "**", "arn:aws:s3:::data", "arn:aws:s3:::data/*", "arn:aws:s3:::d?ta",
		"arn:aws:iam::111122223333:user/alice", "arn:aws:ec2:us-east-1:111122223333:security-group/sg-1", "arn:aws:s3:::data/report*"}
	fuzzActions = []string{"s3:GetObject", "s3:ListBucket", "s3:PutObject", "ec2:DescribeSecurityGroups", "ec2:DescribeRegions",
		"iam:ListUsers", "iam:PassRole", "iam:GetUser", "sts:AssumeRole", "S3:GETOBJECT"}
	// fuzzResources are the concrete resources requests name (besides "*").
	fuzzResources = []string{"arn:aws:s3:::data", "arn:aws:s3:::data/report.csv", "arn:aws:s3:::other",
		"arn:aws:iam::111122223333:user/alice", "arn:aws:ec2:us-east-1:111122223333:security-group/sg-1"}
)

// byteSource reads the fuzzer's bytes as choices; exhausted, it answers 0.
type byteSource []byte

func (b *byteSource) pick(n int) int {
	if len(*b) == 0 {
		return 0
	}
	v := int((*b)[0]) % n
	*b = (*b)[1:]
	return v
}

// patternList is one or more patterns of an alphabet, as a string or a list.
func (b *byteSource) patternList(alphabet []string) any {
	n := 1 + b.pick(3)
	if n == 1 && b.pick(2) == 0 {
		return alphabet[b.pick(len(alphabet))]
	}
	var out []string
	for range n {
		out = append(out, alphabet[b.pick(len(alphabet))])
	}
	return out
}

// fuzzDoc builds a policy document and an action from the fuzzer's bytes.
func fuzzDoc(data []byte) (doc, action string) {
	b := byteSource(data)
	n := 1 + b.pick(3)
	var stmts []map[string]any
	for range n {
		s := map[string]any{"Effect": [...]string{"Allow", "Deny"}[b.pick(2)]}
		s[[...]string{"Action", "NotAction"}[b.pick(2)]] = b.patternList(fuzzActionPatterns)
		s[[...]string{"Resource", "NotResource"}[b.pick(2)]] = b.patternList(fuzzResourcePatterns)
		stmts = append(stmts, s)
	}
	var statement any = stmts
	if n == 1 && b.pick(2) == 0 {
		statement = stmts[0]
	}
	raw, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": statement})
	return string(raw), fuzzActions[b.pick(len(fuzzActions))]
}

func FuzzIAMEvalMatchesRego(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 0, 0, 1, 2, 3, 0, 0, 4, 1, 0, 1, 0, 2, 5},
		{2, 1, 1, 2, 7, 9, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0, 3, 1, 1, 1, 0, 0, 0, 3},
		{0, 1, 0, 0, 18, 1, 1, 0, 2, 0, 0, 4},
	} {
		f.Add(seed)
	}
	allRes, someRes := libraryQueries(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, action := fuzzDoc(data)
		sim := cloudsim.EvalIdentity(doc, action, "*")
		if lib := regoHolds(t, allRes, doc, action); (sim == "allow") != lib {
			t.Fatalf("document %s, action %s on resource *: simulator %s, allows_action_on_all_resources %v", doc, action, sim, lib)
		}
		for _, r := range fuzzResources {
			if cloudsim.EvalIdentity(doc, action, r) == "allow" && !regoHolds(t, someRes, doc, action) {
				t.Fatalf("document %s: simulator allows %s on %s, allows_action is false", doc, action, r)
			}
		}
	})
}

// TestRegoDivergences records where the simulator and the Rego library answer differently
// by design, and the edge cases where they once did. Each case holds both answers as they
// are today, so that a change on either side shows here.
func TestRegoDivergences(t *testing.T) {
	allRes, someRes := libraryQueries(t)
	for _, tc := range []struct {
		name, doc, action, resource string
		sim                         string
		query                       rego.PreparedEvalQuery
		lib                         bool
	}{
		// A service's wildcard ARN names every resource of the service (the library's
		// "all resources" is right), but an operation without resource-level permissions
		// needs Resource "*" (the simulator's request on "*"): different questions.
		{"service wildcard ARN", `{"Statement":{"Effect":"Allow","Action":"ec2:DescribeRegions","Resource":"arn:aws:ec2:*:*:*"}}`,
			"ec2:DescribeRegions", "*", "implicit deny", allRes, true},
		// A Deny with NotResource leaves the resources it names: allowed on
		// arn:aws:s3:::data, so allowed somewhere (the library once read such a Deny as
		// covering every resource, and said nowhere).
		{"deny with NotResource", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},{"Effect":"Deny","Action":"s3:*","NotResource":"arn:aws:s3:::data"}]}`,
			"s3:ListBucket", "arn:aws:s3:::data", "allow", someRes, true},
		// "*/*" holds only wildcards and separators: the library reads an Allow on it as
		// every resource, but it matches only ARNs with a "/" (not arn:aws:s3:::data, not
		// the "*" of an operation without resource-level permissions). Deliberate: on the
		// Allow side the generous reading reports more, never less.
		{"*/* is not every resource", `{"Statement":{"Effect":"Allow","Action":"s3:ListBucket","Resource":"*/*"}}`,
			"s3:ListBucket", "arn:aws:s3:::data", "implicit deny", allRes, true},
		// A Deny on "*/*" leaves the ARNs without a "/": allowed somewhere (the library
		// once read this Deny as every resource too, which reported less).
		{"deny on */*", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},{"Effect":"Deny","Action":"s3:*","Resource":"*/*"}]}`,
			"s3:ListBucket", "arn:aws:s3:::data", "allow", someRes, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cloudsim.EvalIdentity(tc.doc, tc.action, tc.resource); got != tc.sim {
				t.Errorf("simulator on %s: %s, recorded %s", tc.resource, got, tc.sim)
			}
			if got := regoHolds(t, tc.query, tc.doc, tc.action); got != tc.lib {
				t.Errorf("library: %v, recorded %v", got, tc.lib)
			}
		})
	}
}
