package aws

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/certinfo"
	"github.com/warden-sec/warden/snapshot"
)

// authDetails is what GetAccountAuthorizationDetails returns, all pages together.
type authDetails struct {
	users    []iamtypes.UserDetail
	groups   []iamtypes.GroupDetail
	roles    []iamtypes.RoleDetail
	policies []iamtypes.ManagedPolicyDetail
}

// collectIAM reads the account's IAM scope with a handful of bulk calls:
// GetAccountAuthorizationDetails for every user, group, role and attached policy; the
// credential report for passwords, MFA and key use; ListRoles for session durations;
// ListVirtualMFADevices, ListSAMLProviders and ListAccountAliases for the account view;
// ListAccessKeys only for the users the report shows holding keys, ListMFADevices only
// for the users with MFA whose devices the virtual list and the summary leave unknown.
func (a *account) collectIAM(ctx context.Context, sink collectors.Sink) error {
	sc := newScope(sink, a.id, "iam", "")
	a.readIAM(ctx, sc)
	if sc.s.Status != snapshot.ScopeFailed {
		a.addUsage(ctx, a.iam(sc), sc)
	}
	return a.done(sc)
}

func (a *account) readIAM(ctx context.Context, sc *scope) {
	cl := a.iam(sc)
	// The bulk reads are independent: run them side by side, so that latency does not add
	// up and the token bucket, not the round trips, sets the pace.
	var (
		d          authDetails
		gaadErr    error
		report     map[string]map[string]string
		reportErr  error
		summary    *iam.GetAccountSummaryOutput
		summaryErr error
		sessions   map[string]int
		virtual    *virtualMFA
		virtualErr error
		saml       []string
		samlErr    error
		alias      string
		aliasErr   error
		wg         sync.WaitGroup
	)
	rootARN := rootUID(a.partition(), a.id)
	wg.Go(func() { d, gaadErr = authorizationDetails(ctx, cl) })
	wg.Go(func() { report, reportErr = a.credentialReport(ctx, cl) })
	wg.Go(func() { summary, summaryErr = cl.GetAccountSummary(ctx, &iam.GetAccountSummaryInput{}) })
	wg.Go(func() { a.passwordPolicy(ctx, cl, sc) })
	wg.Go(func() { sessions = a.maxSessionDurations(ctx, cl, sc) })
	wg.Go(func() { a.serverCertificates(ctx, cl, sc) })
	wg.Go(func() { virtual, virtualErr = virtualMFADevices(ctx, cl, rootARN) })
	wg.Go(func() { saml, samlErr = samlProviders(ctx, cl) })
	wg.Go(func() { alias, aliasErr = accountAlias(ctx, cl) })
	wg.Wait()
	if gaadErr != nil {
		sc.fail("iam:GetAccountAuthorizationDetails", gaadErr)
		return
	}
	if reportErr != nil {
		sc.partial("iam:GetCredentialReport", reportErr)
	}
	if summaryErr != nil {
		sc.partial("iam:GetAccountSummary", summaryErr)
	}
	if virtualErr != nil {
		// Without it no device can be told virtual from hardware: the users' devices and
		// the root's kind stay unknown, never "none".
		sc.partial("iam:ListVirtualMFADevices", virtualErr)
		virtual = nil
	}
	acct := accountFacts{partition: a.partition(), id: a.id,
		support: rolesWith(d.roles, awsPolicyARN(a.partition(), supportPolicy)),
		audit:   rolesWith(d.roles, awsPolicyARN(a.partition(), securityAuditPolicy))}
	if samlErr != nil {
		sc.partial("iam:ListSAMLProviders", samlErr)
	} else {
		acct.saml = saml
	}
	if aliasErr != nil {
		sc.partial("iam:ListAccountAliases", aliasErr)
	} else {
		acct.alias = &alias
	}
	sc.add(accountResource(acct))
	root := a.root(sc, summary, report, virtual)
	var (
		keys map[string][]iamtypes.AccessKeyMetadata
		mfa  map[string][]any
	)
	wg.Go(func() { keys = a.accessKeys(ctx, cl, sc, d.users, report) })
	wg.Go(func() {
		mfa = a.mfaDevices(ctx, cl, sc, d.users, report, summary, virtual, root.Attributes["virtual_mfa"] == false)
	})
	wg.Wait()

	attached := map[string]map[string][]string{} // policy arn → kind → names
	attach := func(kind, name string, ps []iamtypes.AttachedPolicy) []any {
		for _, p := range ps {
			arn := aws.ToString(p.PolicyArn)
			if attached[arn] == nil {
				attached[arn] = map[string][]string{"users": {}, "groups": {}, "roles": {}}
			}
			attached[arn][kind] = append(attached[arn][kind], name)
		}
		return attachedList(ps)
	}
	members := map[string][]string{}
	for _, u := range d.users {
		name := aws.ToString(u.UserName)
		for _, g := range u.GroupList {
			members[g] = append(members[g], name)
		}
		var login *loginFacts
		if row := report[name]; row != nil {
			login = &loginFacts{enabled: row["password_enabled"] == "true", lastUsed: reportTime(row["password_last_used"]),
				lastChanged: reportTime(row["password_last_changed"]), mfa: row["mfa_active"] == "true"}
		}
		var ks []keyFacts
		for _, k := range keys[name] {
			ks = append(ks, keyFacts{meta: k, use: reportKeyUse(report[name], k)})
		}
		for _, r := range userResources(userFacts{name: name, arn: aws.ToString(u.Arn), id: aws.ToString(u.UserId), path: aws.ToString(u.Path),
			created: u.CreateDate, tags: u.Tags, groups: u.GroupList, attached: attach("users", name, u.AttachedManagedPolicies),
			inline: inline(u.UserPolicyList), login: login, keys: ks, mfa: mfa[name]}) {
			sc.add(r)
		}
	}
	for _, g := range d.groups {
		name := aws.ToString(g.GroupName)
		sc.add(groupResource(aws.ToString(g.Arn), name, aws.ToString(g.Path), g.CreateDate, members[name],
			attach("groups", name, g.AttachedManagedPolicies), inline(g.GroupPolicyList)))
	}
	for _, r := range d.roles {
		name := aws.ToString(r.RoleName)
		f := roleFacts{name: name, arn: aws.ToString(r.Arn), id: aws.ToString(r.RoleId), path: aws.ToString(r.Path), created: r.CreateDate,
			trust: r.AssumeRolePolicyDocument, lastUsed: r.RoleLastUsed, tags: r.Tags,
			attached: attach("roles", name, r.AttachedManagedPolicies), inline: inline(r.RolePolicyList)}
		if n, ok := sessions[name]; ok {
			f.maxSession = &n
		}
		sc.add(roleResource(f))
	}
	for _, p := range d.policies {
		arn := aws.ToString(p.Arn)
		var doc any
		for _, v := range p.PolicyVersionList {
			if v.IsDefaultVersion {
				doc = document(v.Document)
			}
		}
		sc.add(policyResource(policyFacts{arn: arn, name: aws.ToString(p.PolicyName), id: aws.ToString(p.PolicyId), path: aws.ToString(p.Path),
			attachments: int(aws.ToInt32(p.AttachmentCount)), defaultVersion: aws.ToString(p.DefaultVersionId),
			created: p.CreateDate, updated: p.UpdateDate, document: doc, attachedTo: attached[arn]}))
	}
}

// userFacts is what a user resource is made of, whether read in bulk or alone.
type userFacts struct {
	name, arn, id, path string
	created             *time.Time
	tags                []iamtypes.Tag
	groups              []string
	attached, inline    []any
	login               *loginFacts // nil: unknown (no credential report)
	keys                []keyFacts
	mfa                 []any // the MFA devices; nil: unknown
}

// loginFacts are a user's console password and MFA.
type loginFacts struct {
	enabled               bool
	lastUsed, lastChanged any
	mfa                   bool
}

// keyFacts is an access key and its last use.
type keyFacts struct {
	meta iamtypes.AccessKeyMetadata
	use  keyUse
}

// userResources is the user and each of its access keys.
func userResources(f userFacts) []snapshot.Resource {
	attrs := map[string]any{
		"user_id": f.id, "path": f.path, "created": ts(f.created), "groups": strs(f.groups),
		"attached_policies": f.attached, "inline_policies": f.inline,
	}
	if f.login != nil {
		attrs["password_enabled"] = f.login.enabled
		attrs["password_last_used"] = f.login.lastUsed
		attrs["password_last_changed"] = f.login.lastChanged
		attrs["mfa_active"] = f.login.mfa
	}
	if f.mfa != nil {
		attrs["mfa_devices"] = f.mfa
	}
	list := []any{}
	var out []snapshot.Resource
	for _, k := range f.keys {
		list = append(list, map[string]any{"id": aws.ToString(k.meta.AccessKeyId), "status": string(k.meta.Status), "created": ts(k.meta.CreateDate), "last_used": k.use.at})
		out = append(out, keyResource(f.arn, f.name, k))
	}
	attrs["access_keys"] = list
	return append([]snapshot.Resource{{UID: f.arn, Type: "aws.iam.user", Name: f.name, Tags: tags(f.tags), Attributes: attrs}}, out...)
}

// keyResource is one access key of a user.
func keyResource(userARN, userName string, k keyFacts) snapshot.Resource {
	id := aws.ToString(k.meta.AccessKeyId)
	return snapshot.Resource{
		UID: userARN + "/accesskey/" + id, Type: "aws.iam.access_key", Name: id,
		Attributes: map[string]any{
			"access_key_id": id, "user_name": userName, "user_arn": userARN,
			"status": string(k.meta.Status), "created": ts(k.meta.CreateDate), "last_used": k.use.at,
			"last_used_service": k.use.service, "last_used_region": k.use.region,
		},
	}
}

func groupResource(arn, name, path string, created *time.Time, members []string, attached, inline []any) snapshot.Resource {
	return snapshot.Resource{UID: arn, Type: "aws.iam.group", Name: name, Attributes: map[string]any{
		"path": path, "created": ts(created), "members": strs(members),
		"attached_policies": attached, "inline_policies": inline,
	}}
}

// roleFacts is what a role resource is made of.
type roleFacts struct {
	name, arn, id, path string
	created             *time.Time
	trust               *string
	lastUsed            *iamtypes.RoleLastUsed
	tags                []iamtypes.Tag
	maxSession          *int // nil: unknown (ListRoles failed)
	attached, inline    []any
}

func roleResource(f roleFacts) snapshot.Resource {
	attrs := map[string]any{
		"path": f.path, "role_id": f.id, "created": ts(f.created),
		"assume_role_policy": document(f.trust), "last_used": nil, "last_used_region": "",
		"service_linked":    strings.HasPrefix(f.path, "/aws-service-role/"),
		"attached_policies": f.attached, "inline_policies": f.inline,
	}
	if f.lastUsed != nil {
		attrs["last_used"] = ts(f.lastUsed.LastUsedDate)
		attrs["last_used_region"] = aws.ToString(f.lastUsed.Region)
	}
	if f.maxSession != nil {
		attrs["max_session_duration"] = *f.maxSession
	}
	return snapshot.Resource{UID: f.arn, Type: "aws.iam.role", Name: f.name, Tags: tags(f.tags), Attributes: attrs}
}

// policyFacts is what a managed policy resource is made of.
type policyFacts struct {
	arn, name, id, path, defaultVersion string
	attachments                         int
	created, updated                    *time.Time
	document                            any
	attachedTo                          map[string][]string // users, groups, roles → names
}

func policyResource(f policyFacts) snapshot.Resource {
	return snapshot.Resource{UID: f.arn, Type: "aws.iam.policy", Name: policyName(f.name, f.arn), Attributes: map[string]any{
		"policy_id": f.id, "path": f.path,
		"aws_managed":      strings.Contains(f.arn, ":iam::aws:policy/"),
		"attachment_count": f.attachments, "default_version_id": f.defaultVersion,
		"created": ts(f.created), "updated": ts(f.updated), "document": f.document,
		"attached_to": map[string]any{"users": strs(f.attachedTo["users"]), "groups": strs(f.attachedTo["groups"]), "roles": strs(f.attachedTo["roles"])},
	}}
}

// attachedList is attached managed policies in the model's {arn, name} shape.
func attachedList(ps []iamtypes.AttachedPolicy) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, map[string]any{"arn": aws.ToString(p.PolicyArn), "name": policyName(aws.ToString(p.PolicyName), aws.ToString(p.PolicyArn))})
	}
	return out
}

// policyName is a managed policy's name: as answered, or else the last part of its ARN
// (arn:aws:iam::123456789012:policy/path/NAME), which AWS derives it from. AWS always
// answers the name; moto's GetAccountAuthorizationDetails leaves it out, and an
// unnamed policy would be reported and planned on as "".
func policyName(name, arn string) string {
	if name != "" {
		return name
	}
	if i := strings.Index(arn, ":policy/"); i >= 0 {
		rest := arn[i+len(":policy/"):]
		return rest[strings.LastIndex(rest, "/")+1:]
	}
	return ""
}

// authorizationDetails reads every user, group, role and attached policy, a thousand
// at a time.
func authorizationDetails(ctx context.Context, cl *iam.Client) (authDetails, error) {
	var d authDetails
	for page, err := range pages(ctx, iam.NewGetAccountAuthorizationDetailsPaginator(cl, &iam.GetAccountAuthorizationDetailsInput{MaxItems: aws.Int32(1000)})) {
		if err != nil {
			return d, err
		}
		d.users = append(d.users, page.UserDetailList...)
		d.groups = append(d.groups, page.GroupDetailList...)
		d.roles = append(d.roles, page.RoleDetailList...)
		d.policies = append(d.policies, page.Policies...)
	}
	return d, nil
}

// credentialReport generates the credential report and reads it into rows by user
// name ("<root_account>" for the root user).
func (a *account) credentialReport(ctx context.Context, cl *iam.Client) (map[string]map[string]string, error) {
	delay := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		gen, err := cl.GenerateCredentialReport(ctx, &iam.GenerateCredentialReportInput{})
		if err != nil {
			return nil, err
		}
		if gen.State == iamtypes.ReportStateTypeComplete {
			break
		}
		if attempt >= 20 {
			return nil, errors.New("the credential report was still being generated after 20 polls")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
	out, err := cl.GetCredentialReport(ctx, &iam.GetCredentialReportInput{})
	if err != nil {
		return nil, err
	}
	return parseCredentialReport(out.Content)
}

// root reports the root user, from the credential report, the account summary and the
// virtual MFA devices (nil: not read).
func (a *account) root(sc *scope, sum *iam.GetAccountSummaryOutput, report map[string]map[string]string, virtual *virtualMFA) snapshot.Resource {
	row := report["<root_account>"]
	if sum == nil && row == nil {
		return snapshot.Resource{}
	}
	attrs := map[string]any{}
	if sum != nil {
		attrs["mfa_active"] = sum.SummaryMap["AccountMFAEnabled"] == 1
		attrs["access_keys_active"] = int(sum.SummaryMap["AccountAccessKeysPresent"])
	}
	if row != nil {
		attrs["mfa_active"] = row["mfa_active"] == "true"
		n := 0
		for _, k := range []string{"access_key_1_active", "access_key_2_active"} {
			if row[k] == "true" {
				n++
			}
		}
		attrs["access_keys_active"] = n
		attrs["password_last_used"] = reportTime(row["password_last_used"])
		if used := rootKeysLastUsed(row); used != nil {
			attrs["access_keys_last_used"] = used
		}
		attrs["access_keys"] = rootKeys(row)
	}
	rootMFAKind(attrs, virtual)
	r := snapshot.Resource{UID: rootUID(a.partition(), a.id), Type: "aws.iam.root_user", Name: "root", Attributes: attrs}
	sc.add(r)
	return r
}

// passwordPolicyUID is the uid of an account's password policy.
func passwordPolicyUID(partition, acct string) string {
	return "arn:" + partition + ":iam::" + acct + ":account-password-policy"
}

// passwordPolicy reports the account password policy; an account without one has a
// resource that says so, for policies to flag.
func (a *account) passwordPolicy(ctx context.Context, cl *iam.Client, sc *scope) {
	uid := passwordPolicyUID(a.partition(), a.id)
	pp, err := cl.GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
	var nse *iamtypes.NoSuchEntityException
	switch {
	case errors.As(err, &nse):
		sc.add(snapshot.Resource{UID: uid, Type: "aws.iam.password_policy", Name: "account-password-policy", Attributes: map[string]any{"exists": false}})
	case err != nil:
		sc.partial("iam:GetAccountPasswordPolicy", err)
	case pp.PasswordPolicy == nil:
		// An answer without the policy says neither that it exists nor that it does not.
		sc.partial("iam:GetAccountPasswordPolicy", errors.New("the answer holds no PasswordPolicy"))
	default:
		p := pp.PasswordPolicy
		sc.add(snapshot.Resource{UID: uid, Type: "aws.iam.password_policy", Name: "account-password-policy", Attributes: map[string]any{
			"exists": true, "minimum_password_length": int(aws.ToInt32(p.MinimumPasswordLength)),
			"password_reuse_prevention": int(aws.ToInt32(p.PasswordReusePrevention)),
			"require_symbols":           p.RequireSymbols, "require_numbers": p.RequireNumbers,
			"require_uppercase_characters": p.RequireUppercaseCharacters, "require_lowercase_characters": p.RequireLowercaseCharacters,
			"allow_users_to_change_password": p.AllowUsersToChangePassword, "max_password_age": int(aws.ToInt32(p.MaxPasswordAge)),
		}})
	}
}

// maxSessionDurations reads what GetAccountAuthorizationDetails leaves out of roles.
func (a *account) maxSessionDurations(ctx context.Context, cl *iam.Client, sc *scope) map[string]int {
	out := map[string]int{}
	for page, err := range pages(ctx, iam.NewListRolesPaginator(cl, &iam.ListRolesInput{MaxItems: aws.Int32(1000)})) {
		if err != nil {
			sc.partial("iam:ListRoles", err)
			return out
		}
		for _, r := range page.Roles {
			out[aws.ToString(r.RoleName)] = int(aws.ToInt32(r.MaxSessionDuration))
		}
	}
	return out
}

// accessKeys lists the keys of the users that hold any, a few users at a time. Without
// a credential report every user is asked.
func (a *account) accessKeys(ctx context.Context, cl *iam.Client, sc *scope, users []iamtypes.UserDetail, report map[string]map[string]string) map[string][]iamtypes.AccessKeyMetadata {
	var (
		mu  sync.Mutex
		out = map[string][]iamtypes.AccessKeyMetadata{}
		g   errgroup.Group
	)
	g.SetLimit(4)
	for _, u := range users {
		name := aws.ToString(u.UserName)
		if report != nil {
			row := report[name]
			if row != nil && row["access_key_1_last_rotated"] == "N/A" && row["access_key_2_last_rotated"] == "N/A" {
				continue
			}
		}
		g.Go(func() error {
			var keys []iamtypes.AccessKeyMetadata
			for page, err := range pages(ctx, iam.NewListAccessKeysPaginator(cl, &iam.ListAccessKeysInput{UserName: u.UserName})) {
				if err != nil {
					sc.partial("iam:ListAccessKeys "+name, err)
					break
				}
				keys = append(keys, page.AccessKeyMetadata...)
			}
			mu.Lock()
			out[name] = keys
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	return out
}

func (a *account) serverCertificates(ctx context.Context, cl *iam.Client, sc *scope) {
	for page, err := range pages(ctx, iam.NewListServerCertificatesPaginator(cl, &iam.ListServerCertificatesInput{})) {
		if err != nil {
			sc.partial("iam:ListServerCertificates", err)
			return
		}
		for _, m := range page.ServerCertificateMetadataList {
			name := aws.ToString(m.ServerCertificateName)
			got, err := cl.GetServerCertificate(ctx, &iam.GetServerCertificateInput{ServerCertificateName: m.ServerCertificateName})
			if err == nil && got.ServerCertificate == nil {
				err = errors.New("the answer holds no ServerCertificate")
			}
			var body *string
			if err != nil {
				sc.partial("iam:GetServerCertificate "+name, err)
			} else {
				body = got.ServerCertificate.CertificateBody
			}
			r, err := serverCertResource(m, body)
			if err != nil {
				sc.partial("parse server certificate "+name, err)
			}
			sc.add(r)
		}
	}
}

// serverCertResource is a server certificate from its metadata and body; without a body
// (nil), or with one that does not parse (the error), it has no certificate attribute.
func serverCertResource(m iamtypes.ServerCertificateMetadata, body *string) (snapshot.Resource, error) {
	attrs := map[string]any{
		"server_certificate_id": aws.ToString(m.ServerCertificateId), "path": aws.ToString(m.Path),
		"upload_date": ts(m.UploadDate),
	}
	r := snapshot.Resource{UID: aws.ToString(m.Arn), Type: "aws.iam.server_certificate", Name: aws.ToString(m.ServerCertificateName), Attributes: attrs}
	if body == nil {
		return r, nil
	}
	cert, err := certinfo.ParsePEM(aws.ToString(body))
	if err != nil {
		return r, err
	}
	attrs["certificate"] = cert
	return r, nil
}

// inline turns inline policies into the model's {name, document} list.
func inline(ps []iamtypes.PolicyDetail) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, map[string]any{"name": aws.ToString(p.PolicyName), "document": document(p.PolicyDocument)})
	}
	return out
}

// document decodes an IAM policy document, which IAM returns URL-encoded. A document
// that does not decode is kept as its text, for policies to flag rather than to lose.
func document(s *string) any {
	if s == nil {
		return nil
	}
	text := *s
	if dec, err := url.QueryUnescape(text); err == nil {
		text = dec
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return text
	}
	return v
}

func ts(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func strs[S ~string](in []S) []any {
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}

func tags(ts []iamtypes.Tag) map[string]string {
	if len(ts) == 0 {
		return nil
	}
	out := make(map[string]string, len(ts))
	for _, t := range ts {
		out[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

// iamPermissions are the IAM actions of the IAM scope's bulk reads (this file): the
// authorization details, the credential report, the password policy, the account summary,
// role session limits, access keys and server certificates.
func iamPermissions() []string {
	return []string{"iam:GenerateCredentialReport", "iam:GetAccountAuthorizationDetails", "iam:GetAccountPasswordPolicy",
		"iam:GetAccountSummary", "iam:GetCredentialReport", "iam:GetServerCertificate", "iam:ListAccessKeys",
		"iam:ListRoles", "iam:ListServerCertificates"}
}
