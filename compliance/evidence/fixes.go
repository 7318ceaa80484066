package evidence

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store"
)

// The audit kinds that end an action's generation, and the state each ends it in. A
// failed rollback (action.failed with op rollback) ends nothing: the fix stays in place.
var endStates = map[string]string{
	audit.KindActionVerified:   "verified",
	audit.KindActionFailed:     "failed",
	audit.KindActionRolledBack: "rolled_back",
}

// actionData is what remediate records in the data of an action's audit entries.
type actionData struct {
	Remediator string `json:"remediator"`
	Target     string `json:"target"`
	Part       string `json:"part"`
	Policy     string `json:"policy"`
	Hash       string `json:"hash"`
	Generation *int   `json:"generation"`
	Op         string `json:"op"`
}

// fixes lists the remediation actions of fw's policies that ended at or before at, one
// per action generation, oldest first, each with the audit entries of that generation:
// the action's own (intent, steps, applied, the end, a rollback) and its approval
// request's. The audit log is the record: remediate writes each entry in the transaction
// of the state change it records.
//
// The entries are found through the log (by kind, then by subject) and the approval
// requests of an action through gates.
func fixes(ctx context.Context, st *store.Store, log *audit.Log, fw *compliance.Framework, at time.Time) ([]compliance.Fix, error) {
	mine := frameworkPolicies(fw)
	controls := map[string][]string{}
	for _, c := range fw.Controls {
		for _, p := range c.Policies {
			controls[p] = append(controls[p], c.ID)
		}
	}
	// The actions that ended by then, on findings of fw's policies.
	var actions []string
	seen := map[string]bool{}
	ended, err := log.EntriesOfKind(ctx, audit.KindActionVerified, audit.KindActionFailed, audit.KindActionRolledBack)
	if err != nil {
		return nil, fmt.Errorf("find the fixes: %w", err)
	}
	for _, e := range ended {
		var d actionData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return nil, fmt.Errorf("find the fixes: audit entry %d: data: %w", e.Seq, err)
		}
		if e.Time.After(at) || !mine[d.Policy] || seen[e.Subject] {
			continue
		}
		seen[e.Subject] = true
		actions = append(actions, e.Subject)
	}
	var out []compliance.Fix
	for _, id := range actions {
		fs, err := actionFixes(ctx, st, log, id, at)
		if err != nil {
			return nil, fmt.Errorf("fixes of action %s: %w", id, err)
		}
		for _, f := range fs {
			if !mine[f.Policy] {
				continue
			}
			f.Controls = slices.Clone(controls[f.Policy])
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b compliance.Fix) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Action, b.Action))
	})
	return out, nil
}

// generation is the audit entries of one generation of an action.
type generation struct {
	number  int
	hash    string
	entries []audit.Entry
	// end indexes the entry that ended it in entries; -1 while none did by the report's
	// time.
	end int
}

// actionFixes returns the generations of action id that ended at or before at.
func actionFixes(ctx context.Context, st *store.Store, log *audit.Log, id string, at time.Time) ([]compliance.Fix, error) {
	own, err := log.SeqsOf(ctx, id)
	if err != nil {
		return nil, err
	}
	requests, err := gates.RequestIDs(ctx, st, id)
	if err != nil {
		return nil, err
	}
	var approvals []int64
	if len(requests) > 0 {
		if approvals, err = log.SeqsOf(ctx, requests...); err != nil {
			return nil, err
		}
	}
	entries, err := readEntries(ctx, log, own)
	if err != nil {
		return nil, err
	}
	// Group the action's entries by generation. action.applied carries none: it belongs
	// to the generation of the intent before it.
	var gens []*generation
	byNumber := map[int]*generation{}
	var last *generation
	for i := range entries {
		e := entries[i]
		if e.Time.After(at) {
			continue
		}
		var d actionData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return nil, fmt.Errorf("audit entry %d: data: %w", e.Seq, err)
		}
		g := last
		if d.Generation != nil {
			if g = byNumber[*d.Generation]; g == nil {
				g = &generation{number: *d.Generation, hash: d.Hash, end: -1}
				byNumber[g.number] = g
				gens = append(gens, g)
			}
		}
		if g == nil {
			continue
		}
		g.entries = append(g.entries, e)
		if _, ends := endStates[e.Kind]; ends && !(e.Kind == audit.KindActionFailed && d.Op == "rollback") {
			g.end = len(g.entries) - 1
		}
		last = g
	}
	// An approval belongs to the generation whose content it approved: a request is bound
	// to the action's content hash and generation (remediate.Record.Binding, which its
	// approval.requested entry names as content_hash), and comes after the generation
	// before it ended.
	appr, err := readEntries(ctx, log, approvals)
	if err != nil {
		return nil, err
	}
	requestHash := map[string]string{}
	for _, e := range appr {
		if e.Kind == audit.KindApprovalRequested {
			var ad struct {
				ContentHash string `json:"content_hash"`
			}
			if err := json.Unmarshal(e.Data, &ad); err != nil {
				return nil, fmt.Errorf("audit entry %d: data: %w", e.Seq, err)
			}
			requestHash[e.Subject] = ad.ContentHash
		}
	}
	var out []compliance.Fix
	var after int64 = -1
	for _, g := range gens {
		if len(g.entries) == 0 {
			continue
		}
		from := after
		after = g.entries[len(g.entries)-1].Seq
		if g.end < 0 {
			continue
		}
		end := g.entries[g.end]
		var d actionData
		if err := json.Unmarshal(end.Data, &d); err != nil {
			return nil, fmt.Errorf("audit entry %d: data: %w", end.Seq, err)
		}
		seqs := make([]int64, 0, len(g.entries)+3)
		for _, e := range g.entries {
			seqs = append(seqs, e.Seq)
		}
		for _, e := range appr {
			if e.Seq > from && e.Seq < end.Seq && !e.Time.After(at) && requestHash[e.Subject] == fmt.Sprintf("%s:%d", g.hash, g.number) {
				seqs = append(seqs, e.Seq)
			}
		}
		slices.Sort(seqs)
		out = append(out, compliance.Fix{
			Action: id, Policy: d.Policy, Remediator: d.Remediator, Target: d.Target, Part: d.Part,
			State: endStates[end.Kind], At: end.Time, Actor: end.Actor, AuditSeqs: seqs,
		})
	}
	return out, nil
}

// entryGap is how far apart two wanted entries may be and still be read in one call:
// an action's entries are mostly close together (one apply run writes them).
const entryGap = 64

// readEntries reads the entries of sorted seqs through the log, in as few ranges as the
// gaps between them allow, and returns them in seq order.
func readEntries(ctx context.Context, log *audit.Log, seqs []int64) ([]audit.Entry, error) {
	out := make([]audit.Entry, 0, len(seqs))
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1]-seqs[j] <= entryGap {
			j++
		}
		from, to := seqs[i], seqs[j]
		es, err := log.Entries(ctx, from, int(to-from+1))
		if err != nil {
			return nil, err
		}
		want := seqs[i : j+1]
		for _, e := range es {
			if _, ok := slices.BinarySearch(want, e.Seq); ok {
				out = append(out, e)
			}
		}
		i = j + 1
	}
	if len(out) != len(seqs) {
		return nil, fmt.Errorf("read %d audit entries, found %d: the log is missing some (warden audit verify says which)", len(seqs), len(out))
	}
	return out, nil
}
