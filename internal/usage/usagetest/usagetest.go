// Package usagetest builds usage attributes (attributes.usage, as the AWS collector
// writes them) for tests.
package usagetest

import (
	"strings"
	"time"
)

// TrackingPeriod is how far back Access Advisor reports use: AWS's 400 days.
const TrackingPeriod = 400 * 24 * time.Hour

// Attr is a complete usage attribute as of asOf, tracked for TrackingPeriod before it,
// from entries "svc=2026-11-24" (a service last used that day; "svc=" never) and
// "svc:Action=…" (an action of svc, tracked per action).
func Attr(asOf time.Time, entries ...string) map[string]any {
	services := map[string]map[string]any{}
	var order []string
	for _, e := range entries {
		name, at, _ := strings.Cut(e, "=")
		var last any
		if at != "" {
			last = at + "T00:00:00Z"
		}
		svc, action, isAction := strings.Cut(name, ":")
		s := services[svc]
		if s == nil {
			s = map[string]any{"service": svc, "name": svc, "last_used": nil}
			services[svc] = s
			order = append(order, svc)
		}
		if isAction {
			actions, _ := s["actions"].([]any)
			s["actions"] = append(actions, map[string]any{"action": svc + ":" + action, "last_used": last})
		} else {
			s["last_used"] = last
		}
	}
	list := []any{}
	for _, svc := range order {
		list = append(list, services[svc])
	}
	return map[string]any{"source": "aws.access_advisor", "granularity": "action", "complete": true, "error": "",
		"as_of": asOf.UTC().Format(time.RFC3339), "tracked_since": asOf.Add(-TrackingPeriod).UTC().Format(time.RFC3339), "services": list}
}

// Analyzer is a complete usage attribute as IAM Access Analyzer's unused-access findings
// give it (listed "unused"): entries as for Attr, but only what an analyzer with the
// given age (days) found unused, as of asOf.
func Analyzer(asOf time.Time, days int, entries ...string) map[string]any {
	u := Attr(asOf, entries...)
	u["source"], u["listed"], u["window_days"] = "aws.access_analyzer", "unused", days
	u["tracked_since"] = asOf.AddDate(0, 0, -days).UTC().Format(time.RFC3339)
	return u
}
