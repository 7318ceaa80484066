package aws

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/snapshot"
)

// groupUse is what uses the security groups of one region, read from their network
// interfaces: by group id, the interfaces and the distinct instances among them. err is
// the read's failure: then nothing is known, and no group may be called unused.
type groupUse struct {
	interfaces map[string][]ec2types.NetworkInterface
	err        string
}

// readGroupUse reads the network interfaces of a region (all of them, a thousand a call:
// one paged read serves every group of the region) or, given filters, those they match.
func readGroupUse(ctx context.Context, cl *ec2.Client, filters []ec2types.Filter) groupUse {
	in := &ec2.DescribeNetworkInterfacesInput{Filters: filters}
	if len(filters) == 0 {
		in.MaxResults = aws.Int32(1000)
	}
	u := groupUse{interfaces: map[string][]ec2types.NetworkInterface{}}
	for page, err := range pages(ctx, ec2.NewDescribeNetworkInterfacesPaginator(cl, in)) {
		if err != nil {
			return groupUse{err: "ec2:DescribeNetworkInterfaces: " + awsapi.Message(err)}
		}
		for _, n := range page.NetworkInterfaces {
			for _, g := range n.Groups {
				id := aws.ToString(g.GroupId)
				u.interfaces[id] = append(u.interfaces[id], n)
			}
		}
	}
	return u
}

// attachments is a group's attributes.attachments: how many network interfaces use it
// and what they serve (interfaceKind; ec2_instance counts distinct instances), or, when
// the interfaces could not be read, complete false and the reason.
func (u groupUse) attachments(groupID string) map[string]any {
	if u.err != "" {
		return map[string]any{"complete": false, "error": u.err}
	}
	kinds := map[string]any{}
	counts := map[string]int{}
	instances := map[string]bool{}
	for _, n := range u.interfaces[groupID] {
		k := interfaceKind(n)
		if k == "ec2_instance" {
			instances[aws.ToString(n.Attachment.InstanceId)] = true
			counts[k] = len(instances)
		} else {
			counts[k]++
		}
	}
	for k, n := range counts {
		kinds[k] = n
	}
	return map[string]any{"complete": true, "error": "", "count": len(u.interfaces[groupID]), "kinds": kinds}
}

// interfaceKind is what a network interface serves: an EC2 instance (one the customer
// attached, not a service's), a service named by the interface type or the requester
// (lambda, elb, rds, nat_gateway, vpc_endpoint…), "detached" for an interface attached to
// nothing, and "other" for the rest (EFS mount targets, QuickSight, a service AWS does not
// name…). The snapshot schema lists the same kinds.
func interfaceKind(n ec2types.NetworkInterface) string {
	switch n.InterfaceType {
	case ec2types.NetworkInterfaceTypeLambda:
		return "lambda"
	case ec2types.NetworkInterfaceTypeNetworkLoadBalancer, ec2types.NetworkInterfaceTypeGatewayLoadBalancer, ec2types.NetworkInterfaceTypeLoadBalancer:
		return "elb"
	case ec2types.NetworkInterfaceTypeNatGateway, "nat_gateway":
		// The API's enum says natGateway; NAT gateways' interfaces say nat_gateway.
		return "nat_gateway"
	case ec2types.NetworkInterfaceTypeVpcEndpoint, ec2types.NetworkInterfaceTypeGatewayLoadBalancerEndpoint:
		return "vpc_endpoint"
	}
	// A plain "interface" a service manages names the service in its requester id, or
	// in its description for the oldest load balancers and databases.
	desc := aws.ToString(n.Description)
	switch r := aws.ToString(n.RequesterId); {
	case r == "amazon-elb", strings.HasPrefix(desc, "ELB "):
		return "elb"
	case r == "amazon-rds", desc == "RDSNetworkInterface":
		return "rds"
	case r == "amazon-elasticache":
		return "elasticache"
	case r == "amazon-redshift":
		return "redshift"
	}
	if !aws.ToBool(n.RequesterManaged) && n.Attachment != nil && aws.ToString(n.Attachment.InstanceId) != "" {
		return "ec2_instance"
	}
	if n.Attachment == nil || n.Status == ec2types.NetworkInterfaceStatusAvailable {
		return "detached"
	}
	return "other"
}

// referencedBy maps each group id to the sorted ids of the other groups whose rules
// (ingress or egress) name it as their peer: a group so named is part of the network's
// design even when nothing is attached to it, and AWS refuses to delete it.
func referencedBy(groups []ec2types.SecurityGroup) map[string][]string {
	out := map[string][]string{}
	for _, g := range groups {
		self := aws.ToString(g.GroupId)
		for _, p := range slices.Concat(g.IpPermissions, g.IpPermissionsEgress) {
			for _, pair := range p.UserIdGroupPairs {
				if peer := aws.ToString(pair.GroupId); peer != "" && peer != self && !slices.Contains(out[peer], self) {
					out[peer] = append(out[peer], self)
				}
			}
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// setGroupUse gives a security group its use: attributes.attachments and, when they were
// read, attached; and, for a group no interface uses, attributes.referenced_by when refs
// is known (nil: it is not, and the attribute is left out rather than claiming no group
// names it). Only an unattached group needs referenced_by (it decides whether the group
// is unused), so a group read alone asks for it only then.
func setGroupUse(r *snapshot.Resource, u groupUse, refs map[string][]string) {
	id, _ := r.Attributes["group_id"].(string)
	att := u.attachments(id)
	r.Attributes["attachments"] = att
	if att["complete"] != true {
		return
	}
	r.Attributes["attached"] = att["count"].(int) > 0
	if att["count"].(int) == 0 && refs != nil {
		ids := []any{}
		for _, s := range refs[id] {
			ids = append(ids, s)
		}
		r.Attributes["referenced_by"] = ids
	}
}

// readGroupUse gives one re-read group its use as Collect does, with calls of its own:
// the interfaces filtered by the group and, when none uses it, the groups whose ingress
// or egress rules name it. A re-read without them would resolve an unused-group finding
// for lack of data; a group in use costs one call more than its own read.
func (a *account) readGroupUse(ctx context.Context, sc *scope, region string, r snapshot.Resource) snapshot.Resource {
	id, _ := r.Attributes["group_id"].(string)
	cl := a.ec2(sc, region)
	use := readGroupUse(ctx, cl, []ec2types.Filter{{Name: aws.String("group-id"), Values: []string{id}}})
	if use.err != "" || len(use.interfaces[id]) > 0 {
		setGroupUse(&r, use, nil)
		return r
	}
	var naming []ec2types.SecurityGroup
	for _, filter := range []string{"ip-permission.group-id", "egress.ip-permission.group-id"} {
		in := &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{{Name: aws.String(filter), Values: []string{id}}}}
		groups, err := collect(ctx, ec2.NewDescribeSecurityGroupsPaginator(cl, in), func(p *ec2.DescribeSecurityGroupsOutput) []ec2types.SecurityGroup { return p.SecurityGroups })
		if err != nil {
			setGroupUse(&r, use, nil)
			return r
		}
		naming = append(naming, groups...)
	}
	setGroupUse(&r, use, referencedBy(naming))
	return r
}
