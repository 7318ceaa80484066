package cloudsim

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Managed policies: customer-managed ones the account creates, and AWS-managed ones
// (arn:aws:iam::aws:policy/…) that an account holds once something attaches them.

const awsPolicyPrefix = "arn:aws:iam::aws:policy/"

// awsPlaceholderDoc is the document of AWS-managed policies the world does not spell out.
// The simulator does not know AWS's documents; a world that wants a policy's real grants
// lists the policy with its document. The placeholder grants next to nothing, so that it
// raises no finding the world's author did not write. With IAM enforcement on
// (iam_enforce.go) it is what the policy grants: a principal with only placeholders may
// call sts:GetCallerIdentity and nothing else.
const awsPlaceholderDoc Doc = `{"Version":"2012-10-17","Statement":[{"Sid":"SimulatorPlaceholder","Effect":"Allow","Action":"sts:GetCallerIdentity","Resource":"*"}]}`

// maxPolicyVersions is IAM's quota of versions per managed policy.
const maxPolicyVersions = 5

// maxAttached is IAM's default quota of managed policies per user, role or group.
const maxAttached = 10

// xPolicy is a Policy as IAM answers it.
type xPolicy struct {
	Arn                           string
	AttachmentCount               int
	CreateDate                    awsTime
	DefaultVersionId              string
	Description                   string `xml:",omitempty"`
	IsAttachable                  bool
	Path                          string
	PermissionsBoundaryUsageCount int
	PolicyId                      string
	PolicyName                    string
	UpdateDate                    awsTime
}

// xPolicyVersion is a PolicyVersion; Document is left out by the calls that do not
// return it (ListPolicyVersions, CreatePolicyVersion).
type xPolicyVersion struct {
	CreateDate       awsTime
	Document         string `xml:",omitempty"`
	IsDefaultVersion bool
	VersionId        string
}

// xAttached is an AttachedPolicy.
type xAttached struct {
	PolicyArn  string
	PolicyName string
}

// xmlPolicy renders p; ListPolicies leaves the description out, as IAM does.
func xmlPolicy(p *Policy, attachments int, desc bool) xPolicy {
	x := xPolicy{Arn: p.ARN, AttachmentCount: attachments, CreateDate: awsTime(p.Created), DefaultVersionId: p.DefaultVersion,
		IsAttachable: true, Path: orPath(p.Path), PolicyId: p.ID, PolicyName: p.Name, UpdateDate: awsTime(p.Updated)}
	if desc {
		x.Description = p.Description
	}
	return x
}

func xmlVersion(p *Policy, v PolicyVersion, doc bool) xPolicyVersion {
	x := xPolicyVersion{CreateDate: awsTime(v.Created), IsDefaultVersion: v.ID == p.DefaultVersion, VersionId: v.ID}
	if doc {
		x.Document = encodeDoc(v.Document)
	}
	return x
}

// splitPolicyARN returns the path and name at the end of a policy ARN.
func splitPolicyARN(arn string) (path, name string) {
	_, rest, ok := strings.Cut(arn, ":policy/")
	if !ok {
		return "/", arn[strings.LastIndex(arn, "/")+1:]
	}
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		return "/" + rest[:i+1], rest[i+1:]
	}
	return "/", rest
}

// newAWSManagedPolicy is an AWS-managed policy as an account first holds it.
func newAWSManagedPolicy(arn string, now time.Time) *Policy {
	path, name := splitPolicyARN(arn)
	return &Policy{Name: name, Path: path, ARN: arn, AWSManaged: true, ID: makeID("ANPA", arn, 17),
		Created: now, Updated: now, DefaultVersion: "v1",
		Versions: []PolicyVersion{{ID: "v1", Document: awsPlaceholderDoc, Created: now}}}
}

func findPolicy(a *Account, arn string) *Policy {
	for _, p := range a.Policies {
		if p.ARN == arn {
			return p
		}
	}
	return nil
}

// lookupPolicy finds a policy by ARN; an AWS-managed policy the account does not hold is
// answered as AWS would (it exists for every account), without being added.
func (s *Sim) lookupPolicy(a *Account, arn string) *Policy {
	if p := findPolicy(a, arn); p != nil {
		return p
	}
	if strings.HasPrefix(arn, awsPolicyPrefix) && len(arn) > len(awsPolicyPrefix) {
		return newAWSManagedPolicy(arn, s.stamp())
	}
	return nil
}

// policyNamed finds the policy the PolicyArn parameter names.
func (s *Sim) policyNamed(a *Account, f url.Values) (*Policy, error) {
	arn, err := iamRequired(f, "PolicyArn")
	if err != nil {
		return nil, err
	}
	p := s.lookupPolicy(a, arn)
	if p == nil {
		return nil, noSuchEntity("Policy %s was not found.", arn)
	}
	return p, nil
}

// localPolicyNamed is policyNamed for writes, which only customer-managed policies take.
func (s *Sim) localPolicyNamed(a *Account, f url.Values) (*Policy, error) {
	p, err := s.policyNamed(a, f)
	if err != nil {
		return nil, err
	}
	if p.AWSManaged {
		return nil, errf(kindInvalid, "InvalidInput", "Policy %s is an AWS managed policy and cannot be modified.", p.ARN)
	}
	return p, nil
}

// adoptAWSPolicies adds the AWS-managed policies a world attaches without listing them,
// so that account-wide reads show them as IAM would.
func (s *Sim) adoptAWSPolicies(a *Account) {
	seen := map[string]bool{}
	for _, p := range a.Policies {
		seen[p.ARN] = true
	}
	adopt := func(arns []string) {
		for _, arn := range arns {
			if !seen[arn] && strings.HasPrefix(arn, awsPolicyPrefix) {
				seen[arn] = true
				a.Policies = append(a.Policies, newAWSManagedPolicy(arn, s.stamp()))
			}
		}
	}
	for _, arns := range attachedLists(a) {
		adopt(arns)
	}
}

// attachedLists is the list of attached policy ARNs of every user, group and role, in
// that order.
func attachedLists(a *Account) [][]string {
	out := make([][]string, 0, len(a.Users)+len(a.Groups)+len(a.Roles))
	for _, u := range a.Users {
		out = append(out, u.AttachedPolicies)
	}
	for _, g := range a.Groups {
		out = append(out, g.AttachedPolicies)
	}
	for _, r := range a.Roles {
		out = append(out, r.AttachedPolicies)
	}
	return out
}

// attachmentCounts counts the users, groups and roles each policy ARN is attached to.
func attachmentCounts(a *Account) map[string]int {
	n := map[string]int{}
	for _, arns := range attachedLists(a) {
		for _, arn := range arns {
			n[arn]++
		}
	}
	return n
}

func (s *Sim) createPolicy(a *Account, _ *call, f url.Values) (any, error) {
	name, err := iamName(f, "PolicyName", 128)
	if err != nil {
		return nil, err
	}
	path, err := iamPath(f)
	if err != nil {
		return nil, err
	}
	doc, err := iamPolicyDoc(f, "PolicyDocument")
	if err != nil {
		return nil, err
	}
	if _, err := iamTagsOf(f); err != nil {
		return nil, err
	}
	now := s.stamp()
	p := &Policy{Name: name, Path: path, Description: f.Get("Description"), Created: now, Updated: now,
		DefaultVersion: "v1", Versions: []PolicyVersion{{ID: "v1", Document: doc, Created: now}}}
	p.ARN = policyARN(a.ID, p)
	p.ID = makeID("ANPA", p.ARN, 17)
	for _, q := range a.Policies {
		if strings.EqualFold(q.ARN, p.ARN) {
			return nil, alreadyExists("A policy called %s already exists. Duplicate names are not allowed.", name)
		}
	}
	a.Policies = append(a.Policies, p)
	return struct{ Policy xPolicy }{xmlPolicy(p, 0, true)}, nil
}

func (s *Sim) getPolicy(a *Account, _ *call, f url.Values) (any, error) {
	p, err := s.policyNamed(a, f)
	if err != nil {
		return nil, err
	}
	return struct{ Policy xPolicy }{xmlPolicy(p, attachmentCounts(a)[p.ARN], true)}, nil
}

func (s *Sim) listPolicies(a *Account, _ *call, f url.Values) (any, error) {
	scope := or(f.Get("Scope"), "All")
	if scope != "All" && scope != "AWS" && scope != "Local" {
		return nil, iamInvalid("1 validation error detected: Value '%s' at 'scope' failed to satisfy constraint: Member must satisfy enum value set: [All, AWS, Local]", scope)
	}
	onlyAttached, _, err := iamBool(f, "OnlyAttached")
	if err != nil {
		return nil, err
	}
	match, err := iamPathPrefix(f)
	if err != nil {
		return nil, err
	}
	s.adoptAWSPolicies(a)
	counts := attachmentCounts(a)
	var policies []*Policy
	for _, p := range a.Policies {
		switch {
		case scope == "AWS" && !p.AWSManaged, scope == "Local" && p.AWSManaged:
		case onlyAttached && counts[p.ARN] == 0, !match(p.Path):
		default:
			policies = append(policies, p)
		}
	}
	page, pg, err := iamRenderPage(f, policies, func(p *Policy) xPolicy { return xmlPolicy(p, counts[p.ARN], false) })
	if err != nil {
		return nil, err
	}
	return struct {
		Policies []xPolicy `xml:"Policies>member"`
		iamPage
	}{page, pg}, nil
}

func (s *Sim) deletePolicy(a *Account, _ *call, f url.Values) (any, error) {
	p, err := s.localPolicyNamed(a, f)
	if err != nil {
		return nil, err
	}
	switch {
	case attachmentCounts(a)[p.ARN] > 0:
		return nil, deleteConflict("Cannot delete a policy attached to entities.")
	case len(p.Versions) > 1:
		return nil, deleteConflict("This policy has more than one version. Before you delete a policy, you must delete the policy's versions. The default version is deleted with the policy.")
	}
	a.Policies = slices.DeleteFunc(a.Policies, func(x *Policy) bool { return x == p })
	return nil, nil
}

func (s *Sim) createPolicyVersion(a *Account, _ *call, f url.Values) (any, error) {
	p, err := s.localPolicyNamed(a, f)
	if err != nil {
		return nil, err
	}
	doc, err := iamPolicyDoc(f, "PolicyDocument")
	if err != nil {
		return nil, err
	}
	setDefault, _, err := iamBool(f, "SetAsDefault")
	if err != nil {
		return nil, err
	}
	if len(p.Versions) >= maxPolicyVersions {
		return nil, limitExceeded("A managed policy can have up to %d versions. Before you create a new version, you must delete an existing version.", maxPolicyVersions)
	}
	// Version ids only grow, even after older versions are deleted.
	next := 0
	for _, v := range p.Versions {
		if n, err := strconv.Atoi(strings.TrimPrefix(v.ID, "v")); err == nil && n > next {
			next = n
		}
	}
	now := s.stamp()
	v := PolicyVersion{ID: "v" + strconv.Itoa(next+1), Document: doc, Created: now}
	p.Versions = append(p.Versions, v)
	if setDefault {
		p.DefaultVersion, p.Updated = v.ID, now
	}
	return struct{ PolicyVersion xPolicyVersion }{xmlVersion(p, v, false)}, nil
}

// versionNamed finds the version the VersionId parameter names.
func versionNamed(p *Policy, f url.Values) (int, error) {
	id, err := iamRequired(f, "VersionId")
	if err != nil {
		return -1, err
	}
	for i, v := range p.Versions {
		if v.ID == id {
			return i, nil
		}
	}
	return -1, noSuchEntity("Policy %s version %s does not exist or is not attachable.", p.ARN, id)
}

func (s *Sim) getPolicyVersion(a *Account, _ *call, f url.Values) (any, error) {
	p, err := s.policyNamed(a, f)
	if err != nil {
		return nil, err
	}
	i, err := versionNamed(p, f)
	if err != nil {
		return nil, err
	}
	return struct{ PolicyVersion xPolicyVersion }{xmlVersion(p, p.Versions[i], true)}, nil
}

func (s *Sim) listPolicyVersions(a *Account, _ *call, f url.Values) (any, error) {
	p, err := s.policyNamed(a, f)
	if err != nil {
		return nil, err
	}
	versions, pg, err := iamRenderPage(f, p.Versions, func(v PolicyVersion) xPolicyVersion { return xmlVersion(p, v, false) })
	if err != nil {
		return nil, err
	}
	return struct {
		Versions []xPolicyVersion `xml:"Versions>member"`
		iamPage
	}{versions, pg}, nil
}

func (s *Sim) setDefaultPolicyVersion(a *Account, _ *call, f url.Values) (any, error) {
	p, err := s.localPolicyNamed(a, f)
	if err != nil {
		return nil, err
	}
	i, err := versionNamed(p, f)
	if err != nil {
		return nil, err
	}
	p.DefaultVersion, p.Updated = p.Versions[i].ID, s.stamp()
	return nil, nil
}

func (s *Sim) deletePolicyVersion(a *Account, _ *call, f url.Values) (any, error) {
	p, err := s.localPolicyNamed(a, f)
	if err != nil {
		return nil, err
	}
	i, err := versionNamed(p, f)
	if err != nil {
		return nil, err
	}
	if p.Versions[i].ID == p.DefaultVersion {
		return nil, deleteConflict("Cannot delete the default version of a policy.")
	}
	p.Versions = slices.Delete(p.Versions, i, i+1)
	return nil, nil
}

// attachTarget reads what Attach and Detach{User,Role,Group}Policy name: the entity of
// the kind, then the PolicyArn.
func attachTarget(a *Account, k iamKind, f url.Values) (iamHolder, string, error) {
	h, err := holderNamed(a, k, f)
	if err != nil {
		return h, "", err
	}
	arn, err := iamRequired(f, "PolicyArn")
	return h, arn, err
}

// attachPolicy answers Attach{User,Role,Group}Policy. Attaching an AWS-managed policy
// the account does not hold yet adds it to the account.
func (s *Sim) attachPolicy(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, arn, err := attachTarget(a, k, f)
		if err != nil {
			return nil, err
		}
		p := findPolicy(a, arn)
		if p == nil {
			if p = s.lookupPolicy(a, arn); p == nil {
				return nil, noSuchEntity("Policy %s does not exist or is not attachable.", arn)
			}
			a.Policies = append(a.Policies, p)
		}
		if slices.Contains(*h.Attached, p.ARN) {
			return nil, nil
		}
		if len(*h.Attached) >= maxAttached {
			return nil, limitExceeded("Cannot exceed quota for PoliciesPer%s: %d", strings.ToUpper(k.String()[:1])+k.String()[1:], maxAttached)
		}
		*h.Attached = append(*h.Attached, p.ARN)
		return nil, nil
	}
}

// detachPolicy answers Detach{User,Role,Group}Policy.
func (s *Sim) detachPolicy(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, arn, err := attachTarget(a, k, f)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(*h.Attached, arn) {
			return nil, noSuchEntity("Policy %s was not found.", arn)
		}
		*h.Attached = slices.DeleteFunc(*h.Attached, func(x string) bool { return x == arn })
		if len(*h.Attached) == 0 {
			*h.Attached = nil
		}
		return nil, nil
	}
}

// policyNames maps the account's policy ARNs to their names.
func policyNames(a *Account) map[string]string {
	m := make(map[string]string, len(a.Policies))
	for _, p := range a.Policies {
		m[p.ARN] = p.Name
	}
	return m
}

// attachedList renders the managed policies attached to an entity, as xmlAttached.
func attachedList(names map[string]string, arns []string) []xAttached {
	out := make([]xAttached, 0, len(arns))
	for _, arn := range arns {
		out = append(out, xmlAttached(names, arn))
	}
	return out
}

// xmlAttached renders one attached managed policy, named after the account's policy
// (names: policyNames) or, for one the world does not hold, after the end of the ARN.
func xmlAttached(names map[string]string, arn string) xAttached {
	name, ok := names[arn]
	if !ok {
		_, name = splitPolicyARN(arn)
	}
	return xAttached{PolicyArn: arn, PolicyName: name}
}

// listAttachedPolicies answers ListAttached{User,Role,Group}Policies.
func (s *Sim) listAttachedPolicies(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, err := holderNamed(a, k, f)
		if err != nil {
			return nil, err
		}
		names := policyNames(a)
		pathOf := func(arn string) string {
			path, _ := splitPolicyARN(arn)
			return path
		}
		page, pg, err := iamListByPath(f, *h.Attached, pathOf, func(arn string) xAttached { return xmlAttached(names, arn) })
		if err != nil {
			return nil, err
		}
		return struct {
			AttachedPolicies []xAttached `xml:"AttachedPolicies>member"`
			iamPage
		}{page, pg}, nil
	}
}

func (s *Sim) listEntitiesForPolicy(a *Account, _ *call, f url.Values) (any, error) {
	p, err := s.policyNamed(a, f)
	if err != nil {
		return nil, err
	}
	filter := f.Get("EntityFilter")
	type entity struct {
		kind     iamKind
		id, name string
	}
	var all []entity
	if filter == "" || filter == "Group" {
		for _, g := range a.Groups {
			if slices.Contains(g.AttachedPolicies, p.ARN) {
				all = append(all, entity{iamGroupKind, g.ID, g.Name})
			}
		}
	}
	if filter == "" || filter == "Role" {
		for _, r := range a.Roles {
			if slices.Contains(r.AttachedPolicies, p.ARN) {
				all = append(all, entity{iamRoleKind, r.ID, r.Name})
			}
		}
	}
	if filter == "" || filter == "User" {
		for _, u := range a.Users {
			if slices.Contains(u.AttachedPolicies, p.ARN) {
				all = append(all, entity{iamUserKind, u.ID, u.Name})
			}
		}
	}
	page, pg, err := iamPaginate(f, all)
	if err != nil {
		return nil, err
	}
	type xg struct{ GroupId, GroupName string }
	type xr struct{ RoleId, RoleName string }
	type xu struct{ UserId, UserName string }
	out := struct {
		PolicyGroups []xg `xml:"PolicyGroups>member"`
		PolicyRoles  []xr `xml:"PolicyRoles>member"`
		PolicyUsers  []xu `xml:"PolicyUsers>member"`
		iamPage
	}{iamPage: pg}
	for _, e := range page {
		switch e.kind {
		case iamGroupKind:
			out.PolicyGroups = append(out.PolicyGroups, xg{e.id, e.name})
		case iamRoleKind:
			out.PolicyRoles = append(out.PolicyRoles, xr{e.id, e.name})
		case iamUserKind:
			out.PolicyUsers = append(out.PolicyUsers, xu{e.id, e.name})
		}
	}
	return out, nil
}
