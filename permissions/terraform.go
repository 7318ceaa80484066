package permissions

import (
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/warden-sec/warden/deploy/terraform"
)

// TerraformFormat is the --format of the Terraform modules: the documents, each in the
// module that creates it, beside the .tf files that read them with file().
const TerraformFormat = "terraform"

// terraformModule is one module of deploy/terraform: its directory, its cloud, and the
// documents (by name) it reads from its own directory.
type terraformModule struct {
	dir, cloud, about string
	docs              []string
}

// terraformModules are the modules, in the order they are written.
func terraformModules() []terraformModule {
	return []terraformModule{
		{dir: "aws-account", cloud: "aws", about: "one account: the scanner, remediator and exporter policies, the role warden runs as",
			docs: []string{"aws-scanner-policy.json", "aws-remediator-policy.json", "aws-exporter-policy.json"}},
		{dir: "aws-organization", cloud: "aws", about: "an organisation: aws-account, and the member role in every member account through a StackSet",
			docs: []string{"aws-member-role-stackset.yaml"}},
		{dir: "gcp", cloud: "gcp", about: "the custom roles and their bindings on a project, folder or organisation",
			docs: []string{"gcp-scanner-role.yaml", "gcp-remediator-role.yaml", "gcp-exporter-role.yaml"}},
	}
}

// Terraform renders the Terraform modules of docs (Documents, or those of one cloud):
// for each module whose documents are all in docs, its .tf files and a copy of each
// document it reads, named DIR/FILE; then README.md. The modules hold the documents as
// they are, so that a module and `warden permissions` cannot disagree.
func Terraform(docs []Document) ([]Document, error) {
	byName := map[string]Document{}
	for _, d := range docs {
		byName[d.Name] = d
	}
	var out []Document
	for _, m := range terraformModules() {
		if !slices.ContainsFunc(docs, func(d Document) bool { return d.Cloud == m.cloud }) {
			continue
		}
		files, err := fs.ReadDir(terraform.Modules, m.dir)
		if err != nil {
			return nil, fmt.Errorf("read the module %s: %w", m.dir, err)
		}
		for _, f := range files {
			body, err := terraform.Modules.ReadFile(path.Join(m.dir, f.Name()))
			if err != nil {
				return nil, fmt.Errorf("read the module %s: %w", m.dir, err)
			}
			about, ok := map[string]string{"main.tf": m.about, "variables.tf": "its inputs", "outputs.tf": "its outputs",
				"versions.tf": "the Terraform and provider versions it needs"}[f.Name()]
			if !ok {
				about = f.Name()
			}
			out = append(out, Document{Name: path.Join(m.dir, f.Name()), Cloud: m.cloud, Format: TerraformFormat, Body: body,
				About: fmt.Sprintf("Terraform module %s: %s", m.dir, about)})
		}
		for _, name := range m.docs {
			d, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("the Terraform module %s reads %s, which is not among the documents", m.dir, name)
			}
			d.Name, d.Format = path.Join(m.dir, name), TerraformFormat
			d.About = fmt.Sprintf("read by the Terraform module %s: %s", m.dir, d.About)
			out = append(out, d)
		}
	}
	readme, err := terraform.Modules.ReadFile("README.md")
	if err != nil {
		return nil, fmt.Errorf("read the modules' README: %w", err)
	}
	return append(out, Document{Name: "README.md", Format: TerraformFormat, Body: readme,
		About: "the Terraform modules' inputs, outputs and usage"}), nil
}
