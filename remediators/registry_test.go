package remediators_test

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/remediators/builtin"
)

// renamed is a real remediator under another action name.
type renamed struct {
	remediators.Remediator
	name string
}

func (r renamed) Spec() remediators.Spec {
	s := r.Remediator.Spec()
	s.Action = r.name
	return s
}

func TestNewRegistry_refusesBadRegistrations(t *testing.T) {
	key := awsfix.NewDeactivateAccessKey(nil)
	tests := []struct {
		name string
		rs   []remediators.Remediator
		want string
	}{
		{"twice", []remediators.Remediator{key, awsfix.NewDeactivateAccessKey(nil)}, "registered twice"},
		{"nil", []remediators.Remediator{nil}, "nil"},
		{"notify", []remediators.Remediator{renamed{key, "notify"}}, "not an action"},
		{"manual", []remediators.Remediator{renamed{key, "manual"}}, "not an action"},
		{"no name", []remediators.Remediator{renamed{key, ""}}, "no action name"},
		{"spaces", []remediators.Remediator{renamed{key, "aws.iam. x"}}, "spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := remediators.NewRegistry(tt.rs...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || reg != nil {
				t.Errorf("NewRegistry: %v, %v; want an error saying %q", reg, err, tt.want)
			}
		})
	}
}

func TestRegistry_findsEveryBuiltInFixByName(t *testing.T) {
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"aws.ec2.revoke_default_sg_rules", "aws.ec2.revoke_ingress", "aws.iam.deactivate_access_key", "aws.iam.delete_login_profile",
		"aws.iam.delete_server_certificate", "aws.iam.detach_policy", "aws.iam.replace_managed_attachment", "aws.iam.rightsize_inline_policy", "aws.iam.rightsize_managed_policy", "aws.iam.rotate_access_key", "aws.iam.set_password_policy",
		"aws.iam.update_trust_policy", "certs.renew", "gcp.compute.disable_firewall", "gcp.iam.apply_role_recommendation", "gcp.iam.disable_service_account_key", "gcp.iam.remove_binding_member",
	}
	if got := reg.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	for _, name := range want {
		rem, ok := reg.Get(name)
		if !ok || rem.Spec().Action != name {
			t.Errorf("Get(%s) = %v, %v", name, rem, ok)
		}
		if reg.Pending(name) {
			t.Errorf("Pending(%s): it is registered", name)
		}
	}
	if reg.Pending("notify") || reg.Pending("aws.iam.rotate_access_key") {
		t.Error("Pending: every action the pack names has its remediator now")
	}
}

// The catalog declares each action's parameters exactly as policies must give them.
func TestCatalog_declaresEachActionsParams(t *testing.T) {
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat := reg.Catalog()
	want := map[string]string{
		"aws.ec2.revoke_ingress":              "target!",
		"aws.ec2.revoke_default_sg_rules":     "target!",
		"aws.iam.detach_policy":               "inline_policy,attachment",
		"aws.iam.rightsize_inline_policy":     "window_days",
		"aws.iam.rightsize_managed_policy":    "window_days",
		"aws.iam.replace_managed_attachment":  "policy!,used_services!,window_days",
		"gcp.iam.apply_role_recommendation":   "role!,member!,new_roles,recommendation!",
		"aws.iam.update_trust_policy":         "principal!",
		"gcp.iam.remove_binding_member":       "role!,member!,condition",
		"aws.iam.deactivate_access_key":       "",
		"aws.iam.set_password_policy":         "setting,max_password_age",
		"aws.iam.delete_login_profile":        "",
		"aws.iam.delete_server_certificate":   "",
		"gcp.iam.disable_service_account_key": "",
		"gcp.compute.disable_firewall":        "",
		"aws.iam.rotate_access_key":           "",
		"certs.renew":                         "",
	}
	if len(cat) != len(want) {
		t.Errorf("catalog has %d actions, want %d: %v", len(cat), len(want), reg.Actions())
	}
	for name, w := range want {
		ps, ok := cat[name]
		if !ok {
			t.Errorf("catalog lacks %s", name)
			continue
		}
		var got []string
		for _, p := range ps {
			s := p.Name
			if p.Required {
				s += "!"
			}
			if p.Doc == "" {
				t.Errorf("%s: param %s has no doc", name, p.Name)
			}
			got = append(got, s)
		}
		if strings.Join(got, ",") != w {
			t.Errorf("%s params = %q, want %q", name, strings.Join(got, ","), w)
		}
	}
	for _, not := range []string{"notify", "manual"} {
		if _, ok := cat[not]; ok || remediators.IsAction(not) {
			t.Errorf("%s is in the catalog or an action", not)
		}
	}
}

// Every action the built-in pack names in custom.remediation is in the catalog, and
// every registered fix is one the pack can ask for on a resource type it applies to.
func TestCatalog_coversThePolicyPack(t *testing.T) {
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat := reg.Catalog()
	action := regexp.MustCompile(`(?m)^#\s+remediation:\s*\{action:\s*([a-z0-9_.]+)`)
	types := regexp.MustCompile(`(?m)^#\s+resource_types:\s*\[([^\]]*)\]`)
	named := map[string]bool{}
	err = fs.WalkDir(policies.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".rego") || strings.HasSuffix(path, "_test.rego") || strings.HasPrefix(path, "lib/") {
			return err
		}
		b, err := fs.ReadFile(policies.FS, path)
		if err != nil {
			return err
		}
		m := action.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s names no remediation action", path)
			return nil
		}
		name := string(m[1])
		if !remediators.IsAction(name) {
			return nil
		}
		named[name] = true
		if _, ok := cat[name]; !ok {
			t.Errorf("%s names %s, which the catalog does not know", path, name)
		}
		rem, ok := reg.Get(name)
		if !ok {
			return nil
		}
		if tm := types.FindSubmatch(b); tm != nil {
			for _, rt := range strings.Split(string(tm[1]), ",") {
				if rt = strings.TrimSpace(rt); !slices.Contains(rem.Spec().ResourceTypes, rt) {
					t.Errorf("%s applies %s to %s, which it does not fix", path, name, rt)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range reg.Names() {
		if !named[name] {
			t.Errorf("no policy of the pack asks for %s", name)
		}
	}
}
