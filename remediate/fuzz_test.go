package remediate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"testing"

	"github.com/warden-sec/warden/remediate"
)

// decodePlan reads a plan file as 'warden apply PLAN' does (remediate.ReadPlan):
// unknown fields refused, then Check.
func decodePlan(b []byte) (*remediate.Plan, error, error) {
	var p remediate.Plan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, err, nil
	}
	return &p, nil, p.Check()
}

// checkErr is the shape of every refusal of Check: a version it does not read, or a
// hash that does not match, naming the action or the plan.
var refusal = regexp.MustCompile(`^(plan version -?\d+: this warden reads version \d+|actions\[\d+\] \(.*\): .*|plan hash .*)$`)

// FuzzPlanCheck: a plan file, however edited, is read and checked without a panic;
// Check answers the same twice; a refusal is ErrPlanTampered (or the version) and names
// the action or the plan hash; a plan Check accepts is still accepted, with the same
// hashes, after being written out and read back (what 'warden plan --out' then 'warden
// apply' does).
func FuzzPlanCheck(f *testing.F) {
	acme, err := os.ReadFile("testdata/acme-plan.json")
	if err != nil {
		f.Fatal(err)
	}
	p, decErr, checkErr := decodePlan(acme)
	if decErr != nil || checkErr != nil {
		f.Fatalf("testdata/acme-plan.json: %v %v", decErr, checkErr)
	}
	f.Add(acme)
	// One plan per action: small seeds the fuzzer can mutate quickly.
	for i := range p.Actions {
		one := p.Only(func(a remediate.PlannedAction) bool { return a.ID == p.Actions[i].ID })
		b, err := json.Marshal(one)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	none, _ := json.Marshal(p.Only(func(remediate.PlannedAction) bool { return false }))
	f.Add(none)
	for _, s := range []string{`{}`, `{"version":1}`, `{"version":2,"actions":[]}`, `{"version":1,"actions":[{}]}`, `null`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, decErr, err := decodePlan(b)
		if decErr != nil {
			return
		}
		if again := p.Check(); (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("Check answered %v then %v", err, again)
		}
		if err != nil {
			if !refusal.MatchString(err.Error()) {
				t.Fatalf("refusal %q names no action, plan hash or version", err)
			}
			if p.Version == remediate.PlanVersion && !errors.Is(err, remediate.ErrPlanTampered) {
				t.Fatalf("refusal %v of a version-1 plan is not ErrPlanTampered", err)
			}
			return
		}
		out, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			t.Fatalf("write an accepted plan: %v", err)
		}
		q, decErr, err := decodePlan(out)
		if decErr != nil || err != nil {
			t.Fatalf("an accepted plan, written out, is refused: %v %v\n%s", decErr, err, out)
		}
		if q.Hash != p.Hash || len(q.Actions) != len(p.Actions) {
			t.Fatalf("plan hash %s became %s", p.Hash, q.Hash)
		}
		for i := range p.Actions {
			if q.Actions[i].Hash != p.Actions[i].Hash || q.Actions[i].Key != p.Actions[i].Key ||
				!reflect.DeepEqual(q.Actions[i].Params, p.Actions[i].Params) {
				t.Fatalf("actions[%d] changed in the round trip: %+v / %+v", i, p.Actions[i], q.Actions[i])
			}
		}
	})
}
