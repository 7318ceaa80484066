package aws

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/snapshot"
)

// collectEC2 reads the security groups of one region, a thousand a call, and what uses
// them: the region's network interfaces, read once for every group.
func (a *account) collectEC2(ctx context.Context, sink collectors.Sink, region string) error {
	sc := newScope(sink, a.id, "ec2", region)
	a.readEC2(ctx, sc, region)
	return a.done(sc)
}

func (a *account) readEC2(ctx context.Context, sc *scope, region string) {
	var groups []ec2types.SecurityGroup
	whole := true
	for page, err := range pages(ctx, ec2.NewDescribeSecurityGroupsPaginator(a.ec2(sc, region), &ec2.DescribeSecurityGroupsInput{MaxResults: aws.Int32(1000)})) {
		if err != nil {
			if len(groups) == 0 {
				sc.fail("ec2:DescribeSecurityGroups", err)
				return
			}
			sc.partial("ec2:DescribeSecurityGroups", err)
			whole = false
			break
		}
		groups = append(groups, page.SecurityGroups...)
	}
	if len(groups) == 0 {
		return
	}
	use := readGroupUse(ctx, a.ec2(sc, region), nil)
	if use.err != "" {
		a.c.log.Warn("aws security groups' use unknown", "scope", sc.s.ID, "error", use.err)
	}
	// Which groups name a group is known only from all of them.
	var refs map[string][]string
	if whole {
		refs = referencedBy(groups)
	}
	for _, g := range groups {
		r := a.securityGroup(region, g)
		setGroupUse(&r, use, refs)
		sc.add(r)
	}
}

func (a *account) securityGroup(region string, g ec2types.SecurityGroup) snapshot.Resource {
	id := aws.ToString(g.GroupId)
	owner := aws.ToString(g.OwnerId)
	if owner == "" {
		owner = a.id
	}
	arn := fmt.Sprintf("arn:%s:ec2:%s:%s:security-group/%s", a.partition(), region, owner, id)
	var t map[string]string
	if len(g.Tags) > 0 {
		t = make(map[string]string, len(g.Tags))
		for _, tag := range g.Tags {
			t[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
	}
	return snapshot.Resource{UID: arn, Type: "aws.ec2.security_group", Name: aws.ToString(g.GroupName), Region: region, Tags: t,
		Attributes: map[string]any{
			"group_id": id, "group_name": aws.ToString(g.GroupName), "vpc_id": aws.ToString(g.VpcId),
			"description": aws.ToString(g.Description), "is_default": aws.ToString(g.GroupName) == "default",
			"ingress": rules(arn, "ingress", g.IpPermissions), "egress": rules(arn, "egress", g.IpPermissionsEgress),
		}}
}

// rules flattens EC2's permissions into the model's one rule per protocol, port range
// and peer.
func rules(arn, direction string, perms []ec2types.IpPermission) []any {
	out := []any{}
	for _, p := range perms {
		proto := aws.ToString(p.IpProtocol)
		from, to := -1, -1
		if p.FromPort != nil {
			from = int(*p.FromPort)
		}
		if p.ToPort != nil {
			to = int(*p.ToPort)
		}
		if proto == "-1" {
			from, to = -1, -1
		}
		add := func(cidr, group, desc string) {
			peer := cidr
			if peer == "" {
				peer = group
			}
			out = append(out, map[string]any{
				"id":        arn + "#" + direction + "/" + proto + "/" + strconv.Itoa(from) + "-" + strconv.Itoa(to) + "/" + peer,
				"direction": direction, "protocol": proto, "from_port": from, "to_port": to,
				"cidr": cidr, "source_group": group, "description": desc,
			})
		}
		for _, r := range p.IpRanges {
			add(aws.ToString(r.CidrIp), "", aws.ToString(r.Description))
		}
		for _, r := range p.Ipv6Ranges {
			add(aws.ToString(r.CidrIpv6), "", aws.ToString(r.Description))
		}
		for _, r := range p.UserIdGroupPairs {
			add("", aws.ToString(r.GroupId), aws.ToString(r.Description))
		}
		for _, r := range p.PrefixListIds {
			add("", aws.ToString(r.PrefixListId), aws.ToString(r.Description))
		}
	}
	return out
}

// ec2Permissions are the IAM actions of this file's reads.
func ec2Permissions() []string {
	return []string{"ec2:DescribeNetworkInterfaces", "ec2:DescribeSecurityGroups"}
}
