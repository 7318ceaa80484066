// Package publish sends warden's findings where security teams already read findings:
// AWS Security Hub (publish/securityhub) and Google Security Command Center
// (publish/scc). Each place is a Sink; Run sends it what changed since the last run and
// nothing else, so that a sweep that changed nothing makes no call, and a finding no
// longer seen is sent once more, resolved. What each sink last accepted of each finding
// is kept in the table published_findings, which this package owns.
package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// Item is one finding as a sink receives it: the finding with the status it is sent
// with (Finding.Status: open, waived, unknown or resolved), and the fix warden holds
// for it, if any.
type Item struct {
	Finding findings.Finding `json:"finding"`
	Fix     *Fix             `json:"fix,omitempty"`
	// CreatedAt is when warden first saw the finding (the first time it was sent, when
	// its source does not say); UpdatedAt is the time of the run that sends it. Neither
	// is part of what decides whether the finding changed.
	CreatedAt time.Time `json:"-"`
	UpdatedAt time.Time `json:"-"`
	// Previous is the finding as the sink last accepted it; nil for one it never did. A
	// sink whose place keeps some fields apart (Security Hub's workflow, Security Command
	// Center's state and mute) changes them only when they differ from Previous's.
	Previous *Item `json:"-"`
}

// Fix is where warden's fix of a finding stands.
type Fix struct {
	// Action is the remediator's name (aws.ec2.revoke_ingress); ID the action's id.
	Action string `json:"action"`
	ID     string `json:"id,omitempty"`
	// State is the action's state (remediate.State): planned, pending_approval,
	// approved, denied, applying, verified, failed, …; empty when the policy proposes a
	// fix that was never planned.
	State string `json:"state,omitempty"`
}

// AwaitsApproval reports whether the fix waits for a person's decision.
func (f *Fix) AwaitsApproval() bool { return f != nil && f.State == string(remediate.StatePending) }

// Approval is where the fix's approval stands, from its action's state: "pending"
// while it waits, "approved or not needed" once it ran or runs, "denied", "refused by
// the gates", "voided" (its target changed), or "not requested" before any request.
func (f *Fix) Approval() string {
	if f == nil {
		return "not requested"
	}
	switch remediate.State(f.State) {
	case remediate.StatePending:
		return "pending"
	case remediate.StateApproved, remediate.StateApplying, remediate.StateInProgress, remediate.StateVerified,
		remediate.StateFailed, remediate.StateRolledBack:
		return "approved or not needed"
	case remediate.StateDenied:
		return "denied"
	case remediate.StateRefused:
		return "refused by the gates"
	case remediate.StateVoided:
		return "voided"
	}
	return "not requested"
}

// Controls are the finding's framework controls as "framework id" ("cis-aws-3.0 5.2"),
// sorted: what each destination lists as the requirements the finding bears on.
func (it *Item) Controls() []string {
	var out []string
	for name, ids := range it.Finding.Frameworks {
		for _, id := range ids {
			out = append(out, name+" "+id)
		}
	}
	slices.Sort(out)
	return out
}

// Describe is the fix in a sentence: its action, its risk and where it stands.
func (it *Item) Describe() string {
	r := it.Finding.Remediation
	if r.Action == "" {
		return "warden proposes no automatic fix for this finding."
	}
	state := "proposed, not planned yet"
	if it.Fix != nil && it.Fix.State != "" {
		state = strings.ReplaceAll(it.Fix.State, "_", " ")
	}
	return fmt.Sprintf("warden fix %s (risk %s): %s.", r.Action, r.Risk, state)
}

// Sink is one place findings are sent to.
type Sink interface {
	// Name identifies the place: the key of what was sent there
	// ("securityhub/eu-west-1/111111111111").
	Name() string
	// Wants reports whether the place takes this finding (Security Hub takes AWS
	// findings, Security Command Center Google Cloud ones, unless told to take all).
	Wants(f *findings.Finding) bool
	// BatchSize is how many findings one Send takes at most.
	BatchSize() int
	// Send sends one batch. refused are the findings the place refused, by
	// fingerprint, with its reason: they are recorded and sent again next run. An error
	// means the batch as a whole was not sent (the next run sends it again).
	Send(ctx context.Context, batch []Item) (refused map[string]string, err error)
}

// Refusal is a finding a sink refused.
type Refusal struct {
	Fingerprint string
	Policy      string
	Resource    string
	Reason      string
}

// Result is what one Run did with one sink.
type Result struct {
	Sink string
	// Considered are the findings the sink takes; Unchanged those sent before as they
	// are now (not sent again).
	Considered, Unchanged int
	// Sent were accepted, Resolved of them sent resolved because no longer seen.
	Sent, Resolved int
	// Refused were refused by the place (recorded, sent again next run).
	Refused []Refusal
	// Batches is the number of Send calls.
	Batches int
}

// String is the result in a line.
func (r Result) String() string {
	return fmt.Sprintf("%s: %d findings, %d unchanged, %d sent (%d resolved), %d refused, in %d batches",
		r.Sink, r.Considered, r.Unchanged, r.Sent, r.Resolved, len(r.Refused), r.Batches)
}

// Run sends sink what changed among items since it last accepted them: new findings,
// findings whose content, status or fix changed, findings it refused last time, and, as
// resolved, findings it accepted as not resolved that items no longer hold. items are
// the findings as they stand (their source's, see Read); now is the run's time. What
// the sink accepts is recorded batch by batch, so that an interrupted run loses nothing
// it sent. A batch that fails as a whole ends the run with its error; the result says
// what was sent before it.
func Run(ctx context.Context, st *store.Store, sink Sink, items []Item, now time.Time) (Result, error) {
	res := Result{Sink: sink.Name()}
	var sent map[string]ledgerRow
	if err := st.Read(ctx, func(q *store.Reader) (err error) { sent, err = readLedger(ctx, q, res.Sink); return }); err != nil {
		return res, err
	}
	todo, forgotten, err := diff(&res, sink, items, sent)
	if err != nil {
		return res, err
	}
	if len(forgotten) > 0 {
		if err := st.InTx(ctx, func(tx *store.Tx) error { return forget(ctx, tx, res.Sink, forgotten) }); err != nil {
			return res, err
		}
	}
	for i := range todo {
		p := &todo[i]
		p.item.UpdatedAt = now
		p.item.CreatedAt = p.item.Finding.FirstSeen
		if p.item.CreatedAt.IsZero() {
			p.item.CreatedAt = p.row.createdAt
		}
		if p.item.CreatedAt.IsZero() || p.item.CreatedAt.After(now) {
			p.item.CreatedAt = now
		}
	}
	size := max(1, sink.BatchSize())
	for batch := range slices.Chunk(todo, size) {
		items := make([]Item, len(batch))
		for i, p := range batch {
			items[i] = p.item
		}
		res.Batches++
		refused, err := sink.Send(ctx, items)
		if err != nil {
			return res, fmt.Errorf("publish to %s: batch %d (%d findings): %w", res.Sink, res.Batches, len(batch), err)
		}
		if err := st.InTx(ctx, func(tx *store.Tx) error { return record(ctx, tx, res.Sink, batch, refused, now) }); err != nil {
			return res, err
		}
		for _, p := range batch {
			f := &p.item.Finding
			if why, ok := refused[f.Fingerprint]; ok {
				res.Refused = append(res.Refused, Refusal{Fingerprint: f.Fingerprint, Policy: f.Policy, Resource: f.Resource, Reason: why})
				continue
			}
			res.Sent++
			if p.resolved {
				res.Resolved++
			}
		}
	}
	return res, nil
}

// diff compares items with what sink holds (sent) and returns what to send: the items
// the sink takes that are new or changed (each with what it last accepted of them), then
// those it accepted as not resolved that items no longer hold, as resolved; and the
// findings it refused and never accepted that items no longer hold, to forget. It
// counts in res the findings considered and those unchanged.
func diff(res *Result, sink Sink, items []Item, sent map[string]ledgerRow) (todo []pending, forgotten []string, err error) {
	seen := map[string]bool{}
	for _, it := range items {
		if !sink.Wants(&it.Finding) {
			continue
		}
		fp := it.Finding.Fingerprint
		if seen[fp] {
			continue
		}
		seen[fp] = true
		res.Considered++
		h, err := contentHash(it)
		if err != nil {
			return nil, nil, err
		}
		row, ok := sent[fp]
		if ok && row.hash == h {
			res.Unchanged++
			continue
		}
		if ok && row.hash != "" {
			var prev Item
			if err := json.Unmarshal([]byte(row.data), &prev); err != nil {
				return nil, nil, fmt.Errorf("publish to %s: finding %s as last sent: %w", res.Sink, fp, err)
			}
			it.Previous = &prev
		}
		todo = append(todo, pending{item: it, hash: h, row: row})
	}
	// What the sink holds as not resolved and the source no longer does: resolved now.
	// What it never accepted and the source no longer holds is forgotten.
	for _, fp := range sortedKeys(sent) {
		row := sent[fp]
		if !seen[fp] && row.hash == "" {
			forgotten = append(forgotten, fp)
		}
		if seen[fp] || row.hash == "" || row.status == findings.StatusResolved {
			continue
		}
		var it Item
		if err := json.Unmarshal([]byte(row.data), &it); err != nil {
			return nil, nil, fmt.Errorf("publish to %s: finding %s as last sent: %w", res.Sink, fp, err)
		}
		prev := it
		it.Finding.Status = findings.StatusResolved
		it.Previous = &prev
		h, err := contentHash(it)
		if err != nil {
			return nil, nil, err
		}
		todo = append(todo, pending{item: it, hash: h, row: row, resolved: true})
	}
	return todo, forgotten, nil
}

// pending is a finding to send, with what the sink holds of it.
type pending struct {
	item     Item
	hash     string
	row      ledgerRow
	resolved bool
}

// contentHash is the SHA-256 of what a sink is sent of the item, less its times: equal
// hashes mean there is nothing new to send.
func contentHash(it Item) (string, error) {
	b, err := json.Marshal(it)
	if err != nil {
		return "", fmt.Errorf("publish finding %s: %w", it.Finding.Fingerprint, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Sweep reads the findings as they stand (Read) and runs every sink over them at now:
// one read for all sinks. It goes on past a sink that fails, and returns each sink's
// result and the errors joined. With nothing read yet it returns ErrNothingRead and
// sends nothing.
func Sweep(ctx context.Context, st *store.Store, sinks []Sink, now time.Time) ([]Result, Source, error) {
	items, src, err := Read(ctx, st)
	if err != nil {
		return nil, "", err
	}
	var out []Result
	var errs []error
	for _, s := range sinks {
		res, err := Run(ctx, st, s, items, now)
		out = append(out, res)
		errs = append(errs, err)
	}
	return out, src, errors.Join(errs...)
}
