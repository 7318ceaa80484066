// Package watch tells whether an access-denied event is the after-effect of a
// right-sizing fix: a principal refused, within a window after the fix was applied, a
// permission the fix removed from it. The daemon (reconcile/daemon) hands it each
// Denial that POST /v1/events reads and the fixes that stand applied; a match opens a
// critical finding (Finding), is audited and counted, and may roll the fix back.
//
// # What matches
//
// A Denial matches an action that is verified (applied and not rolled back) when it
// came at most Window after the action was verified (and no earlier than Skew before:
// the write precedes its verification), its principal is the action's, and what was
// denied is among what the fix removed:
//
//   - aws.iam.rightsize_inline_policy (before: kind, name, policy_name, document, after,
//     removed): the principal is the user or role the policy is inline in, or for a
//     group a user whose latest observed state lists the group in its groups. The
//     denied action is matched by a removed pattern ("kms:*" covers "kms:Decrypt",
//     case-insensitively, as IAM does) and not allowed by an Allow statement of the
//     document after the fix: a removed "*" narrowed to the used services ("s3:*")
//     covers the actions of every other service.
//   - aws.iam.rightsize_managed_policy (resource the aws.iam.policy; before: policy_arn,
//     document, after, removed): the same test of the action; the principal is one the
//     policy is attached to in its latest observed state (attached_to: users, groups,
//     roles), directly or, for a user, through one of its groups. The before-state
//     names no principal, so without an observed state of the policy nothing matches.
//   - aws.iam.replace_managed_attachment (resource the principal; before: kind, name,
//     policy_arn, used_services): the principal as for an inline policy; any action of
//     a service not in used_services.
//   - gcp.iam.apply_role_recommendation (before: resource projects/P, role, member,
//     new_roles): the member ("serviceAccount:EMAIL", "user:EMAIL") is the principal,
//     and P the project the call was denied in. Which permissions the removed role
//     held is not known here: any permission denied to that member in that project
//     matches, the fix having taken a role from it.
//
// AWS principals are compared by ARN, and by account, kind and name when paths differ
// (an event's role ARN and the snapshot's agree in practice; a name is unique in an
// account whatever its path).
package watch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/internal/awsarn"
	"github.com/warden-sec/warden/internal/glob"
	"github.com/warden-sec/warden/reconcile/events"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/snapshot"
)

// The fixes watched.
const (
	RightsizeInline   = "aws.iam.rightsize_inline_policy"
	RightsizeManaged  = "aws.iam.rightsize_managed_policy"
	ReplaceAttachment = "aws.iam.replace_managed_attachment"
	RoleRecommended   = "gcp.iam.apply_role_recommendation"
)

// Remediators are the fixes watched, as remediate.Machine.Verified takes them (a new
// slice each call: no caller can change the list for another).
func Remediators() []string {
	return []string{RightsizeInline, RightsizeManaged, ReplaceAttachment, RoleRecommended}
}

// DefaultWindow is how long after a fix a denial is blamed on it (daemon.denied_window).
const DefaultWindow = 30 * 24 * time.Hour

// Skew is how long before an action's verification a denial may come and still match:
// the fix's write precedes its verification by the reads that verify it.
const Skew = 15 * time.Minute

// Lookup returns a resource as the daemon last observed it, by uid; false when it has
// none (reconcile/state).
type Lookup func(uid string) (snapshot.Resource, bool, error)

// A Match is a denial blamed on a fix.
type Match struct {
	Denial events.Denial
	// Fix is the action whose removal was denied.
	Fix *remediate.Record
	// Denied is the denied action or permission the fix removed.
	Denied string
	// Removed is what of the fix covers it: the removed pattern, "service X not kept",
	// "role R".
	Removed string
}

// Find returns the fixes among fixes that d is blamed on, within window (DefaultWindow
// when 0); lookup reads the observed state the matching needs (group members, a managed
// policy's attachments), and may be nil.
func Find(d events.Denial, fixes []*remediate.Record, window time.Duration, lookup Lookup) ([]Match, error) {
	if window <= 0 {
		window = DefaultWindow
	}
	var out []Match
	for _, r := range fixes {
		if r.State != remediate.StateVerified || (d.Provider == "aws" && r.Account != "" && r.Account != d.Account) {
			continue
		}
		applied := r.UpdatedAt
		if d.At.Before(applied.Add(-Skew)) || d.At.After(applied.Add(window)) {
			continue
		}
		for _, act := range d.Actions {
			removed, ok, err := matches(d, act, r, lookup)
			if err != nil {
				return nil, fmt.Errorf("match the denial of %s to action %s: %w", act, r.ID, err)
			}
			if ok {
				out = append(out, Match{Denial: d, Fix: r, Denied: act, Removed: removed})
				break
			}
		}
	}
	return out, nil
}

// before is the union of the watched fixes' before-states.
type before struct {
	Kind         string          `json:"kind"`
	Name         string          `json:"name"`
	After        json.RawMessage `json:"after"`
	Removed      []string        `json:"removed"`
	PolicyARN    string          `json:"policy_arn"`
	UsedServices []string        `json:"used_services"`
	Resource     string          `json:"resource"`
	Role         string          `json:"role"`
	Member       string          `json:"member"`
}

// matches says whether act, denied to d's principal, is what r removed, and by what.
func matches(d events.Denial, act string, r *remediate.Record, lookup Lookup) (string, bool, error) {
	var b before
	if err := json.Unmarshal(r.Before, &b); err != nil {
		return "", false, fmt.Errorf("before-state: %w", err)
	}
	switch r.Remediator {
	case RightsizeInline, ReplaceAttachment:
		if d.Provider != "aws" {
			return "", false, nil
		}
		ok, err := principalIs(d.Principal, r.Target, b.Kind, lookup)
		if err != nil || !ok {
			return "", false, err
		}
		if r.Remediator == ReplaceAttachment {
			svc, _, _ := strings.Cut(strings.ToLower(act), ":")
			if slices.ContainsFunc(b.UsedServices, func(s string) bool { return strings.EqualFold(s, svc) }) {
				return "", false, nil
			}
			return "service " + svc + " not kept", true, nil
		}
		return removedBy(act, b)
	case RightsizeManaged:
		if d.Provider != "aws" || lookup == nil {
			return "", false, nil
		}
		arn := b.PolicyARN
		if arn == "" {
			arn = r.Target
		}
		ok, err := attached(d.Principal, arn, lookup)
		if err != nil || !ok {
			return "", false, err
		}
		return removedBy(act, b)
	case RoleRecommended:
		if d.Provider != "gcp" || b.Resource != "projects/"+d.Account || !memberIs(b.Member, d.Principal) {
			return "", false, nil
		}
		return "role " + b.Role, true, nil
	}
	return "", false, nil
}

// removedBy is the removed pattern that covers act when the document after the fix
// does not allow it.
func removedBy(act string, b before) (string, bool, error) {
	i := slices.IndexFunc(b.Removed, func(p string) bool { return actionMatch(p, act) })
	if i < 0 {
		return "", false, nil
	}
	allowed, err := allows(b.After, act)
	if err != nil || allowed {
		return "", false, err
	}
	return b.Removed[i], true, nil
}

// allows says whether an Allow statement of doc (JSON; null: no document) names act in
// its Action, or leaves it out of its NotAction; resources and conditions are not
// weighed (the fix changed neither).
func allows(doc json.RawMessage, act string) (bool, error) {
	if len(doc) == 0 || string(doc) == "null" {
		return false, nil
	}
	var d struct {
		Statement json.RawMessage `json:"Statement"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return false, fmt.Errorf("document after the fix: %w", err)
	}
	var stmts []map[string]any
	if err := json.Unmarshal(d.Statement, &stmts); err != nil {
		var one map[string]any
		if err := json.Unmarshal(d.Statement, &one); err != nil {
			return false, fmt.Errorf("document after the fix: Statement: %w", err)
		}
		stmts = []map[string]any{one}
	}
	for _, s := range stmts {
		if s["Effect"] != "Allow" {
			continue
		}
		if a, ok := s["Action"]; ok && slices.ContainsFunc(patterns(a), func(p string) bool { return actionMatch(p, act) }) {
			return true, nil
		}
		if na, ok := s["NotAction"]; ok && !slices.ContainsFunc(patterns(na), func(p string) bool { return actionMatch(p, act) }) {
			return true, nil
		}
	}
	return false, nil
}

// patterns are the strings of an Action or NotAction (one or a list).
func patterns(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// actionMatch matches an IAM action against a pattern with * and ?, case-insensitively.
func actionMatch(pattern, act string) bool { return glob.MatchFold(pattern, act) }

// principalIs says whether principal (a user's or role's ARN) is target, the uid of the
// principal a fix changed (kind user, group or role), or, for a group, one of its
// members as the user's latest observed state says.
func principalIs(principal, target, kind string, lookup Lookup) (bool, error) {
	if kind == "group" || strings.Contains(target, ":group/") {
		if lookup == nil {
			return false, nil
		}
		u, ok, err := user(principal, lookup)
		if err != nil || !ok {
			return false, err
		}
		return slices.Contains(strs(u.Attributes["groups"]), nameOf(target)), nil
	}
	return sameIAM(principal, target), nil
}

// user is the observed user of a user ARN.
func user(principal string, lookup Lookup) (snapshot.Resource, bool, error) {
	if !strings.Contains(principal, ":user/") {
		return snapshot.Resource{}, false, nil
	}
	return lookup(principal)
}

// attached says whether the managed policy arn is attached, in its latest observed
// state, to principal directly or, for a user, to one of its groups.
func attached(principal, arn string, lookup Lookup) (bool, error) {
	pol, ok, err := lookup(arn)
	if err != nil || !ok {
		return false, err
	}
	to, _ := pol.Attributes["attached_to"].(map[string]any)
	a, ok := awsarn.Parse(principal)
	if !ok {
		return false, nil
	}
	kind, _, _ := strings.Cut(a.Resource, "/")
	if slices.Contains(strs(to[kind+"s"]), nameOf(principal)) {
		return true, nil
	}
	if kind != "user" {
		return false, nil
	}
	u, ok, err := user(principal, lookup)
	if err != nil || !ok {
		return false, err
	}
	groups := strs(to["groups"])
	return slices.ContainsFunc(strs(u.Attributes["groups"]), func(g string) bool { return slices.Contains(groups, g) }), nil
}

// sameIAM compares two IAM ARNs: equal, or of the same account, kind and name.
func sameIAM(x, y string) bool {
	if x == y {
		return true
	}
	a, ok1 := awsarn.Parse(x)
	b, ok2 := awsarn.Parse(y)
	if !ok1 || !ok2 || a.Service != "iam" || b.Service != "iam" || a.Account != b.Account {
		return false
	}
	ka, _, _ := strings.Cut(a.Resource, "/")
	kb, _, _ := strings.Cut(b.Resource, "/")
	return ka == kb && nameOf(x) == nameOf(y)
}

// nameOf is the name an IAM ARN ends with (after its path).
func nameOf(arn string) string { return arn[strings.LastIndexByte(arn, '/')+1:] }

// memberIs says whether an IAM member ("serviceAccount:EMAIL", "user:EMAIL") is the
// denial's principal.
func memberIs(member, principal string) bool {
	kind, email, ok := strings.Cut(member, ":")
	if !ok {
		return false
	}
	switch kind {
	case "serviceAccount":
		return strings.HasPrefix(principal, "//iam.googleapis.com/") && strings.HasSuffix(principal, "/serviceAccounts/"+email)
	default:
		return principal == member
	}
}

// strs are the strings of a list attribute.
func strs(v any) []string { return patterns(v) }
