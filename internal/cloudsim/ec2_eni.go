package cloudsim

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// NetworkInterface is an elastic network interface in one region: an instance's, or one
// that a service (Lambda, a load balancer, RDS…) created and manages. DescribeNetworkInterfaces
// renders each kind as AWS does (ec2_eni.go).
type NetworkInterface struct {
	ID     string   `yaml:"id,omitempty"` // eni-…; default derived from the account, region and position
	Region string   `yaml:"region"`
	Groups []string `yaml:"groups"` // ids of security groups of the region
	// Kind is what the interface serves: ec2_instance (default), lambda, elb, nlb, rds,
	// elasticache, nat_gateway, vpc_endpoint, or detached (an interface attached to nothing).
	Kind string `yaml:"kind,omitempty"`
	// AttachedTo names what uses it: the instance id (i-…) of an ec2_instance interface, the
	// function, load balancer, DB instance, gateway or endpoint of the others.
	AttachedTo  string `yaml:"attached_to,omitempty"`
	Description string `yaml:"description,omitempty"` // default: AWS's for the kind
}

// eniKinds are the kinds of NetworkInterface the world may hold.
var eniKinds = []string{"ec2_instance", "lambda", "elb", "nlb", "rds", "elasticache", "nat_gateway", "vpc_endpoint", "detached"}

// validateInterfaces checks that each network interface has a region, a known kind and
// groups of its region: a typo in a group id would otherwise leave that group unused
// without a word.
func validateInterfaces(a *Account) error {
	for j, n := range a.NetworkInterfaces {
		where := fmt.Sprintf("network_interfaces[%d] (%s)", j, n.ID)
		if n.Region == "" {
			return fmt.Errorf("%s: region is required", where)
		}
		if n.Kind != "" && !slices.Contains(eniKinds, n.Kind) {
			return fmt.Errorf("%s: kind %q is not one of %s", where, n.Kind, strings.Join(eniKinds, ", "))
		}
		if len(n.Groups) == 0 {
			return fmt.Errorf("%s: an interface has at least one security group", where)
		}
		for _, g := range n.Groups {
			if ec2Group(a, n.Region, g) == nil {
				return fmt.Errorf("%s: security group %s is not one of the account's in %s", where, g, n.Region)
			}
		}
	}
	return nil
}

// prepareInterfaces fills each interface's defaults: its kind, id and what it is attached
// to, as AWS would have named them.
func prepareInterfaces(a *Account) {
	for i, n := range a.NetworkInterfaces {
		seed := a.ID + "/" + n.Region + "/eni/" + strconv.Itoa(i)
		if n.Kind == "" {
			n.Kind = "ec2_instance"
		}
		if n.ID == "" {
			n.ID = "eni-" + strings.ToLower(makeID("", seed, 17))
		}
		if n.AttachedTo == "" && n.Kind == "ec2_instance" {
			n.AttachedTo = "i-" + strings.ToLower(makeID("", seed+"/instance", 17))
		}
	}
}

// ec2ENI is a NetworkInterface as DescribeNetworkInterfaces answers it.
type ec2ENI struct {
	ID               string         `xml:"networkInterfaceId"`
	VpcID            string         `xml:"vpcId"`
	Description      string         `xml:"description"`
	OwnerID          string         `xml:"ownerId"`
	RequesterID      string         `xml:"requesterId,omitempty"`
	RequesterManaged bool           `xml:"requesterManaged"`
	Status           string         `xml:"status"`
	InterfaceType    string         `xml:"interfaceType"`
	Groups           []ec2GroupRef  `xml:"groupSet>item"`
	Attachment       *ec2Attachment `xml:"attachment,omitempty"`
	Tags             []ec2TagEntry  `xml:"tagSet>item"`
}

type ec2GroupRef struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName"`
}

type ec2Attachment struct {
	AttachmentID    string `xml:"attachmentId"`
	InstanceID      string `xml:"instanceId,omitempty"`
	InstanceOwnerID string `xml:"instanceOwnerId"`
	DeviceIndex     int    `xml:"deviceIndex"`
	Status          string `xml:"status"`
}

type ec2ENIsResult struct {
	Interfaces []ec2ENI `xml:"networkInterfaceSet>item"`
	NextToken  string   `xml:"nextToken,omitempty"`
}

// ec2ENIOf renders an interface as AWS shows each kind: an instance's is an "interface"
// attached to the instance and managed by no one; a service's is managed by the service
// (requesterManaged), which AWS names in requesterId (amazon-elb, amazon-rds) or in the
// interface type (lambda, network_load_balancer, nat_gateway, vpc_endpoint).
func ec2ENIOf(a *Account, n *NetworkInterface) ec2ENI {
	e := ec2ENI{ID: n.ID, OwnerID: a.ID, Status: "in-use", InterfaceType: "interface", RequesterManaged: true}
	attach := &ec2Attachment{AttachmentID: "eni-attach-" + strings.TrimPrefix(n.ID, "eni-"), Status: "attached", DeviceIndex: 1}
	desc := ""
	switch n.Kind {
	case "ec2_instance":
		e.RequesterManaged = false
		attach.InstanceID, attach.InstanceOwnerID, attach.DeviceIndex = n.AttachedTo, a.ID, 0
	case "lambda":
		e.InterfaceType, e.RequesterID = "lambda", "AROA"+makeID("", a.ID+"/lambda", 17)+":"+n.AttachedTo
		attach.InstanceOwnerID = "amazon-aws"
		desc = "AWS Lambda VPC ENI-" + n.AttachedTo
	case "elb":
		e.RequesterID, attach.InstanceOwnerID = "amazon-elb", "amazon-elb"
		desc = "ELB app/" + n.AttachedTo
	case "nlb":
		e.InterfaceType, e.RequesterID, attach.InstanceOwnerID = "network_load_balancer", "amazon-elb", "amazon-elb"
		desc = "ELB net/" + n.AttachedTo
	case "rds":
		e.RequesterID, attach.InstanceOwnerID = "amazon-rds", "amazon-rds"
		desc = "RDSNetworkInterface"
	case "elasticache":
		e.RequesterID, attach.InstanceOwnerID = "amazon-elasticache", "amazon-elasticache"
		desc = "ElastiCache " + n.AttachedTo
	case "nat_gateway":
		e.InterfaceType, e.RequesterID, attach.InstanceOwnerID = "nat_gateway", "amazon-aws", "amazon-aws"
		desc = "Interface for NAT Gateway " + n.AttachedTo
	case "vpc_endpoint":
		e.InterfaceType, e.RequesterID, attach.InstanceOwnerID = "vpc_endpoint", "amazon-aws", "amazon-aws"
		desc = "VPC Endpoint Interface " + n.AttachedTo
	case "detached":
		e.RequesterManaged, e.Status, attach = false, "available", nil
	}
	e.Description = or(n.Description, desc)
	e.Attachment = attach
	for _, id := range n.Groups {
		ref := ec2GroupRef{GroupID: id}
		if g := ec2Group(a, n.Region, id); g != nil {
			ref.GroupName = g.Name
			e.VpcID = or(e.VpcID, g.VPC)
		}
		e.Groups = append(e.Groups, ref)
	}
	return e
}

func (s *Sim) ec2DescribeNetworkInterfaces(c *call, form url.Values) (any, error) {
	a, err := s.ec2Account(c)
	if err != nil {
		return nil, err
	}
	ids := ec2Strings(form, "NetworkInterfaceId")
	if form.Get("MaxResults") != "" && len(ids) > 0 {
		return nil, errf(kindInvalid, "InvalidParameterCombination", "The parameter NetworkInterfaceIds cannot be used with the parameter maxResults")
	}
	for _, id := range ids {
		if !slices.ContainsFunc(a.NetworkInterfaces, func(n *NetworkInterface) bool { return n.Region == c.Region && n.ID == id }) {
			return nil, errf(kindNotFound, "InvalidNetworkInterfaceID.NotFound", "The networkInterface ID '%s' does not exist", id)
		}
	}
	filters, err := ec2Filters(form)
	if err != nil {
		return nil, err
	}
	var matched []ec2ENI
	for _, n := range a.NetworkInterfaces {
		if n.Region != c.Region || (len(ids) > 0 && !slices.Contains(ids, n.ID)) {
			continue
		}
		e := ec2ENIOf(a, n)
		ok, err := ec2ENIMatches(e, filters)
		if err != nil {
			return nil, err
		}
		if ok {
			matched = append(matched, e)
		}
	}
	start, end, next, err := ec2Page(len(matched), form)
	if err != nil {
		return nil, err
	}
	return &ec2ENIsResult{Interfaces: matched[start:end], NextToken: next}, nil
}

// ec2ENIMatches applies DescribeNetworkInterfaces filters: all filters must match, each by
// any of its values.
func ec2ENIMatches(e ec2ENI, filters []ec2Filter) (bool, error) {
	for _, f := range filters {
		var ok bool
		switch f.Name {
		case "group-id":
			for _, g := range e.Groups {
				ok = ok || f.match(g.GroupID)
			}
		case "group-name":
			for _, g := range e.Groups {
				ok = ok || f.match(g.GroupName)
			}
		case "network-interface-id":
			ok = f.match(e.ID)
		case "interface-type":
			ok = f.match(e.InterfaceType)
		case "status":
			ok = f.match(e.Status)
		case "requester-id":
			ok = f.match(e.RequesterID)
		case "requester-managed":
			ok = f.match(strconv.FormatBool(e.RequesterManaged))
		case "description":
			ok = f.match(e.Description)
		case "vpc-id":
			ok = f.match(e.VpcID)
		case "owner-id":
			ok = f.match(e.OwnerID)
		case "attachment.instance-id":
			ok = e.Attachment != nil && f.match(e.Attachment.InstanceID)
		case "attachment.status":
			ok = e.Attachment != nil && f.match(e.Attachment.Status)
		default:
			return false, errf(kindInvalid, "InvalidParameterValue", "The filter '%s' is invalid", f.Name)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// ec2GroupInUse names an interface that uses group g, which AWS will not delete while
// one does.
func ec2GroupInUse(a *Account, g *SecurityGroup) string {
	for _, n := range a.NetworkInterfaces {
		if n.Region == g.Region && slices.Contains(n.Groups, g.ID) {
			return n.ID
		}
	}
	return ""
}
