package cloudsim

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestKeyer names resources as the overlays' diffs need: the region, if the type has
// one, and the first of ARN, ID, Name and Email that is a string and set.
func TestKeyer(t *testing.T) {
	type regional struct {
		ARN, ID, Name string
		Region        string
	}
	type named struct{ Name string }
	type numbered struct {
		ID    int // not a string: not a key
		Email string
	}
	type embedded struct {
		named
		Count int
	}
	type keyless struct{ Count int }
	for _, c := range []struct {
		name string
		list any // a slice of pointers to the resource
		want string
	}{
		{"ARN first", []*regional{{ARN: "arn:a", ID: "i", Region: "r"}}, "r/arn:a"},
		{"ID when no ARN", []*regional{{ID: "i", Name: "n", Region: "r"}}, "r/i"},
		{"Name when no ARN nor ID", []*regional{{Name: "n", Region: "r"}}, "r/n"},
		{"region only", []*regional{{Region: "r"}}, "r/"},
		{"no region field", []*named{{Name: "n"}}, "n"},
		{"a number is no key", []*numbered{{ID: 7, Email: "e@x"}}, "e@x"},
		{"an embedded field", []*embedded{{named: named{Name: "n"}}}, "n"},
		{"no key at all", []*keyless{{Count: 1}}, ""},
		{"a security group", []*SecurityGroup{{ID: "sg-1", Name: "web", Region: "us-east-1"}}, "us-east-1/sg-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := reflect.ValueOf(c.list)
			if got := keyerOf(l.Type()).key(l.Index(0)); got != c.want {
				t.Errorf("key %q, want %q", got, c.want)
			}
		})
	}
}

// TestGenerated_sameContentWhateverFirstID builds an account at the same place of two
// organisations whose ids start apart (the sweep benchmark draws FirstID for each run):
// the same resources, renamed, so that two runs find the same findings.
func TestGenerated_sameContentWhateverFirstID(t *testing.T) {
	build := func(first string) (*Account, string) {
		w := genTestWorld(5, 400, 2, 1)
		w.AWS.Organization.Generated.FirstID = first
		w.AWS.Organization.Generated.FaultShare = 0.5
		sim, err := New(w, Options{Now: fixedClock})
		if err != nil {
			t.Fatal(err)
		}
		g := sim.gen.cfg
		id := g.id(3)
		sim.mu.Lock()
		defer sim.mu.Unlock()
		a := sim.lookupAccount(id)
		if a == nil {
			t.Fatalf("no account %s", id)
		}
		fault := "none"
		if f := g.faultOf(id, genMgmt); f != nil {
			fault = fmt.Sprintf("%+v", *f)
		}
		return a, fault
	}
	a, fa := build("200000000000")
	b, fb := build("300000000000")
	if fa != fb {
		t.Errorf("faults: %s and %s", fa, fb)
	}
	rename := strings.NewReplacer(a.ID, "ACCOUNT")
	renameB := strings.NewReplacer(b.ID, "ACCOUNT")
	if len(a.Roles) != len(b.Roles) || len(a.Roles) == 0 {
		t.Fatalf("roles: %d and %d", len(a.Roles), len(b.Roles))
	}
	differ := 0
	for i := range a.Roles {
		if rename.Replace(string(a.Roles[i].AssumeRolePolicy)) != renameB.Replace(string(b.Roles[i].AssumeRolePolicy)) {
			differ++
		}
	}
	for i := range a.SecurityGroups {
		if !reflect.DeepEqual(a.SecurityGroups[i].Ingress, b.SecurityGroups[i].Ingress) {
			differ++
		}
	}
	for i := range a.Users {
		if a.Users[i].MFA != b.Users[i].MFA || a.Users[i].PasswordEnabled != b.Users[i].PasswordEnabled {
			differ++
		}
	}
	if differ > 0 {
		t.Errorf("%d resources differ between the two organisations' account 3", differ)
	}
}
