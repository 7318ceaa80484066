package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/awsarn"
	"github.com/warden-sec/warden/snapshot"
)

// Read implements collectors.Reader for aws.iam.user, aws.iam.access_key, aws.iam.group,
// aws.iam.role, aws.iam.policy (with its attachments), aws.iam.password_policy,
// aws.iam.root_user, aws.iam.account,
// aws.iam.server_certificate, aws.ec2.security_group and aws.acm.certificate, with the
// calls of that one resource (GetUser and what hangs off the user, DescribeSecurityGroups
// by id, GetPolicy and ListEntitiesForPolicy…), never the bulk reads of Collect. The
// account is the uid's: the caller's, or a member through the organisation role. An
// AWS-managed policy (arn:aws:iam::aws:policy/…) is read in the caller's account.
//
// Reading a user asks IAM directly (GetLoginProfile, ListMFADevices, GetAccessKeyLastUsed)
// instead of the credential report, which AWS regenerates at most every four hours: a
// re-read right after a fix must see the fix. The root user is the exception: only the
// credential report tells its password and key use, so a re-read of it is as fresh as
// the report (the account summary's MFA and key presence are fresh).
func (c *Collector) Read(ctx context.Context, uid string) (snapshot.Resource, error) {
	if err := c.init(ctx); err != nil {
		return snapshot.Resource{}, err
	}
	arn, ok := awsarn.Parse(uid)
	if !ok {
		return snapshot.Resource{}, fmt.Errorf("aws: read %s: not an ARN: %w", uid, collectors.ErrUnsupported)
	}
	acct := arn.Account
	if acct == "aws" {
		acct = c.self.id
	}
	a, err := c.account(ctx, acct)
	if err != nil {
		return snapshot.Resource{}, fmt.Errorf("aws: read %s: %w", uid, err)
	}
	r, err := a.read(ctx, arn)
	if err != nil {
		return snapshot.Resource{}, fmt.Errorf("aws: read %s: %w", uid, err)
	}
	return r, nil
}

// lastSegment is the name at the end of an ARN's resource path ("user/automation/ci-bot"
// → "ci-bot").
func lastSegment(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }

func (a *account) read(ctx context.Context, arn awsarn.ARN) (snapshot.Resource, error) {
	res := arn.Resource
	switch arn.Service {
	case "iam":
		sc := newScope(nil, a.id, "iam", "")
		cl := a.iam(sc)
		var (
			r   snapshot.Resource
			err error
		)
		switch {
		case res == "account-password-policy":
			r, err = a.readPasswordPolicy(ctx, cl, sc)
		case res == "root":
			r, err = a.readRoot(ctx, cl, sc)
		case res == "account":
			r, err = a.readAccount(ctx, cl)
		case strings.HasPrefix(res, "user/") && strings.Contains(res, "/accesskey/"):
			i := strings.LastIndex(res, "/accesskey/")
			r, err = readAccessKey(ctx, cl, a.arnOf(arn, res[:i]), lastSegment(res[:i]), res[i+len("/accesskey/"):])
		case strings.HasPrefix(res, "user/"):
			r, err = readUser(ctx, cl, lastSegment(res))
		case strings.HasPrefix(res, "group/"):
			r, err = readGroup(ctx, cl, lastSegment(res))
		case strings.HasPrefix(res, "role/"):
			r, err = readRole(ctx, cl, lastSegment(res))
		case strings.HasPrefix(res, "policy/"):
			r, err = readPolicy(ctx, cl, a.arnOf(arn, res))
		case strings.HasPrefix(res, "server-certificate/"):
			r, err = readServerCertificate(ctx, cl, lastSegment(res))
		default:
			return snapshot.Resource{}, collectors.ErrUnsupported
		}
		if err != nil {
			return snapshot.Resource{}, err
		}
		// A principal re-read alone keeps its usage: without it, a finding drawn from
		// usage would resolve for lack of data.
		if a.c.cfg.Usage.Enabled && principalTypes[r.Type] && r.Attributes != nil {
			r.Attributes["usage"] = a.usageOf(ctx, cl, r, nil)
		}
		if a.c.cfg.Usage.Enabled && customerPolicy(r) {
			r.Attributes["usage"] = a.readPolicyUsage(ctx, cl, r)
		}
		return sc.place(r), nil
	case "ec2":
		id, ok := strings.CutPrefix(res, "security-group/")
		if !ok || arn.Region == "" {
			return snapshot.Resource{}, collectors.ErrUnsupported
		}
		sc := newScope(nil, a.id, "ec2", arn.Region)
		out, err := a.ec2(sc, arn.Region).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}})
		if err != nil {
			return snapshot.Resource{}, failed("ec2:DescribeSecurityGroups", err)
		}
		for _, g := range out.SecurityGroups {
			if aws.ToString(g.GroupId) == id {
				return sc.place(a.readGroupUse(ctx, sc, arn.Region, a.securityGroup(arn.Region, g))), nil
			}
		}
		// Asked by id, EC2 answers InvalidGroup.NotFound for a group that is gone: an
		// answer without it says nothing.
		return snapshot.Resource{}, errors.New("ec2:DescribeSecurityGroups: the answer holds no group " + id)
	case "acm":
		if !strings.HasPrefix(res, "certificate/") || arn.Region == "" {
			return snapshot.Resource{}, collectors.ErrUnsupported
		}
		sc := newScope(nil, a.id, "acm", arn.Region)
		uid := a.arnOf(arn, res)
		r, errs, oerr := certificate(ctx, a.acm(sc, arn.Region), arn.Region, uid)
		if oerr != nil {
			return snapshot.Resource{}, failed(oerr.op, oerr.err)
		}
		if len(errs) > 0 {
			return snapshot.Resource{}, failed(errs[0].op, errs[0].err)
		}
		return sc.place(r), nil
	}
	return snapshot.Resource{}, collectors.ErrUnsupported
}

// arnOf is the ARN of resource in arn's service, region and account, as Collect builds it.
func (a *account) arnOf(arn awsarn.ARN, resource string) string {
	return "arn:" + arn.Partition + ":" + arn.Service + ":" + arn.Region + ":" + arn.Account + ":" + resource
}

// failed is the error of a read: collectors.ErrNotFound as well when AWS said the thing
// does not exist, and only then.
func failed(op string, err error) error {
	if awsapi.IsNotFound(err) {
		return fmt.Errorf("%s: %w: %w", op, collectors.ErrNotFound, awsapi.Redact(err))
	}
	return fmt.Errorf("%s: %w", op, awsapi.Redact(err))
}

// reads runs a resource's independent reads side by side. Its error is the first that
// says nothing about existence (denied, throttled, failed) if any, else the first "not
// found": a read that could not see must not pass for one that saw the thing gone.
type reads struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

func (g *reads) Go(op string, f func() error) {
	g.wg.Go(func() {
		if err := f(); err != nil {
			g.mu.Lock()
			g.errs = append(g.errs, failed(op, err))
			g.mu.Unlock()
		}
	})
}

func (g *reads) Wait() error {
	g.wg.Wait()
	for _, err := range g.errs {
		if !errors.Is(err, collectors.ErrNotFound) {
			return err
		}
	}
	if len(g.errs) > 0 {
		return g.errs[0]
	}
	return nil
}

func (a *account) readPasswordPolicy(ctx context.Context, cl *iam.Client, sc *scope) (snapshot.Resource, error) {
	// passwordPolicy turns NoSuchEntity into the resource that says there is none.
	a.passwordPolicy(ctx, cl, sc)
	if sc.s.Status != snapshot.ScopeOK || len(sc.resources) != 1 {
		return snapshot.Resource{}, errors.New(sc.s.Error)
	}
	return sc.resources[0], nil
}

func readPolicy(ctx context.Context, cl *iam.Client, arn string) (snapshot.Resource, error) {
	got, err := cl.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if err == nil && got.Policy == nil {
		err = errors.New("the answer holds no Policy")
	}
	if err != nil {
		return snapshot.Resource{}, failed("iam:GetPolicy", err)
	}
	p := got.Policy
	var (
		g   reads
		doc any
		to  = map[string][]string{"users": {}, "groups": {}, "roles": {}}
	)
	g.Go("iam:GetPolicyVersion", func() error {
		v, err := cl.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: p.DefaultVersionId})
		if err == nil && v.PolicyVersion == nil {
			err = errors.New("the answer holds no PolicyVersion")
		}
		if err != nil {
			return err
		}
		doc = document(v.PolicyVersion.Document)
		return nil
	})
	g.Go("iam:ListEntitiesForPolicy", func() error {
		for page, err := range pages(ctx, iam.NewListEntitiesForPolicyPaginator(cl, &iam.ListEntitiesForPolicyInput{PolicyArn: aws.String(arn)})) {
			if err != nil {
				return err
			}
			for _, u := range page.PolicyUsers {
				to["users"] = append(to["users"], aws.ToString(u.UserName))
			}
			for _, gr := range page.PolicyGroups {
				to["groups"] = append(to["groups"], aws.ToString(gr.GroupName))
			}
			for _, r := range page.PolicyRoles {
				to["roles"] = append(to["roles"], aws.ToString(r.RoleName))
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return snapshot.Resource{}, err
	}
	return policyResource(policyFacts{arn: aws.ToString(p.Arn), name: aws.ToString(p.PolicyName), id: aws.ToString(p.PolicyId),
		path: aws.ToString(p.Path), attachments: int(aws.ToInt32(p.AttachmentCount)), defaultVersion: aws.ToString(p.DefaultVersionId),
		created: p.CreateDate, updated: p.UpdateDate, document: doc, attachedTo: to}), nil
}

func readServerCertificate(ctx context.Context, cl *iam.Client, name string) (snapshot.Resource, error) {
	got, err := cl.GetServerCertificate(ctx, &iam.GetServerCertificateInput{ServerCertificateName: aws.String(name)})
	if err == nil && (got.ServerCertificate == nil || got.ServerCertificate.ServerCertificateMetadata == nil) {
		err = errors.New("the answer holds no ServerCertificate")
	}
	if err != nil {
		return snapshot.Resource{}, failed("iam:GetServerCertificate", err)
	}
	r, err := serverCertResource(*got.ServerCertificate.ServerCertificateMetadata, got.ServerCertificate.CertificateBody)
	if err != nil {
		return snapshot.Resource{}, fmt.Errorf("parse server certificate %s: %w", name, err)
	}
	return r, nil
}

// readRoot reads the root user as Collect does: the credential report, the account
// summary and the virtual MFA devices, all of which must be read.
func (a *account) readRoot(ctx context.Context, cl *iam.Client, sc *scope) (snapshot.Resource, error) {
	var (
		g       reads
		report  map[string]map[string]string
		summary *iam.GetAccountSummaryOutput
		virtual *virtualMFA
	)
	g.Go("iam:GetCredentialReport", func() (err error) {
		report, err = a.credentialReport(ctx, cl)
		return err
	})
	g.Go("iam:GetAccountSummary", func() (err error) {
		summary, err = cl.GetAccountSummary(ctx, &iam.GetAccountSummaryInput{})
		return err
	})
	g.Go("iam:ListVirtualMFADevices", func() (err error) {
		virtual, err = virtualMFADevices(ctx, cl, rootUID(a.partition(), a.id))
		return err
	})
	if err := g.Wait(); err != nil {
		return snapshot.Resource{}, err
	}
	if report["<root_account>"] == nil {
		return snapshot.Resource{}, errors.New("iam:GetCredentialReport: the report holds no <root_account> row")
	}
	a.root(sc, summary, report, virtual)
	return sc.resources[0], nil
}

// readAccount reads the account's IAM view with the calls of that view alone: the roles
// of the two AWS-managed policies (ListEntitiesForPolicy), the SAML providers and the
// alias.
func (a *account) readAccount(ctx context.Context, cl *iam.Client) (snapshot.Resource, error) {
	var (
		g     reads
		f     = accountFacts{partition: a.partition(), id: a.id}
		alias string
	)
	roles := func(name string, dst *[]string) func() error {
		return func() error {
			*dst = []string{}
			p := iam.NewListEntitiesForPolicyPaginator(cl, &iam.ListEntitiesForPolicyInput{
				PolicyArn: aws.String(awsPolicyARN(a.partition(), name)), EntityFilter: iamtypes.EntityTypeRole})
			for page, err := range pages(ctx, p) {
				if awsapi.IsNotFound(err) {
					// The policy is AWS's, not the account's: its absence says nothing
					// of the account, and must not read as the account gone.
					return fmt.Errorf("AWS-managed policy %s: %s", name, awsapi.Message(err))
				}
				if err != nil {
					return err
				}
				for _, r := range page.PolicyRoles {
					*dst = append(*dst, aws.ToString(r.RoleName))
				}
			}
			return nil
		}
	}
	g.Go("iam:ListEntitiesForPolicy "+supportPolicy, roles(supportPolicy, &f.support))
	g.Go("iam:ListEntitiesForPolicy "+securityAuditPolicy, roles(securityAuditPolicy, &f.audit))
	g.Go("iam:ListSAMLProviders", func() (err error) {
		f.saml, err = samlProviders(ctx, cl)
		return err
	})
	g.Go("iam:ListAccountAliases", func() (err error) {
		alias, err = accountAlias(ctx, cl)
		return err
	})
	if err := g.Wait(); err != nil {
		return snapshot.Resource{}, err
	}
	f.alias = &alias
	return accountResource(f), nil
}

// readPermissions are the IAM actions of Read (this file), which re-reads one resource
// with its own calls rather than the bulk reads of Collect.
func readPermissions() []string {
	return []string{"acm:DescribeCertificate", "acm:GetCertificate", "acm:ListTagsForCertificate",
		"ec2:DescribeNetworkInterfaces", "ec2:DescribeSecurityGroups",
		"iam:GenerateCredentialReport", "iam:GetAccessKeyLastUsed", "iam:GetAccountPasswordPolicy", "iam:GetAccountSummary",
		"iam:GetCredentialReport", "iam:GetGroup", "iam:GetGroupPolicy", "iam:GetLoginProfile", "iam:GetPolicy",
		"iam:GetPolicyVersion", "iam:GetRole", "iam:GetRolePolicy", "iam:GetServerCertificate", "iam:GetUser",
		"iam:GetUserPolicy", "iam:ListAccessKeys", "iam:ListAccountAliases", "iam:ListAttachedGroupPolicies",
		"iam:ListAttachedRolePolicies", "iam:ListAttachedUserPolicies", "iam:ListEntitiesForPolicy",
		"iam:ListGroupPolicies", "iam:ListGroupsForUser", "iam:ListMFADevices", "iam:ListRolePolicies",
		"iam:ListSAMLProviders", "iam:ListUserPolicies", "iam:ListVirtualMFADevices"}
}
