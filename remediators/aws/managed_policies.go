package aws

// What the managed-policy fixes share: judging usage data for a window (failing closed
// where the data cannot speak), reading a managed policy's versions, and checking that an
// AWS-managed policy grants a service in full before a narrower policy replaces it.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/glob"
	"github.com/warden-sec/warden/internal/usage"
	"github.com/warden-sec/warden/remediators"
)

// principalAge is one principal whose usage a judgement rests on: what to call it in a
// reason, its creation time as collected ("" unknown), and whether it is a group (a group
// may carry no creation time; its members' use is what IAM reports).
type principalAge struct {
	what, created string
	group         bool
}

// judgedUsage is what the usage attribute u shows unused for a window of days, or
// remediators.ErrNotApplicable, wrapped with the reason, when the data cannot speak for
// the window: no data, incomplete data, tracking that began within the window, or a
// principal younger than it (or of unknown age). usage.Unused leaves everything used in
// the last two cases but says nothing; a fix must not then count "nothing unused" as
// converged, so it is refused here as the pack's lib/usage.rego refuses to judge.
func judgedUsage(u map[string]any, days int, principals []principalAge) (usage.Grants, error) {
	window := time.Duration(days) * 24 * time.Hour
	g, err := usage.Unused(u, window)
	if err != nil {
		return g, fmt.Errorf("%w: %w", remediators.ErrNotApplicable, err)
	}
	start := g.AsOf.Add(-window)
	since, _ := time.Parse(time.RFC3339, fmt.Sprint(u["tracked_since"])) // read by Unused already
	if since.After(start) {
		return g, fmt.Errorf("%w: usage is tracked since %s, within the %d-day window", remediators.ErrNotApplicable, since.Format(time.DateOnly), days)
	}
	for _, p := range principals {
		if p.created == "" {
			if p.group {
				continue
			}
			return g, fmt.Errorf("%w: %s has no creation time: its age cannot be judged", remediators.ErrNotApplicable, p.what)
		}
		t, err := time.Parse(time.RFC3339, p.created)
		if err != nil {
			return g, fmt.Errorf("%w: %s: creation time %q: %w", remediators.ErrNotApplicable, p.what, p.created, err)
		}
		if t.After(start) {
			return g, fmt.Errorf("%w: %s was created on %s, within the %d-day window", remediators.ErrNotApplicable, p.what, t.Format(time.DateOnly), days)
		}
	}
	return g, nil
}

// policyDefault reads a managed policy's default version: its id and its document.
func policyDefault(ctx context.Context, cl *iam.Client, arn string) (string, string, error) {
	out, err := cl.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: &arn})
	if err != nil {
		return "", "", callErr("read policy "+arn, err)
	}
	id := aws.ToString(out.Policy.DefaultVersionId)
	doc, err := policyVersionDoc(ctx, cl, arn, id)
	return id, doc, err
}

// policyVersionDoc reads the document of one version of a managed policy, URL-decoded.
func policyVersionDoc(ctx context.Context, cl *iam.Client, arn, id string) (string, error) {
	out, err := cl.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: &arn, VersionId: &id})
	if err != nil {
		return "", callErr(fmt.Sprintf("read version %s of policy %s", id, arn), err)
	}
	return decodeDocument(aws.ToString(out.PolicyVersion.Document))
}

// policyVersions lists every version of a managed policy, oldest first (by creation
// time, then by number: IAM numbers versions in the order it creates them).
func policyVersions(ctx context.Context, cl *iam.Client, arn string) ([]iamtypes.PolicyVersion, error) {
	var all []iamtypes.PolicyVersion
	var marker *string
	for {
		out, err := cl.ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: &arn, Marker: marker})
		if err != nil {
			return nil, callErr("list the versions of policy "+arn, err)
		}
		all = append(all, out.Versions...)
		if marker = truncated(out.IsTruncated, out.Marker); marker == nil {
			break
		}
	}
	slices.SortStableFunc(all, func(a, b iamtypes.PolicyVersion) int {
		if c := aws.ToTime(a.CreateDate).Compare(aws.ToTime(b.CreateDate)); c != 0 {
			return c
		}
		return versionNumber(aws.ToString(a.VersionId)) - versionNumber(aws.ToString(b.VersionId))
	})
	return all, nil
}

// versionNumber is n of a version id "vn" (0 when it is not one).
func versionNumber(id string) int {
	n := 0
	for _, c := range strings.TrimPrefix(id, "v") {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// deletePolicyVersion deletes one non-default version; one already gone is fine.
func deletePolicyVersion(ctx context.Context, cl *iam.Client, arn, id string) error {
	_, err := cl.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: &arn, VersionId: &id})
	if err != nil && !awsapi.IsNotFound(err) {
		return callErr(fmt.Sprintf("delete version %s of policy %s", id, arn), err)
	}
	return nil
}

// notWhollyGranted returns the services of svcs that doc does not grant in full: for
// each, every action of the service on every resource, without condition, and no Deny
// that could touch it. A policy granting only those services ("svc:*" on "*") then
// allows a subset of doc. Judged conservatively: anything this reading cannot prove
// counts as not granted.
func notWhollyGranted(doc map[string]any, svcs []string) []string {
	stmts, _ := statementList(doc["Statement"])
	var out []string
	for _, svc := range svcs {
		svc = strings.ToLower(svc)
		granted, denied := false, false
		for _, raw := range stmts {
			s, ok := raw.(map[string]any)
			if !ok {
				continue
			}
			switch s["Effect"] {
			case "Allow":
				granted = granted || allowsWholeService(s, svc)
			case "Deny":
				denied = denied || mayDenyService(s, svc)
			}
		}
		if !granted || denied {
			out = append(out, svc)
		}
	}
	return out
}

// allowsWholeService reports whether Allow statement s grants every action of svc on
// every resource, unconditionally.
func allowsWholeService(s map[string]any, svc string) bool {
	if _, ok := s["Condition"]; ok {
		return false
	}
	if _, ok := s["NotResource"]; ok {
		return false
	}
	if !slices.Contains(stringList(s["Resource"]), "*") {
		return false
	}
	if a, ok := s["Action"]; ok {
		return slices.ContainsFunc(stringList(a), func(p string) bool { return coversService(p, svc) })
	}
	if na, ok := s["NotAction"]; ok {
		// Every action but the listed ones: whole for svc when no listed pattern can
		// name an action of svc. A pattern that is not a string counts as naming it.
		l, isList := na.([]any)
		if !isList {
			l = []any{na}
		}
		for _, v := range l {
			p, ok := v.(string)
			if !ok || serviceMatches(p, svc) {
				return false
			}
		}
		return true
	}
	return false
}

// mayDenyService reports whether Deny statement s could deny some action of svc,
// whatever its resources and conditions.
func mayDenyService(s map[string]any, svc string) bool {
	if a, ok := s["Action"]; ok {
		l, isList := a.([]any)
		if !isList {
			l = []any{a}
		}
		for _, v := range l {
			p, ok := v.(string)
			if !ok || serviceMatches(p, svc) {
				return true
			}
		}
		return false
	}
	if na, ok := s["NotAction"]; ok {
		// Denies every action but the listed ones: svc escapes only when a listed
		// pattern spares all of it.
		return !slices.ContainsFunc(stringList(na), func(p string) bool { return coversService(p, svc) })
	}
	return true // neither: not a statement this reading understands
}

// coversService reports whether action pattern p names every action of svc: "*", or a
// service part matching svc with the action part "*".
func coversService(p, svc string) bool {
	p = strings.ToLower(p)
	if p == "*" {
		return true
	}
	sp, ap, ok := strings.Cut(p, ":")
	return ok && ap == "*" && glob.Match(sp, svc)
}

// serviceMatches reports whether action pattern p can name some action of svc: whether
// some "svc:Action" matches it, the part after its first "*" free to match anything.
func serviceMatches(p, svc string) bool {
	p, q := strings.ToLower(p), svc+":"
	for i := 0; i < len(q); i++ {
		switch {
		case i == len(p):
			return false
		case p[i] == '*':
			return true
		case p[i] != '?' && p[i] != q[i]:
			return false
		}
	}
	return true
}

// stringList is a policy value that is a string or a list, as its strings.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// docText is the canonical text of a JSON document, for writing it to IAM.
func docText(doc json.RawMessage) *string {
	s := string(doc)
	return &s
}
