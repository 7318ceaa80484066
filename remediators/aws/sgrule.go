package aws

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// One security-group rule, revoked by aws.ec2.revoke_ingress and
// aws.ec2.revoke_default_sg_rules alike: found by its uid in the group's attributes,
// revoked by its security-group-rule id, authorized again with its description.

// sgRule is the part: one rule of one group, as the snapshot holds it.
type sgRule struct {
	GroupID     string `json:"group_id"`
	ID          string `json:"id"`
	Direction   string `json:"direction"`
	Protocol    string `json:"protocol"`
	FromPort    int    `json:"from_port"`
	ToPort      int    `json:"to_port"`
	CIDR        string `json:"cidr"`
	SourceGroup string `json:"source_group"`
	Description string `json:"description"`
}

// ruleTargets finds the rule whose uid is the parameter target in the group; egress
// says whether egress rules may be targeted (ingress always may).
func ruleTargets(res snapshot.Resource, params map[string]any, egress bool) ([]remediators.Target, error) {
	uid, err := attr.Param(params, "target", true)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(uid, res.UID+"#") {
		return nil, fmt.Errorf("security group %s: target %s is not one of its rules", res.UID, uid)
	}
	groupID := attr.String(res.Attributes, "group_id")
	if groupID == "" {
		groupID = attr.LastSegment(res.UID)
	}
	for _, direction := range []string{"ingress", "egress"} {
		for _, r := range attr.Maps(res.Attributes, direction) {
			if attr.String(r, "id") != uid {
				continue
			}
			if direction == "egress" && !egress {
				return nil, fmt.Errorf("security group %s: %s is an egress rule; revoke_ingress revokes ingress rules only", res.UID, uid)
			}
			rule := sgRule{GroupID: groupID, ID: uid, Direction: direction, Protocol: attr.String(r, "protocol"),
				CIDR: attr.String(r, "cidr"), SourceGroup: attr.String(r, "source_group"), Description: attr.String(r, "description")}
			var ok1, ok2 bool
			rule.FromPort, ok1 = attr.Int(r, "from_port")
			rule.ToPort, ok2 = attr.Int(r, "to_port")
			if rule.Protocol == "" || !ok1 || !ok2 || rule.CIDR == "" && rule.SourceGroup == "" {
				return nil, fmt.Errorf("security group %s: rule %s lacks its protocol, ports or peer", res.UID, uid)
			}
			before, err := attr.Canonical(rule)
			if err != nil {
				return nil, err
			}
			return []remediators.Target{{Part: uid, Before: before}}, nil
		}
	}
	return nil, nil
}

// revokeRule revokes the rule of a.Before; ErrConverged when the group no longer has it
// (or is gone).
func revokeRule(ctx context.Context, c clients, a remediators.Action) error {
	rule, cl, err := openRule(ctx, c, a)
	if err != nil {
		return err
	}
	id, err := liveRuleID(ctx, cl, rule)
	if awsapi.IsNotFound(err) || err == nil && id == "" {
		return remediators.ErrConverged
	}
	if err != nil {
		return err
	}
	if rule.Direction == "egress" {
		_, err = cl.RevokeSecurityGroupEgress(ctx, &ec2.RevokeSecurityGroupEgressInput{GroupId: aws.String(rule.GroupID), SecurityGroupRuleIds: []string{id}})
	} else {
		_, err = cl.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(rule.GroupID), SecurityGroupRuleIds: []string{id}})
	}
	if awsapi.IsNotFound(err) {
		// InvalidSecurityGroupRuleId.NotFound, InvalidPermission.NotFound: revoked meanwhile.
		return remediators.ErrConverged
	}
	if err != nil {
		return callErr(fmt.Sprintf("revoke %s rule %s of %s", rule.Direction, id, rule.GroupID), err)
	}
	return nil
}

// authorizeRule adds the rule of a.Before back, description included; a rule already
// there is a success.
func authorizeRule(ctx context.Context, c clients, a remediators.Action) error {
	rule, cl, err := openRule(ctx, c, a)
	if err != nil {
		return err
	}
	if id, err := liveRuleID(ctx, cl, rule); err != nil {
		return err
	} else if id != "" {
		return nil
	}
	perm := rule.permission()
	if rule.Direction == "egress" {
		_, err = cl.AuthorizeSecurityGroupEgress(ctx, &ec2.AuthorizeSecurityGroupEgressInput{GroupId: aws.String(rule.GroupID), IpPermissions: []ec2types.IpPermission{perm}})
	} else {
		_, err = cl.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(rule.GroupID), IpPermissions: []ec2types.IpPermission{perm}})
	}
	if awsapi.Code(err) == "InvalidPermission.Duplicate" {
		return nil
	}
	if err != nil {
		return callErr(fmt.Sprintf("authorize %s rule %s of %s again", rule.Direction, rule.ID, rule.GroupID), err)
	}
	return nil
}

func openRule(ctx context.Context, c clients, a remediators.Action) (sgRule, *ec2.Client, error) {
	var rule sgRule
	if err := attr.Decode(a.Before, &rule); err != nil {
		return rule, nil, err
	}
	if rule.GroupID == "" || rule.Protocol == "" || rule.Direction != "ingress" && rule.Direction != "egress" {
		return rule, nil, fmt.Errorf("action %s: before-state names no rule", a.ID)
	}
	cl, err := c.ec2(ctx, a)
	return rule, cl, err
}

// liveRuleID finds the rule in the group as EC2 holds it now and returns its
// security-group-rule id; "" when the group has no such rule.
func liveRuleID(ctx context.Context, cl *ec2.Client, rule sgRule) (string, error) {
	p := ec2.NewDescribeSecurityGroupRulesPaginator(cl, &ec2.DescribeSecurityGroupRulesInput{
		Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: []string{rule.GroupID}}}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return "", callErr("describe the rules of "+rule.GroupID, err)
		}
		for _, r := range page.SecurityGroupRules {
			if rule.matches(r) {
				return aws.ToString(r.SecurityGroupRuleId), nil
			}
		}
	}
	return "", nil
}

// matches reports whether a live rule allows what r does (its description aside).
func (r sgRule) matches(x ec2types.SecurityGroupRule) bool {
	if aws.ToBool(x.IsEgress) != (r.Direction == "egress") || !strings.EqualFold(aws.ToString(x.IpProtocol), r.Protocol) {
		return false
	}
	if r.Protocol != "-1" && (int(aws.ToInt32(x.FromPort)) != r.FromPort || int(aws.ToInt32(x.ToPort)) != r.ToPort) {
		return false
	}
	var peer string
	switch {
	case x.CidrIpv4 != nil:
		peer = aws.ToString(x.CidrIpv4)
	case x.CidrIpv6 != nil:
		peer = aws.ToString(x.CidrIpv6)
	case x.PrefixListId != nil:
		peer = aws.ToString(x.PrefixListId)
	case x.ReferencedGroupInfo != nil:
		peer = aws.ToString(x.ReferencedGroupInfo.GroupId)
	}
	want := r.CIDR
	if want == "" {
		want = r.SourceGroup
	}
	return strings.EqualFold(peer, want)
}

// permission is the IpPermission that authorizes r.
func (r sgRule) permission() ec2types.IpPermission {
	p := ec2types.IpPermission{IpProtocol: aws.String(r.Protocol)}
	if r.Protocol != "-1" {
		p.FromPort, p.ToPort = aws.Int32(int32(r.FromPort)), aws.Int32(int32(r.ToPort))
	}
	var desc *string
	if r.Description != "" {
		desc = aws.String(r.Description)
	}
	switch {
	case strings.Contains(r.CIDR, ":"):
		p.Ipv6Ranges = []ec2types.Ipv6Range{{CidrIpv6: aws.String(r.CIDR), Description: desc}}
	case r.CIDR != "":
		p.IpRanges = []ec2types.IpRange{{CidrIp: aws.String(r.CIDR), Description: desc}}
	case strings.HasPrefix(r.SourceGroup, "pl-"):
		p.PrefixListIds = []ec2types.PrefixListId{{PrefixListId: aws.String(r.SourceGroup), Description: desc}}
	default:
		p.UserIdGroupPairs = []ec2types.UserIdGroupPair{{GroupId: aws.String(r.SourceGroup), Description: desc}}
	}
	return p
}
