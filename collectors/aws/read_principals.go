package aws

// Read's calls for IAM principals: a user (with its groups, keys, login profile and MFA
// devices), one access key, a group, a role, each with the managed policies attached to
// it and its inline policies.

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/snapshot"
)

func readUser(ctx context.Context, cl *iam.Client, name string) (snapshot.Resource, error) {
	u, err := cl.GetUser(ctx, &iam.GetUserInput{UserName: aws.String(name)})
	if err == nil && u.User == nil {
		err = errors.New("the answer holds no User")
	}
	if err != nil {
		return snapshot.Resource{}, failed("iam:GetUser", err)
	}
	var (
		g        reads
		groups   []string
		attached []iamtypes.AttachedPolicy
		inl      []any
		keys     []keyFacts
		login    = &loginFacts{}
	)
	g.Go("iam:ListGroupsForUser", func() error {
		for page, err := range pages(ctx, iam.NewListGroupsForUserPaginator(cl, &iam.ListGroupsForUserInput{UserName: aws.String(name)})) {
			if err != nil {
				return err
			}
			for _, gr := range page.Groups {
				groups = append(groups, aws.ToString(gr.GroupName))
			}
		}
		return nil
	})
	g.Go("iam:ListAttachedUserPolicies", func() (err error) {
		attached, err = collect(ctx, iam.NewListAttachedUserPoliciesPaginator(cl, &iam.ListAttachedUserPoliciesInput{UserName: aws.String(name)}),
			func(o *iam.ListAttachedUserPoliciesOutput) []iamtypes.AttachedPolicy { return o.AttachedPolicies })
		return err
	})
	g.Go("iam:ListUserPolicies", func() (err error) {
		inl, err = inlinePolicies(ctx, iam.NewListUserPoliciesPaginator(cl, &iam.ListUserPoliciesInput{UserName: aws.String(name)}),
			func(o *iam.ListUserPoliciesOutput) []string { return o.PolicyNames },
			func(ctx context.Context, policy string) (*string, error) {
				out, err := cl.GetUserPolicy(ctx, &iam.GetUserPolicyInput{UserName: aws.String(name), PolicyName: aws.String(policy)})
				if err != nil {
					return nil, err
				}
				return out.PolicyDocument, nil
			})
		return err
	})
	g.Go("iam:ListAccessKeys", func() (err error) {
		keys, err = userKeys(ctx, cl, name)
		return err
	})
	g.Go("iam:GetLoginProfile", func() error {
		lp, err := cl.GetLoginProfile(ctx, &iam.GetLoginProfileInput{UserName: aws.String(name)})
		var nse *iamtypes.NoSuchEntityException
		switch {
		case errors.As(err, &nse):
			return nil // no console password: NoSuchEntity is the login profile's, not the user's
		case err != nil:
			return err
		case lp.LoginProfile == nil:
			return errors.New("the answer holds no LoginProfile")
		}
		login.enabled = true
		login.lastChanged = ts(lp.LoginProfile.CreateDate)
		return nil
	})
	var mfa []any
	g.Go("iam:ListMFADevices", func() (err error) {
		mfa, err = userMFADevices(ctx, cl, name, &virtualMFA{})
		return err
	})
	if err := g.Wait(); err != nil {
		return snapshot.Resource{}, err
	}
	login.mfa = len(mfa) > 0
	if login.mfa {
		// Which devices are virtual only the account's list of them says.
		virtual, err := virtualMFADevices(ctx, cl, "")
		if err != nil {
			return snapshot.Resource{}, failed("iam:ListVirtualMFADevices", err)
		}
		for _, d := range mfa {
			if dev := d.(map[string]any); virtual.serials[dev["serial"].(string)] {
				dev["type"] = "virtual"
			}
		}
	}
	if login.enabled {
		// As the credential report: the last use of a password the user no longer has is
		// not reported.
		login.lastUsed = ts(u.User.PasswordLastUsed)
	}
	return userResources(userFacts{name: aws.ToString(u.User.UserName), arn: aws.ToString(u.User.Arn), id: aws.ToString(u.User.UserId),
		path: aws.ToString(u.User.Path), created: u.User.CreateDate, tags: u.User.Tags, groups: groups,
		attached: attachedList(attached), inline: inl, login: login, keys: keys, mfa: mfa})[0], nil
}

// userKeys lists a user's access keys with the last use of each.
func userKeys(ctx context.Context, cl *iam.Client, user string) ([]keyFacts, error) {
	var keys []keyFacts
	for page, err := range pages(ctx, iam.NewListAccessKeysPaginator(cl, &iam.ListAccessKeysInput{UserName: aws.String(user)})) {
		if err != nil {
			return nil, err
		}
		for _, k := range page.AccessKeyMetadata {
			use, err := keyLastUse(ctx, cl, aws.ToString(k.AccessKeyId))
			if err != nil {
				return nil, err
			}
			keys = append(keys, keyFacts{meta: k, use: use})
		}
	}
	return keys, nil
}

// keyLastUse reads a key's last use; IAM answers "N/A" for the service and region of a
// key never used, which the model leaves empty, as the credential report's are.
func keyLastUse(ctx context.Context, cl *iam.Client, id string) (keyUse, error) {
	out, err := cl.GetAccessKeyLastUsed(ctx, &iam.GetAccessKeyLastUsedInput{AccessKeyId: aws.String(id)})
	if err != nil {
		return keyUse{}, err
	}
	lu := out.AccessKeyLastUsed
	if lu == nil || lu.LastUsedDate == nil {
		return keyUse{}, nil
	}
	return keyUse{at: ts(lu.LastUsedDate), service: aws.ToString(lu.ServiceName), region: aws.ToString(lu.Region)}, nil
}

func readAccessKey(ctx context.Context, cl *iam.Client, userARN, user, id string) (snapshot.Resource, error) {
	for page, err := range pages(ctx, iam.NewListAccessKeysPaginator(cl, &iam.ListAccessKeysInput{UserName: aws.String(user)})) {
		if err != nil {
			return snapshot.Resource{}, failed("iam:ListAccessKeys", err)
		}
		for _, k := range page.AccessKeyMetadata {
			if aws.ToString(k.AccessKeyId) != id {
				continue
			}
			use, err := keyLastUse(ctx, cl, id)
			if err != nil {
				return snapshot.Resource{}, failed("iam:GetAccessKeyLastUsed", err)
			}
			return keyResource(userARN, user, keyFacts{meta: k, use: use}), nil
		}
	}
	// The user's whole key list, read without error, lacks it: IAM says it is gone.
	return snapshot.Resource{}, fmt.Errorf("iam:ListAccessKeys: user %s holds no key %s: %w", user, id, collectors.ErrNotFound)
}

func readGroup(ctx context.Context, cl *iam.Client, name string) (snapshot.Resource, error) {
	var (
		g        reads
		grp      *iamtypes.Group
		members  []string
		attached []iamtypes.AttachedPolicy
		inl      []any
	)
	g.Go("iam:GetGroup", func() error {
		for page, err := range pages(ctx, iam.NewGetGroupPaginator(cl, &iam.GetGroupInput{GroupName: aws.String(name)})) {
			if err != nil {
				return err
			}
			if page.Group == nil {
				return errors.New("the answer holds no Group")
			}
			grp = page.Group
			for _, u := range page.Users {
				members = append(members, aws.ToString(u.UserName))
			}
		}
		return nil
	})
	g.Go("iam:ListAttachedGroupPolicies", func() (err error) {
		attached, err = collect(ctx, iam.NewListAttachedGroupPoliciesPaginator(cl, &iam.ListAttachedGroupPoliciesInput{GroupName: aws.String(name)}),
			func(o *iam.ListAttachedGroupPoliciesOutput) []iamtypes.AttachedPolicy { return o.AttachedPolicies })
		return err
	})
	g.Go("iam:ListGroupPolicies", func() (err error) {
		inl, err = inlinePolicies(ctx, iam.NewListGroupPoliciesPaginator(cl, &iam.ListGroupPoliciesInput{GroupName: aws.String(name)}),
			func(o *iam.ListGroupPoliciesOutput) []string { return o.PolicyNames },
			func(ctx context.Context, policy string) (*string, error) {
				out, err := cl.GetGroupPolicy(ctx, &iam.GetGroupPolicyInput{GroupName: aws.String(name), PolicyName: aws.String(policy)})
				if err != nil {
					return nil, err
				}
				return out.PolicyDocument, nil
			})
		return err
	})
	if err := g.Wait(); err != nil {
		return snapshot.Resource{}, err
	}
	return groupResource(aws.ToString(grp.Arn), aws.ToString(grp.GroupName), aws.ToString(grp.Path), grp.CreateDate, members,
		attachedList(attached), inl), nil
}

func readRole(ctx context.Context, cl *iam.Client, name string) (snapshot.Resource, error) {
	var (
		g        reads
		role     *iamtypes.Role
		attached []iamtypes.AttachedPolicy
		inl      []any
	)
	g.Go("iam:GetRole", func() error {
		out, err := cl.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if err == nil && out.Role == nil {
			err = errors.New("the answer holds no Role")
		}
		if err != nil {
			return err
		}
		role = out.Role
		return nil
	})
	g.Go("iam:ListAttachedRolePolicies", func() (err error) {
		attached, err = collect(ctx, iam.NewListAttachedRolePoliciesPaginator(cl, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)}),
			func(o *iam.ListAttachedRolePoliciesOutput) []iamtypes.AttachedPolicy { return o.AttachedPolicies })
		return err
	})
	g.Go("iam:ListRolePolicies", func() (err error) {
		inl, err = inlinePolicies(ctx, iam.NewListRolePoliciesPaginator(cl, &iam.ListRolePoliciesInput{RoleName: aws.String(name)}),
			func(o *iam.ListRolePoliciesOutput) []string { return o.PolicyNames },
			func(ctx context.Context, policy string) (*string, error) {
				out, err := cl.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(policy)})
				if err != nil {
					return nil, err
				}
				return out.PolicyDocument, nil
			})
		return err
	})
	if err := g.Wait(); err != nil {
		return snapshot.Resource{}, err
	}
	f := roleFacts{name: aws.ToString(role.RoleName), arn: aws.ToString(role.Arn), id: aws.ToString(role.RoleId), path: aws.ToString(role.Path),
		created: role.CreateDate, trust: role.AssumeRolePolicyDocument, lastUsed: role.RoleLastUsed, tags: role.Tags,
		attached: attachedList(attached), inline: inl}
	if role.MaxSessionDuration != nil {
		n := int(*role.MaxSessionDuration)
		f.maxSession = &n
	}
	return roleResource(f), nil
}

// inlinePolicies reads a principal's inline policies: the names, page by page, then each
// document.
func inlinePolicies[Page, Options any](ctx context.Context, list pager[Page, Options], namesOf func(Page) []string,
	get func(ctx context.Context, name string) (*string, error)) ([]any, error) {
	names, err := collect(ctx, list, namesOf)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(names))
	for _, n := range names {
		doc, err := get(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, map[string]any{"name": n, "document": document(doc)})
	}
	return out, nil
}
