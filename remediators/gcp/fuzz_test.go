package gcp

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// acmeBindings returns the bindings of the acme fixture's project and organisation IAM
// policies (as JSON texts, one per policy) and a role and member of each binding.
func acmeBindings(tb testing.TB) (policies []string, pairs [][2]string) {
	tb.Helper()
	f, err := os.Open("../../fixtures/acme/snapshot.json")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	_, resources, err := snapshot.ReadAll(f, "acme")
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range resources {
		if !strings.HasSuffix(r.Type, ".iam_policy") {
			continue
		}
		text, _ := json.Marshal(r.Attributes["bindings"])
		policies = append(policies, string(text))
		for _, bd := range attr.Maps(r.Attributes, "bindings") {
			for _, m := range attr.Strings(bd, "members") {
				pairs = append(pairs, [2]string{attr.String(bd, "role"), m})
			}
		}
	}
	if len(policies) == 0 || len(pairs) == 0 {
		tb.Fatal("the acme snapshot holds no GCP IAM policy bindings")
	}
	return policies, pairs
}

// FuzzBindingTargets: whatever bindings a snapshot's GCP IAM policy holds and whatever
// role, member and condition a policy's violation names, Targets never panics, and plans
// one removal per binding of that role (and condition) holding the member, each with a
// before-state naming that binding and member, each a part of its own: two targets with
// one part would be one action, and one binding would keep the member.
func FuzzBindingTargets(f *testing.F) {
	policies, pairs := acmeBindings(f)
	for i, p := range pairs {
		f.Add(policies[i%len(policies)], p[0], p[1], "")
	}
	cond := `[{"role":"roles/editor","members":["user:a@x","user:b@x"],"condition":{"title":"t","expression":"request.time < timestamp('2027-01-01T00:00:00Z')"}},` +
		`{"role":"roles/editor","members":["user:a@x"],"condition":null}]`
	f.Add(cond, "roles/editor", "user:a@x", "")
	f.Add(cond, "roles/editor", "user:a@x", "t")
	f.Add(`[{"role":"roles/owner","members":"user:a@x"},{"role":5},null,{"members":[1,"user:a@x"]}]`, "roles/owner", "user:a@x", "")
	const uid = "//cloudresourcemanager.googleapis.com/projects/acme-prod-4821"
	f.Fuzz(func(t *testing.T, bindings, role, member, condition string) {
		var list any
		if json.Unmarshal([]byte(bindings), &list) != nil {
			return
		}
		res := snapshot.Resource{UID: uid, Type: "gcp.project.iam_policy", Attributes: map[string]any{"bindings": list}}
		params := map[string]any{"role": role, "member": member}
		if condition != "" {
			params["condition"] = condition
		}
		targets, err := (&RemoveBindingMember{}).Targets(res, params)
		if err != nil {
			if role != "" && member != "" {
				t.Fatalf("Targets(role %q, member %q) refused: %v", role, member, err)
			}
			return
		}
		want := 0
		// Google keeps one binding per role and condition (title and expression): a policy
		// with two is not one it returns, and its targets may share a part.
		google := true
		seen := map[[3]string]bool{}
		for _, b := range attr.Maps(res.Attributes, "bindings") {
			if attr.String(b, "role") != role || !slices.Contains(attr.Strings(b, "members"), member) {
				continue
			}
			c := attr.Map(b, "condition")
			key := [3]string{"none"}
			if c != nil {
				key = [3]string{"cond", attr.String(c, "title"), attr.String(c, "expression")}
			}
			google = google && !seen[key]
			seen[key] = true
			if condition == "" || c != nil && (attr.String(c, "expression") == condition || attr.String(c, "title") == condition) {
				want++
			}
		}
		if len(targets) != want {
			t.Fatalf("%d targets for %d bindings of %s holding %s", len(targets), want, role, member)
		}
		parts := map[string]bool{}
		for _, tg := range targets {
			var b bindingBefore
			if err := attr.Decode(tg.Before, &b); err != nil || b.Resource != "projects/acme-prod-4821" || b.Role != role || b.Member != member {
				t.Fatalf("target %+v: before-state %+v (%v)", tg, b, err)
			}
			if !strings.HasPrefix(tg.Part, role+"/"+member) {
				t.Fatalf("part %q names not %s/%s", tg.Part, role, member)
			}
			if parts[tg.Part] && google {
				t.Fatalf("two bindings of %s holding %s give one part %q:\n%s", role, member, tg.Part, bindings)
			}
			parts[tg.Part] = true
		}
	})
}
