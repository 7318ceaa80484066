package synth

import "testing"

// Names are the uids of AWS-managed policies: two entries with one name would be one
// policy with two documents.
func TestSynth_catalogNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range append(append([]managedPolicy{}, cleanManaged...), badManaged...) {
		if seen[m.name] {
			t.Errorf("%s is in the catalog twice", m.name)
		}
		seen[m.name] = true
	}
	// An account draws about 2,000 × 14/111 × 60% = 151 AWS-managed policies: the catalog
	// must hold more, or the share falls short of what the package doc says.
	if len(cleanManaged) != 191 || len(badManaged) != 4 {
		t.Errorf("catalog of %d clean and %d violating policies; the package doc says 191 and 4", len(cleanManaged), len(badManaged))
	}
	perMille := 0
	for _, tt := range trustTemplates {
		perMille += tt.perMille
	}
	if got := [5]int{len(customerTemplates), len(sgTemplates), len(firewallTemplates), len(bindingTemplates), perMille}; got != [5]int{20, 15, 12, 6, 900} {
		t.Errorf("templates (customer, security group, firewall, bindings, trust per mille) = %v; the package doc says [20 15 12 6 900]", got)
	}
	seen = map[string]bool{}
	for _, tm := range customerTemplates {
		if seen[tm.name] {
			t.Errorf("template %s is there twice", tm.name)
		}
		seen[tm.name] = true
	}
}
