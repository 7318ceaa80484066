package cloudsim

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// iamHandler answers one IAM action in the caller's account.
type iamHandler func(a *Account, c *call, f url.Values) (any, error)

// iamHandlers is the IAM action table. State that is not part of the World (the last
// credential report of each account, Access Advisor jobs) lives in this closure, one per
// simulator.
func (s *Sim) iamHandlers() map[string]queryHandler {
	reports := map[string]*credentialReport{}
	jobs := map[string]*accessJob{} // Access Advisor reports, by JobId
	h := map[string]iamHandler{
		// users, access keys, login profiles, MFA, tags (iam_users.go)
		"CreateUser":           s.createUser,
		"GetUser":              s.getUser,
		"ListUsers":            s.listUsers,
		"DeleteUser":           s.deleteUser,
		"TagUser":              tagEntity(iamUserKind),
		"UntagUser":            untagEntity(iamUserKind),
		"ListUserTags":         listEntityTags(iamUserKind),
		"ListGroupsForUser":    s.listGroupsForUser,
		"CreateAccessKey":      s.createAccessKey,
		"ListAccessKeys":       s.listAccessKeys,
		"UpdateAccessKey":      s.updateAccessKey,
		"DeleteAccessKey":      s.deleteAccessKey,
		"GetAccessKeyLastUsed": s.getAccessKeyLastUsed,
		"CreateLoginProfile":   s.createLoginProfile,
		"GetLoginProfile":      s.getLoginProfile,
		"DeleteLoginProfile":   s.deleteLoginProfile,
		"ListMFADevices":       s.listMFADevices,
		"DeactivateMFADevice":  s.deactivateMFADevice,
		// account-level reads: virtual MFA devices, SAML providers, alias (iam_account.go)
		"ListVirtualMFADevices": s.listVirtualMFADevices,
		"ListSAMLProviders":     s.listSAMLProviders,
		"ListAccountAliases":    s.listAccountAliases,
		// roles and groups (iam_roles.go)
		"CreateRole":                  s.createRole,
		"GetRole":                     s.getRole,
		"ListRoles":                   s.listRoles,
		"DeleteRole":                  s.deleteRole,
		"UpdateAssumeRolePolicy":      s.updateAssumeRolePolicy,
		"TagRole":                     tagEntity(iamRoleKind),
		"UntagRole":                   untagEntity(iamRoleKind),
		"ListRoleTags":                listEntityTags(iamRoleKind),
		"ListInstanceProfilesForRole": s.listInstanceProfilesForRole,
		"CreateGroup":                 s.createGroup,
		"GetGroup":                    s.getGroup,
		"ListGroups":                  s.listGroups,
		"DeleteGroup":                 s.deleteGroup,
		"AddUserToGroup":              s.addUserToGroup,
		"RemoveUserFromGroup":         s.removeUserFromGroup,
		// managed and inline policies (iam_policies.go, iam_inline.go)
		"CreatePolicy":              s.createPolicy,
		"GetPolicy":                 s.getPolicy,
		"ListPolicies":              s.listPolicies,
		"DeletePolicy":              s.deletePolicy,
		"CreatePolicyVersion":       s.createPolicyVersion,
		"GetPolicyVersion":          s.getPolicyVersion,
		"ListPolicyVersions":        s.listPolicyVersions,
		"SetDefaultPolicyVersion":   s.setDefaultPolicyVersion,
		"DeletePolicyVersion":       s.deletePolicyVersion,
		"ListEntitiesForPolicy":     s.listEntitiesForPolicy,
		"AttachUserPolicy":          s.attachPolicy(iamUserKind),
		"AttachRolePolicy":          s.attachPolicy(iamRoleKind),
		"AttachGroupPolicy":         s.attachPolicy(iamGroupKind),
		"DetachUserPolicy":          s.detachPolicy(iamUserKind),
		"DetachRolePolicy":          s.detachPolicy(iamRoleKind),
		"DetachGroupPolicy":         s.detachPolicy(iamGroupKind),
		"ListAttachedUserPolicies":  s.listAttachedPolicies(iamUserKind),
		"ListAttachedRolePolicies":  s.listAttachedPolicies(iamRoleKind),
		"ListAttachedGroupPolicies": s.listAttachedPolicies(iamGroupKind),
		"PutUserPolicy":             s.putInlinePolicy(iamUserKind),
		"PutRolePolicy":             s.putInlinePolicy(iamRoleKind),
		"PutGroupPolicy":            s.putInlinePolicy(iamGroupKind),
		"GetUserPolicy":             s.getInlinePolicy(iamUserKind),
		"GetRolePolicy":             s.getInlinePolicy(iamRoleKind),
		"GetGroupPolicy":            s.getInlinePolicy(iamGroupKind),
		"DeleteUserPolicy":          s.deleteInlinePolicy(iamUserKind),
		"DeleteRolePolicy":          s.deleteInlinePolicy(iamRoleKind),
		"DeleteGroupPolicy":         s.deleteInlinePolicy(iamGroupKind),
		"ListUserPolicies":          s.listInlinePolicies(iamUserKind),
		"ListRolePolicies":          s.listInlinePolicies(iamRoleKind),
		"ListGroupPolicies":         s.listInlinePolicies(iamGroupKind),
		// account-wide reads (iam_reports.go) and server certificates (iam_certs.go)
		"GetAccountAuthorizationDetails": s.getAccountAuthorizationDetails,
		"GenerateCredentialReport": func(a *Account, _ *call, _ url.Values) (any, error) {
			return s.generateCredentialReport(reports, a), nil
		},
		"GetCredentialReport": func(a *Account, _ *call, _ url.Values) (any, error) {
			return getCredentialReport(reports, a)
		},
		// Access Advisor (iam_lastaccessed.go)
		"GenerateServiceLastAccessedDetails": func(a *Account, c *call, f url.Values) (any, error) {
			return s.generateServiceLastAccessed(jobs, a, c, f)
		},
		"GetServiceLastAccessedDetails": func(_ *Account, c *call, f url.Values) (any, error) {
			return getServiceLastAccessed(jobs, c, f)
		},
		"GetAccountSummary":           s.getAccountSummary,
		"GetAccountPasswordPolicy":    s.getAccountPasswordPolicy,
		"UpdateAccountPasswordPolicy": s.updateAccountPasswordPolicy,
		"DeleteAccountPasswordPolicy": s.deleteAccountPasswordPolicy,
		"ListServerCertificates":      s.listServerCertificates,
		"GetServerCertificate":        s.getServerCertificate,
		"UploadServerCertificate":     s.uploadServerCertificate,
		"DeleteServerCertificate":     s.deleteServerCertificate,
	}
	out := make(map[string]queryHandler, len(h))
	for name, fn := range h {
		out[name] = func(c *call, f url.Values) (any, error) {
			a, err := s.account(c)
			if err != nil {
				return nil, err
			}
			return fn(a, c, f)
		}
	}
	return out
}

// stamp is the simulator's clock as IAM records times: UTC, to the second.
func (s *Sim) stamp() time.Time { return s.now().UTC().Truncate(time.Second) }

// IAM errors, with the codes and statuses IAM answers.

func noSuchEntity(format string, args ...any) *apiError {
	return errf(kindNotFound, "NoSuchEntity", format, args...)
}

func alreadyExists(format string, args ...any) *apiError {
	return errf(kindConflict, "EntityAlreadyExists", format, args...)
}

func deleteConflict(format string, args ...any) *apiError {
	return errf(kindConflict, "DeleteConflict", format, args...)
}

func limitExceeded(format string, args ...any) *apiError {
	return errf(kindLimit, "LimitExceeded", format, args...)
}

func iamInvalid(format string, args ...any) *apiError {
	return errf(kindInvalid, "ValidationError", format, args...)
}

func malformedPolicy(format string, args ...any) *apiError {
	return errf(kindInvalid, "MalformedPolicyDocument", format, args...)
}

// awsTime is a time as the Query APIs write it: ISO 8601 in UTC, to the second.
type awsTime time.Time

// MarshalText writes the time as "2026-01-02T03:04:05Z".
func (t awsTime) MarshalText() ([]byte, error) {
	return []byte(time.Time(t).UTC().Format(time.RFC3339)), nil
}

// optTime is an optional time: nil (the element is left out) when t is nil or zero.
func optTime(t *time.Time) *awsTime {
	if t == nil || t.IsZero() {
		return nil
	}
	v := awsTime(*t)
	return &v
}

// encodeDoc URL-encodes a policy document as IAM returns it (RFC 3986: spaces as %20),
// so that both url.QueryUnescape and url.PathUnescape read it back.
func encodeDoc(d Doc) string {
	return strings.ReplaceAll(url.QueryEscape(string(d)), "+", "%20")
}

// iamPolicyDoc validates a policy document given to a write: a JSON object with a Statement.
// It is stored as given, as IAM returns documents the way they were written.
func iamPolicyDoc(f url.Values, param string) (Doc, error) {
	raw := f.Get(param)
	if raw == "" {
		return "", iamInvalid("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", iamLowerFirst(param))
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return "", malformedPolicy("Syntax errors in policy.")
	}
	if _, ok := v["Statement"]; !ok {
		return "", malformedPolicy("Missing required field Statement")
	}
	return Doc(raw), nil
}

func iamLowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// iamRequired returns the form parameter param, or a ValidationError when it is missing.
func iamRequired(f url.Values, param string) (string, error) {
	v := f.Get(param)
	if v == "" {
		return "", iamInvalid("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", iamLowerFirst(param))
	}
	return v, nil
}

// iamName validates an entity name: 1 to max characters of letters, digits and +=,.@_-.
func iamName(f url.Values, param string, max int) (string, error) {
	v, err := iamRequired(f, param)
	if err != nil {
		return "", err
	}
	ok := len(v) <= max
	for _, r := range v {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+=,.@_-", r))
	}
	if !ok {
		return "", iamInvalid("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d and satisfy regular expression pattern: [\\w+=,.@-]+", v, iamLowerFirst(param), max)
	}
	return v, nil
}

// iamPath validates an optional Path parameter: "/" by default, else /…/ in printable ASCII.
func iamPath(f url.Values) (string, error) {
	p := f.Get("Path")
	if p == "" {
		return "/", nil
	}
	ok := len(p) <= 512 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/")
	for _, r := range p {
		ok = ok && r > ' ' && r <= '~'
	}
	if !ok {
		return "", iamInvalid("The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	return p, nil
}

// iamMembers reads a Query list parameter: Name.member.1, Name.member.2, ….
func iamMembers(f url.Values, name string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := f[name+".member."+strconv.Itoa(i)]
		if !ok || len(v) == 0 {
			return out
		}
		out = append(out, v[0])
	}
}

// iamBool reads an optional boolean parameter.
func iamBool(f url.Values, param string) (val, set bool, err error) {
	v := f.Get(param)
	if v == "" {
		return false, false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, false, iamInvalid("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must be a boolean", v, iamLowerFirst(param))
	}
	return b, true, nil
}

// iamInt reads an optional integer parameter within [lo, hi].
func iamInt(f url.Values, param string, lo, hi int) (val int, set bool, err error) {
	v := f.Get(param)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, false, iamInvalid("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must have value between %d and %d", v, iamLowerFirst(param), lo, hi)
	}
	return n, true, nil
}

// Pagination: IAM lists take Marker and MaxItems (1–1000, default 100) and answer
// IsTruncated and, when truncated, the Marker of the next page.

const (
	iamDefaultMaxItems = 100
	iamMaxMaxItems     = 1000
	iamMarkerPrefix    = "sim1:"
)

// iamPage is the pagination part of a list result.
type iamPage struct {
	IsTruncated bool
	Marker      string `xml:",omitempty"`
}

// iamWindow returns the range [start, end) of n items that the call's Marker and MaxItems
// select. Markers are opaque to clients; here they hold the offset of the next item.
func iamWindow(f url.Values, n int) (start, end int, pg iamPage, err error) {
	limit := iamDefaultMaxItems
	if v := f.Get("MaxItems"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < 1 || m > iamMaxMaxItems {
			return 0, 0, pg, iamInvalid("1 validation error detected: Value '%s' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and %d", v, iamMaxMaxItems)
		}
		limit = m
	}
	if mk := f.Get("Marker"); mk != "" {
		b, err := base64.RawURLEncoding.DecodeString(mk)
		off, cut := strings.CutPrefix(string(b), iamMarkerPrefix)
		n0, aerr := strconv.Atoi(off)
		if err != nil || !cut || aerr != nil || n0 < 0 {
			return 0, 0, pg, iamInvalid("Invalid Marker.")
		}
		// Entities deleted between pages shorten the list: the rest is then empty.
		start = min(n0, n)
	}
	end = min(start+limit, n)
	if end < n {
		pg = iamPage{IsTruncated: true, Marker: base64.RawURLEncoding.EncodeToString([]byte(iamMarkerPrefix + strconv.Itoa(end)))}
	}
	return start, end, pg, nil
}

// iamPaginate returns the page of items the call selects.
func iamPaginate[T any](f url.Values, items []T) ([]T, iamPage, error) {
	start, end, pg, err := iamWindow(f, len(items))
	if err != nil {
		return nil, pg, err
	}
	return items[start:end], pg, nil
}

// iamRenderPage is iamPaginate for lists whose items IAM answers in another shape than
// the simulator keeps them: it returns the selected page rendered item by item.
func iamRenderPage[T, X any](f url.Values, items []T, render func(T) X) ([]X, iamPage, error) {
	page, pg, err := iamPaginate(f, items)
	if err != nil {
		return nil, pg, err
	}
	var out []X
	for _, it := range page {
		out = append(out, render(it))
	}
	return out, pg, nil
}

// iamListByPath answers the List* calls that take PathPrefix (ListUsers, ListRoles,
// ListGroups, ListServerCertificates, ListAttached*Policies): it keeps the items whose
// path (from pathOf) is under the prefix, then pages and renders them as iamRenderPage.
func iamListByPath[T, X any](f url.Values, items []T, pathOf func(T) string, render func(T) X) ([]X, iamPage, error) {
	match, err := iamPathPrefix(f)
	if err != nil {
		return nil, iamPage{}, err
	}
	var kept []T
	for _, it := range items {
		if match(pathOf(it)) {
			kept = append(kept, it)
		}
	}
	return iamRenderPage(f, kept, render)
}

// iamPathPrefix filters entities by the optional PathPrefix parameter.
func iamPathPrefix(f url.Values) (func(path string) bool, error) {
	p := f.Get("PathPrefix")
	if p != "" && !strings.HasPrefix(p, "/") {
		return nil, iamInvalid("The specified value for pathPrefix is invalid. It must begin with /.")
	}
	return func(path string) bool { return strings.HasPrefix(orPath(path), p) }, nil
}

// xTag is a tag as IAM lists it.
type xTag struct {
	Key   string
	Value string
}

// xmlTags lists tags sorted by key, as a stable order.
func xmlTags(tags map[string]string) []xTag {
	out := make([]xTag, 0, len(tags))
	for k, v := range tags {
		out = append(out, xTag{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// xTagList is an entity's tags, left out altogether (nil) when there are none, as IAM
// does; encoding/xml would write an empty <Tags> for an empty slice.
type xTagList struct {
	Member []xTag `xml:"member"`
}

func xmlTagList(tags map[string]string) *xTagList {
	if len(tags) == 0 {
		return nil
	}
	return &xTagList{xmlTags(tags)}
}

// iamTagsOf reads Tags.member.N.Key/Value.
func iamTagsOf(f url.Values) (map[string]string, error) {
	out := map[string]string{}
	for i := 1; ; i++ {
		p := "Tags.member." + strconv.Itoa(i)
		k, ok := f[p+".Key"]
		if !ok {
			break
		}
		if len(k) == 0 || k[0] == "" || len(k[0]) > 128 {
			return nil, iamInvalid("1 validation error detected: Value at 'tags.%d.member.key' failed to satisfy constraint: Member must have length between 1 and 128", i)
		}
		out[k[0]] = f.Get(p + ".Value")
	}
	return out, nil
}

// iamAddTags merges tags into *dst, within IAM's quota of 50 per entity.
func iamAddTags(dst *map[string]string, tags map[string]string) error {
	merged := map[string]string{}
	for k, v := range *dst {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	if len(merged) > 50 {
		return limitExceeded("The number of tags has reached the maximum limit.")
	}
	if len(merged) == 0 {
		merged = nil
	}
	*dst = merged
	return nil
}

// iamRemoveTags deletes the TagKeys.member.N keys from *dst.
func iamRemoveTags(dst *map[string]string, f url.Values) {
	for _, k := range iamMembers(f, "TagKeys") {
		delete(*dst, k)
	}
	if len(*dst) == 0 {
		*dst = nil
	}
}

func rootARN(acct string) string { return "arn:aws:iam::" + acct + ":root" }

// iamCallerUser is the IAM user whose key signed the call, or nil (root, a role session).
func iamCallerUser(a *Account, c *call) *User {
	for _, u := range a.Users {
		if userARN(a.ID, u) == c.Principal {
			return u
		}
	}
	return nil
}

// iamKind names the three kinds of principals that hold policies.
type iamKind int

const (
	iamUserKind iamKind = iota
	iamRoleKind
	iamGroupKind
)

func (k iamKind) String() string { return [...]string{"user", "role", "group"}[k] }

// param is the form parameter naming an entity of the kind.
func (k iamKind) param() string { return [...]string{"UserName", "RoleName", "GroupName"}[k] }

// iamHolder is the policy-bearing (and, but for groups, tag-bearing) part of a user,
// role or group.
type iamHolder struct {
	Name     string
	Attached *[]string
	Inline   *[]InlinePolicy
	Tags     *map[string]string // nil for a group: IAM groups take no tags
}

// iamHolderOf finds the named user, role or group of the kind.
func iamHolderOf(a *Account, k iamKind, name string) (iamHolder, error) {
	switch k {
	case iamUserKind:
		if u := findUser(a, name); u != nil {
			return iamHolder{u.Name, &u.AttachedPolicies, &u.InlinePolicies, &u.Tags}, nil
		}
	case iamRoleKind:
		if r := findRole(a, name); r != nil {
			return iamHolder{r.Name, &r.AttachedPolicies, &r.InlinePolicies, &r.Tags}, nil
		}
	case iamGroupKind:
		if g := findGroup(a, name); g != nil {
			return iamHolder{g.Name, &g.AttachedPolicies, &g.InlinePolicies, nil}, nil
		}
	}
	return iamHolder{}, noSuchEntity("The %s with name %s cannot be found.", k, name)
}

// holderNamed finds the user, role or group named by the kind's parameter (UserName,
// RoleName, GroupName).
func holderNamed(a *Account, k iamKind, f url.Values) (iamHolder, error) {
	name, err := iamRequired(f, k.param())
	if err != nil {
		return iamHolder{}, err
	}
	return iamHolderOf(a, k, name)
}

// iamNamed finds, with find, the entity of kind k that the kind's parameter names; it
// is userNamed, roleNamed and groupNamed for callers that need the entity itself.
func iamNamed[T any](a *Account, k iamKind, f url.Values, find func(*Account, string) *T) (*T, error) {
	name, err := iamRequired(f, k.param())
	if err != nil {
		return nil, err
	}
	if e := find(a, name); e != nil {
		return e, nil
	}
	return nil, noSuchEntity("The %s with name %s cannot be found.", k, name)
}

// IAM names are unique regardless of case, and looked up the same way.

func findUser(a *Account, name string) *User {
	for _, u := range a.Users {
		if strings.EqualFold(u.Name, name) {
			return u
		}
	}
	return nil
}

func findRole(a *Account, name string) *Role {
	if i, ok := a.roleAt[name]; ok && i < len(a.Roles) && strings.EqualFold(a.Roles[i].Name, name) {
		return a.Roles[i] // role names are unique regardless of case
	}
	for i, r := range a.Roles {
		if strings.EqualFold(r.Name, name) {
			if a.roleAt == nil {
				a.roleAt = map[string]int{}
			}
			a.roleAt[name] = i
			return r
		}
	}
	return nil
}

func findGroup(a *Account, name string) *Group {
	for _, g := range a.Groups {
		if strings.EqualFold(g.Name, name) {
			return g
		}
	}
	return nil
}

// userNamed finds the user the UserName parameter names.
func userNamed(a *Account, f url.Values) (*User, error) {
	return iamNamed(a, iamUserKind, f, findUser)
}

// userOrCaller is the user named by UserName, else the calling user. root is true when
// no name is given and the root user is calling; other callers (role sessions) must name
// a user.
func userOrCaller(a *Account, c *call, f url.Values) (u *User, root bool, err error) {
	if f.Get("UserName") != "" {
		u, err := userNamed(a, f)
		return u, false, err
	}
	if u := iamCallerUser(a, c); u != nil {
		return u, false, nil
	}
	if c.Principal == rootARN(a.ID) {
		return nil, true, nil
	}
	return nil, false, iamInvalid("Must specify userName when calling with non-User credentials")
}
