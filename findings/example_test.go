package findings_test

import (
	"fmt"

	"github.com/warden-sec/warden/findings"
)

// Compare two scans: a finding whose scope could not be read is unknown, not resolved.
func ExampleCompare() {
	a := findings.Finding{Policy: "P", Resource: "a", Fingerprint: "fa", Status: findings.StatusOpen}
	b := findings.Finding{Policy: "P", Resource: "b", Fingerprint: "fb", Status: findings.StatusOpen}
	c := findings.Finding{Policy: "P", Resource: "c", Fingerprint: "fc", Status: findings.StatusOpen}
	bCarried := b
	bCarried.Status = findings.StatusUnknown
	d := findings.Compare([]findings.Finding{a, b, c}, []findings.Finding{a, bCarried})
	fmt.Println(len(d.Open), len(d.Unknown), len(d.Resolved), d.Resolved[0].Resource)
	// Output: 1 1 1 c
}
