package findings

// Diff is how the findings of one scan moved from the scan before.
type Diff struct {
	New      []Finding `json:"new"`
	Resolved []Finding `json:"resolved"`
	Open     []Finding `json:"open"`
	// Unknown findings belong to scopes the later scan could not read: they are neither
	// confirmed nor resolved.
	Unknown []Finding `json:"unknown"`
}

// Compare diffs the findings of two scans by fingerprint. A finding of prev that cur
// carried over as unknown is reported as unknown, never as resolved.
func Compare(prev, cur []Finding) Diff {
	before := make(map[string]bool, len(prev))
	for _, f := range prev {
		before[f.Fingerprint] = true
	}
	now := make(map[string]bool, len(cur))
	var d Diff
	for _, f := range cur {
		now[f.Fingerprint] = true
		switch {
		case f.Status == StatusUnknown:
			d.Unknown = append(d.Unknown, f)
		case before[f.Fingerprint]:
			d.Open = append(d.Open, f)
		default:
			d.New = append(d.New, f)
		}
	}
	for _, f := range prev {
		if !now[f.Fingerprint] {
			d.Resolved = append(d.Resolved, f)
		}
	}
	return d
}
