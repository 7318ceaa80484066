// Package access answers the question security teams ask most of an IAM enforcer: of
// what each principal is granted, what has it used? It reads the usage the collectors
// recorded (attributes.usage of users, groups and roles: IAM Access Advisor), judges what
// went unused for a window (internal/usage, which fails closed), and names the fix that
// would take the surplus away, as the plan would offer it (`warden access`).
package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/internal/usage"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
)

// Rightsize is the fix that narrows an inline policy from usage.
const Rightsize = "aws.iam.rightsize_inline_policy"

// Options choose the principals and the window.
type Options struct {
	// Principals keeps only these uids (ARNs); empty: every user, group and role.
	Principals []string
	// WindowDays is how long a grant must have gone unused (0: usage.DefaultWindowDays).
	WindowDays int
	// Registry holds the fixes whose targets are shown; nil shows none.
	Registry *remediators.Registry
}

// Principal is one principal's grants against its use.
type Principal struct {
	UID     string `json:"uid"`
	Type    string `json:"type"`
	Name    string `json:"name"`
	Account string `json:"account,omitempty"`
	// Data says what the usage data can speak for: "complete", "none" (not collected:
	// targets.aws.usage), "incomplete: why", or "too young: why".
	Data string `json:"data"`
	// AsOf is the data's own time; Granted the services its policies grant.
	AsOf    time.Time `json:"as_of,omitzero"`
	Granted int       `json:"granted_services"`
	// UnusedOnly says the data lists only what is unused (IAM Access Analyzer's
	// findings): Granted and Used are then unknown, left 0 and empty.
	UnusedOnly bool `json:"unused_only,omitempty"`
	// Used are the services used within the window; Unused what went unused, with why.
	Used   []string `json:"used_services"`
	Unused []Item   `json:"unused"`
	// Fixes are what the plan would offer to take the surplus away.
	Fixes []Fix `json:"fixes,omitempty"`
}

// Item is a service ("kms") or an action ("s3:PutBucketPolicy") gone unused, and why.
type Item struct {
	Permission string `json:"permission"`
	Evidence   string `json:"evidence"`
}

// Fix is one target of a fix: the part it changes and what it removes there.
type Fix struct {
	Remediator string   `json:"remediator"`
	Part       string   `json:"part"`
	Removes    []string `json:"removes"`
}

// principalTypes are the types that carry usage.
var principalTypes = []string{"aws.iam.group", "aws.iam.role", "aws.iam.user"}

// Read reads the snapshot r and returns its principals, sorted by uid. A principal asked
// for by uid that the snapshot lacks is an error.
func Read(ctx context.Context, r *snapshot.Reader, o Options) ([]Principal, error) {
	want := map[string]bool{}
	for _, p := range o.Principals {
		want[p] = true
	}
	parser := snapshot.NewParser(r.Name())
	var out []Principal
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		el, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		res, err := parser.Decode(el)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(principalTypes, res.Type) || (len(want) > 0 && !want[res.UID]) {
			continue
		}
		delete(want, res.UID)
		p, err := Judge(res, o.WindowDays, o.Registry)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(want) > 0 {
		missing := make([]string, 0, len(want))
		for uid := range want {
			missing = append(missing, uid)
		}
		slices.Sort(missing)
		return nil, fmt.Errorf("%s: no such user, group or role in %s", strings.Join(missing, ", "), r.Name())
	}
	slices.SortFunc(out, func(a, b Principal) int { return strings.Compare(a.UID, b.UID) })
	return out, nil
}

// PrincipalTypes are the resource types access judges: the ones that carry usage.
func PrincipalTypes() []string { return slices.Clone(principalTypes) }

// Judge is one principal's view: its usage against window days, and the fixes reg's
// right-sizing would plan (none when reg is nil).
func Judge(res snapshot.Resource, window int, reg *remediators.Registry) (Principal, error) {
	window = usage.WindowDays(window)
	p := Principal{UID: res.UID, Type: res.Type, Name: res.Name, Account: res.Account, Used: []string{}, Unused: []Item{}}
	u, _ := res.Attributes["usage"].(map[string]any)
	if u == nil {
		p.Data = "none"
		return p, nil
	}
	services, _ := u["services"].([]any)
	p.Granted = len(services)
	g, err := usage.Unused(u, time.Duration(window)*24*time.Hour)
	switch {
	case err != nil:
		p.Data = "incomplete: " + err.Error()
		return p, nil
	case g.AsOf.IsZero():
		p.Data = "none"
		return p, nil
	}
	p.AsOf, p.Used = g.AsOf, g.Used
	if p.Used == nil {
		p.Used = []string{}
	}
	p.Data = "complete"
	if !g.AllGranted {
		// Access Analyzer's findings: what is granted and used is unknown.
		p.UnusedOnly, p.Granted, p.Used = true, 0, []string{}
		if days := number(u["window_days"]); days < window {
			p.Data = fmt.Sprintf("too young: IAM Access Analyzer's findings cover %d days, not the %d-day window", days, window)
			return p, nil
		}
	}
	if g.Empty() && len(g.Used) == 0 && p.Granted > 0 {
		p.Data = fmt.Sprintf("too young: tracking does not cover the %d-day window", window)
		return p, nil
	}
	for _, k := range sortedKeys(g.Services) {
		p.Unused = append(p.Unused, Item{Permission: k, Evidence: g.Evidence[k]})
	}
	for _, k := range sortedKeys(g.Actions) {
		p.Unused = append(p.Unused, Item{Permission: k, Evidence: g.Evidence[k]})
	}
	if reg == nil || g.Empty() {
		return p, nil
	}
	fix, ok := reg.Get(Rightsize)
	if !ok {
		return p, nil
	}
	targets, err := fix.Targets(res, map[string]any{"window_days": window})
	if err != nil {
		return p, fmt.Errorf("%s: %w", res.UID, err)
	}
	for _, t := range targets {
		var b struct {
			Removed []string `json:"removed"`
		}
		if err := json.Unmarshal(t.Before, &b); err != nil {
			return p, fmt.Errorf("%s %s: %w", res.UID, t.Part, err)
		}
		p.Fixes = append(p.Fixes, Fix{Remediator: Rightsize, Part: t.Part, Removes: b.Removed})
	}
	return p, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// number is a JSON or Go number as an int (0 for anything else).
func number(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}
