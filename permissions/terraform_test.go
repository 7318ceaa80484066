package permissions

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"testing"
)

// --format terraform renders the modules of the selected cloud, each with the documents
// it reads as they are (narrowed by the options like every document), and refuses a
// single role: a module holds both.
func TestSelect_terraformModules(t *testing.T) {
	opts := Options{OrgRole: "AuditRole", Actions: []string{"aws.iam.deactivate_access_key", "gcp.compute.disable_firewall"}}
	docs, err := Documents(registry(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	for _, d := range docs {
		byName[d.Name] = d.Body
	}
	for _, c := range []struct {
		cloud string
		dirs  []string
	}{
		{"all", []string{".", "aws-account", "aws-organization", "gcp"}},
		{"aws", []string{".", "aws-account", "aws-organization"}},
		{"gcp", []string{".", "gcp"}},
	} {
		t.Run(c.cloud, func(t *testing.T) {
			files, err := Select(docs, Selection{Role: "all", Cloud: c.cloud, Format: TerraformFormat})
			if err != nil {
				t.Fatal(err)
			}
			var dirs []string
			held := 0
			for _, f := range files {
				if f.Format != TerraformFormat || len(f.Body) == 0 {
					t.Errorf("%s: format %q, %d bytes", f.Name, f.Format, len(f.Body))
				}
				if dir := path.Dir(f.Name); !slices.Contains(dirs, dir) {
					dirs = append(dirs, dir)
				}
				if want, ok := byName[path.Base(f.Name)]; ok {
					held++
					if !bytes.Equal(f.Body, want) {
						t.Errorf("%s is not the document %s", f.Name, path.Base(f.Name))
					}
				}
			}
			slices.Sort(dirs)
			if !slices.Equal(dirs, c.dirs) {
				t.Errorf("modules %v, want %v", dirs, c.dirs)
			}
			if want := len(slices.DeleteFunc(slices.Clone(docs), func(d Document) bool { return c.cloud != "all" && d.Cloud != c.cloud })); held != want {
				t.Errorf("the modules hold %d documents, want %d", held, want)
			}
		})
	}
	if _, err := Select(docs, Selection{Role: "scanner", Cloud: "all", Format: TerraformFormat}); err == nil ||
		!strings.Contains(err.Error(), "leave --role out") {
		t.Errorf("a single role in Terraform: %v", err)
	}
	if _, err := Terraform(docs[:1]); err == nil || !strings.Contains(err.Error(), "reads aws-remediator-policy.json") {
		t.Errorf("a module without its document: %v", err)
	}
}
