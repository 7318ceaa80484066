package permissions

import (
	"fmt"
	"slices"
	"strings"
)

// Selection picks documents: Role "scanner", "remediator" or "all"; Cloud "aws", "gcp"
// or "all"; Format one document format, or "" for any.
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
		{"--role", s.Role, []string{"scanner", "remediator", "all"}, false},
		{"--cloud", s.Cloud, []string{"aws", "gcp", "all"}, false},
		{"--format", s.Format, []string{"json", "yaml", "cloudformation"}, true},
	} {
		if !slices.Contains(c.want, c.got) && (c.got != "" || !c.optional) {
			return fmt.Errorf("%s: unknown value %q (want %s)", c.flag, c.got, strings.Join(c.want, ", "))
		}
	}
	return nil
}

// Select keeps the documents of the selection, in their order; none is an error that
// says which format each kind of document has.
func Select(docs []Document, s Selection) ([]Document, error) {
	out := slices.DeleteFunc(slices.Clone(docs), func(d Document) bool {
		return s.Role != "all" && d.Role != s.Role || s.Cloud != "all" && d.Cloud != s.Cloud || s.Format != "" && d.Format != s.Format
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("no document is %s for --role %s --cloud %s (AWS policies are json, the member role's template cloudformation, GCP roles yaml)",
			s.Format, s.Role, s.Cloud)
	}
	return out, nil
}
