package policies_test

import (
	"slices"
	"testing"
)

// implied maps a policy to the narrower ones that stay silent on the documents it reports,
// since its finding says more (a document allowing every action allows kms:*, cloudtrail:*,
// every escalation path…): one finding per document, not eight. So that a report filtered
// by a control or a Prowler check still lists such a document, the broader policy carries
// the narrower ones' frameworks and Prowler checks (docs/coverage.md, Notes).
var implied = map[string][]string{
	"WARDEN-AWS-IAM-001": {"WARDEN-AWS-IAM-002", "WARDEN-AWS-IAM-003", "WARDEN-AWS-IAM-004", "WARDEN-AWS-IAM-018", "WARDEN-AWS-IAM-019", "WARDEN-AWS-IAM-020", "WARDEN-AWS-IAM-038"},
	"WARDEN-AWS-IAM-002": {"WARDEN-AWS-IAM-003", "WARDEN-AWS-IAM-020"},
	// Under a condition, every action holds the same, which the narrower policies read
	// as no grant at all.
	"WARDEN-AWS-IAM-039": {"WARDEN-AWS-IAM-002", "WARDEN-AWS-IAM-003", "WARDEN-AWS-IAM-004", "WARDEN-AWS-IAM-018", "WARDEN-AWS-IAM-019", "WARDEN-AWS-IAM-020", "WARDEN-AWS-IAM-038"},
}

// TestImpliedPolicies_broaderFindingCarriesTheirControls: a policy carries the frameworks'
// controls and the Prowler checks of every policy it implies; documentCases show the
// narrower ones silent where it fires.
func TestImpliedPolicies_broaderFindingCarriesTheirControls(t *testing.T) {
	byID := map[string]int{}
	pack := loadPack(t)
	for i, p := range pack {
		byID[p.ID] = i
	}
	for broad, narrower := range implied {
		i, ok := byID[broad]
		if !ok {
			t.Fatalf("%s is not in the pack", broad)
		}
		b := pack[i]
		for _, id := range narrower {
			j, ok := byID[id]
			if !ok {
				t.Fatalf("%s is not in the pack", id)
			}
			n := pack[j]
			for fw, controls := range n.Frameworks {
				for _, c := range controls {
					if !slices.Contains(b.Frameworks[fw], c) {
						t.Errorf("%s implies %s but does not carry its %s control %s: add it to %s's custom.frameworks (and the framework's file)", broad, id, fw, c, b.File)
					}
				}
			}
			for _, check := range n.Prowler {
				if !slices.Contains(b.Prowler, check) {
					t.Errorf("%s implies %s but does not carry its Prowler check %s: add it to %s's custom.prowler", broad, id, check, b.File)
				}
			}
		}
	}
	for _, c := range documentCases {
		if len(c.want) != 1 || implied[c.want[0]] == nil {
			continue
		}
		for _, id := range implied[c.want[0]] {
			if slices.Contains(c.want, id) {
				t.Errorf("%s: %s fires beside %s, which implies it", c.name, id, c.want[0])
			}
		}
	}
}
