package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// generatedPath is the path of the policies warden generates, so that they are found
// (and told apart from a customer's) at a glance.
const generatedPath = "/warden/"

// ReplaceManagedAttachment replaces a broad AWS-managed policy (AdministratorAccess,
// PowerUserAccess, IAMFullAccess, …) attached to a user, group or role that used a small
// part of it (aws.iam.replace_managed_attachment, parameters policy, used_services and
// window_days): a customer-managed policy warden generates grants "svc:*" of each service
// used, and takes the managed policy's place. Whole services, because Access Advisor
// tracks only some actions: an untracked action of a used service must stay granted. A
// principal that used none of it only loses the attachment.
//
// Apply refuses unless the managed policy grants each of those services in full (so the
// generated policy allows a subset of it), attaches the generated policy before it
// detaches the managed one (the principal is never left with neither), and finds, after a
// crash at any point, what an earlier attempt did. Rollback attaches the managed policy
// again, then detaches and deletes the generated one.
type ReplaceManagedAttachment struct{ c clients }

// NewReplaceManagedAttachment returns the fix; s may be nil for planning only.
func NewReplaceManagedAttachment(s *awsapi.Sessions) *ReplaceManagedAttachment {
	return &ReplaceManagedAttachment{clients{s}}
}

// replaceBefore is the part: one attachment of an AWS-managed policy and the policy to
// put in its place (Document null: none, the attachment is only removed).
type replaceBefore struct {
	Kind          string          `json:"kind"` // user, group, role
	Name          string          `json:"name"`
	PolicyARN     string          `json:"policy_arn"`
	GeneratedName string          `json:"generated_name"`
	GeneratedPath string          `json:"generated_path"`
	Document      json.RawMessage `json:"document"`
	UsedServices  []string        `json:"used_services"`
	WindowDays    int             `json:"window_days"`
}

// awsManagedARN matches an AWS-managed policy's ARN, in any partition.
var awsManagedARN = regexp.MustCompile(`^arn:aws[a-z-]*:iam::aws:policy/(?:.*/)?([^/]+)$`)

// serviceName is an IAM service namespace.
var serviceName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Spec implements remediators.Remediator.
func (*ReplaceManagedAttachment) Spec() remediators.Spec {
	var perms []string
	for _, kind := range []string{"User", "Group", "Role"} {
		perms = append(perms, "iam:Attach"+kind+"Policy", "iam:Detach"+kind+"Policy", "iam:ListAttached"+kind+"Policies")
	}
	// Apply reads the managed policy's default version and the generated policy, creates
	// the generated policy; Rollback deletes it, its old versions first.
	perms = append(perms, "iam:CreatePolicy", "iam:DeletePolicy", "iam:DeletePolicyVersion", "iam:GetPolicy", "iam:GetPolicyVersion", "iam:ListPolicyVersions")
	slices.Sort(perms)
	return remediators.Spec{
		Action: "aws.iam.replace_managed_attachment",
		Params: []remediators.Param{
			{Name: "policy", Required: true, Doc: "the ARN of the AWS-managed policy to replace, e.g. arn:aws:iam::aws:policy/AdministratorAccess"},
			{Name: "used_services", Required: true, Doc: "the namespaces of the services the principal used from the policy (a list, e.g. [\"s3\", \"sqs\"]); the generated policy grants each in full, those the usage data now shows unused left out"},
			{Name: "window_days", Doc: "how many days a service must have gone unused, as of the usage data's date, to be left out (default 90)"},
		},
		ResourceTypes: []string{"aws.iam.user", "aws.iam.group", "aws.iam.role"},
		Rollback:      remediators.Rollback{Possible: true},
		Permissions:   remediators.Permissions{AWS: perms},
	}
}

// Targets is the attachment of the policy ("attachment/NAME") while it is attached, with
// the generated policy's name and document. Usage data that cannot speak for the window
// makes the fix not applicable (judgedUsage): a principal counts as using all of it then.
func (*ReplaceManagedAttachment) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	kind := principalKind(res.Type)
	if kind == "" {
		return nil, fmt.Errorf("%s: not a user, group or role", res.UID)
	}
	policy, err := attr.Param(params, "policy", true)
	if err != nil {
		return nil, err
	}
	m := awsManagedARN.FindStringSubmatch(policy)
	if m == nil {
		return nil, fmt.Errorf("parameter policy %q: not the ARN of an AWS-managed policy (arn:aws:iam::aws:policy/NAME)", policy)
	}
	managedName := m[1]
	named, err := serviceList(params["used_services"])
	if err != nil {
		return nil, err
	}
	days, err := windowDays(params)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(attr.Maps(res.Attributes, "attached_policies"), func(p map[string]any) bool { return attr.String(p, "arn") == policy }) {
		return nil, nil // not attached (any more): nothing to replace
	}
	name := principalName(res)
	age := principalAge{what: kind + " " + name, created: attr.String(res.Attributes, "created"), group: kind == "group"}
	g, err := judgedUsage(attr.Map(res.Attributes, "usage"), days, []principalAge{age})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind, res.UID, err)
	}
	if !g.AllGranted {
		// The replacement grants what is used; data listing only what is unused (IAM
		// Access Analyzer) cannot say what that is.
		return nil, fmt.Errorf("%w: %s %s: the usage data lists only what is unused (IAM Access Analyzer): the services used, which the replacement must grant, are unknown",
			remediators.ErrNotApplicable, kind, res.UID)
	}
	// The services named that the data does not show unused: used, or not listed by
	// the data (which then cannot speak for them, and they stay).
	used := make([]string, 0, len(named))
	for _, svc := range named {
		if !g.Services[svc] {
			used = append(used, svc)
		}
	}
	b := replaceBefore{Kind: kind, Name: name, PolicyARN: policy, GeneratedName: generatedName(name, managedName),
		GeneratedPath: generatedPath, Document: json.RawMessage("null"), UsedServices: used, WindowDays: days}
	if len(used) > 0 {
		if b.Document, err = attr.Canonical(servicesDocument(used)); err != nil {
			return nil, err
		}
	}
	before, err := attr.Canonical(b)
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: "attachment/" + managedName, Before: before}}, nil
}

// serviceList reads used_services: a list of namespaces, lower-cased, sorted, each once.
func serviceList(v any) ([]string, error) {
	var raw []any
	switch l := v.(type) {
	case []any:
		raw = l
	case []string:
		for _, s := range l {
			raw = append(raw, s)
		}
	case nil:
		return nil, fmt.Errorf("parameter used_services is required")
	default:
		return nil, fmt.Errorf("parameter used_services: want a list of service namespaces, got %T", v)
	}
	out := []string{}
	for _, e := range raw {
		s, ok := e.(string)
		s = strings.ToLower(strings.TrimSpace(s))
		if !ok || !serviceName.MatchString(s) {
			return nil, fmt.Errorf("parameter used_services: %v is not a service namespace (like \"s3\")", e)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// servicesDocument grants every action of each service, on every resource.
func servicesDocument(services []string) map[string]any {
	actions := make([]any, 0, len(services))
	for _, s := range services {
		actions = append(actions, s+":*")
	}
	return map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "UsedServices", "Effect": "Allow", "Action": actions, "Resource": "*"}}}
}

// generatedName is "warden-PRINCIPAL-MANAGED" in IAM's policy-name characters, at most
// 128 of them: a longer one is cut and ends with a hash of the whole, so that two
// principals never share a policy.
func generatedName(principal, managed string) string {
	full := "warden-" + principal + "-" + managed
	clean := []byte(full)
	for i, c := range clean {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("+=,.@_-", c) >= 0) {
			clean[i] = '-'
		}
	}
	if len(clean) <= 128 && string(clean) == full {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	h := hex.EncodeToString(sum[:])[:8]
	if len(clean) > 128-9 {
		clean = clean[:128-9]
	}
	return string(clean) + "-" + h
}

// generatedARN is the ARN of the generated policy, in the principal's partition and
// account.
func generatedARN(principalARN string, b replaceBefore) (string, error) {
	f := strings.SplitN(principalARN, ":", 6)
	if len(f) < 6 || f[0] != "arn" || f[4] == "" {
		return "", fmt.Errorf("%s: not the ARN of a user, group or role", principalARN)
	}
	return "arn:" + f[1] + ":iam::" + f[4] + ":policy" + b.GeneratedPath + b.GeneratedName, nil
}

// Apply puts the generated policy in the managed one's place: ErrConverged when the
// managed policy is detached and the generated one attached (or none was to be); an
// error when the managed policy was detached otherwise, or does not grant each used
// service in full, or a policy of the generated name holds another document.
func (r *ReplaceManagedAttachment) Apply(ctx context.Context, a remediators.Action) error {
	b, gen, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	managed := detachBefore{Kind: b.Kind, Name: b.Name, PolicyARN: b.PolicyARN}
	generated := detachBefore{Kind: b.Kind, Name: b.Name, PolicyARN: gen}
	hasManaged, err := isAttached(ctx, cl, managed)
	if awsapi.IsNotFound(err) {
		return remediators.ErrConverged // the principal is gone, and its attachment with it
	}
	if err != nil {
		return err
	}
	hasGenerated := false
	if gen != "" {
		if hasGenerated, err = isAttached(ctx, cl, generated); err != nil {
			return err
		}
	}
	if !hasManaged {
		if gen == "" || hasGenerated {
			return remediators.ErrConverged
		}
		return fmt.Errorf("%s was detached from %s %s since the plan, and %s was not attached in its place: plan again", b.PolicyARN, b.Kind, b.Name, gen)
	}
	if gen != "" {
		if err := r.checkSubset(ctx, cl, b); err != nil {
			return fmt.Errorf("action %s: refused: %w", a.ID, err)
		}
		if err := ensureGenerated(ctx, cl, b, gen); err != nil {
			return err
		}
		if !hasGenerated {
			if err := attach(ctx, cl, generated); awsapi.Code(err) == "LimitExceeded" {
				// Detaching the managed policy first would leave the principal without
				// the access it uses, however briefly: refused instead, and the
				// policy just created is not left behind.
				if derr := deleteGenerated(ctx, cl, b, gen); derr != nil {
					err = errors.Join(err, derr)
				}
				return fmt.Errorf("%s %s is at IAM's quota of attached managed policies: detach one it does not need (or raise the quota), then apply again: %w", b.Kind, b.Name, err)
			} else if err != nil {
				return err
			}
		}
	}
	if err := detach(ctx, cl, managed); err != nil && !awsapi.IsNotFound(err) {
		return err
	}
	return nil
}

// checkSubset reads the managed policy's default version and checks that it grants in
// full every service the generated policy grants.
func (r *ReplaceManagedAttachment) checkSubset(ctx context.Context, cl *iam.Client, b replaceBefore) error {
	_, text, err := policyDefault(ctx, cl, b.PolicyARN)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return fmt.Errorf("the default version of %s is not a JSON document: %w", b.PolicyARN, err)
	}
	if missing := notWhollyGranted(doc, b.UsedServices); len(missing) > 0 {
		return fmt.Errorf("%s does not grant every action of %s on every resource without condition: a policy granting them in full would allow more than it does",
			b.PolicyARN, strings.Join(missing, ", "))
	}
	return nil
}

// ensureGenerated creates the generated policy, or finds it made by an earlier attempt:
// a policy of its ARN must hold its document.
func ensureGenerated(ctx context.Context, cl *iam.Client, b replaceBefore, arn string) error {
	_, doc, err := policyDefault(ctx, cl, arn)
	if err == nil {
		if !sameJSON(doc, b.Document) {
			return fmt.Errorf("policy %s exists with another document than the one warden generates: rename or delete it, then plan again", arn)
		}
		return nil
	}
	if !awsapi.IsNotFound(err) {
		return err
	}
	desc := fmt.Sprintf("warden: the services %s %s used from %s, in its place (aws.iam.replace_managed_attachment)", b.Kind, b.Name, attr.LastSegment(b.PolicyARN))
	_, err = cl.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: &b.GeneratedName, Path: &b.GeneratedPath,
		PolicyDocument: docText(b.Document), Description: aws.String(desc)})
	if err != nil {
		return callErr("create policy "+arn, err)
	}
	return nil
}

// Rollback attaches the managed policy again (first, so that the principal is never left
// with neither, unless IAM's quota of attached policies leaves no room: then the
// generated policy goes just before), then detaches the generated policy and deletes it. A policy of the
// generated name with another document is not warden's: it is detached but kept.
func (r *ReplaceManagedAttachment) Rollback(ctx context.Context, a remediators.Action) error {
	b, gen, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	managed := detachBefore{Kind: b.Kind, Name: b.Name, PolicyARN: b.PolicyARN}
	generated := detachBefore{Kind: b.Kind, Name: b.Name, PolicyARN: gen}
	hasGenerated := false
	if gen != "" {
		if hasGenerated, err = isAttached(ctx, cl, generated); err != nil {
			return err
		}
	}
	if has, err := isAttached(ctx, cl, managed); err != nil {
		return err
	} else if !has {
		err := attach(ctx, cl, managed)
		if err != nil && hasGenerated && awsapi.Code(err) == "LimitExceeded" {
			// At IAM's quota of attached policies the generated one makes room: it
			// grants a subset of the managed one, which follows at once.
			if err := detach(ctx, cl, generated); err != nil && !awsapi.IsNotFound(err) {
				return err
			}
			hasGenerated = false
			err = attach(ctx, cl, managed)
		}
		if err != nil {
			return err
		}
	}
	if gen == "" {
		return nil
	}
	if hasGenerated {
		if err := detach(ctx, cl, generated); err != nil && !awsapi.IsNotFound(err) {
			return err
		}
	}
	return deleteGenerated(ctx, cl, b, gen)
}

// deleteGenerated deletes the generated policy, its non-default versions first; one
// already gone, or holding another document (not warden's), is left alone.
func deleteGenerated(ctx context.Context, cl *iam.Client, b replaceBefore, gen string) error {
	_, doc, err := policyDefault(ctx, cl, gen)
	switch {
	case awsapi.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case !sameJSON(doc, b.Document):
		return nil
	}
	versions, err := policyVersions(ctx, cl, gen)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if !v.IsDefaultVersion {
			if err := deletePolicyVersion(ctx, cl, gen, aws.ToString(v.VersionId)); err != nil {
				return err
			}
		}
	}
	if _, err := cl.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: &gen}); err != nil && !awsapi.IsNotFound(err) {
		return callErr("delete policy "+gen, err)
	}
	return nil
}

// open reads the before-state, the generated policy's ARN ("" when none is generated)
// and the client.
func (r *ReplaceManagedAttachment) open(ctx context.Context, a remediators.Action) (replaceBefore, string, *iam.Client, error) {
	var b replaceBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return b, "", nil, err
	}
	if b.Name == "" || principalKind("aws.iam."+b.Kind) == "" || !awsManagedARN.MatchString(b.PolicyARN) {
		return b, "", nil, fmt.Errorf("action %s: before-state names no principal or AWS-managed policy", a.ID)
	}
	var gen string
	if len(b.Document) > 0 && string(b.Document) != "null" {
		if b.GeneratedName == "" || b.GeneratedPath == "" || len(b.UsedServices) == 0 {
			return b, "", nil, fmt.Errorf("action %s: before-state has a document but no generated policy name or services", a.ID)
		}
		var err error
		if gen, err = generatedARN(a.Target, b); err != nil {
			return b, "", nil, fmt.Errorf("action %s: %w", a.ID, err)
		}
	}
	cl, err := r.c.iam(ctx, a)
	return b, gen, cl, err
}
