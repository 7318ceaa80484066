package events

// The CloudTrail calls warden maps, and how each one's request and response name the
// resources it touched. The uids are built and checked by aws_arn.go.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// awsCalls maps the CloudTrail write calls warden acts on ("service:eventName") to the
// resources each touches. Read-only.
var awsCalls = map[string]func(*awsCtx) error{
	// IAM users. DeleteUser names the user only: IAM refuses it (DeleteConflict) while the
	// user is in a group, so the RemoveUserFromGroup calls that must come first (the
	// console makes them too) re-read each group the user leaves, its last user included.
	"iam:CreateUser":          created(userKind, "userName", "user"),
	"iam:DeleteUser":          named(userKind, "userName"),
	"iam:UpdateUser":          renamed(userKind, "userName", "newUserName"),
	"iam:TagUser":             named(userKind, "userName"),
	"iam:UntagUser":           named(userKind, "userName"),
	"iam:AddUserToGroup":      all(named(groupKind, "groupName"), named(userKind, "userName")),
	"iam:RemoveUserFromGroup": all(named(groupKind, "groupName"), named(userKind, "userName")),
	"iam:AttachUserPolicy":    all(named(userKind, "userName"), policyAt("policyArn")),
	"iam:DetachUserPolicy":    all(named(userKind, "userName"), policyAt("policyArn")),
	"iam:PutUserPolicy":       named(userKind, "userName"),
	"iam:DeleteUserPolicy":    named(userKind, "userName"),
	// Console passwords and MFA: the user's password_enabled, password_last_changed and
	// mfa_active (the root user's mfa_active when the root user enables its own).
	"iam:CreateLoginProfile":  userOrCaller("userName"),
	"iam:UpdateLoginProfile":  userOrCaller("userName"),
	"iam:DeleteLoginProfile":  userOrCaller("userName"),
	"iam:ChangePassword":      userOrCaller("userName"),
	"iam:EnableMFADevice":     userOrCaller("userName"),
	"iam:DeactivateMFADevice": userOrCaller("userName"),
	// Access keys: the key and its user's access_keys.
	"iam:CreateAccessKey": accessKey(true),
	"iam:UpdateAccessKey": accessKey(false),
	"iam:DeleteAccessKey": accessKey(false),
	// Groups.
	"iam:CreateGroup":       created(groupKind, "groupName", "group"),
	"iam:DeleteGroup":       named(groupKind, "groupName"),
	"iam:UpdateGroup":       renamed(groupKind, "groupName", "newGroupName"),
	"iam:AttachGroupPolicy": all(named(groupKind, "groupName"), policyAt("policyArn")),
	"iam:DetachGroupPolicy": all(named(groupKind, "groupName"), policyAt("policyArn")),
	"iam:PutGroupPolicy":    named(groupKind, "groupName"),
	"iam:DeleteGroupPolicy": named(groupKind, "groupName"),
	// Roles.
	"iam:CreateRole":              created(roleKind, "roleName", "role"),
	"iam:CreateServiceLinkedRole": created(roleKind, "roleName", "role"),
	"iam:DeleteRole":              named(roleKind, "roleName"),
	"iam:DeleteServiceLinkedRole": named(roleKind, "roleName"),
	"iam:UpdateRole":              named(roleKind, "roleName"),
	"iam:UpdateRoleDescription":   named(roleKind, "roleName"),
	"iam:UpdateAssumeRolePolicy":  named(roleKind, "roleName"),
	"iam:TagRole":                 named(roleKind, "roleName"),
	"iam:UntagRole":               named(roleKind, "roleName"),
	"iam:AttachRolePolicy":        all(named(roleKind, "roleName"), policyAt("policyArn")),
	"iam:DetachRolePolicy":        all(named(roleKind, "roleName"), policyAt("policyArn")),
	"iam:PutRolePolicy":           named(roleKind, "roleName"),
	"iam:DeleteRolePolicy":        named(roleKind, "roleName"),
	// Managed policies: the default version's document, attachments, tags.
	"iam:CreatePolicy":            createdPolicy,
	"iam:DeletePolicy":            policyAt("policyArn"),
	"iam:CreatePolicyVersion":     policyAt("policyArn"),
	"iam:DeletePolicyVersion":     policyAt("policyArn"),
	"iam:SetDefaultPolicyVersion": policyAt("policyArn"),
	"iam:TagPolicy":               policyAt("policyArn"),
	"iam:UntagPolicy":             policyAt("policyArn"),
	// Server certificates.
	"iam:UploadServerCertificate": created(certKind, "serverCertificateName", "serverCertificateMetadata"),
	"iam:UpdateServerCertificate": renamed(certKind, "serverCertificateName", "newServerCertificateName"),
	"iam:DeleteServerCertificate": named(certKind, "serverCertificateName"),
	// The account's password policy.
	"iam:UpdateAccountPasswordPolicy": passwordPolicy,
	"iam:DeleteAccountPasswordPolicy": passwordPolicy,

	// EC2 security groups; a rule is an attribute of its group.
	"ec2:AuthorizeSecurityGroupIngress":              sgRules,
	"ec2:AuthorizeSecurityGroupEgress":               sgRules,
	"ec2:RevokeSecurityGroupIngress":                 sgRules,
	"ec2:RevokeSecurityGroupEgress":                  sgRules,
	"ec2:UpdateSecurityGroupRuleDescriptionsIngress": sgRules,
	"ec2:UpdateSecurityGroupRuleDescriptionsEgress":  sgRules,
	"ec2:ModifySecurityGroupRules":                   modifySGRules,
	"ec2:CreateSecurityGroup":                        createSG,
	"ec2:DeleteSecurityGroup":                        deleteSG,
	// What uses a group (its attachments): the groups a new instance or interface joins.
	// The groups an instance or interface leaves (TerminateInstances, DeleteNetworkInterface,
	// ModifyNetworkInterfaceAttribute) are not named by the call: the region's next read
	// judges them.
	"ec2:RunInstances":           instanceGroups,
	"ec2:CreateNetworkInterface": interfaceGroups,
	"ec2:CreateTags":             sgTags,
	"ec2:DeleteTags":             sgTags,

	// ACM certificates. ImportCertificate answers the ARN, and a re-import names it in
	// its request too.
	"acm:ImportCertificate":         certAt(responseElements, requestParams),
	"acm:RequestCertificate":        certAt(responseElements),
	"acm:DeleteCertificate":         certAt(requestParams),
	"acm:RenewCertificate":          certAt(requestParams),
	"acm:AddTagsToCertificate":      certAt(requestParams),
	"acm:RemoveTagsFromCertificate": certAt(requestParams),
	"acm:UpdateCertificateOptions":  certAt(requestParams),
}

// AWSCalls lists the CloudTrail calls Parse maps, "service:eventName", sorted.
func AWSCalls() []string {
	out := make([]string, 0, len(awsCalls))
	for k := range awsCalls {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// named maps a call on the k named by requestParameters[field].
func named(k iamKind, field string) func(*awsCtx) error {
	return func(c *awsCtx) error { return c.named(k, field) }
}

func (c *awsCtx) named(k iamKind, field string) error {
	name, err := c.req.str(field)
	if err != nil {
		return err
	}
	if name == "" {
		c.whole(c.req.at(field) + " is absent")
		return nil
	}
	if k == userKind {
		typ, err := c.ident.str("type")
		if err != nil {
			return err
		}
		if r, ok := c.callerNamed(typ, name); ok {
			c.add(r)
			return nil
		}
	}
	r, err := c.byName(k, c.req.at(field), name)
	if err != nil {
		return err
	}
	c.add(r)
	return nil
}

// created maps a create call: the new entity's ARN in responseElements[in].arn, else its
// name in requestParameters[field] under requestParameters.path.
func created(k iamKind, field, in string) func(*awsCtx) error {
	return func(c *awsCtx) error {
		out, err := c.resp.obj(in)
		if err != nil {
			return err
		}
		s, err := out.str("arn")
		if err != nil {
			return err
		}
		if s != "" {
			r, err := c.iamARN(k, out.at("arn"), s)
			if err != nil {
				return err
			}
			c.add(r)
			return nil
		}
		name, err := c.req.str(field)
		if err != nil {
			return err
		}
		if name == "" {
			c.whole(c.req.at(field) + " and " + out.at("arn") + " are absent")
			return nil
		}
		path, err := c.req.str("path")
		if err != nil {
			return err
		}
		r, err := c.withPath(k, c.req.at(field), name, c.req.at("path"), path)
		if err != nil {
			return err
		}
		c.add(r)
		return nil
	}
}

// renamed maps an update that may rename the k named by requestParameters[field] to
// requestParameters[newField] under requestParameters.newPath: the old name, and the new.
func renamed(k iamKind, field, newField string) func(*awsCtx) error {
	return func(c *awsCtx) error {
		if err := c.named(k, field); err != nil {
			return err
		}
		name, err := c.req.str(newField)
		if err != nil {
			return err
		}
		path, err := c.req.str("newPath")
		if err != nil {
			return err
		}
		if name == "" && path == "" {
			return nil
		}
		if name == "" {
			if name, err = c.req.str(field); err != nil || name == "" {
				return err
			}
		}
		var r Ref
		if path != "" {
			r, err = c.withPath(k, c.req.at(newField), name, c.req.at("newPath"), path)
		} else {
			r, err = c.byName(k, c.req.at(newField), name)
		}
		if err != nil {
			return err
		}
		c.add(r)
		return nil
	}
}

// rootWhy is why a change to the root user reads the IAM scope: the root user's facts
// come from the credential report and the account summary, which only a collection of
// the scope reads (collectors/aws Read does not read the root user alone).
const rootWhy = "the root user is read with its account's IAM scope"

// userOrCaller maps a call on the user named by requestParameters[field], or the caller.
func userOrCaller(field string) func(*awsCtx) error {
	return func(c *awsCtx) error {
		name, err := c.req.str(field)
		if err != nil {
			return err
		}
		r, root, ok, err := c.subject(name, c.req.at(field))
		if err != nil || !ok {
			return err
		}
		c.add(r)
		if root {
			c.whole(rootWhy)
		}
		return nil
	}
}

// accessKey maps a call on an access key: the key, and the user whose access_keys list
// it is in. The key id is requestParameters.accessKeyId, or for a created key
// responseElements.accessKey.accessKeyId; the user is requestParameters.userName, else
// the userName the created key answers, else the caller.
func accessKey(created bool) func(*awsCtx) error {
	return func(c *awsCtx) error {
		in := c.req
		if created {
			k, err := c.resp.obj("accessKey")
			if err != nil {
				return err
			}
			in = k
		}
		id, err := in.str("accessKeyId")
		if err != nil {
			return err
		}
		name, err := c.req.str("userName")
		if err != nil {
			return err
		}
		field := c.req.at("userName")
		if name == "" && created && !c.callerIsUser() {
			// The caller is not the key's user (an IAM user's own key, a root user's, is
			// the caller's): the created key names its user.
			if name, err = in.str("userName"); err != nil {
				return err
			}
			field = in.at("userName")
		}
		u, root, ok, err := c.subject(name, field)
		if err != nil || !ok {
			return err
		}
		if root {
			// The root user's keys are counts on the root user, not resources.
			c.add(u)
			c.whole(rootWhy)
			return nil
		}
		if id == "" {
			c.add(u)
			c.whole(in.at("accessKeyId") + " is absent")
			return nil
		}
		if !keyIDRe.MatchString(id) {
			return malformed(in.at("accessKeyId"), fmt.Sprintf("%q is not an access key id", id))
		}
		c.add(Ref{UID: u.UID + "/accesskey/" + id, Type: "aws.iam.access_key", Name: id, ByName: u.ByName})
		c.add(u)
		return nil
	}
}

func requestParams(c *awsCtx) node { return c.req }

// policyAt maps a call on the managed policy whose ARN is requestParameters[field].
func policyAt(field string) func(*awsCtx) error {
	return func(c *awsCtx) error { return c.policy(c.req, field) }
}

func (c *awsCtx) policy(n node, field string) error {
	s, err := n.str(field)
	if err != nil {
		return err
	}
	if s == "" {
		c.whole(n.at(field) + " is absent")
		return nil
	}
	r, err := c.iamARN(policyKind, n.at(field), s)
	if err != nil {
		return err
	}
	c.add(r)
	return nil
}

// createdPolicy maps CreatePolicy: responseElements.policy.arn, else the ARN of
// requestParameters.policyName under requestParameters.path.
func createdPolicy(c *awsCtx) error {
	out, err := c.resp.obj("policy")
	if err != nil {
		return err
	}
	if out.has("arn") {
		return c.policy(out, "arn")
	}
	name, err := c.req.str("policyName")
	if err != nil {
		return err
	}
	if name == "" {
		c.whole(c.req.at("policyName") + " and " + out.at("arn") + " are absent")
		return nil
	}
	path, err := c.req.str("path")
	if err != nil {
		return err
	}
	r, err := c.withPath(policyKind, c.req.at("policyName"), name, c.req.at("path"), path)
	if err != nil {
		return err
	}
	c.add(r)
	return nil
}

func passwordPolicy(c *awsCtx) error {
	c.add(Ref{UID: c.arn("iam", "", "account-password-policy"), Type: "aws.iam.password_policy", Name: "account-password-policy"})
	return nil
}

// all maps a call that touches what each of fs finds.
func all(fs ...func(*awsCtx) error) func(*awsCtx) error {
	return func(c *awsCtx) error {
		for _, f := range fs {
			if err := f(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// sg adds the security group id, read from field, once.
func (c *awsCtx) sg(field, id, name string) error {
	r, err := c.sgRef(field, id, name)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(c.refs, func(x Ref) bool { return x.UID == r.UID }) {
		c.add(r)
	}
	return nil
}

// sgRules maps a change of a security group's rules (a rule is an attribute of its
// group): requestParameters.groupId, else the groups of the rules the response lists.
// A group named by groupName alone (EC2-Classic and default VPCs allow it) reads the
// region's scope.
func sgRules(c *awsCtx) error {
	id, err := c.req.str("groupId")
	if err != nil {
		return err
	}
	if id != "" {
		return c.sg(c.req.at("groupId"), id, "")
	}
	set, err := c.resp.obj("securityGroupRuleSet")
	if err != nil {
		return err
	}
	rules, err := set.objects("items")
	if err != nil {
		return err
	}
	for _, rule := range rules {
		gid, err := rule.need("groupId")
		if err != nil {
			return err
		}
		if err := c.sg(rule.at("groupId"), gid, ""); err != nil {
			return err
		}
	}
	if len(c.refs) == 0 {
		c.whole(groupWhy(c))
	}
	return nil
}

func groupWhy(c *awsCtx) string {
	if c.req.has("groupName") {
		return "the security group is named by " + c.req.at("groupName") + ", not by its id"
	}
	return c.req.at("groupId") + " is absent"
}

// modifySGRules maps ModifySecurityGroupRules, whose request CloudTrail records as the
// query API's: requestParameters.ModifySecurityGroupRulesRequest.GroupId.
func modifySGRules(c *awsCtx) error {
	in, err := c.req.obj("ModifySecurityGroupRulesRequest")
	if err != nil {
		return err
	}
	id, err := in.str("GroupId")
	if err != nil {
		return err
	}
	if id == "" {
		c.whole(in.at("GroupId") + " is absent")
		return nil
	}
	return c.sg(in.at("GroupId"), id, "")
}

func createSG(c *awsCtx) error {
	id, err := c.resp.str("groupId")
	if err != nil {
		return err
	}
	name, err := c.req.str("groupName")
	if err != nil {
		return err
	}
	if id == "" {
		c.whole(c.resp.at("groupId") + " is absent")
		return nil
	}
	return c.sg(c.resp.at("groupId"), id, name)
}

func deleteSG(c *awsCtx) error {
	id, err := c.req.str("groupId")
	if err != nil {
		return err
	}
	if id == "" {
		c.whole(groupWhy(c))
		return nil
	}
	return c.sg(c.req.at("groupId"), id, "")
}

// sgTags maps CreateTags and DeleteTags: the security groups among the resources tagged
// (requestParameters.resourcesSet.items[].resourceId); tags on anything else are not
// warden's.
func sgTags(c *awsCtx) error {
	set, err := c.req.obj("resourcesSet")
	if err != nil {
		return err
	}
	items, err := set.objects("items")
	if err != nil {
		return err
	}
	for _, item := range items {
		id, err := item.need("resourceId")
		if err != nil {
			return err
		}
		if strings.HasPrefix(id, "sg-") {
			if err := c.sg(item.at("resourceId"), id, ""); err != nil {
				return err
			}
		}
	}
	if len(items) == 0 {
		c.whole(set.at("items") + " is absent")
	} else if len(c.refs) == 0 {
		return unknown(set.at("items"), "", "no security group among the resources tagged")
	}
	return nil
}

// certAt maps an ACM call on the certificate whose ARN is in the response or request.
func certAt(in ...func(*awsCtx) node) func(*awsCtx) error {
	return func(c *awsCtx) error {
		var tried []string
		for _, f := range in {
			n := f(c)
			s, err := n.str("certificateArn")
			if err != nil {
				return err
			}
			if s != "" {
				r, err := c.certARN(n.at("certificateArn"), s)
				if err != nil {
					return err
				}
				c.add(r)
				return nil
			}
			tried = append(tried, n.at("certificateArn"))
		}
		verb := " is absent"
		if len(tried) > 1 {
			verb = " are absent"
		}
		c.whole(strings.Join(tried, " and ") + verb)
		return nil
	}
}

func responseElements(c *awsCtx) node { return c.resp }

// instanceGroups maps RunInstances: the security groups of each instance the response
// lists (responseElements.instancesSet.items[].groupSet), which the instance now uses.
func instanceGroups(c *awsCtx) error {
	set, err := c.resp.obj("instancesSet")
	if err != nil {
		return err
	}
	instances, err := set.objects("items")
	if err != nil {
		return err
	}
	for _, in := range instances {
		if err := c.groupSet(in); err != nil {
			return err
		}
	}
	if len(c.refs) == 0 {
		c.whole(set.at("items") + " names no security group")
	}
	return nil
}

// interfaceGroups maps CreateNetworkInterface: the security groups of the new interface
// (responseElements.networkInterface.groupSet).
func interfaceGroups(c *awsCtx) error {
	n, err := c.resp.obj("networkInterface")
	if err != nil {
		return err
	}
	if err := c.groupSet(n); err != nil {
		return err
	}
	if len(c.refs) == 0 {
		c.whole(n.at("groupSet") + " names no security group")
	}
	return nil
}

// groupSet adds the security groups an instance or interface of a response names:
// groupSet.items[].groupId.
func (c *awsCtx) groupSet(n node) error {
	set, err := n.obj("groupSet")
	if err != nil {
		return err
	}
	items, err := set.objects("items")
	if err != nil {
		return err
	}
	for _, g := range items {
		id, err := g.need("groupId")
		if err != nil {
			return err
		}
		if err := c.sg(g.at("groupId"), id, ""); err != nil {
			return err
		}
	}
	return nil
}
