// Package usage judges what a principal's usage data (the collectors' attributes.usage:
// IAM Access Advisor on AWS) shows unused for a window. It speaks only for what the data
// covers: incomplete data, tracking younger than the window, an unreadable date, or no
// data at all leave everything used, so that nothing is ever taken away for lack of
// evidence. The right-sizing fixes and `warden access` share it.
//
// Two sources speak: IAM Access Advisor lists every service the principal is granted
// (listed "granted", the default), IAM Access Analyzer's unused-access findings list only
// what went unused for longer than the analyzer's age (listed "unused"). From the latter
// nothing is known of the services used: Grants.AllGranted is false, and a consumer that
// needs the used services (narrowing "*") must not act.
package usage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// DefaultWindowDays is how long a service or action must have gone unused to count as
// unused, unless the caller says otherwise (the pack's unused_access_window_days).
const DefaultWindowDays = 90

// WindowDays is days, or DefaultWindowDays when days is not positive (a setting left out).
func WindowDays(days int) int {
	if days <= 0 {
		return DefaultWindowDays
	}
	return days
}

// Grants are what a usage shows unused for a window, lower-cased: whole services
// ("kms") and single actions of used services ("s3:putbucketpolicy"), and the services
// the data shows used (for a document granting every action).
type Grants struct {
	// Services are the unused services' namespaces ("kms"); Actions the unused actions of
	// used services ("s3:putbucketpolicy"), both lower-case.
	Services map[string]bool
	Actions  map[string]bool
	// Used are the namespaces of the services used, sorted: all of them only when
	// AllGranted.
	Used []string
	// AllGranted says the data lists every service the principal is granted (Access
	// Advisor), so that Used is every service used. False for data listing only what is
	// unused (Access Analyzer's findings): the services used are then unknown, and "*"
	// may not be narrowed to Used.
	AllGranted bool
	// AsOf is the data's own time: the window ends there.
	AsOf time.Time
	// Evidence says, per unused service or action, why: "never used since tracking began
	// on 2025-11-01", "last used 2026-02-10, 294 days before the data's date".
	Evidence map[string]string
}

// Empty reports whether nothing is unused.
func (u Grants) Empty() bool { return len(u.Services) == 0 && len(u.Actions) == 0 }

// Unused reads a usage attribute: nothing is unused when the data is incomplete,
// when tracking did not cover the whole window, or when there is none. The window ends at
// the data's own time (as_of), not the clock's. Data listing only what is unused (listed
// "unused", Access Analyzer) speaks for a window no longer than its window_days: a longer
// window concludes nothing.
func Unused(usage map[string]any, window time.Duration) (Grants, error) {
	out := Grants{Services: map[string]bool{}, Actions: map[string]bool{}, Evidence: map[string]string{}}
	if usage == nil {
		return out, errors.New("no usage data (targets.aws.usage)")
	}
	if c, _ := boolOf(usage, "complete"); !c {
		return out, fmt.Errorf("the usage data is incomplete: %s", str(usage, "error"))
	}
	asOf, err := time.Parse(time.RFC3339, str(usage, "as_of"))
	if err != nil {
		return out, fmt.Errorf("usage as_of: %w", err)
	}
	since, err := time.Parse(time.RFC3339, str(usage, "tracked_since"))
	if err != nil {
		return out, fmt.Errorf("usage tracked_since: %w", err)
	}
	out.AsOf = asOf
	cutoff := asOf.Add(-window)
	never := "never used since tracking began on " + since.Format(time.DateOnly)
	switch listed := str(usage, "listed"); listed {
	case "", "granted":
		out.AllGranted = true
	case "unused":
		days, ok := usage["window_days"].(float64)
		if n, isInt := usage["window_days"].(int); isInt {
			days, ok = float64(n), true
		}
		if !ok || days <= 0 {
			return out, errors.New("usage window_days: want the analyzer's unused-access age in days")
		}
		if time.Duration(days)*24*time.Hour < window {
			return out, nil // the analyzer looks back less than the window: nothing is known
		}
		never = fmt.Sprintf("no use in the %d days IAM Access Analyzer looks back", int(days))
	default:
		return out, fmt.Errorf("usage listed: %q is neither granted nor unused", listed)
	}
	if since.After(cutoff) {
		return out, nil // tracking does not cover the window: everything counts as used
	}
	unused := func(v any) (bool, string) {
		s, _ := v.(string)
		if s == "" {
			return true, never
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil || !t.Before(cutoff) {
			return false, "" // unreadable or recent: used
		}
		return true, fmt.Sprintf("last used %s, %d days before the data's date", t.Format(time.DateOnly), int(asOf.Sub(t).Hours()/24))
	}
	for _, s := range maps(usage, "services") {
		ns := strings.ToLower(str(s, "service"))
		if ns == "" {
			continue
		}
		if ok, why := unused(s["last_used"]); ok {
			out.Services[ns], out.Evidence[ns] = true, why
			continue
		}
		out.Used = append(out.Used, ns)
		for _, a := range maps(s, "actions") {
			name := strings.ToLower(str(a, "action"))
			if name == "" || strings.ContainsAny(name, "*?") {
				continue
			}
			if ok, why := unused(a["last_used"]); ok {
				out.Actions[name], out.Evidence[name] = true, why
			}
		}
	}
	slices.Sort(out.Used)
	return out, nil
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func boolOf(m map[string]any, key string) (bool, bool) {
	b, ok := m[key].(bool)
	return b, ok
}

func maps(m map[string]any, key string) []map[string]any {
	l, _ := m[key].([]any)
	out := make([]map[string]any, 0, len(l))
	for _, v := range l {
		if mv, ok := v.(map[string]any); ok {
			out = append(out, mv)
		}
	}
	return out
}
