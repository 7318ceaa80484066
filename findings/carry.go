package findings

// CarryOver returns the findings of the previous scan that the current scan must keep as
// unknown: those it did not see again (seen reports false for their fingerprint) although
// it could not have judged them, because their scope was not read completely (complete
// reports false) or evaluating their policy on their resource failed (errored reports
// true). A finding the current scan could judge and did not see is resolved, and is not
// returned. Neither a failed scope nor a failed policy ever resolves a finding. The
// returned findings are copies with Status set to StatusUnknown, in prev's order; prev is
// not modified. A nil errored means no evaluation failed.
func CarryOver(prev []Finding, seen func(fingerprint string) bool, complete func(scope string) bool, errored func(policy, resource string) bool) []Finding {
	var out []Finding
	for _, f := range prev {
		if seen(f.Fingerprint) {
			continue
		}
		if complete(f.Scope) && (errored == nil || !errored(f.Policy, f.Resource)) {
			continue
		}
		f.Status = StatusUnknown
		out = append(out, f)
	}
	return out
}
