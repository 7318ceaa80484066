package permissions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/warden-sec/warden/remediators"
)

// Selection picks documents: Role "scanner", "remediator", "exporter" or "all"; Cloud "aws", "gcp"
// or "all"; Format one document format, "terraform" for the Terraform modules of the
// cloud, or "" for any.
type Selection struct {
	Role, Cloud, Format string
}

// Check refuses a selection of an unknown role, cloud or format, naming the flag
// (--role, --cloud, --format) and the values it takes.
func (s Selection) Check() error {
	for _, c := range []struct {
		flag, got string
		want      []string
		optional  bool
	}{
		{"--role", s.Role, []string{"scanner", "remediator", "exporter", "all"}, false},
		{"--cloud", s.Cloud, []string{"aws", "gcp", "all"}, false},
		{"--format", s.Format, []string{"json", "yaml", "cloudformation", TerraformFormat}, true},
	} {
		if !slices.Contains(c.want, c.got) && (c.got != "" || !c.optional) {
			return fmt.Errorf("%s: unknown value %q (want %s)", c.flag, c.got, strings.Join(c.want, ", "))
		}
	}
	return nil
}

// Generate is what `warden permissions` prints for the selection: Documents, then
// Select. A selection Check refuses, an unknown fix, or a fix that declares nothing is an
// error.
func Generate(reg *remediators.Registry, opts Options, s Selection) ([]Document, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	docs, err := Documents(reg, opts)
	if err != nil {
		return nil, err
	}
	return Select(docs, s)
}

// Select keeps the documents of the selection, in their order, or renders the Terraform
// modules of its cloud (Terraform) for Format "terraform"; none is an error that says
// which format each kind of document has.
func Select(docs []Document, s Selection) ([]Document, error) {
	if s.Format == TerraformFormat {
		if s.Role != "all" {
			return nil, fmt.Errorf("--format terraform: the modules hold every role (their variables remediate and export add the fixes' and the export's), leave --role out")
		}
		docs, err := Select(docs, Selection{Role: "all", Cloud: s.Cloud})
		if err != nil {
			return nil, err
		}
		return Terraform(docs)
	}
	out := slices.DeleteFunc(slices.Clone(docs), func(d Document) bool {
		return s.Role != "all" && d.Role != s.Role || s.Cloud != "all" && d.Cloud != s.Cloud || s.Format != "" && d.Format != s.Format
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("no document is %s for --role %s --cloud %s (AWS policies are json, the member role's template cloudformation, GCP roles yaml; the Terraform modules terraform)",
			s.Format, s.Role, s.Cloud)
	}
	return out, nil
}
