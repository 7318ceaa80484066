package remediate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
)

// PlanVersion is the version of the plan file format.
const PlanVersion = 1

// Plan is what apply executes: the actions that fix a scan's open findings, and the
// notices for findings no action fixes. Approvals bind to the hashes of its actions.
type Plan struct {
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	Actor     string    `json:"actor,omitempty"`
	// Snapshot names the snapshot planned from; Accounts are its header's accounts, which
	// verification re-evaluates policies with.
	Snapshot string   `json:"snapshot,omitempty"`
	Accounts []string `json:"accounts,omitempty"`
	// Hash is over the creation time and the content hashes of the actions, in order.
	Hash    string          `json:"hash"`
	Actions []PlannedAction `json:"actions"`
	Notices []Notice        `json:"notices,omitempty"`
}

// PlannedAction is an action with what the gates ask of it.
type PlannedAction struct {
	remediators.Action
	// Hash is the action's content hash: approvals die with any change of it.
	Hash      string    `json:"hash"`
	Approvals Approvals `json:"approvals"`
}

// Approvals says what the gates ask of an action: auto, approval by Needed distinct
// approvers, or refused; Given counts the approvals recorded so far.
type Approvals struct {
	Verdict string `json:"verdict"` // auto | approval | refused
	Needed  int    `json:"needed"`
	Given   int    `json:"given"`
	Reason  string `json:"reason,omitempty"`
}

// Notice is a finding the plan does not act on, and why.
type Notice struct {
	Policy   string `json:"policy"`
	Finding  string `json:"finding"`
	Resource string `json:"resource"`
	Action   string `json:"action,omitempty"`
	Message  string `json:"message"`
	Reason   string `json:"reason"`
}

// PlanInput is what a plan is made from.
type PlanInput struct {
	Header snapshot.Header
	Name   string // the snapshot's name, for the record
	// Findings of the scan, waivers applied.
	Findings []findings.Finding
	// Resource returns the snapshot's resource with this uid.
	Resource func(uid string) (snapshot.Resource, bool)
	// Complete reports whether a scope was read completely.
	Complete func(scope string) bool
	Registry *remediators.Registry
	Gates    gates.Config
	Actor    string
	Now      time.Time
}

// NewPlan turns open findings (not waived, not carried over as unknown, not in a scope
// that was not read completely) into actions, one per part the fix touches.
func NewPlan(in PlanInput) (*Plan, error) {
	p := &Plan{Version: PlanVersion, CreatedAt: in.Now.UTC(), Actor: in.Actor, Snapshot: in.Name, Accounts: in.Header.Accounts}
	seen := map[string]bool{}
	for _, f := range in.Findings {
		if f.Status != findings.StatusOpen {
			continue
		}
		notice := func(reason string) {
			p.Notices = append(p.Notices, Notice{Policy: f.Policy, Finding: f.Fingerprint, Resource: f.Resource,
				Action: f.Remediation.Action, Message: f.Message, Reason: reason})
		}
		if in.Complete != nil && !in.Complete(f.Scope) {
			notice("its scope was not read completely: nothing is changed on a partial view")
			continue
		}
		switch f.Remediation.Action {
		case "", "notify":
			notice("the policy asks for a notice only")
			continue
		case "manual":
			notice("the policy asks for a manual fix")
			continue
		}
		rem, ok := in.Registry.Get(f.Remediation.Action)
		if !ok {
			notice(fmt.Sprintf("no remediator for %s yet", f.Remediation.Action))
			continue
		}
		res, ok := in.Resource(f.Resource)
		if !ok {
			return nil, fmt.Errorf("plan finding %s: resource %s is not in the snapshot", f.Fingerprint, f.Resource)
		}
		targets, err := rem.Targets(res, f.Remediation.Params)
		if errors.Is(err, remediators.ErrNotApplicable) {
			notice(err.Error())
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("plan %s on %s (%s): %w", f.Remediation.Action, f.Resource, f.Policy, err)
		}
		if len(targets) == 0 {
			notice("the resource already looks fixed")
			continue
		}
		spec := rem.Spec()
		for _, t := range targets {
			a := remediators.Action{
				Remediator: spec.Action, Target: res.UID, ResourceType: res.Type, Account: res.Account, Region: res.Region,
				Part: t.Part, Params: f.Remediation.Params, Risk: f.Remediation.Risk, Policy: f.Policy, Finding: f.Fingerprint,
				Message: f.Message, Before: t.Before, Rollback: spec.Rollback,
			}
			if t.Rollback != nil {
				a.Rollback = *t.Rollback
			}
			a.ID = actionID(a)
			if seen[a.ID] {
				continue
			}
			seen[a.ID] = true
			a.Key = idempotencyKey(a)
			pa := PlannedAction{Action: a}
			pa.Hash = ContentHash(a)
			pa.Approvals = approvalsFor(in.Gates, a.Risk)
			p.Actions = append(p.Actions, pa)
		}
	}
	p.mergeSameFixes()
	p.dropSuperseded(in.Registry)
	slices.SortStableFunc(p.Actions, func(a, b PlannedAction) int {
		if c := strings.Compare(a.Account, b.Account); c != 0 {
			return c
		}
		if c := strings.Compare(a.Remediator, b.Remediator); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	p.Hash = planHash(p.CreatedAt, p.Actions)
	return p, nil
}

// mergeSameFixes keeps one action per change: two findings (two policies) that plan the
// same fix of the same part from the same before-state would otherwise ask for two
// approvals of one change, and the second would find nothing left to do. The action of
// the highest risk stays, so the stricter gate decides; the others become notices that
// name it.
func (p *Plan) mergeSameFixes() {
	keep := map[string]int{} // idempotency key → index in kept
	var kept []PlannedAction
	var merged []PlannedAction
	for _, a := range p.Actions {
		i, dup := keep[a.Key]
		switch {
		case !dup:
			keep[a.Key] = len(kept)
			kept = append(kept, a)
		case a.Risk > kept[i].Risk:
			merged = append(merged, kept[i])
			kept[i] = a
		default:
			merged = append(merged, a)
		}
	}
	for _, a := range merged {
		by := kept[keep[a.Key]]
		p.Notices = append(p.Notices, Notice{Policy: a.Policy, Finding: a.Finding, Resource: a.Target, Action: a.Remediator, Message: a.Message,
			Reason: fmt.Sprintf("the same change is planned as %s (for %s): it fixes this too", by.ID, by.Policy)})
	}
	p.Actions = kept
}

// dropSuperseded turns into notices the actions another action on the same part makes
// moot (remediators.Spec.Supersedes): two fixes of one key must not race each other.
func (p *Plan) dropSuperseded(reg *remediators.Registry) {
	type part struct{ target, part string }
	on := map[part][]PlannedAction{}
	for _, a := range p.Actions {
		k := part{a.Target, a.Part}
		on[k] = append(on[k], a)
	}
	drop := map[string]PlannedAction{} // superseded action id → the one superseding it
	for _, as := range on {
		for _, a := range as {
			rem, ok := reg.Get(a.Remediator)
			if !ok {
				continue
			}
			supersedes := rem.Spec().Supersedes
			for _, b := range as {
				if b.ID != a.ID && slices.Contains(supersedes, b.Remediator) {
					drop[b.ID] = a
				}
			}
		}
	}
	if len(drop) == 0 {
		return
	}
	kept := p.Actions[:0]
	for _, a := range p.Actions {
		by, ok := drop[a.ID]
		if !ok {
			kept = append(kept, a)
			continue
		}
		p.Notices = append(p.Notices, Notice{Policy: a.Policy, Finding: a.Finding, Resource: a.Target, Action: a.Remediator, Message: a.Message,
			Reason: fmt.Sprintf("%s (%s, for %s) makes it moot", by.Remediator, by.ID, by.Policy)})
	}
	p.Actions = kept
}

func approvalsFor(cfg gates.Config, r findings.Risk) Approvals {
	v := cfg.Verdict(r)
	switch {
	case v.Refused:
		return Approvals{Verdict: "refused", Reason: v.Reason}
	case v.Auto:
		return Approvals{Verdict: "auto"}
	default:
		return Approvals{Verdict: "approval", Needed: v.Quorum}
	}
}

// actionID names the fix of one part for one finding: the same finding's same part gives
// the same id in every plan.
func actionID(a remediators.Action) string {
	return "act-" + hashOf(a.Remediator, a.Finding, a.Target, a.Part)[:16]
}

// idempotencyKey is the same for the same fix of the same before-state.
func idempotencyKey(a remediators.Action) string {
	// Compacted: a plan file is indented, and the key must survive the round trip.
	return hashOf(a.Remediator, a.Target, a.Part, string(compact(a.Before)))
}

// ContentHash is the hash approvals bind to: every field of the action, canonically
// encoded. Any change of target, part, parameters, risk or before-state changes it.
func ContentHash(a remediators.Action) string {
	b, err := canonicalJSON(a)
	if err != nil {
		// An action holds JSON values only (it was decoded from JSON or built from them).
		panic(fmt.Sprintf("remediate: encode action %s: %v", a.ID, err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// planHash identifies one plan: its creation time and its actions' content hashes. Two
// plans made at different times differ even with the same actions, so that an action a
// plan already ran is not run again by the same plan, and a fresh plan may retry it.
func planHash(created time.Time, as []PlannedAction) string {
	h := sha256.New()
	h.Write([]byte(created.UTC().Format(time.RFC3339Nano) + "\n"))
	for _, a := range as {
		h.Write([]byte(a.Hash))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON encodes v with sorted object keys and no insignificant space: encoding/json
// sorts map keys, so a round trip through any is canonical.
func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var x any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// ErrPlanTampered is returned when a plan file's hashes do not match its actions.
var ErrPlanTampered = errors.New("the plan's hashes do not match its actions")

// Check verifies a plan read from a file: its version, each action's content hash and
// id, and the plan's hash. An edited plan is refused, so an approval given to one plan
// never applies to another.
func (p *Plan) Check() error {
	if p.Version != PlanVersion {
		return fmt.Errorf("plan version %d: this warden reads version %d", p.Version, PlanVersion)
	}
	for i, a := range p.Actions {
		if a.ID != actionID(a.Action) {
			return fmt.Errorf("actions[%d] (%s): id does not match its content: %w", i, a.ID, ErrPlanTampered)
		}
		if got := ContentHash(a.Action); got != a.Hash {
			return fmt.Errorf("actions[%d] (%s): content hash %s, computed %s: %w", i, a.ID, short(a.Hash), short(got), ErrPlanTampered)
		}
		if a.Key != idempotencyKey(a.Action) {
			return fmt.Errorf("actions[%d] (%s): idempotency key does not match: %w", i, a.ID, ErrPlanTampered)
		}
	}
	if got := planHash(p.CreatedAt, p.Actions); got != p.Hash {
		return fmt.Errorf("plan hash %s, computed %s: %w", short(p.Hash), short(got), ErrPlanTampered)
	}
	return nil
}

// ReadPlan reads a plan file, as 'warden plan --out' wrote it, and checks it: an unknown
// field or an edited action is refused.
func ReadPlan(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("read plan %s: %w", path, err)
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("read plan %s: %w", path, err)
	}
	return &p, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Only returns a copy of the plan keeping the actions keep accepts, with its hash
// recomputed: a narrower plan is another plan, and approvals bind to its actions' hashes,
// which do not change.
func (p *Plan) Only(keep func(PlannedAction) bool) *Plan {
	q := *p
	q.Actions = nil
	for _, a := range p.Actions {
		if keep(a) {
			q.Actions = append(q.Actions, a)
		}
	}
	q.Hash = planHash(q.CreatedAt, q.Actions)
	return &q
}
