package cloudsim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ec2Handlers serves the EC2 actions warden reads and changes: regions, security groups,
// their rules and tags, and the network interfaces that use the groups. Every action is scoped to the region of the request's SigV4
// credential scope, which must be one of the account's enabled regions.
func (s *Sim) ec2Handlers() map[string]queryHandler {
	return map[string]queryHandler{
		"DescribeRegions":               s.ec2DescribeRegions,
		"DescribeSecurityGroups":        s.ec2DescribeSecurityGroups,
		"DescribeSecurityGroupRules":    s.ec2DescribeSecurityGroupRules,
		"DescribeNetworkInterfaces":     s.ec2DescribeNetworkInterfaces,
		"CreateSecurityGroup":           s.ec2CreateSecurityGroup,
		"DeleteSecurityGroup":           s.ec2DeleteSecurityGroup,
		"AuthorizeSecurityGroupIngress": s.ec2Authorize(false),
		"AuthorizeSecurityGroupEgress":  s.ec2Authorize(true),
		"RevokeSecurityGroupIngress":    s.ec2Revoke(false),
		"RevokeSecurityGroupEgress":     s.ec2Revoke(true),
		"CreateTags":                    s.ec2CreateTags,
		"DeleteTags":                    s.ec2DeleteTags,
	}
}

// ec2Account is the caller's account, provided the call's region is enabled in it; AWS
// refuses credentials in a region the account has not opted in to.
func (s *Sim) ec2Account(c *call) (*Account, error) {
	a, err := s.account(c)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(a.Regions, c.Region) {
		return nil, errf(kindDenied, "AuthFailure", "AWS was not able to validate the provided access credentials")
	}
	return a, nil
}

// ec2Regions are the commercial regions DescribeRegions AllRegions=true lists; those in
// ec2OptIn must be enabled by the account, the others always are.
func ec2Regions() []string {
	return strings.Fields(`af-south-1 ap-east-1 ap-northeast-1 ap-northeast-2 ap-northeast-3
		ap-south-1 ap-south-2 ap-southeast-1 ap-southeast-2 ap-southeast-3 ap-southeast-4
		ca-central-1 ca-west-1 eu-central-1 eu-central-2 eu-north-1 eu-south-1 eu-south-2
		eu-west-1 eu-west-2 eu-west-3 il-central-1 me-central-1 me-south-1 sa-east-1
		us-east-1 us-east-2 us-west-1 us-west-2`)
}

func ec2OptIn(region string) bool {
	switch region {
	case "af-south-1", "ap-east-1", "ap-south-2", "ap-southeast-3", "ap-southeast-4", "ca-west-1",
		"eu-central-2", "eu-south-1", "eu-south-2", "il-central-1", "me-central-1", "me-south-1":
		return true
	}
	return false
}

type ec2RegionsResult struct {
	Regions []ec2Region `xml:"regionInfo>item"`
}

type ec2Region struct {
	Name     string `xml:"regionName"`
	Endpoint string `xml:"regionEndpoint"`
	OptIn    string `xml:"optInStatus"`
}

func (s *Sim) ec2DescribeRegions(c *call, form url.Values) (any, error) {
	a, err := s.ec2Account(c)
	if err != nil {
		return nil, err
	}
	var all []ec2Region
	for _, r := range a.Regions {
		st := "opt-in-not-required"
		if ec2OptIn(r) {
			st = "opted-in"
		}
		all = append(all, ec2Region{Name: r, Endpoint: "ec2." + r + ".amazonaws.com", OptIn: st})
	}
	if form.Get("AllRegions") == "true" {
		for _, r := range ec2Regions() {
			if !slices.Contains(a.Regions, r) {
				all = append(all, ec2Region{Name: r, Endpoint: "ec2." + r + ".amazonaws.com", OptIn: "not-opted-in"})
			}
		}
	}
	names := ec2Strings(form, "RegionName")
	for _, n := range names {
		if !slices.ContainsFunc(all, func(r ec2Region) bool { return r.Name == n }) {
			return nil, errf(kindInvalid, "InvalidParameterValue", "Invalid region: %s", n)
		}
	}
	filters, err := ec2Filters(form)
	if err != nil {
		return nil, err
	}
	res := &ec2RegionsResult{}
	for _, r := range all {
		if len(names) > 0 && !slices.Contains(names, r.Name) {
			continue
		}
		ok := true
		for _, f := range filters {
			var v string
			switch f.Name {
			case "region-name":
				v = r.Name
			case "endpoint":
				v = r.Endpoint
			case "opt-in-status":
				v = r.OptIn
			default:
				return nil, errf(kindInvalid, "InvalidParameterValue", "The filter '%s' is invalid", f.Name)
			}
			ok = ok && f.match(v)
		}
		if ok {
			res.Regions = append(res.Regions, r)
		}
	}
	return res, nil
}

type ec2TagEntry struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

func ec2Tags(tags map[string]string) []ec2TagEntry {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]ec2TagEntry, 0, len(keys))
	for _, k := range keys {
		out = append(out, ec2TagEntry{Key: k, Value: tags[k]})
	}
	return out
}

// ec2SG is a SecurityGroup as DescribeSecurityGroups answers it.
type ec2SG struct {
	OwnerID     string        `xml:"ownerId"`
	GroupID     string        `xml:"groupId"`
	GroupName   string        `xml:"groupName"`
	Description string        `xml:"groupDescription"`
	VpcID       string        `xml:"vpcId,omitempty"`
	ARN         string        `xml:"securityGroupArn"`
	Ingress     []ec2Perm     `xml:"ipPermissions>item"`
	Egress      []ec2Perm     `xml:"ipPermissionsEgress>item"`
	Tags        []ec2TagEntry `xml:"tagSet>item"`
}

type ec2SGsResult struct {
	Groups    []ec2SG `xml:"securityGroupInfo>item"`
	NextToken string  `xml:"nextToken,omitempty"`
}

func ec2ARN(a *Account, g *SecurityGroup) string {
	return "arn:aws:ec2:" + g.Region + ":" + a.ID + ":security-group/" + g.ID
}

// ec2Group finds a group of the region by id.
func ec2Group(a *Account, region, id string) *SecurityGroup {
	for _, g := range a.SecurityGroups {
		if g.Region == region && g.ID == id {
			return g
		}
	}
	return nil
}

// ec2Find finds the group a call names by id or, failing that, by name (in the default
// VPC first, as EC2 resolves bare names there).
func (s *Sim) ec2Find(a *Account, region, id, name string) (*SecurityGroup, error) {
	switch {
	case id != "":
		if !strings.HasPrefix(id, "sg-") {
			return nil, errf(kindInvalid, "InvalidGroupId.Malformed", "Invalid id: \"%s\" (expecting \"sg-...\")", id)
		}
		if g := ec2Group(a, region, id); g != nil {
			return g, nil
		}
		return nil, errf(kindNotFound, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
	case name != "":
		def := ec2DefaultVPC(a, region)
		var found *SecurityGroup
		for _, g := range a.SecurityGroups {
			if g.Region == region && g.Name == name && (found == nil || g.VPC == def) {
				found = g
			}
		}
		if found == nil {
			return nil, errf(kindNotFound, "InvalidGroup.NotFound", "The security group '%s' does not exist in default VPC '%s'", name, def)
		}
		return found, nil
	}
	return nil, errf(kindInvalid, "MissingParameter", "The request must contain the parameter groupName or groupId")
}

// ec2DefaultVPC is the id of a region's default VPC, derived as prepare derives it.
func ec2DefaultVPC(a *Account, region string) string {
	return "vpc-" + strings.ToLower(makeID("", a.ID+"/"+region+"/vpc", 8))
}

func (s *Sim) ec2DescribeSecurityGroups(c *call, form url.Values) (any, error) {
	a, err := s.ec2Account(c)
	if err != nil {
		return nil, err
	}
	ids, names := ec2Strings(form, "GroupId"), ec2Strings(form, "GroupName")
	if form.Get("MaxResults") != "" && (len(ids) > 0 || len(names) > 0) {
		return nil, errf(kindInvalid, "InvalidParameterCombination", "The parameter groupIds and groupNames cannot be used with the parameter maxResults")
	}
	var groups []*SecurityGroup
	for _, id := range ids {
		g, err := s.ec2Find(a, c.Region, id, "")
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	for _, n := range names {
		g, err := s.ec2Find(a, c.Region, "", n)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	if len(ids) == 0 && len(names) == 0 {
		for _, g := range a.SecurityGroups {
			if g.Region == c.Region {
				groups = append(groups, g)
			}
		}
	}
	filters, err := ec2Filters(form)
	if err != nil {
		return nil, err
	}
	var matched []*SecurityGroup
	for _, g := range groups {
		ok, err := ec2GroupMatches(a, g, filters)
		if err != nil {
			return nil, err
		}
		if ok {
			matched = append(matched, g)
		}
	}
	start, end, next, err := ec2Page(len(matched), form)
	if err != nil {
		return nil, err
	}
	res := &ec2SGsResult{NextToken: next}
	for _, g := range matched[start:end] {
		res.Groups = append(res.Groups, ec2SG{OwnerID: a.ID, GroupID: g.ID, GroupName: g.Name,
			Description: g.Description, VpcID: g.VPC, ARN: ec2ARN(a, g),
			Ingress: ec2Perms(g.Ingress, a.ID), Egress: ec2Perms(g.Egress, a.ID), Tags: ec2Tags(g.Tags)})
	}
	return res, nil
}

// ec2GroupMatches applies DescribeSecurityGroups filters: all filters must match, each by
// any of its values.
func ec2GroupMatches(a *Account, g *SecurityGroup, filters []ec2Filter) (bool, error) {
	for _, f := range filters {
		name := f.Name
		rules := g.Ingress
		if rest, ok := strings.CutPrefix(name, "egress."); ok {
			name, rules = rest, g.Egress
		}
		var ok bool
		switch {
		case name == "group-id":
			ok = f.match(g.ID)
		case name == "group-name":
			ok = f.match(g.Name)
		case name == "description":
			ok = f.match(g.Description)
		case name == "vpc-id":
			ok = f.match(g.VPC)
		case name == "owner-id":
			ok = f.match(a.ID)
		case name == "tag-key":
			for k := range g.Tags {
				ok = ok || f.match(k)
			}
		case name == "tag-value":
			for _, v := range g.Tags {
				ok = ok || f.match(v)
			}
		case strings.HasPrefix(name, "tag:"):
			v, has := g.Tags[strings.TrimPrefix(name, "tag:")]
			ok = has && f.match(v)
		case strings.HasPrefix(name, "ip-permission."):
			field := strings.TrimPrefix(name, "ip-permission.")
			for _, r := range rules {
				r = ec2Norm(r)
				switch field {
				case "cidr":
					ok = ok || (r.SourceGroup == "" && !strings.Contains(r.CIDR, ":") && f.match(r.CIDR))
				case "ipv6-cidr":
					ok = ok || (strings.Contains(r.CIDR, ":") && f.match(r.CIDR))
				case "protocol":
					ok = ok || f.match(r.Protocol)
				case "from-port":
					ok = ok || f.match(strconv.Itoa(r.FromPort))
				case "to-port":
					ok = ok || f.match(strconv.Itoa(r.ToPort))
				case "group-id":
					ok = ok || (strings.HasPrefix(r.SourceGroup, "sg-") && f.match(r.SourceGroup))
				case "prefix-list-id":
					ok = ok || (strings.HasPrefix(r.SourceGroup, "pl-") && f.match(r.SourceGroup))
				default:
					return false, errf(kindInvalid, "InvalidParameterValue", "The filter '%s' is invalid", f.Name)
				}
			}
		default:
			return false, errf(kindInvalid, "InvalidParameterValue", "The filter '%s' is invalid", f.Name)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

type ec2CreateSGResult struct {
	GroupID string        `xml:"groupId"`
	ARN     string        `xml:"securityGroupArn"`
	Tags    []ec2TagEntry `xml:"tagSet>item"`
}

func (s *Sim) ec2CreateSecurityGroup(c *call, form url.Values) (any, error) {
	a, err := s.ec2Account(c)
	if err != nil {
		return nil, err
	}
	name, desc := form.Get("GroupName"), form.Get("GroupDescription")
	switch {
	case name == "":
		return nil, errf(kindInvalid, "MissingParameter", "The request must contain the parameter groupName")
	case desc == "":
		return nil, errf(kindInvalid, "MissingParameter", "The request must contain the parameter groupDescription")
	case len(name) > 255 || len(desc) > 255:
		return nil, errf(kindInvalid, "InvalidParameterValue", "Group name and description must be at most 255 characters")
	case strings.HasPrefix(name, "sg-"):
		return nil, errf(kindInvalid, "InvalidParameterValue", "Group names may not be in the format sg-*")
	}
	vpc := form.Get("VpcId")
	def := ec2DefaultVPC(a, c.Region)
	if vpc == "" {
		vpc = def
	} else if vpc != def && !slices.ContainsFunc(a.SecurityGroups, func(g *SecurityGroup) bool { return g.Region == c.Region && g.VPC == vpc }) {
		return nil, errf(kindNotFound, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", vpc)
	}
	for _, g := range a.SecurityGroups {
		if g.Region == c.Region && g.VPC == vpc && g.Name == name {
			return nil, errf(kindInvalid, "InvalidGroup.Duplicate", "The security group '%s' already exists for VPC '%s'", name, vpc)
		}
	}
	tags := map[string]string{}
	for _, spec := range ec2Members(form, "TagSpecification") {
		if rt := spec.Get("ResourceType"); rt != "security-group" {
			return nil, errf(kindInvalid, "InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation.", rt)
		}
		for _, t := range ec2Members(spec, "Tag") {
			tags[t.Get("Key")] = t.Get("Value")
		}
	}
	if err := ec2DryRun(form); err != nil {
		return nil, err
	}
	sum := sha1.Sum([]byte(fmt.Sprintf("%s/%s/%s/%s/%d", a.ID, c.Region, vpc, name, s.nextID())))
	g := &SecurityGroup{ID: "sg-" + hex.EncodeToString(sum[:])[:17], Name: name, Region: c.Region, VPC: vpc,
		Description: desc, Egress: []Rule{{Protocol: "-1", FromPort: -1, ToPort: -1, CIDR: "0.0.0.0/0"}}}
	if len(tags) > 0 {
		g.Tags = tags
	}
	a.SecurityGroups = append(a.SecurityGroups, g)
	return &ec2CreateSGResult{GroupID: g.ID, ARN: ec2ARN(a, g), Tags: ec2Tags(g.Tags)}, nil
}

type ec2DeleteSGResult struct {
	Return  bool   `xml:"return"`
	GroupID string `xml:"groupId"`
}

func (s *Sim) ec2DeleteSecurityGroup(c *call, form url.Values) (any, error) {
	a, err := s.ec2Account(c)
	if err != nil {
		return nil, err
	}
	g, err := s.ec2Find(a, c.Region, form.Get("GroupId"), form.Get("GroupName"))
	if err != nil {
		return nil, err
	}
	if g.Name == "default" {
		return nil, errf(kindInvalid, "CannotDelete", "the specified group: \"%s\" name: \"default\" cannot be deleted by a user", g.ID)
	}
	for _, o := range a.SecurityGroups {
		if o == g || o.Region != g.Region {
			continue
		}
		for _, r := range slices.Concat(o.Ingress, o.Egress) {
			if r.SourceGroup == g.ID {
				return nil, errf(kindInvalid, "DependencyViolation", "resource %s has a dependent object", g.ID)
			}
		}
	}
	if eni := ec2GroupInUse(a, g); eni != "" {
		return nil, errf(kindInvalid, "DependencyViolation", "resource %s has a dependent object", g.ID)
	}
	if err := ec2DryRun(form); err != nil {
		return nil, err
	}
	a.SecurityGroups = slices.DeleteFunc(a.SecurityGroups, func(x *SecurityGroup) bool { return x == g })
	return &ec2DeleteSGResult{Return: true, GroupID: g.ID}, nil
}

type ec2ReturnResult struct {
	Return bool `xml:"return"`
}

// ec2TagTargets resolves CreateTags/DeleteTags resource ids; only security groups are
// simulated, so other ids are reported as unknown.
func (s *Sim) ec2TagTargets(c *call, form url.Values) ([]*SecurityGroup, error) {
	a, err := s.ec2Account(c)
	if err != nil {
		return nil, err
	}
	ids := ec2Strings(form, "ResourceId")
	if len(ids) == 0 {
		return nil, errf(kindInvalid, "MissingParameter", "The request must contain the parameter resourceIdSet")
	}
	var out []*SecurityGroup
	for _, id := range ids {
		if !strings.HasPrefix(id, "sg-") {
			return nil, errf(kindInvalid, "InvalidID", "The ID '%s' is not valid", id)
		}
		g, err := s.ec2Find(a, c.Region, id, "")
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func (s *Sim) ec2CreateTags(c *call, form url.Values) (any, error) {
	groups, err := s.ec2TagTargets(c, form)
	if err != nil {
		return nil, err
	}
	tags := ec2Members(form, "Tag")
	for _, t := range tags {
		if k := t.Get("Key"); k == "" || len(k) > 128 || strings.HasPrefix(k, "aws:") {
			return nil, errf(kindInvalid, "InvalidParameterValue", "Tag key '%s' is not valid", k)
		}
	}
	for _, g := range groups {
		n := len(g.Tags)
		for _, t := range tags {
			if _, ok := g.Tags[t.Get("Key")]; !ok {
				n++
			}
		}
		if n > 50 {
			return nil, errf(kindInvalid, "TagLimitExceeded", "The maximum number of tags (50) for resource %s has been reached", g.ID)
		}
	}
	if err := ec2DryRun(form); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if g.Tags == nil {
			g.Tags = map[string]string{}
		}
		for _, t := range tags {
			g.Tags[t.Get("Key")] = t.Get("Value")
		}
	}
	return &ec2ReturnResult{Return: true}, nil
}

func (s *Sim) ec2DeleteTags(c *call, form url.Values) (any, error) {
	groups, err := s.ec2TagTargets(c, form)
	if err != nil {
		return nil, err
	}
	if err := ec2DryRun(form); err != nil {
		return nil, err
	}
	tags := ec2Members(form, "Tag")
	for _, g := range groups {
		if len(tags) == 0 {
			g.Tags = nil // no tags named: delete them all
		}
		for _, t := range tags {
			k := t.Get("Key")
			if v, ok := t["Value"]; ok && g.Tags[k] != v[0] {
				continue // a value given must match
			}
			delete(g.Tags, k)
		}
	}
	return &ec2ReturnResult{Return: true}, nil
}
