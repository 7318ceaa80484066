package aws

// Usage of a customer-managed policy: what every principal it is attached to used of what
// it grants. Access Advisor answers per principal, not per policy; a service the policy
// grants counts as used when any of its principals used it (through this policy or
// another: the data cannot tell them apart, and counting it used is the safe side). The
// aggregate has the principals' usage shape, so the pack's usage library and the
// right-sizing fix read it as they read a principal's.

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/snapshot"
)

// leastPrivilegeTag is the tag an owner sets to "exempt" to keep a principal out of
// least-privilege findings (policies/lib/usage.rego).
const leastPrivilegeTag = "warden-least-privilege"

// policyPrincipalTypes maps a policy's attached_to key to the principal's resource type.
var policyPrincipalTypes = map[string]string{"users": "aws.iam.user", "groups": "aws.iam.group", "roles": "aws.iam.role"}

// customerPolicy reports whether r is a customer-managed policy attached to something:
// the only policies whose usage is aggregated.
func customerPolicy(r snapshot.Resource) bool {
	if r.Type != "aws.iam.policy" || r.Attributes == nil || r.Attributes["aws_managed"] == true {
		return false
	}
	return attachmentCount(r) > 0
}

// attachmentCount is a policy's attachment_count, as collected (int) or read back from
// JSON (float64).
func attachmentCount(r snapshot.Resource) int {
	switch n := r.Attributes["attachment_count"].(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

// attachedNames are the names of the principals a policy resource says it is attached
// to, by resource type.
func attachedNames(r snapshot.Resource) map[string][]string {
	out := map[string][]string{}
	to, _ := r.Attributes["attached_to"].(map[string]any)
	for key, typ := range policyPrincipalTypes {
		for _, n := range anyStrings(to[key]) {
			out[typ] = append(out[typ], n)
		}
	}
	return out
}

func anyStrings(v any) []string {
	switch l := v.(type) {
	case string:
		return []string{l}
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// addPolicyUsage sets attributes.usage on every customer-managed policy of sc that is
// attached to something, from the usage its principals (in sc too) already carry.
func addPolicyUsage(sc *scope) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	AggregatePolicyUsage(sc.resources)
}

// AggregatePolicyUsage sets attributes.usage on every customer-managed policy among rs
// (one account's IAM resources) that is attached to something, from the usage of its
// principals among rs, as the collector does after reading their usage. The acme
// fixture's generator uses it to write what a collection would.
func AggregatePolicyUsage(rs []snapshot.Resource) {
	byName := map[string]snapshot.Resource{}
	for _, r := range rs {
		if principalTypes[r.Type] {
			byName[r.Type+"/"+r.Name] = r
		}
	}
	for _, r := range rs {
		if !customerPolicy(r) {
			continue
		}
		var principals []snapshot.Resource
		var missing []string
		for typ, names := range attachedNames(r) {
			for _, n := range names {
				if p, ok := byName[typ+"/"+n]; ok {
					principals = append(principals, p)
				} else {
					missing = append(missing, principalKind(typ)+" "+n)
				}
			}
		}
		r.Attributes["usage"] = aggregateUsage(r, principals, missing)
	}
}

// readPolicyUsage is the usage of a customer-managed policy read alone: each principal it
// is attached to is read and its usage asked (or taken from the cache), as of the
// policy's version just read.
func (a *account) readPolicyUsage(ctx context.Context, cl *iam.Client, r snapshot.Resource) map[string]any {
	versions := map[string]string{r.UID: str(r.Attributes["default_version_id"])}
	var principals []snapshot.Resource
	var missing []string
	for typ, names := range attachedNames(r) {
		for _, n := range names {
			var p snapshot.Resource
			var err error
			switch typ {
			case "aws.iam.user":
				p, err = readUser(ctx, cl, n)
			case "aws.iam.group":
				p, err = readGroup(ctx, cl, n)
			default:
				p, err = readRole(ctx, cl, n)
			}
			if err != nil {
				missing = append(missing, fmt.Sprintf("%s %s (%v)", principalKind(typ), n, err))
				continue
			}
			p.Attributes["usage"] = a.usageOf(ctx, cl, p, versions)
			principals = append(principals, p)
		}
	}
	return aggregateUsage(r, principals, missing)
}

func str(v any) string { s, _ := v.(string); return s }

func principalKind(typ string) string { return strings.TrimPrefix(typ, "aws.iam.") }

// aggregateUsage is policy's usage from its principals' (missing names those whose usage
// could not be had). It is complete only when every attached principal's data is complete
// and lists every service the others list for this policy; its as_of is the earliest of
// theirs and tracked_since the latest, so that the window is the one all of them cover.
// Its services are those the policy's document grants; a service's (or an action's)
// last_used is the latest of the principals'. principals lists who it speaks for, with
// what the pack needs to exempt or defer them (creation, service-linked, the
// warden-least-privilege tag).
func aggregateUsage(policy snapshot.Resource, principals []snapshot.Resource, missing []string) map[string]any {
	// The principals come from a map of attachments: in a stable order, so that the same
	// policy reads (and hashes) the same every time.
	principals = slices.SortedFunc(slices.Values(principals), func(a, b snapshot.Resource) int { return strings.Compare(a.UID, b.UID) })
	missing = slices.Sorted(slices.Values(missing))
	out := map[string]any{"source": "aws.access_advisor", "aggregated": true, "complete": false}
	var who []any
	for _, p := range principals {
		e := map[string]any{"arn": p.UID, "type": p.Type, "name": p.Name, "created": p.Attributes["created"],
			"path": p.Attributes["path"], "service_linked": p.Attributes["service_linked"] == true}
		if v, ok := p.Tags[leastPrivilegeTag]; ok {
			e["least_privilege_tag"] = v
		}
		who = append(who, e)
	}
	if who == nil {
		who = []any{}
	}
	out["principals"] = who
	if n := attachmentCount(policy); n != len(principals)+len(missing) {
		missing = append(missing, fmt.Sprintf("%d attachments counted, %d principals named", n, len(principals)+len(missing)))
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		out["error"] = "no usage for " + strings.Join(missing, ", ")
		return out
	}
	grants := grantedServices(policy.Attributes["document"])
	merged := map[string]map[string]any{}
	seen := map[string]int{}
	var asOf, since time.Time
	level := "action"
	for _, p := range principals {
		u, _ := p.Attributes["usage"].(map[string]any)
		if u == nil || u["complete"] != true {
			reason := "no data"
			if u != nil {
				reason = str(u["error"])
			}
			out["error"] = fmt.Sprintf("the usage of %s %s is incomplete: %s", principalKind(p.Type), p.Name, reason)
			return out
		}
		if str(u["listed"]) == "unused" || str(u["source"]) == analyzerSource {
			// The aggregate needs what each principal used of the policy's services;
			// Access Analyzer lists only what it found unused.
			out["error"] = fmt.Sprintf("the usage of %s %s comes from IAM Access Analyzer, which lists only what is unused: a policy's usage needs what each principal used", principalKind(p.Type), p.Name)
			return out
		}
		a, err1 := time.Parse(time.RFC3339, str(u["as_of"]))
		s, err2 := time.Parse(time.RFC3339, str(u["tracked_since"]))
		if err1 != nil || err2 != nil {
			out["error"] = fmt.Sprintf("the usage of %s %s has no readable as_of or tracked_since", principalKind(p.Type), p.Name)
			return out
		}
		if asOf.IsZero() || a.Before(asOf) {
			asOf = a
		}
		if s.After(since) {
			since = s
		}
		if str(u["granularity"]) != "action" {
			level = "service"
		}
		for _, raw := range anyList(u["services"]) {
			svc, _ := raw.(map[string]any)
			ns := str(svc["service"])
			if svc == nil || ns == "" || !grants(ns) {
				continue
			}
			seen[ns]++
			merged[ns] = mergeService(merged[ns], svc)
		}
	}
	if len(principals) == 0 {
		out["error"] = "attached to no principal"
		return out
	}
	names := make([]string, 0, len(merged))
	for ns := range merged {
		names = append(names, ns)
	}
	slices.Sort(names)
	services := make([]any, 0, len(names))
	for _, ns := range names {
		if seen[ns] != len(principals) {
			out["error"] = fmt.Sprintf("the service %s is in the usage of %d of the %d principals: the data of the others predates a change", ns, seen[ns], len(principals))
			return out
		}
		services = append(services, merged[ns])
	}
	out["granularity"] = level
	out["as_of"] = asOf.UTC().Format(time.RFC3339)
	out["tracked_since"] = since.UTC().Format(time.RFC3339)
	out["services"] = services
	out["complete"] = true
	out["error"] = ""
	return out
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// mergeService folds one principal's entry for a service into the aggregate: the latest
// last_used (with its region) of the service and of each action. An action one principal
// tracks and another does not stays (the others' untracked use shows in the service's
// last_used, which the pack reads first).
func mergeService(into, svc map[string]any) map[string]any {
	if into == nil {
		into = map[string]any{"service": svc["service"], "name": svc["name"], "last_used": nil, "region": nil}
	}
	if later(svc["last_used"], into["last_used"]) {
		into["last_used"], into["region"] = svc["last_used"], svc["region"]
	}
	acts, ok := svc["actions"].([]any)
	if !ok {
		return into
	}
	have := anyList(into["actions"])
	index := map[string]int{}
	for i, a := range have {
		index[str(a.(map[string]any)["action"])] = i
	}
	for _, raw := range acts {
		a, _ := raw.(map[string]any)
		if a == nil {
			continue
		}
		name := str(a["action"])
		if i, ok := index[name]; ok {
			cur := have[i].(map[string]any)
			if later(a["last_used"], cur["last_used"]) {
				have[i] = map[string]any{"action": name, "last_used": a["last_used"], "region": a["region"]}
			}
			continue
		}
		index[name] = len(have)
		have = append(have, map[string]any{"action": name, "last_used": a["last_used"], "region": a["region"]})
	}
	into["actions"] = have
	return into
}

// later reports whether time a (RFC 3339 text or nil) is after b; nil is never.
func later(a, b any) bool {
	as, _ := a.(string)
	if as == "" {
		return false
	}
	bs, _ := b.(string)
	if bs == "" {
		return true
	}
	at, err1 := time.Parse(time.RFC3339, as)
	bt, err2 := time.Parse(time.RFC3339, bs)
	return err1 == nil && (err2 != nil || at.After(bt))
}

// grantedServices is a predicate on service namespaces: whether doc's Allow statements
// may grant something of the service. It errs on the side of yes: a NotAction, a
// wildcard service part or a document it cannot read grants every service.
func grantedServices(doc any) func(string) bool {
	all := func(string) bool { return true }
	d, ok := doc.(map[string]any)
	if !ok {
		return all
	}
	var stmts []any
	switch s := d["Statement"].(type) {
	case []any:
		stmts = s
	case map[string]any:
		stmts = []any{s}
	default:
		return all
	}
	var patterns []string
	for _, raw := range stmts {
		s, ok := raw.(map[string]any)
		if !ok {
			return all
		}
		if s["Effect"] != "Allow" {
			continue
		}
		if s["NotAction"] != nil {
			return all
		}
		for _, p := range anyStrings(s["Action"]) {
			svc, _, ok := strings.Cut(strings.ToLower(p), ":")
			if !ok {
				return all // "*" or something unreadable
			}
			patterns = append(patterns, svc)
		}
	}
	return func(ns string) bool {
		ns = strings.ToLower(ns)
		for _, p := range patterns {
			if ok, err := path.Match(p, ns); p == ns || (err == nil && ok) {
				return true
			}
		}
		return false
	}
}
