package render

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/sarif"
)

// SARIF writes the document as one SARIF 2.1.0 run of the tool warden: a result for every
// finding that fails a control or could not be judged, each once, with the ids of the
// controls it counts against in its properties; the framework, the evidence's source, the
// score and the audit checkpoint in the run's properties; the scopes that could not be
// read as notifications of the invocation.
//
// The rules are the policies, not the controls. A finding is one policy's verdict on one
// resource and often counts against several controls (CIS AWS 5.2 and 5.3, NIST AC-6 and
// AC-6(1)): with a rule per control, a dashboard would show it as several alerts, fixed
// or dismissed one by one. Policy rules also give the same ruleId and fingerprint as the
// scan's SARIF (report.SARIF: both are written by internal/sarif), so a code-scanning
// tool that holds both sees one alert. Each rule's tags name the framework's controls it checks ("cis-aws-3.0:5.2").
//
// A failing finding is a result of kind "fail" with the level of its severity; an
// unknown one (carried over from an earlier scan because its scope could not be read)
// is of kind "open": SARIF's word for "the tool could not decide", whose level must be
// "none".
type SARIF struct{}

// Write implements Writer.
func (SARIF) Write(w io.Writer, d *compliance.Document) error {
	if err := check(d); err != nil {
		return fmt.Errorf("write compliance SARIF: %w", err)
	}
	rep := d.Report
	fw := rep.Framework.ID
	// The controls each policy checks, for the rules' tags.
	checks := map[string][]string{}
	for _, c := range rep.Controls {
		for _, p := range c.Policies {
			checks[p] = append(checks[p], fw+":"+c.ID)
		}
	}
	against := controlsByFinding(rep)
	var rules []sarif.Rule
	index := map[string]int{}
	results := []sarif.Result{}
	for _, f := range d.OpenFindings() {
		i, ok := index[f.Policy]
		if !ok {
			i = len(rules)
			index[f.Policy] = i
			rules = append(rules, sarif.PolicyRule(f.Policy, f.Title, f.Severity, append([]string{"security", "compliance"}, checks[f.Policy]...)))
		}
		res := sarif.Result{RuleID: f.Policy, RuleIndex: i, Kind: "fail", Level: sarif.Level(f.Severity), Message: sarif.Text{Text: f.Message},
			Locations:           sarif.ResourceLocation(f.Resource),
			PartialFingerprints: sarif.Fingerprints(f.Fingerprint),
			Properties: map[string]any{"framework": fw, "controls": against[f.Fingerprint], "status": f.Status,
				"severity": f.Severity.String(), "resource_type": f.ResourceType, "account": f.Account, "region": f.Region},
		}
		if f.Status == findings.StatusUnknown {
			res.Kind, res.Level = "open", "none"
			res.Message.Text = "not judged (its scope could not be read; carried over from an earlier scan): " + f.Message
		}
		if !f.FirstSeen.IsZero() {
			res.Properties["first_seen"] = f.FirstSeen.UTC().Format(time.RFC3339)
		}
		if f.Waiver != nil { // a failing finding keeps the waiver that expired
			res.Properties["expired_waiver"] = map[string]any{"owner": f.Waiver.Owner, "reason": f.Waiver.Reason,
				"expires": f.Waiver.Expires.UTC().Format(time.RFC3339)}
		}
		results = append(results, res)
	}
	run := &sarif.Run{
		Tool: sarif.Warden(d.Tool, rules),
		// ID's part before the last / is the category GitHub keeps results apart by: one
		// per framework, so that reports of two frameworks do not close each other's alerts.
		AutomationDetails: &sarif.AutomationDetails{ID: "warden-compliance/" + fw + "/" + rep.At.UTC().Format(time.RFC3339)},
		Results:           slices.Values(results),
		Invocations:       []sarif.Invocation{invocation(d)},
		Properties:        runProperties(d),
	}
	if err := sarif.Write(w, run); err != nil {
		return fmt.Errorf("write compliance SARIF of %s: %w", fw, err)
	}
	return nil
}

// invocation says what the run could not judge: a policy whose evaluations failed makes
// it unsuccessful, a scope that could not be read is a warning. Silence about them would
// read as clean.
func invocation(d *compliance.Document) sarif.Invocation {
	inv := sarif.Invocation{ExecutionSuccessful: true, EndTimeUTC: d.Generated.UTC().Format(time.RFC3339),
		ToolExecutionNotifications: []sarif.Notification{}}
	errs := map[string]int{}
	var order []string
	for _, c := range d.Report.Controls {
		for _, r := range c.Runs {
			if _, seen := errs[r.Policy]; !seen && r.Errors > 0 {
				errs[r.Policy] = r.Errors
				order = append(order, r.Policy)
			}
		}
	}
	slices.Sort(order)
	for _, p := range order {
		inv.ExecutionSuccessful = false
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarif.Notification{Level: "error",
			Message:        sarif.Text{Text: fmt.Sprintf("%d evaluations of %s failed: those resources were not judged", errs[p], p)},
			AssociatedRule: &sarif.RuleRef{ID: p}})
	}
	for _, s := range failedScopes(d) {
		msg := fmt.Sprintf("scope %s %s: warden could not see its resources, so they are unknown, not clean", s.ID, s.Status)
		if s.Error != "" {
			msg += " (" + s.Error + ")"
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarif.Notification{Level: "warning", Message: sarif.Text{Text: msg}})
	}
	return inv
}

// runProperties carries what an auditor needs to place the run: the framework and its
// score, the time it describes, the evidence's source and the audit checkpoint to verify
// it against (`warden audit verify --checkpoint`).
func runProperties(d *compliance.Document) map[string]any {
	p := map[string]any{
		"framework": d.Report.Framework,
		"at":        d.Report.At.UTC().Format(time.RFC3339),
		"generated": d.Generated.UTC().Format(time.RFC3339),
		"score":     d.Report.Score,
		"source":    d.Source,
	}
	if d.Checkpoint != nil {
		p["checkpoint"] = d.Checkpoint
	}
	return p
}
