package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/permissions"
	"github.com/warden-sec/warden/remediators/builtin"
)

const (
	terraformDir = "terraform"
	// regenerate is the command that rewrites deploy/terraform from the code.
	regenerate = "go run ./cmd/warden permissions --format terraform --out deploy/terraform"
)

// wardenPermissions is what `warden permissions` prints with its defaults, and the
// Terraform modules `warden permissions --format terraform` writes from it.
func wardenPermissions(t *testing.T) (docs, module []permissions.Document) {
	t.Helper()
	reg, err := builtin.Registry(nil, nil) // planning only: no cloud is called
	if err != nil {
		t.Fatal(err)
	}
	if docs, err = permissions.Generate(reg, permissions.Options{}, permissions.Selection{Role: "all", Cloud: "all"}); err != nil {
		t.Fatal(err)
	}
	if module, err = permissions.Generate(reg, permissions.Options{},
		permissions.Selection{Role: "all", Cloud: "all", Format: permissions.TerraformFormat}); err != nil {
		t.Fatal(err)
	}
	return docs, module
}

// asFS is the generated files as a directory.
func asFS(files []permissions.Document) fstest.MapFS {
	out := fstest.MapFS{}
	for _, f := range files {
		out[f.Name] = &fstest.MapFile{Data: f.Body, Mode: 0o644}
	}
	return out
}

// The committed deploy/terraform is what `warden permissions --format terraform` writes
// today, file for file and byte for byte: a change to a declared permission, or a hand
// edit of a generated document, fails until the module is regenerated.
func TestTerraform_committedModuleIsGenerated(t *testing.T) {
	_, module := wardenPermissions(t)
	for _, p := range compareTree(os.DirFS(terraformDir), module) {
		t.Errorf("deploy/terraform/%s (regenerate: %s)", p, regenerate)
	}
}

// compareTree lists how the files of fsys differ from the generated ones: changed,
// missing, or there without being generated.
func compareTree(fsys fs.FS, generated []permissions.Document) []string {
	var problems []string
	want := map[string][]byte{}
	for _, d := range generated {
		want[d.Name] = d.Body
		got, err := fs.ReadFile(fsys, d.Name)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: missing (%v)", d.Name, err))
		case !bytes.Equal(got, d.Body):
			problems = append(problems, fmt.Sprintf("%s: differs from what warden permissions --format terraform writes", d.Name))
		}
	}
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// The package embedding the modules is Go, not Terraform: no module holds it.
		if _, ok := want[p]; !ok && !e.IsDir() && !strings.HasSuffix(p, ".go") {
			problems = append(problems, fmt.Sprintf("%s: not generated (remove it)", p))
		}
		return nil
	})
	if err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// scenario is one module planned with one set of inputs, and where the documents of
// `warden permissions` must be in that plan.
type scenario struct {
	name, module string
	inputs       map[string]cty.Value
	// held: instance address and attribute → the document it must equal.
	held []held
	// absent are instances the inputs leave out.
	absent []string
	// fails is the error the inputs must be refused with ("" for none).
	fails string
	// also checks the rest of the plan.
	also func(tfPlan) error
}

// held is where a document must be: the attribute of an instance, as bytes (a policy,
// a template), or a custom role's title, description, stage and permissions (as the
// document's YAML decodes) when attr is "role". inProject drops the permissions a
// project's role cannot hold.
type held struct {
	instance, attr, doc string
	inProject           bool
}

var (
	trust   = cty.StringVal(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)
	members = cty.ListVal([]cty.Value{cty.StringVal("serviceAccount:warden@p.iam.gserviceaccount.com"), cty.StringVal("group:sec@example.com")})
)

func scenarios() []scenario {
	yes := cty.True
	return []scenario{
		{name: "one account, remediating", module: "aws-account",
			inputs: map[string]cty.Value{"assume_role_policy": trust, "remediate": yes},
			held: []held{{instance: "aws_iam_policy.scanner", attr: "policy", doc: "aws-scanner-policy.json"},
				{instance: "aws_iam_policy.remediator[0]", attr: "policy", doc: "aws-remediator-policy.json"}}},
		{name: "one account, read-only", module: "aws-account",
			inputs: map[string]cty.Value{"assume_role_policy": trust},
			held:   []held{{instance: "aws_iam_policy.scanner", attr: "policy", doc: "aws-scanner-policy.json"}},
			absent: []string{"aws_iam_policy.remediator[0]", "aws_iam_role_policy_attachment.remediator[0]"}},
		{name: "one account, exporting", module: "aws-account",
			inputs: map[string]cty.Value{"assume_role_policy": trust, "export": yes},
			held: []held{{instance: "aws_iam_policy.scanner", attr: "policy", doc: "aws-scanner-policy.json"},
				{instance: "aws_iam_policy.exporter[0]", attr: "policy", doc: "aws-exporter-policy.json"}},
			absent: []string{"aws_iam_policy.remediator[0]"}},
		{name: "one account, no trust", module: "aws-account", inputs: map[string]cty.Value{},
			fails: "assume_role_policy is required"},
		{name: "organisation", module: "aws-organization",
			inputs: map[string]cty.Value{"assume_role_policy": trust, "remediate": yes,
				"organizational_unit_ids": cty.ListVal([]cty.Value{cty.StringVal("r-abcd")})},
			held: []held{{instance: "aws_cloudformation_stack_set.member", attr: "template_body", doc: "aws-member-role-stackset.yaml"}},
			also: stackSetParameters},
		{name: "GCP organisation", module: "gcp",
			inputs: map[string]cty.Value{"scope_type": cty.StringVal("organization"), "scope_id": cty.StringVal("123"),
				"members": members, "remediate": yes},
			held: []held{{instance: `google_organization_iam_custom_role.warden["scanner"]`, attr: "role", doc: "gcp-scanner-role.yaml"},
				{instance: `google_organization_iam_custom_role.warden["remediator"]`, attr: "role", doc: "gcp-remediator-role.yaml"}},
			also: bindings("google_organization_iam_member", "scanner", "remediator")},
		{name: "GCP folder", module: "gcp",
			inputs: map[string]cty.Value{"scope_type": cty.StringVal("folder"), "scope_id": cty.StringVal("folders/456"),
				"organization_id": cty.StringVal("123"), "members": members},
			held:   []held{{instance: `google_organization_iam_custom_role.warden["scanner"]`, attr: "role", doc: "gcp-scanner-role.yaml"}},
			absent: []string{`google_organization_iam_custom_role.warden["remediator"]`},
			also:   bindings("google_folder_iam_member", "scanner")},
		{name: "GCP project", module: "gcp",
			inputs: map[string]cty.Value{"scope_type": cty.StringVal("project"), "scope_id": cty.StringVal("p"),
				"members": members, "remediate": yes},
			held: []held{{instance: `google_project_iam_custom_role.warden["scanner"]`, attr: "role", doc: "gcp-scanner-role.yaml", inProject: true},
				{instance: `google_project_iam_custom_role.warden["remediator"]`, attr: "role", doc: "gcp-remediator-role.yaml", inProject: true}},
			also: bindings("google_project_iam_member", "scanner", "remediator")},
		{name: "GCP folder, exporting", module: "gcp",
			inputs: map[string]cty.Value{"scope_type": cty.StringVal("folder"), "scope_id": cty.StringVal("folders/456"),
				"organization_id": cty.StringVal("123"), "members": members, "export": yes},
			held: []held{{instance: `google_organization_iam_custom_role.warden["scanner"]`, attr: "role", doc: "gcp-scanner-role.yaml"},
				{instance: "google_organization_iam_custom_role.exporter[0]", attr: "role", doc: "gcp-exporter-role.yaml"}},
			also: exporterBindings},
		{name: "GCP project, exporting without its organisation", module: "gcp",
			inputs: map[string]cty.Value{"scope_type": cty.StringVal("project"), "scope_id": cty.StringVal("p"), "members": members, "export": yes},
			fails:  "set organization_id to export"},
		{name: "GCP folder without its organisation", module: "gcp",
			inputs: map[string]cty.Value{"scope_type": cty.StringVal("folder"), "scope_id": cty.StringVal("folders/456"), "members": members},
			fails:  "set organization_id"},
		{name: "GCP unknown scope", module: "gcp",
			inputs: map[string]cty.Value{"scope_type": cty.StringVal("projects"), "scope_id": cty.StringVal("p"), "members": members},
			fails:  "scope_type is project, folder or organization"},
	}
}

// stackSetParameters checks that the stack set sets every parameter of its template (the
// provider asks for all), the member role's name to the one the scanner policy may assume,
// and Remediate as the module's remediate.
func stackSetParameters(p tfPlan) error {
	set := p["aws_cloudformation_stack_set.member"]
	var tpl struct {
		Parameters map[string]any `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal([]byte(set["template_body"].AsString()), &tpl); err != nil {
		return err
	}
	params := set["parameters"]
	if !params.Type().IsObjectType() {
		return fmt.Errorf("parameters %#v", params)
	}
	var names []string
	for name := range params.Type().AttributeTypes() {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := slices.Sorted(maps.Keys(tpl.Parameters)); !slices.Equal(names, want) {
		return fmt.Errorf("stack set parameters %v, want the template's %v", names, want)
	}
	if out := p["output.member_role_name"]["value"]; !out.IsKnown() || out.IsNull() || out.AsString() != permissions.DefaultOrgRole {
		return fmt.Errorf("output member_role_name %#v, want %q (the scanner policy's sts:AssumeRole)", out, permissions.DefaultOrgRole)
	}
	role, remediate := params.GetAttr("RoleName"), params.GetAttr("Remediate")
	if role.AsString() != permissions.DefaultOrgRole || remediate.AsString() != "true" {
		return fmt.Errorf("RoleName %q, Remediate %q; want %q (the scanner policy's sts:AssumeRole) and true", role.AsString(), remediate.AsString(), permissions.DefaultOrgRole)
	}
	return nil
}

// bindings checks that every member has each of roles through a binding of type typ,
// and nothing more.
func bindings(typ string, roles ...string) func(tfPlan) error {
	return func(p tfPlan) error {
		var want []string
		for _, r := range roles {
			for _, m := range members.AsValueSlice() {
				want = append(want, fmt.Sprintf("%s[%q]", typ+".warden", r+" "+m.AsString()))
			}
		}
		slices.Sort(want)
		var got []string
		for _, k := range p.sortedKeys("google_") {
			if strings.HasSuffix(strings.SplitN(k, ".", 2)[0], "_iam_member") {
				got = append(got, k)
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("bindings %v, want %v", got, want)
		}
		return nil
	}
}

// exporterBindings checks a folder's scanner bindings and the exporter's, which are the
// organisation's (Security Command Center keeps its findings there) and name the
// organisation's exporter role.
func exporterBindings(p tfPlan) error {
	var want, got []string
	for _, m := range members.AsValueSlice() {
		want = append(want, fmt.Sprintf("google_folder_iam_member.warden[%q]", "scanner "+m.AsString()),
			fmt.Sprintf("google_organization_iam_member.exporter[%q]", m.AsString()))
	}
	slices.Sort(want)
	for _, k := range p.sortedKeys("google_") {
		if strings.HasSuffix(strings.SplitN(k, ".", 2)[0], "_iam_member") {
			got = append(got, k)
		}
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("bindings %v, want %v", got, want)
	}
	for _, m := range members.AsValueSlice() {
		b := p[fmt.Sprintf("google_organization_iam_member.exporter[%q]", m.AsString())]
		if org := b["org_id"]; !org.IsKnown() || org.IsNull() || org.AsString() != "123" {
			return fmt.Errorf("the exporter's binding of %s is on organisation %#v, want 123", m.AsString(), org)
		}
	}
	return nil
}

// policyResources are the resource types that hold a policy or a role's permissions:
// every instance of one in a plan must be held to a document.
var policyResources = []string{"aws_iam_policy", "aws_iam_role_policy", "aws_iam_user_policy", "aws_iam_group_policy",
	"aws_cloudformation_stack", "aws_cloudformation_stack_set", "google_organization_iam_custom_role", "google_project_iam_custom_role"}

// checkModules plans every scenario on the modules in fsys and lists where they differ
// from docs: a module that does not parse, a policy or role that is not the document,
// an instance that should be absent, a policy-holding instance no document is held to,
// a document no module holds.
func checkModules(fsys fs.FS, docs []permissions.Document) []string {
	var problems []string
	byName := map[string]permissions.Document{}
	for _, d := range docs {
		byName[d.Name] = d
	}
	heldDocs := map[string]bool{}
	for _, s := range scenarios() {
		m, err := parseModule(fsys, s.module)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", s.module, err))
			continue
		}
		p, err := m.plan(fsys, s.inputs)
		if s.fails != "" {
			if err == nil || !strings.Contains(err.Error(), s.fails) {
				problems = append(problems, fmt.Sprintf("%s: error %v, want one saying %q", s.name, err, s.fails))
			}
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", s.name, err))
			continue
		}
		checked := map[string]bool{}
		for _, h := range s.held {
			checked[h.instance] = true
			d, ok := byName[h.doc]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: %s is not among warden permissions' documents", s.name, h.doc))
				continue
			}
			if err := h.check(p, d); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s.%s: %v", s.name, h.instance, h.attr, err))
				continue
			}
			heldDocs[h.doc] = true
		}
		if s.also != nil {
			if err := s.also(p); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", s.name, err))
			}
		}
		for _, a := range s.absent {
			if _, ok := p[a]; ok {
				problems = append(problems, fmt.Sprintf("%s: %s is planned, want it left out", s.name, a))
			}
		}
		for _, typ := range policyResources {
			for _, addr := range p.sortedKeys(typ + ".") {
				if !checked[addr] {
					problems = append(problems, fmt.Sprintf("%s: %s holds a policy no document is held to", s.name, addr))
				}
			}
		}
	}
	for _, d := range docs {
		if !heldDocs[d.Name] {
			problems = append(problems, fmt.Sprintf("no module holds %s", d.Name))
		}
	}
	return problems
}

// check compares the instance's attribute with the document d.
func (h held) check(p tfPlan, d permissions.Document) error {
	attrs, ok := p[h.instance]
	if !ok {
		return fmt.Errorf("not planned (planned: %v)", p.sortedKeys(""))
	}
	if h.attr != "role" {
		v := attrs[h.attr]
		if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
			return fmt.Errorf("is %#v, want the text of %s", v, d.Name)
		}
		if got := v.AsString(); got != string(d.Body) {
			return fmt.Errorf("differs from %s as warden permissions prints it (%d bytes, want %d)", d.Name, len(got), len(d.Body))
		}
		return nil
	}
	var role struct {
		Title               string   `yaml:"title" json:"title"`
		Description         string   `yaml:"description" json:"description"`
		Stage               string   `yaml:"stage" json:"stage"`
		IncludedPermissions []string `yaml:"includedPermissions" json:"permissions"`
	}
	if err := yaml.Unmarshal(d.Body, &role); err != nil {
		return fmt.Errorf("%s: %w", d.Name, err)
	}
	if h.inProject {
		all := role.IncludedPermissions
		role.IncludedPermissions = slices.DeleteFunc(slices.Clone(all), func(p string) bool {
			return strings.HasPrefix(p, "resourcemanager.folders.") || strings.HasPrefix(p, "resourcemanager.organizations.")
		})
		if len(role.IncludedPermissions) == len(all) {
			return fmt.Errorf("%s has no folder or organisation permission for a project's role to leave out", d.Name)
		}
	}
	want, err := json.Marshal(role)
	if err != nil {
		return err
	}
	var got any
	if err := gocty(cty.ObjectVal(map[string]cty.Value{"title": attrs["title"], "description": attrs["description"],
		"stage": attrs["stage"], "permissions": attrs["permissions"]}), &got); err != nil {
		return err
	}
	gotJSON, err := json.Marshal(got)
	if err != nil {
		return err
	}
	if !jsonEqual(gotJSON, want) {
		planned := role
		if err := json.Unmarshal(gotJSON, &planned); err != nil {
			return err
		}
		return fmt.Errorf("role differs from %s: permissions beyond it %v, missing %v; title, description, stage %q, want %q",
			d.Name, without(planned.IncludedPermissions, role.IncludedPermissions), without(role.IncludedPermissions, planned.IncludedPermissions),
			[]string{planned.Title, planned.Description, planned.Stage}, []string{role.Title, role.Description, role.Stage})
	}
	return nil
}

// without is a's strings that are not in b.
func without(a, b []string) []string {
	return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return slices.Contains(b, s) })
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// Every module parses with HashiCorp's HCL parser without a diagnostic, and planned under
// each scenario holds exactly the documents `warden permissions` prints: the AWS
// policies and the StackSet template byte for byte, the GCP roles as their YAML decodes.
// Inputs the modules refuse (no trust, a folder without its organisation, an unknown
// scope) are refused.
func TestTerraform_holdsWhatWardenPermissionsPrints(t *testing.T) {
	docs, _ := wardenPermissions(t)
	for _, p := range checkModules(os.DirFS(terraformDir), docs) {
		t.Error(p)
	}
}

// The comparers see a near miss: one action less in a document, one permission less in
// a module's role, a changed, missing or extra file.
func TestTerraform_comparersCatchANearMiss(t *testing.T) {
	docs, module := wardenPermissions(t)
	if p := checkModules(asFS(module), docs); len(p) > 0 {
		t.Fatalf("the generated module does not hold the documents: %v", p)
	}
	perturbed := slices.Clone(docs)
	perturbed[0].Body = bytes.Replace(perturbed[0].Body, []byte(`"iam:GetAccountAuthorizationDetails",`), nil, 1)
	if bytes.Equal(perturbed[0].Body, docs[0].Body) {
		t.Fatalf("%s has no iam:GetAccountAuthorizationDetails to drop", docs[0].Name)
	}
	if p := checkModules(asFS(module), perturbed); !allName(p, 4, docs[0].Name) {
		t.Errorf("a scanner policy one action short: problems %q, want the three scenarios holding %s and that none does", p, docs[0].Name)
	}

	fsys := asFS(module)
	role := fsys["gcp/gcp-remediator-role.yaml"]
	role.Data = bytes.Replace(role.Data, []byte("  - compute.firewalls.update\n"), nil, 1)
	if p := checkModules(fsys, docs); !allName(p, 3, "gcp-remediator-role.yaml") {
		t.Errorf("a module's role one permission short: problems %q, want the organisation's, the project's, and that none holds it", p)
	}
	if p := compareTree(fsys, module); len(p) != 1 || !strings.HasPrefix(p[0], "gcp/gcp-remediator-role.yaml: differs") {
		t.Errorf("a changed file: problems %q", p)
	}
	delete(fsys, "README.md")
	fsys["gcp/extra.tf"] = &fstest.MapFile{Data: []byte("# by hand\n")}
	if p := compareTree(fsys, module); len(p) != 3 {
		t.Errorf("a changed, a missing and an extra file: problems %q", p)
	}
}

// allName reports whether there are n problems, each naming name.
func allName(problems []string, n int, name string) bool {
	return len(problems) == n && !slices.ContainsFunc(problems, func(p string) bool { return !strings.Contains(p, name) })
}

// Every variable and output of every module says what it is for (a description), every
// variable has a type, every module call is a module of the tree, and the README names
// each input and output in its module's section.
func TestTerraform_inputsAndOutputsDocumented(t *testing.T) {
	fsys := os.DirFS(terraformDir)
	readme, err := fs.ReadFile(fsys, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"aws-account", "aws-organization", "gcp"} {
		m, err := parseModule(fsys, dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		section := readmeSection(string(readme), dir)
		if section == "" {
			t.Errorf("README.md has no section ## %s", dir)
		}
		for kind, blocks := range map[string]map[string]*hclsyntax.Block{"variable": m.variables, "output": m.outputs} {
			if len(blocks) == 0 {
				t.Errorf("%s has no %s", dir, kind)
			}
			for name, b := range blocks {
				if d := literal(b, "description"); strings.TrimSpace(d) == "" {
					t.Errorf("%s: %s %q has no description", dir, kind, name)
				}
				if kind == "variable" && b.Body.Attributes["type"] == nil {
					t.Errorf("%s: variable %q has no type", dir, name)
				}
				if !strings.Contains(section, "| `"+name+"` |") {
					t.Errorf("README.md's section %s does not list the %s %q", dir, kind, name)
				}
			}
		}
		for name, call := range m.calls {
			src := literal(call, "source")
			callee, err := parseModule(fsys, path.Join(dir, src))
			if !strings.HasPrefix(src, "../") || err != nil {
				t.Errorf("%s: module %q calls %q, not a module of deploy/terraform (%v)", dir, name, src, err)
				continue
			}
			for arg := range call.Body.Attributes {
				if callee.variables[arg] == nil && arg != "source" {
					t.Errorf("%s: module %q passes %s, which %s does not declare", dir, name, arg, src)
				}
			}
			for v, b := range callee.variables {
				if call.Body.Attributes[v] == nil && b.Body.Attributes["default"] == nil {
					t.Errorf("%s: module %q leaves out %s, which %s requires", dir, name, v, src)
				}
			}
		}
	}
}

// literal is the string value of a block's attribute that is a constant, "" otherwise.
func literal(b *hclsyntax.Block, attr string) string {
	a := b.Body.Attributes[attr]
	if a == nil {
		return ""
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// readmeSection is the text under "## name" up to the next section.
func readmeSection(readme, name string) string {
	_, rest, ok := strings.Cut(readme, "\n## "+name+"\n")
	if !ok {
		return ""
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}
