package scan

import (
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/waivers"
)

// ApplyWaivers marks the findings covered by an active waiver as waived, and returns the
// expired waivers with how many findings each would still cover.
func ApplyWaivers(fs []findings.Finding, set *waivers.Set, now time.Time) []ExpiredWaiver {
	if set == nil {
		return nil
	}
	expired := map[*waivers.Waiver]int{}
	for i := range fs {
		f := &fs[i]
		active, old := set.Match(f.Policy, f.Resource, now)
		switch {
		case active != nil:
			f.Status = findings.StatusWaived
			f.Waiver = &findings.WaiverRef{Owner: active.Owner, Reason: active.Reason, Expires: active.Expires}
		case old != nil:
			expired[old]++
		}
	}
	var out []ExpiredWaiver
	for _, w := range set.Waivers {
		if w.Active(now) {
			continue
		}
		out = append(out, ExpiredWaiver{Policy: w.Policy, Resource: w.Resource, Owner: w.Owner, Reason: w.Reason,
			Expired: w.Expires, File: w.File, Line: w.Line, Findings: expired[w]})
	}
	return out
}
