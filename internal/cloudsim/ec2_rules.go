package cloudsim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The world stores one Rule per protocol × port range × peer; EC2 speaks IpPermissions,
// which group every peer of one protocol and port range. This file converts between the
// two and implements the Authorize and Revoke actions.

// ec2Perm is an IpPermission as EC2 answers it.
type ec2Perm struct {
	Protocol    string       `xml:"ipProtocol"`
	FromPort    *int         `xml:"fromPort,omitempty"`
	ToPort      *int         `xml:"toPort,omitempty"`
	Groups      []ec2Pair    `xml:"groups>item"`
	IPv4        []ec2Range   `xml:"ipRanges>item"`
	IPv6        []ec2Range6  `xml:"ipv6Ranges>item"`
	PrefixLists []ec2PrefixL `xml:"prefixListIds>item"`
}

type ec2Pair struct {
	UserID      string `xml:"userId"`
	GroupID     string `xml:"groupId"`
	Description string `xml:"description,omitempty"`
}

type ec2Range struct {
	CIDR        string `xml:"cidrIp"`
	Description string `xml:"description,omitempty"`
}

type ec2Range6 struct {
	CIDR        string `xml:"cidrIpv6"`
	Description string `xml:"description,omitempty"`
}

type ec2PrefixL struct {
	ID          string `xml:"prefixListId"`
	Description string `xml:"description,omitempty"`
}

// ec2SGRule is a SecurityGroupRule (DescribeSecurityGroupRules, Authorize*).
type ec2SGRule struct {
	ID          string        `xml:"securityGroupRuleId"`
	GroupID     string        `xml:"groupId"`
	OwnerID     string        `xml:"groupOwnerId"`
	IsEgress    bool          `xml:"isEgress"`
	Protocol    string        `xml:"ipProtocol"`
	FromPort    int           `xml:"fromPort"`
	ToPort      int           `xml:"toPort"`
	CIDRv4      string        `xml:"cidrIpv4,omitempty"`
	CIDRv6      string        `xml:"cidrIpv6,omitempty"`
	PrefixList  string        `xml:"prefixListId,omitempty"`
	Referenced  *ec2RefGroup  `xml:"referencedGroupInfo,omitempty"`
	Description string        `xml:"description,omitempty"`
	ARN         string        `xml:"securityGroupRuleArn"`
	Tags        []ec2TagEntry `xml:"tagSet>item"`
}

type ec2RefGroup struct {
	GroupID string `xml:"groupId"`
	UserID  string `xml:"userId"`
}

// ec2Proto normalizes a protocol name or number the way EC2 stores it.
func ec2Proto(p string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(p)) {
	case "tcp", "6":
		return "tcp", true
	case "udp", "17":
		return "udp", true
	case "icmp", "1":
		return "icmp", true
	case "icmpv6", "58":
		return "icmpv6", true
	case "-1", "all":
		return "-1", true
	}
	if n, err := strconv.Atoi(p); err == nil && n >= 0 && n <= 255 {
		return strconv.Itoa(n), true
	}
	return "", false
}

// ec2HasPorts says whether a protocol carries ports (tcp, udp) or types and codes (icmp);
// other protocols are shown without any.
func ec2HasPorts(proto string) bool {
	return proto == "tcp" || proto == "udp" || proto == "icmp" || proto == "icmpv6"
}

// ec2Norm returns r as EC2 would store it: protocol name, and -1 ports for protocols
// without ports.
func ec2Norm(r Rule) Rule {
	if p, ok := ec2Proto(r.Protocol); ok {
		r.Protocol = p
	}
	if !ec2HasPorts(r.Protocol) {
		r.FromPort, r.ToPort = -1, -1
	}
	r.CIDR = strings.ToLower(r.CIDR)
	return r
}

// ec2Key identifies a rule regardless of its description: two rules with the same key
// are duplicates.
func ec2Key(r Rule) string {
	r = ec2Norm(r)
	return fmt.Sprintf("%s/%d/%d/%s/%s", r.Protocol, r.FromPort, r.ToPort, r.CIDR, r.SourceGroup)
}

// ec2RuleID is a rule's stable security-group-rule id, derived from what it allows.
func ec2RuleID(groupID string, egress bool, r Rule) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("%s|%t|%s", groupID, egress, ec2Key(r))))
	return "sgr-" + hex.EncodeToString(sum[:])[:17]
}

// ec2Perms aggregates per-peer rules into IpPermissions, one per protocol and port range,
// in the order their first rule appears.
func ec2Perms(rules []Rule, owner string) []ec2Perm {
	var out []ec2Perm
	idx := map[string]int{}
	for _, r := range rules {
		r = ec2Norm(r)
		k := fmt.Sprintf("%s/%d/%d", r.Protocol, r.FromPort, r.ToPort)
		i, ok := idx[k]
		if !ok {
			p := ec2Perm{Protocol: r.Protocol}
			if ec2HasPorts(r.Protocol) {
				from, to := r.FromPort, r.ToPort
				p.FromPort, p.ToPort = &from, &to
			}
			out = append(out, p)
			i = len(out) - 1
			idx[k] = i
		}
		p := &out[i]
		switch {
		case strings.HasPrefix(r.SourceGroup, "pl-"):
			p.PrefixLists = append(p.PrefixLists, ec2PrefixL{ID: r.SourceGroup, Description: r.Description})
		case r.SourceGroup != "":
			p.Groups = append(p.Groups, ec2Pair{UserID: owner, GroupID: r.SourceGroup, Description: r.Description})
		case strings.Contains(r.CIDR, ":"):
			p.IPv6 = append(p.IPv6, ec2Range6{CIDR: r.CIDR, Description: r.Description})
		default:
			p.IPv4 = append(p.IPv4, ec2Range{CIDR: r.CIDR, Description: r.Description})
		}
	}
	return out
}

// ec2RuleOut renders one stored rule as a SecurityGroupRule.
func ec2RuleOut(a *Account, g *SecurityGroup, egress bool, r Rule) ec2SGRule {
	r = ec2Norm(r)
	id := ec2RuleID(g.ID, egress, r)
	out := ec2SGRule{ID: id, GroupID: g.ID, OwnerID: a.ID, IsEgress: egress, Protocol: r.Protocol,
		FromPort: r.FromPort, ToPort: r.ToPort, Description: r.Description,
		ARN: "arn:aws:ec2:" + g.Region + ":" + a.ID + ":security-group-rule/" + id}
	switch {
	case strings.HasPrefix(r.SourceGroup, "pl-"):
		out.PrefixList = r.SourceGroup
	case r.SourceGroup != "":
		out.Referenced = &ec2RefGroup{GroupID: r.SourceGroup, UserID: a.ID}
	case strings.Contains(r.CIDR, ":"):
		out.CIDRv6 = r.CIDR
	default:
		out.CIDRv4 = r.CIDR
	}
	return out
}

// ec2RuleText describes a rule the way EC2's error messages do.
func ec2RuleText(r Rule) string {
	peer := r.CIDR
	if r.SourceGroup != "" {
		peer = r.SourceGroup
	}
	proto := strings.ToUpper(r.Protocol)
	if r.Protocol == "-1" {
		proto = "ALL"
	}
	if !ec2HasPorts(r.Protocol) {
		return fmt.Sprintf("peer: %s, %s, ALLOW", peer, proto)
	}
	return fmt.Sprintf("peer: %s, %s, from port: %d, to port: %d, ALLOW", peer, proto, r.FromPort, r.ToPort)
}

// ec2ParsePerms reads IpPermissions.N.* (and the legacy top-level IpProtocol, FromPort,
// ToPort, CidrIp) into per-peer rules. resolve maps a referenced group name or id to the
// group id; it reports groups that do not exist.
func ec2ParsePerms(form url.Values, resolve func(id, name string) (string, error)) ([]Rule, error) {
	perms := ec2Members(form, "IpPermissions")
	if form.Get("IpProtocol") != "" || form.Get("CidrIp") != "" || form.Get("SourceSecurityGroupName") != "" {
		legacy := url.Values{}
		for _, k := range []string{"IpProtocol", "FromPort", "ToPort"} {
			if v := form.Get(k); v != "" {
				legacy.Set(k, v)
			}
		}
		if v := form.Get("CidrIp"); v != "" {
			legacy.Set("IpRanges.1.CidrIp", v)
		}
		if v := form.Get("SourceSecurityGroupName"); v != "" {
			legacy.Set("Groups.1.GroupName", v)
			if legacy.Get("IpProtocol") == "" {
				legacy.Set("IpProtocol", "-1")
			}
		}
		perms = append(perms, legacy)
	}
	var rules []Rule
	for _, p := range perms {
		proto, ok := ec2Proto(p.Get("IpProtocol"))
		if !ok {
			if p.Get("IpProtocol") == "" {
				return nil, errf(kindInvalid, "MissingParameter", "The request must contain the parameter ipProtocol")
			}
			return nil, errf(kindInvalid, "InvalidParameterValue", "Invalid value '%s' for IP protocol. Unknown protocol.", p.Get("IpProtocol"))
		}
		from, to, err := ec2Ports(proto, p.Get("FromPort"), p.Get("ToPort"))
		if err != nil {
			return nil, err
		}
		base := Rule{Protocol: proto, FromPort: from, ToPort: to}
		n := len(rules)
		for _, m := range ec2Members(p, "IpRanges") {
			cidr := m.Get("CidrIp")
			if ip, _, err := net.ParseCIDR(cidr); err != nil || ip.To4() == nil {
				return nil, errf(kindInvalid, "InvalidParameterValue", "CIDR block %s is malformed", cidr)
			}
			r := base
			r.CIDR, r.Description = cidr, m.Get("Description")
			rules = append(rules, r)
		}
		for _, m := range ec2Members(p, "Ipv6Ranges") {
			cidr := m.Get("CidrIpv6")
			if ip, _, err := net.ParseCIDR(cidr); err != nil || ip.To4() != nil {
				return nil, errf(kindInvalid, "InvalidParameterValue", "CIDR block %s is malformed", cidr)
			}
			r := base
			r.CIDR, r.Description = strings.ToLower(cidr), m.Get("Description")
			rules = append(rules, r)
		}
		for _, m := range ec2Members(p, "PrefixListIds") {
			id := m.Get("PrefixListId")
			if !strings.HasPrefix(id, "pl-") {
				return nil, errf(kindInvalid, "InvalidPrefixListId.Malformed", "The prefix list ID '%s' is malformed", id)
			}
			r := base
			r.SourceGroup, r.Description = id, m.Get("Description")
			rules = append(rules, r)
		}
		for _, m := range ec2Members(p, "Groups") {
			id, err := resolve(m.Get("GroupId"), m.Get("GroupName"))
			if err != nil {
				return nil, err
			}
			r := base
			r.SourceGroup, r.Description = id, m.Get("Description")
			rules = append(rules, r)
		}
		if len(rules) == n {
			return nil, errf(kindInvalid, "InvalidParameterValue", "The request must specify a CIDR range, a prefix list or a security group for each IP permission")
		}
	}
	return rules, nil
}

// ec2Ports validates the port range (or ICMP type and code) of one permission.
func ec2Ports(proto, fromS, toS string) (from, to int, err error) {
	if !ec2HasPorts(proto) {
		return -1, -1, nil
	}
	parse := func(name, v string) (int, error) {
		if v == "" {
			if proto == "icmp" || proto == "icmpv6" {
				return -1, nil
			}
			return 0, errf(kindInvalid, "InvalidParameterValue", "Invalid value for portRange. Must specify both from and to ports with TCP/UDP.")
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, errf(kindInvalid, "InvalidParameterValue", "Invalid value '%s' for %s", v, name)
		}
		return n, nil
	}
	if from, err = parse("fromPort", fromS); err != nil {
		return 0, 0, err
	}
	if to, err = parse("toPort", toS); err != nil {
		return 0, 0, err
	}
	switch proto {
	case "tcp", "udp":
		if from < 0 || to > 65535 || from > to {
			return 0, 0, errf(kindInvalid, "InvalidParameterValue", "Invalid TCP/UDP port range %d-%d", from, to)
		}
	default:
		if from < -1 || from > 255 || to < -1 || to > 255 {
			return 0, 0, errf(kindInvalid, "InvalidParameterValue", "Invalid ICMP type %d or code %d", from, to)
		}
	}
	return from, to, nil
}

// ec2MaxRules is the default quota of rules per direction of one security group.
const ec2MaxRules = 60

type ec2AuthorizeResult struct {
	Return bool        `xml:"return"`
	Rules  []ec2SGRule `xml:"securityGroupRuleSet>item"`
}

// ec2Authorize adds ingress or egress rules: all of them, or none when one is invalid or
// already exists.
func (s *Sim) ec2Authorize(egress bool) queryHandler {
	return func(c *call, form url.Values) (any, error) {
		a, g, err := s.ec2RuleTarget(c, form, egress)
		if err != nil {
			return nil, err
		}
		rules, err := ec2ParsePerms(form, s.ec2Resolver(a, c.Region, g.VPC))
		if err != nil {
			return nil, err
		}
		if err := ec2DryRun(form); err != nil {
			return nil, err
		}
		list := &g.Ingress
		if egress {
			list = &g.Egress
		}
		have := map[string]bool{}
		for _, r := range *list {
			have[ec2Key(r)] = true
		}
		for _, r := range rules {
			if have[ec2Key(r)] {
				return nil, errf(kindInvalid, "InvalidPermission.Duplicate", "the specified rule %q already exists", ec2RuleText(r))
			}
			have[ec2Key(r)] = true
		}
		if len(*list)+len(rules) > ec2MaxRules {
			return nil, errf(kindInvalid, "RulesPerSecurityGroupLimitExceeded", "The maximum number of rules per security group has been reached.")
		}
		res := &ec2AuthorizeResult{Return: true}
		for _, r := range rules {
			*list = append(*list, r)
			res.Rules = append(res.Rules, ec2RuleOut(a, g, egress, r))
		}
		return res, nil
	}
}

type ec2RevokeResult struct {
	Return  bool         `xml:"return"`
	Unknown []ec2Perm    `xml:"unknownIpPermissionSet>item"`
	Revoked []ec2Revoked `xml:"revokedSecurityGroupRuleSet>item"`
}

type ec2Revoked struct {
	ID          string `xml:"securityGroupRuleId"`
	GroupID     string `xml:"groupId"`
	IsEgress    bool   `xml:"isEgress"`
	Protocol    string `xml:"ipProtocol"`
	FromPort    int    `xml:"fromPort"`
	ToPort      int    `xml:"toPort"`
	CIDRv4      string `xml:"cidrIpv4,omitempty"`
	CIDRv6      string `xml:"cidrIpv6,omitempty"`
	PrefixList  string `xml:"prefixListId,omitempty"`
	Referenced  string `xml:"referencedGroupId,omitempty"`
	Description string `xml:"description,omitempty"`
}

// ec2Revoke removes rules named by IpPermissions or SecurityGroupRuleId. When none of them
// exists the call fails with InvalidPermission.NotFound; when only some do, those are
// removed and the others are answered in unknownIpPermissionSet, as EC2 does.
func (s *Sim) ec2Revoke(egress bool) queryHandler {
	return func(c *call, form url.Values) (any, error) {
		a, g, err := s.ec2RuleTarget(c, form, egress)
		if err != nil {
			return nil, err
		}
		list := &g.Ingress
		if egress {
			list = &g.Egress
		}
		// A referenced group that no longer exists can still be revoked by its id.
		rules, err := ec2ParsePerms(form, func(id, name string) (string, error) {
			if id != "" {
				return id, nil
			}
			return s.ec2Resolver(a, c.Region, g.VPC)(id, name)
		})
		if err != nil {
			return nil, err
		}
		ids := ec2Strings(form, "SecurityGroupRuleId")
		if len(rules) == 0 && len(ids) == 0 {
			return nil, errf(kindInvalid, "MissingParameter", "Either IpPermissions or SecurityGroupRuleIds must be specified")
		}
		if err := ec2DryRun(form); err != nil {
			return nil, err
		}
		drop := map[string]bool{}
		var unknown []Rule
		for _, r := range rules {
			k := ec2Key(r)
			if !slices.ContainsFunc(*list, func(x Rule) bool { return ec2Key(x) == k }) {
				unknown = append(unknown, r)
				continue
			}
			drop[k] = true
		}
		for _, id := range ids {
			i := slices.IndexFunc(*list, func(x Rule) bool { return ec2RuleID(g.ID, egress, x) == id })
			if i < 0 {
				return nil, errf(kindNotFound, "InvalidSecurityGroupRuleId.NotFound", "The security group rule ID '%s' does not exist", id)
			}
			drop[ec2Key((*list)[i])] = true
		}
		if len(drop) == 0 {
			return nil, errf(kindNotFound, "InvalidPermission.NotFound", "The specified rule does not exist in this security group.")
		}
		res := &ec2RevokeResult{Return: true, Unknown: ec2Perms(unknown, a.ID)}
		kept := (*list)[:0]
		for _, r := range *list {
			if !drop[ec2Key(r)] {
				kept = append(kept, r)
				continue
			}
			o := ec2RuleOut(a, g, egress, r)
			ref := ""
			if o.Referenced != nil {
				ref = o.Referenced.GroupID
			}
			res.Revoked = append(res.Revoked, ec2Revoked{ID: o.ID, GroupID: g.ID, IsEgress: egress, Protocol: o.Protocol,
				FromPort: o.FromPort, ToPort: o.ToPort, CIDRv4: o.CIDRv4, CIDRv6: o.CIDRv6, PrefixList: o.PrefixList,
				Referenced: ref, Description: o.Description})
		}
		*list = kept
		return res, nil
	}
}

// ec2RuleTarget finds the group an Authorize or Revoke call changes: GroupId, or for
// ingress also GroupName.
func (s *Sim) ec2RuleTarget(c *call, form url.Values, egress bool) (*Account, *SecurityGroup, error) {
	a, err := s.ec2Account(c)
	if err != nil {
		return nil, nil, err
	}
	id, name := form.Get("GroupId"), form.Get("GroupName")
	if egress {
		name = ""
	}
	g, err := s.ec2Find(a, c.Region, id, name)
	if err != nil {
		return nil, nil, err
	}
	return a, g, nil
}

// ec2Resolver resolves the security groups a permission references, by id or by name in
// vpc. Groups of other accounts are taken on trust.
func (s *Sim) ec2Resolver(a *Account, region, vpc string) func(id, name string) (string, error) {
	return func(id, name string) (string, error) {
		if id == "" && name == "" {
			return "", errf(kindInvalid, "MissingParameter", "The request must contain the parameter groupId or groupName for a referenced group")
		}
		if id != "" {
			if ec2Group(a, region, id) == nil {
				return "", errf(kindNotFound, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
			}
			return id, nil
		}
		for _, g := range a.SecurityGroups {
			if g.Region == region && g.Name == name && g.VPC == vpc {
				return g.ID, nil
			}
		}
		return "", errf(kindNotFound, "InvalidGroup.NotFound", "The security group '%s' does not exist in VPC '%s'", name, vpc)
	}
}

type ec2RulesResult struct {
	Rules     []ec2SGRule `xml:"securityGroupRuleSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

func (s *Sim) ec2DescribeSecurityGroupRules(c *call, form url.Values) (any, error) {
	a, err := s.ec2Account(c)
	if err != nil {
		return nil, err
	}
	filters, err := ec2Filters(form)
	if err != nil {
		return nil, err
	}
	ids := ec2Strings(form, "SecurityGroupRuleId")
	var all []ec2SGRule
	for _, g := range a.SecurityGroups {
		if g.Region != c.Region {
			continue
		}
		for _, dir := range []struct {
			egress bool
			rules  []Rule
		}{{false, g.Ingress}, {true, g.Egress}} {
			for _, r := range dir.rules {
				all = append(all, ec2RuleOut(a, g, dir.egress, r))
			}
		}
	}
	var matched []ec2SGRule
	for _, r := range all {
		if len(ids) > 0 && !slices.Contains(ids, r.ID) {
			continue
		}
		ok := true
		for _, f := range filters {
			switch f.Name {
			case "group-id":
				ok = ok && f.match(r.GroupID)
			case "security-group-rule-id":
				ok = ok && f.match(r.ID)
			default:
				return nil, errf(kindInvalid, "InvalidParameterValue", "The filter '%s' is invalid", f.Name)
			}
		}
		if ok {
			matched = append(matched, r)
		}
	}
	for _, id := range ids {
		if !slices.ContainsFunc(matched, func(r ec2SGRule) bool { return r.ID == id }) {
			return nil, errf(kindNotFound, "InvalidSecurityGroupRuleId.NotFound", "The security group rule ID '%s' does not exist", id)
		}
	}
	start, end, next, err := ec2Page(len(matched), form)
	if err != nil {
		return nil, err
	}
	return &ec2RulesResult{Rules: matched[start:end], NextToken: next}, nil
}
