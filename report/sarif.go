package report

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/sarif"
	"github.com/warden-sec/warden/scan"
)

// SARIF writes the result as SARIF 2.1.0, for code-scanning dashboards. Cloud resources
// have no file: each result names its resource as a logical location.
type SARIF struct{}

// Write implements Writer. Results are written one at a time, so that a scan with a
// million findings never holds its whole SARIF document in memory.
func (SARIF) Write(w io.Writer, r *scan.Result) error {
	rules, index := sarifRules(r)
	run := &sarif.Run{
		Tool: sarif.Warden(r.Scan.Warden, rules),
		Results: func(yield func(sarif.Result) bool) {
			for _, f := range r.Findings {
				if f.Status == findings.StatusUnknown {
					continue
				}
				res := sarif.Result{
					RuleID: f.Policy, RuleIndex: index[f.Policy], Level: sarif.Level(f.Severity), Message: sarif.Text{Text: f.Message},
					Locations:           sarif.ResourceLocation(f.Resource),
					PartialFingerprints: sarif.Fingerprints(f.Fingerprint),
					Properties:          map[string]any{"resource_type": f.ResourceType, "account": f.Account, "region": f.Region},
				}
				if f.Waiver != nil {
					res.Suppressions = []sarif.Suppression{{Kind: "external", Status: "accepted",
						Justification: f.Waiver.Reason + " (owner " + f.Waiver.Owner + ")"}}
				}
				if !yield(res) {
					return
				}
			}
		},
		Invocations: []sarif.Invocation{invocation(r, index)},
	}
	if err := sarif.Write(w, run); err != nil {
		return fmt.Errorf("write SARIF: %w", err)
	}
	return nil
}

// sarifRules are the rules of the policies the result describes, then those of findings
// whose policy it does not describe (rules come before results, which refer to them by
// index), with the index of each policy's rule.
func sarifRules(r *scan.Result) ([]sarif.Rule, map[string]int) {
	var rules []sarif.Rule
	index := map[string]int{}
	for _, p := range r.Rules {
		index[p.ID] = len(rules)
		tags := []string{"security"}
		for _, fw := range slices.Sorted(maps.Keys(p.Frameworks)) {
			for _, c := range p.Frameworks[fw] {
				tags = append(tags, fw+":"+c)
			}
		}
		rule := sarif.PolicyRule(p.ID, p.Title, p.Severity, tags)
		rule.FullDescription = &sarif.Text{Text: p.Description}
		rules = append(rules, rule)
	}
	for _, f := range r.Findings {
		if _, ok := index[f.Policy]; ok || f.Status == findings.StatusUnknown {
			continue
		}
		index[f.Policy] = len(rules)
		rule := sarif.PolicyRule(f.Policy, f.Title, f.Severity, []string{"security"})
		rule.FullDescription = &sarif.Text{Text: f.Title}
		rules = append(rules, rule)
	}
	return rules, index
}

// invocation reports the policy evaluations that failed (errors: the run is not
// successful) and the scopes that could not be read (warnings: their resources are
// unknown).
func invocation(r *scan.Result, index map[string]int) sarif.Invocation {
	inv := sarif.Invocation{ExecutionSuccessful: len(r.EvalErrors) == 0, ToolExecutionNotifications: []sarif.Notification{}}
	for _, e := range r.EvalErrors {
		n := sarif.Notification{Level: "error",
			Message:   sarif.Text{Text: fmt.Sprintf("policy evaluation failed, so its result is missing: %s", e.Error)},
			Locations: sarif.ResourceLocation(e.Resource)}
		if e.Policy != "" {
			n.AssociatedRule = &sarif.RuleRef{ID: e.Policy}
			if i, ok := index[e.Policy]; ok {
				n.AssociatedRule.Index = &i
			}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	for _, sc := range r.IncompleteScopes {
		msg := fmt.Sprintf("scope %s %s: its resources are unknown, not clean", sc.ID, sc.Status)
		if sc.Error != "" {
			msg += " (" + sc.Error + ")"
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarif.Notification{Level: "warning", Message: sarif.Text{Text: msg}})
	}
	return inv
}
