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
// ListAccessKeys only for the users the report shows holding keys.
func (a *account) collectIAM(ctx context.Context, sink collectors.Sink) {
	sc := newScope(sink, a.id, "iam", "")
	defer a.done(sc)
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
		wg         sync.WaitGroup
	)
	wg.Go(func() { d, gaadErr = authorizationDetails(ctx, cl) })
	wg.Go(func() { report, reportErr = a.credentialReport(ctx, cl) })
	wg.Go(func() { summary, summaryErr = cl.GetAccountSummary(ctx, &iam.GetAccountSummaryInput{}) })
	wg.Go(func() { a.passwordPolicy(ctx, cl, sc) })
	wg.Go(func() { sessions = a.maxSessionDurations(ctx, cl, sc) })
	wg.Go(func() { a.serverCertificates(ctx, cl, sc) })
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
	a.root(sc, summary, report)
	keys := a.accessKeys(ctx, cl, sc, d.users, report)

	attached := map[string]map[string][]string{} // policy arn → kind → names
	attach := func(kind, name string, ps []iamtypes.AttachedPolicy) []any {
		out := make([]any, 0, len(ps))
		for _, p := range ps {
			arn := aws.ToString(p.PolicyArn)
			if attached[arn] == nil {
				attached[arn] = map[string][]string{"users": {}, "groups": {}, "roles": {}}
			}
			attached[arn][kind] = append(attached[arn][kind], name)
			out = append(out, map[string]any{"arn": arn, "name": aws.ToString(p.PolicyName)})
		}
		return out
	}
	members := map[string][]any{}
	for _, u := range d.users {
		name := aws.ToString(u.UserName)
		arn := aws.ToString(u.Arn)
		for _, g := range u.GroupList {
			members[g] = append(members[g], name)
		}
		row := report[name]
		attrs := map[string]any{
			"user_id": aws.ToString(u.UserId), "path": aws.ToString(u.Path), "created": ts(u.CreateDate),
			"groups": strs(u.GroupList), "attached_policies": attach("users", name, u.AttachedManagedPolicies),
			"inline_policies": inline(u.UserPolicyList),
		}
		if row != nil {
			attrs["password_enabled"] = row["password_enabled"] == "true"
			attrs["password_last_used"] = reportTime(row["password_last_used"])
			attrs["password_last_changed"] = reportTime(row["password_last_changed"])
			attrs["mfa_active"] = row["mfa_active"] == "true"
		}
		var list []any
		for _, k := range keys[name] {
			used := reportKeyUse(row, k)
			list = append(list, map[string]any{"id": aws.ToString(k.AccessKeyId), "status": string(k.Status), "created": ts(k.CreateDate), "last_used": used.at})
			sc.add(snapshot.Resource{
				UID: arn + "/accesskey/" + aws.ToString(k.AccessKeyId), Type: "aws.iam.access_key", Name: aws.ToString(k.AccessKeyId),
				Attributes: map[string]any{
					"access_key_id": aws.ToString(k.AccessKeyId), "user_name": name, "user_arn": arn,
					"status": string(k.Status), "created": ts(k.CreateDate), "last_used": used.at,
					"last_used_service": used.service, "last_used_region": used.region,
				},
			})
		}
		if list == nil {
			list = []any{}
		}
		attrs["access_keys"] = list
		sc.add(snapshot.Resource{UID: arn, Type: "aws.iam.user", Name: name, Tags: tags(u.Tags), Attributes: attrs})
	}
	for _, g := range d.groups {
		name := aws.ToString(g.GroupName)
		m := members[name]
		if m == nil {
			m = []any{}
		}
		sc.add(snapshot.Resource{UID: aws.ToString(g.Arn), Type: "aws.iam.group", Name: name, Attributes: map[string]any{
			"path": aws.ToString(g.Path), "created": ts(g.CreateDate), "members": m,
			"attached_policies": attach("groups", name, g.AttachedManagedPolicies), "inline_policies": inline(g.GroupPolicyList),
		}})
	}
	for _, r := range d.roles {
		name := aws.ToString(r.RoleName)
		path := aws.ToString(r.Path)
		attrs := map[string]any{
			"path": path, "role_id": aws.ToString(r.RoleId), "created": ts(r.CreateDate),
			"assume_role_policy": document(r.AssumeRolePolicyDocument), "last_used": nil, "last_used_region": "",
			"service_linked":    strings.HasPrefix(path, "/aws-service-role/"),
			"attached_policies": attach("roles", name, r.AttachedManagedPolicies), "inline_policies": inline(r.RolePolicyList),
		}
		if r.RoleLastUsed != nil {
			attrs["last_used"] = ts(r.RoleLastUsed.LastUsedDate)
			attrs["last_used_region"] = aws.ToString(r.RoleLastUsed.Region)
		}
		if n, ok := sessions[name]; ok {
			attrs["max_session_duration"] = n
		}
		sc.add(snapshot.Resource{UID: aws.ToString(r.Arn), Type: "aws.iam.role", Name: name, Tags: tags(r.Tags), Attributes: attrs})
	}
	for _, p := range d.policies {
		arn := aws.ToString(p.Arn)
		var doc any
		for _, v := range p.PolicyVersionList {
			if v.IsDefaultVersion {
				doc = document(v.Document)
			}
		}
		to := attached[arn]
		if to == nil {
			to = map[string][]string{"users": {}, "groups": {}, "roles": {}}
		}
		sc.add(snapshot.Resource{UID: arn, Type: "aws.iam.policy", Name: aws.ToString(p.PolicyName), Attributes: map[string]any{
			"policy_id": aws.ToString(p.PolicyId), "path": aws.ToString(p.Path),
			"aws_managed":      strings.Contains(arn, ":iam::aws:policy/"),
			"attachment_count": int(aws.ToInt32(p.AttachmentCount)), "default_version_id": aws.ToString(p.DefaultVersionId),
			"created": ts(p.CreateDate), "updated": ts(p.UpdateDate), "document": doc,
			"attached_to": map[string]any{"users": strs(to["users"]), "groups": strs(to["groups"]), "roles": strs(to["roles"])},
		}})
	}
}

// authorizationDetails reads every user, group, role and attached policy, a thousand
// at a time.
func authorizationDetails(ctx context.Context, cl *iam.Client) (authDetails, error) {
	var d authDetails
	p := iam.NewGetAccountAuthorizationDetailsPaginator(cl, &iam.GetAccountAuthorizationDetailsInput{MaxItems: aws.Int32(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
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

// root reports the root user, from the credential report and the account summary.
func (a *account) root(sc *scope, sum *iam.GetAccountSummaryOutput, report map[string]map[string]string) {
	row := report["<root_account>"]
	if sum == nil && row == nil {
		return
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
	}
	sc.add(snapshot.Resource{UID: "arn:" + a.c.partition + ":iam::" + a.id + ":root", Type: "aws.iam.root_user", Name: "root", Attributes: attrs})
}

// passwordPolicy reports the account password policy; an account without one has a
// resource that says so, for policies to flag.
func (a *account) passwordPolicy(ctx context.Context, cl *iam.Client, sc *scope) {
	uid := "arn:" + a.c.partition + ":iam::" + a.id + ":account-password-policy"
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
	p := iam.NewListRolesPaginator(cl, &iam.ListRolesInput{MaxItems: aws.Int32(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
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
			p := iam.NewListAccessKeysPaginator(cl, &iam.ListAccessKeysInput{UserName: u.UserName})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
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
	p := iam.NewListServerCertificatesPaginator(cl, &iam.ListServerCertificatesInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			sc.partial("iam:ListServerCertificates", err)
			return
		}
		for _, m := range page.ServerCertificateMetadataList {
			attrs := map[string]any{
				"server_certificate_id": aws.ToString(m.ServerCertificateId), "path": aws.ToString(m.Path),
				"upload_date": ts(m.UploadDate),
			}
			got, err := cl.GetServerCertificate(ctx, &iam.GetServerCertificateInput{ServerCertificateName: m.ServerCertificateName})
			if err == nil && got.ServerCertificate == nil {
				err = errors.New("the answer holds no ServerCertificate")
			}
			if err != nil {
				sc.partial("iam:GetServerCertificate "+aws.ToString(m.ServerCertificateName), err)
			} else if cert, err := certinfo.ParsePEM(aws.ToString(got.ServerCertificate.CertificateBody)); err != nil {
				sc.partial("parse server certificate "+aws.ToString(m.ServerCertificateName), err)
			} else {
				attrs["certificate"] = cert
			}
			sc.add(snapshot.Resource{UID: aws.ToString(m.Arn), Type: "aws.iam.server_certificate", Name: aws.ToString(m.ServerCertificateName), Attributes: attrs})
		}
	}
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
