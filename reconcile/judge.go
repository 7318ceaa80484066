package reconcile

import (
	"context"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/store"
)

// judgement is what one observation says of the findings in its reach.
type judgement struct {
	scope string
	at    time.Time
	// found are the evaluation's findings (waivers applied); old the findings in reach
	// that are not resolved, by fingerprint.
	found []findings.Finding
	old   map[string]state.Finding
	// evaluated are the resources evaluated, gone those the cloud no longer has, listed
	// those the read listed; complete says the read listed all of the scope.
	evaluated, gone, listed map[string]bool
	complete                bool
	// notJudged says which policy × resource pairs the evaluation could not judge.
	notJudged func(policy, resource string) bool
}

// judge moves each finding in reach along its life and returns the audit events of the
// openings and resolutions; out collects them.
func (r *Reconciler) judge(ctx context.Context, tx *store.Tx, j judgement, out *Outcome) ([]audit.Event, error) {
	var evs []audit.Event
	// Saved together at the end: one statement per few hundred, not one each.
	var put []state.Finding
	found := make(map[string]bool, len(j.found))
	for _, f := range j.found {
		found[f.Fingerprint] = true
		fs, was := j.old[f.Fingerprint]
		if !was {
			fs = state.Finding{OpenedAt: j.at}
			if f.Status == findings.StatusOpen {
				out.Opened = append(out.Opened, f)
				evs = append(evs, findingEvent(r.o.Actor, audit.KindFindingOpened, j.scope, f))
			}
		}
		fs.Finding, fs.Status, fs.SeenAt, fs.ResolvedAt = f, f.Status, j.at, time.Time{}
		put = append(put, fs)
	}
	for _, fp := range sortedKeys(j.old) {
		fs := j.old[fp]
		if found[fp] {
			continue
		}
		uid := fs.Finding.Resource
		next := fs.Status
		switch {
		case j.gone[uid] || (j.evaluated[uid] && j.complete && !j.notJudged(fs.Finding.Policy, uid)):
			next = findings.StatusResolved
		case j.evaluated[uid] || (!j.listed[uid] && !j.complete):
			// Its policy failed on it, or the read was partial: a resource a partial read
			// lists may lack what the read failed to get (a throttled ListSAMLProviders
			// leaves the account without saml_providers), which its policies cannot tell
			// from a fix. A partial read resolves nothing (DESIGN: "a partial snapshot
			// must not resolve findings").
			next = findings.StatusUnknown
		case fs.Status == findings.StatusUnknown && j.listed[uid]:
			// Unknown since a read that failed or did not list it; listed unchanged now
			// (a resource that failed evaluation is always evaluated again): the finding
			// stands as it was.
			next = findings.StatusOpen
		}
		if next == findings.StatusUnknown {
			out.Unknown++
		}
		if next == fs.Status {
			continue
		}
		fs.Status = next
		switch next {
		case findings.StatusResolved:
			fs.ResolvedAt = j.at
			out.Resolved = append(out.Resolved, fs)
			evs = append(evs, findingEvent(r.o.Actor, audit.KindFindingResolved, j.scope, fs.Finding))
		case findings.StatusOpen:
			fs.SeenAt = j.at
		}
		put = append(put, fs)
	}
	if err := state.PutFindings(ctx, tx, put); err != nil {
		return nil, err
	}
	return evs, nil
}
