package compliance

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/waivers"
)

// Status is the verdict on one control.
type Status string

// Statuses, from the most to the least conclusive about a failure.
const (
	// StatusFail: a policy of the control has an open finding that counts against it —
	// not waived, or waived by a waiver that had expired at the report's time. A failure
	// fails a manual control too: the evidence is conclusive whatever else a person finds.
	StatusFail Status = "fail"
	// StatusUnknown: an automated control with no failure, but some of its policies could
	// not be judged on part of the posture — a finding carried over from an earlier scan
	// because its scope could not be read this time (findings.StatusUnknown), an
	// evaluation error, a scope of the policy's resources that failed to read. Absence of
	// findings there means nothing, so the control cannot pass.
	StatusUnknown Status = "unknown"
	// StatusNotCovered: an automated control warden cannot decide: it has no policy for
	// it, a policy of it was not run, its policies found no resource to check in the
	// posture, or a setting its pass relies on is looser than the framework asks.
	StatusNotCovered Status = "not_covered"
	// StatusManual: a manual control without a failure. Its policies' results, if any,
	// are evidence for the person who decides it.
	StatusManual Status = "manual"
	// StatusPass: an automated control whose every policy ran on the posture, judged all
	// of it, and found nothing open, with the settings it relies on within bounds.
	StatusPass Status = "pass"
)

// Input is the posture a report judges.
type Input struct {
	// At is the time of the posture; a waiver expiring at or before it no longer
	// suppresses anything. Zero means now.
	At time.Time
	// Findings are the posture's findings: open, waived (carrying their waiver) and
	// unknown, as the findings package defines them. A finding of any other status counts
	// as open.
	Findings []findings.Finding
	// Policies says how each policy ran, by policy id. A policy absent from the map was
	// not run.
	Policies map[string]PolicyRun
	// Settings are the settings in effect (data.warden.config), the policies' defaults
	// included, for the controls whose pass relies on a threshold.
	Settings map[string]any
	// Waivers, when set, also waive open findings an active waiver covers at At: for
	// findings recorded before the waiver was written. Findings already waived keep
	// their own waiver.
	Waivers *waivers.Set
}

// PolicyRun is how one policy ran on the posture.
type PolicyRun struct {
	// Resources is the number of resources the policy was evaluated on.
	Resources int `json:"resources"`
	// Errors is the number of those evaluations that failed: resources the policy did
	// not judge (findings.EvalError).
	Errors int `json:"errors,omitempty"`
	// FailedScopes are the scopes holding resources of the policy's types that could not
	// be read in full: their resources were not judged either.
	FailedScopes []string `json:"failed_scopes,omitempty"`
}

// Report is a framework judged on a posture.
type Report struct {
	Framework Info      `json:"framework"`
	At        time.Time `json:"at"`
	// Score is over every control of the framework.
	Score Score `json:"score"`
	// Families are in the framework's order, each scored over its controls and those of
	// its parts.
	Families []FamilyResult `json:"families"`
	// Controls are in the framework's order.
	Controls []ControlResult `json:"controls"`
}

// Info identifies the framework a report is about.
type Info struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	Publisher string `json:"publisher"`
	Source    string `json:"source"`
}

// FamilyResult is one family's score.
type FamilyResult struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Parent string `json:"parent,omitempty"`
	Score  Score  `json:"score"`
}

// Score counts controls by status. Percent is the share of passes among the controls
// that were decided by checks — 100 × Pass / (Pass + Fail) — and nil when none was:
// manual, not covered and unknown controls are counted beside it, never inside it, so
// that a framework warden barely covers does not score well by default.
type Score struct {
	Controls   int `json:"controls"`
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	Unknown    int `json:"unknown"`
	NotCovered int `json:"not_covered"`
	Manual     int `json:"manual"`
	// Automated counts the controls warden's policies decide (automated, with policies):
	// the framework's coverage is Automated out of Controls.
	Automated int      `json:"automated"`
	Percent   *float64 `json:"percent"`
}

func (s *Score) add(c *ControlResult) {
	s.Controls++
	switch c.Status {
	case StatusPass:
		s.Pass++
	case StatusFail:
		s.Fail++
	case StatusUnknown:
		s.Unknown++
	case StatusNotCovered:
		s.NotCovered++
	case StatusManual:
		s.Manual++
	}
	if c.Assessment == Automated && len(c.Policies) > 0 {
		s.Automated++
	}
}

func (s *Score) finish() {
	if n := s.Pass + s.Fail; n > 0 {
		p := 100 * float64(s.Pass) / float64(n)
		s.Percent = &p
	}
}

// ControlResult is the verdict on one control, with its evidence.
type ControlResult struct {
	Control
	Status Status `json:"status"`
	// Reason says why the control has its status, in a sentence for the report.
	Reason string `json:"reason"`
	// Runs are the control's policies, in its order, with what they did.
	Runs []PolicyResult `json:"runs,omitempty"`
	// Failing are the findings that fail the control, Waived those a waiver suppresses
	// (with its owner, reason and expiry), Unknown those that could not be judged; each
	// in report order (findings.Sort).
	Failing []findings.Finding `json:"failing,omitempty"`
	Waived  []findings.Finding `json:"waived,omitempty"`
	Unknown []findings.Finding `json:"unknown,omitempty"`
}

// PolicyResult is what one policy of a control did on the posture.
type PolicyResult struct {
	Policy string `json:"policy"`
	// Ran is false when the policy was not run on the posture.
	Ran bool `json:"ran"`
	PolicyRun
	Failing int `json:"failing"`
	Waived  int `json:"waived"`
	Unknown int `json:"unknown"`
}

// judged reports whether the policy judged all of its part of the posture.
func (r PolicyResult) judged() bool {
	return r.Unknown == 0 && r.Errors == 0 && len(r.FailedScopes) == 0
}

// Evaluate judges every control of fw on the posture in. It only reads its arguments.
func Evaluate(fw *Framework, in Input) *Report {
	at := in.At
	if at.IsZero() {
		at = time.Now().UTC()
	}
	byPolicy := map[string][]findings.Finding{}
	for _, f := range in.Findings {
		byPolicy[f.Policy] = append(byPolicy[f.Policy], f)
	}
	rep := &Report{
		Framework: Info{ID: fw.ID, Name: fw.Name, Version: fw.Version, Publisher: fw.Publisher, Source: fw.Source},
		At:        at,
		Controls:  make([]ControlResult, 0, len(fw.Controls)),
	}
	for i := range fw.Controls {
		rep.Controls = append(rep.Controls, judge(&fw.Controls[i], in, byPolicy, at))
	}
	rep.score(fw)
	return rep
}

// judge decides one control.
func judge(c *Control, in Input, byPolicy map[string][]findings.Finding, at time.Time) ControlResult {
	r := ControlResult{Control: *c}
	for _, id := range c.Policies {
		run, ran := in.Policies[id]
		pr := PolicyResult{Policy: id, Ran: ran, PolicyRun: run}
		for _, f := range byPolicy[id] {
			if !c.matches(id, f.Key) {
				continue
			}
			switch f, kind := classify(f, in.Waivers, at); kind {
			case findings.StatusWaived:
				r.Waived = append(r.Waived, f)
				pr.Waived++
			case findings.StatusUnknown:
				r.Unknown = append(r.Unknown, f)
				pr.Unknown++
			default:
				r.Failing = append(r.Failing, f)
				pr.Failing++
			}
		}
		r.Runs = append(r.Runs, pr)
	}
	findings.Sort(r.Failing)
	findings.Sort(r.Waived)
	findings.Sort(r.Unknown)
	r.Status, r.Reason = verdict(&r, in.Settings)
	return r
}

// classify says whether a finding counts against its control as failing (open), waived
// or unknown at time at, and returns it as it counts: a finding whose waiver had expired
// by then is open again (its expired waiver kept, for the report to say so), and an open
// finding an active waiver of set covers is waived.
func classify(f findings.Finding, set *waivers.Set, at time.Time) (findings.Finding, string) {
	switch f.Status {
	case findings.StatusUnknown:
		return f, findings.StatusUnknown
	case findings.StatusWaived:
		if f.Waiver == nil || at.Before(f.Waiver.Expires) {
			return f, findings.StatusWaived
		}
		f.Status = findings.StatusOpen
		return f, findings.StatusOpen
	}
	if active, _ := set.Match(f.Policy, f.Resource, at); active != nil {
		f.Status = findings.StatusWaived
		f.Waiver = &findings.WaiverRef{Owner: active.Owner, Reason: active.Reason, Expires: active.Expires}
		return f, findings.StatusWaived
	}
	f.Status = findings.StatusOpen
	return f, findings.StatusOpen
}

// verdict decides a control's status from its evidence, and says why. A failure decides
// any control; a manual control is otherwise manual; an automated one passes only when
// nothing else stands in the way, and every obstacle goes into the reason.
func verdict(r *ControlResult, settings map[string]any) (Status, string) {
	if len(r.Policies) == 0 {
		if r.Assessment == Manual {
			return StatusManual, "assessed by a person: no warden policy checks this control"
		}
		return StatusNotCovered, "automatable, but no warden policy checks this control yet"
	}
	if len(r.Failing) > 0 {
		return StatusFail, fmt.Sprintf("%s of %s on %s", plural(len(r.Failing), "open finding"),
			strings.Join(policiesWith(r.Runs, func(p PolicyResult) bool { return p.Failing > 0 }), ", "), plural(resources(r.Failing), "resource"))
	}
	var unknown, uncovered []string
	for _, p := range r.Runs {
		switch {
		case !p.Ran:
			uncovered = append(uncovered, fmt.Sprintf("%s was not run", p.Policy))
		case !p.judged():
			var parts []string
			if p.Unknown > 0 {
				parts = append(parts, plural(p.Unknown, "finding")+" carried over unjudged")
			}
			if p.Errors > 0 {
				parts = append(parts, plural(p.Errors, "evaluation")+" failed")
			}
			if len(p.FailedScopes) > 0 {
				parts = append(parts, "scopes not read: "+strings.Join(p.FailedScopes, ", "))
			}
			unknown = append(unknown, fmt.Sprintf("%s could not judge everything (%s)", p.Policy, strings.Join(parts, "; ")))
		}
	}
	if r.Assessment == Manual {
		reason := "assessed by a person; warden's checks found nothing open"
		if gaps := append(unknown, uncovered...); len(gaps) > 0 {
			reason += ", but " + strings.Join(gaps, "; ")
		}
		return StatusManual, reason
	}
	checked := 0
	for _, p := range r.Runs {
		checked += p.Resources
	}
	if len(uncovered) == 0 && len(unknown) == 0 && checked == 0 {
		uncovered = append(uncovered, fmt.Sprintf("%s found no resource to check in the posture", strings.Join(r.Policies, ", ")))
	}
	for _, req := range r.RequiresConfig {
		v, ok := settings[req.Setting]
		if ok, why := req.check(v, ok); !ok {
			uncovered = append(uncovered, why)
		}
	}
	switch {
	case len(unknown) > 0:
		return StatusUnknown, strings.Join(append(unknown, uncovered...), "; ")
	case len(uncovered) > 0:
		return StatusNotCovered, strings.Join(uncovered, "; ")
	}
	var on []string
	for i, p := range r.Runs {
		if i == 0 {
			on = append(on, fmt.Sprintf("%s on %s", p.Policy, plural(p.Resources, "resource")))
		} else {
			on = append(on, fmt.Sprintf("%s on %d", p.Policy, p.Resources))
		}
	}
	return StatusPass, "nothing open: " + strings.Join(on, ", ")
}

// score fills the overall and per-family scores. A control counts towards its family and
// every ancestor of it.
func (rep *Report) score(fw *Framework) {
	parent := map[string]string{}
	index := map[string]int{}
	rep.Families = make([]FamilyResult, len(fw.Families))
	for i, fam := range fw.Families {
		parent[fam.ID] = fam.Parent
		index[fam.ID] = i
		rep.Families[i] = FamilyResult{ID: fam.ID, Title: fam.Title, Parent: fam.Parent}
	}
	for i := range rep.Controls {
		c := &rep.Controls[i]
		rep.Score.add(c)
		// Validate rules out cycles; the bound guards a Framework built by hand.
		for fam, n := c.Family, 0; fam != "" && n <= len(fw.Families); fam, n = parent[fam], n+1 {
			if j, ok := index[fam]; ok {
				rep.Families[j].Score.add(c)
			}
		}
	}
	rep.Score.finish()
	for i := range rep.Families {
		rep.Families[i].Score.finish()
	}
}

func policiesWith(runs []PolicyResult, keep func(PolicyResult) bool) []string {
	var out []string
	for _, p := range runs {
		if keep(p) {
			out = append(out, p.Policy)
		}
	}
	return out
}

// resources counts the distinct resources of findings.
func resources(fs []findings.Finding) int {
	type key struct{ account, uid string }
	seen := make(map[key]bool, len(fs))
	for _, f := range fs {
		seen[key{f.Account, f.Resource}] = true
	}
	return len(seen)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// number reads a setting's value as a number: JSON and YAML decoders give float64, int or
// json.Number, Go callers any integer type.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x)
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
