package cloudsim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
)

// startSim serves a simulator over w on a loopback port until the test ends. (Tests
// outside this package use simtest, which imports it.)
func startSim(t *testing.T, w *World, opts Options) (*Sim, *Server) {
	t.Helper()
	sim, err := New(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return sim, srv
}

// sdkSim serves w on a loopback port and returns an AWS SDK configuration that talks to it.
func sdkSim(t *testing.T, w *World, opts Options) (*Sim, aws.Config) {
	t.Helper()
	sim, srv := startSim(t, w, opts)
	return sim, aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSIM", "secret", "")}
}

// sdkErrCode is the AWS error code of an SDK error, or "" for none.
func sdkErrCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return "not an API error: " + err.Error()
	}
	return ""
}

func ec2TestWorld() *World {
	return &World{AWS: AWS{Accounts: []*Account{{
		ID: "111111111111", Regions: []string{"us-east-1", "eu-west-1"},
		SecurityGroups: []*SecurityGroup{
			{ID: "sg-0a1b", Name: "web", Region: "us-east-1", Description: "web tier",
				Ingress: []Rule{
					{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "0.0.0.0/0", Description: "https"},
					{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "10.0.0.0/8", Description: "ssh"},
					{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "::/0"},
					{Protocol: "tcp", FromPort: 22, ToPort: 22, SourceGroup: "sg-0c0d"},
					{Protocol: "tcp", FromPort: 443, ToPort: 443, SourceGroup: "pl-1234"},
				},
				Egress: []Rule{{Protocol: "-1", FromPort: -1, ToPort: -1, CIDR: "0.0.0.0/0"}},
				Tags:   map[string]string{"team": "platform"}},
			{ID: "sg-0c0d", Name: "bastion", Region: "us-east-1", Description: "bastion hosts", VPC: "vpc-other"},
			{ID: "sg-0e0f", Name: "web", Region: "eu-west-1", Description: "web tier eu"},
		},
	}}}}
}

func TestEC2DescribeRegions(t *testing.T) {
	_, cfg := sdkSim(t, ec2TestWorld(), Options{})
	ctx := context.Background()
	tests := []struct {
		name   string
		region string
		in     ec2.DescribeRegionsInput
		want   []string
		code   string
	}{
		{"enabled", "us-east-1", ec2.DescribeRegionsInput{}, []string{"us-east-1", "eu-west-1"}, ""},
		{"by name", "eu-west-1", ec2.DescribeRegionsInput{RegionNames: []string{"eu-west-1"}}, []string{"eu-west-1"}, ""},
		{"filter", "us-east-1", ec2.DescribeRegionsInput{Filters: []ec2types.Filter{{Name: aws.String("region-name"), Values: []string{"eu-*"}}}}, []string{"eu-west-1"}, ""},
		{"disabled region", "ap-south-2", ec2.DescribeRegionsInput{}, nil, "AuthFailure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Region = tc.region })
			out, err := client.DescribeRegions(ctx, &tc.in)
			if got := sdkErrCode(err); got != tc.code {
				t.Fatalf("error code %q, want %q", got, tc.code)
			}
			if err != nil {
				return
			}
			var names []string
			for _, r := range out.Regions {
				names = append(names, aws.ToString(r.RegionName))
				if aws.ToString(r.Endpoint) != "ec2."+aws.ToString(r.RegionName)+".amazonaws.com" || aws.ToString(r.OptInStatus) != "opt-in-not-required" {
					t.Errorf("region %+v", r)
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("regions %v, want %v", names, tc.want)
			}
		})
	}
	all, err := ec2.NewFromConfig(cfg).DescribeRegions(ctx, &ec2.DescribeRegionsInput{AllRegions: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	optIn := map[string]string{}
	for _, r := range all.Regions {
		optIn[aws.ToString(r.RegionName)] = aws.ToString(r.OptInStatus)
	}
	if optIn["ap-south-2"] != "not-opted-in" || optIn["eu-west-1"] != "opt-in-not-required" {
		t.Errorf("all regions: %v", optIn)
	}
}

func TestEC2DescribeSecurityGroups(t *testing.T) {
	_, cfg := sdkSim(t, ec2TestWorld(), Options{})
	client := ec2.NewFromConfig(cfg)
	ctx := context.Background()
	filter := func(name string, vals ...string) []ec2types.Filter {
		return []ec2types.Filter{{Name: aws.String(name), Values: vals}}
	}
	tests := []struct {
		name string
		in   ec2.DescribeSecurityGroupsInput
		want []string
		code string
	}{
		{"all in region", ec2.DescribeSecurityGroupsInput{}, []string{"sg-0a1b", "sg-0c0d"}, ""},
		{"by id", ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0c0d"}}, []string{"sg-0c0d"}, ""},
		{"by name", ec2.DescribeSecurityGroupsInput{GroupNames: []string{"web"}}, []string{"sg-0a1b"}, ""},
		{"group-name glob", ec2.DescribeSecurityGroupsInput{Filters: filter("group-name", "bas*", "nope")}, []string{"sg-0c0d"}, ""},
		{"group-id", ec2.DescribeSecurityGroupsInput{Filters: filter("group-id", "sg-0a1b")}, []string{"sg-0a1b"}, ""},
		{"vpc-id", ec2.DescribeSecurityGroupsInput{Filters: filter("vpc-id", "vpc-other")}, []string{"sg-0c0d"}, ""},
		{"open cidr", ec2.DescribeSecurityGroupsInput{Filters: filter("ip-permission.cidr", "0.0.0.0/0")}, []string{"sg-0a1b"}, ""},
		{"tag", ec2.DescribeSecurityGroupsInput{Filters: filter("tag:team", "platform")}, []string{"sg-0a1b"}, ""},
		{"other region's id", ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0e0f"}}, nil, "InvalidGroup.NotFound"},
		{"unknown id", ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0a1b", "sg-404"}}, nil, "InvalidGroup.NotFound"},
		{"malformed id", ec2.DescribeSecurityGroupsInput{GroupIds: []string{"web"}}, nil, "InvalidGroupId.Malformed"},
		{"unknown filter", ec2.DescribeSecurityGroupsInput{Filters: filter("colour", "red")}, nil, "InvalidParameterValue"},
		{"page too small", ec2.DescribeSecurityGroupsInput{MaxResults: aws.Int32(4)}, nil, "InvalidParameterValue"},
		{"ids with pages", ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0a1b"}, MaxResults: aws.Int32(5)}, nil, "InvalidParameterCombination"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := client.DescribeSecurityGroups(ctx, &tc.in)
			if got := sdkErrCode(err); got != tc.code {
				t.Fatalf("error code %q, want %q", got, tc.code)
			}
			if err != nil {
				return
			}
			var ids []string
			for _, g := range out.SecurityGroups {
				ids = append(ids, aws.ToString(g.GroupId))
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("groups %v, want %v", ids, tc.want)
			}
		})
	}

	// Rules of one protocol and port range come back as one IpPermission.
	out, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0a1b"}})
	if err != nil {
		t.Fatal(err)
	}
	g := out.SecurityGroups[0]
	if aws.ToString(g.OwnerId) != "111111111111" || aws.ToString(g.GroupName) != "web" || aws.ToString(g.Description) != "web tier" ||
		aws.ToString(g.SecurityGroupArn) != "arn:aws:ec2:us-east-1:111111111111:security-group/sg-0a1b" || aws.ToString(g.VpcId) == "" {
		t.Errorf("group %+v", g)
	}
	if len(g.Tags) != 1 || aws.ToString(g.Tags[0].Key) != "team" || aws.ToString(g.Tags[0].Value) != "platform" {
		t.Errorf("tags %+v", g.Tags)
	}
	if got, want := permSummary(g.IpPermissions), []string{
		"tcp 443-443 v4=[0.0.0.0/0:https] v6=[::/0] groups=[] pl=[pl-1234]",
		"tcp 22-22 v4=[10.0.0.0/8:ssh] v6=[] groups=[sg-0c0d@111111111111] pl=[]",
	}; !slices.Equal(got, want) {
		t.Errorf("ingress\n got %q\nwant %q", got, want)
	}
	if got, want := permSummary(g.IpPermissionsEgress), []string{"-1 nil v4=[0.0.0.0/0] v6=[] groups=[] pl=[]"}; !slices.Equal(got, want) {
		t.Errorf("egress %q, want %q", got, want)
	}
}

// permSummary writes IpPermissions compactly for comparison.
func permSummary(perms []ec2types.IpPermission) []string {
	var out []string
	for _, p := range perms {
		ports := "nil"
		if p.FromPort != nil || p.ToPort != nil {
			ports = fmt.Sprintf("%d-%d", aws.ToInt32(p.FromPort), aws.ToInt32(p.ToPort))
		}
		var v4, v6, groups, pls []string
		for _, r := range p.IpRanges {
			s := aws.ToString(r.CidrIp)
			if r.Description != nil {
				s += ":" + *r.Description
			}
			v4 = append(v4, s)
		}
		for _, r := range p.Ipv6Ranges {
			v6 = append(v6, aws.ToString(r.CidrIpv6))
		}
		for _, r := range p.UserIdGroupPairs {
			groups = append(groups, aws.ToString(r.GroupId)+"@"+aws.ToString(r.UserId))
		}
		for _, r := range p.PrefixListIds {
			pls = append(pls, aws.ToString(r.PrefixListId))
		}
		out = append(out, fmt.Sprintf("%s %s v4=%v v6=%v groups=%v pl=%v", aws.ToString(p.IpProtocol), ports, v4, v6, groups, pls))
	}
	return out
}

func TestEC2Pagination(t *testing.T) {
	w := ec2TestWorld()
	a := w.AWS.Accounts[0]
	for i := range 12 {
		a.SecurityGroups = append(a.SecurityGroups, &SecurityGroup{ID: fmt.Sprintf("sg-%04d", i), Name: fmt.Sprintf("g%d", i), Region: "us-east-1",
			Ingress: []Rule{{Protocol: "tcp", FromPort: 80, ToPort: 80, CIDR: "0.0.0.0/0"}}})
	}
	_, cfg := sdkSim(t, w, Options{})
	client := ec2.NewFromConfig(cfg)
	ctx := context.Background()

	var sizes []int
	seen := map[string]bool{}
	p := ec2.NewDescribeSecurityGroupsPaginator(client, &ec2.DescribeSecurityGroupsInput{MaxResults: aws.Int32(5)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.SecurityGroups))
		for _, g := range page.SecurityGroups {
			if seen[aws.ToString(g.GroupId)] {
				t.Errorf("%s twice", aws.ToString(g.GroupId))
			}
			seen[aws.ToString(g.GroupId)] = true
		}
	}
	if !slices.Equal(sizes, []int{5, 5, 4}) || len(seen) != 14 {
		t.Errorf("pages %v, %d groups", sizes, len(seen))
	}

	// 5 + 1 + 1 + 12 rules in us-east-1, five a page.
	sizes = nil
	rp := ec2.NewDescribeSecurityGroupRulesPaginator(client, &ec2.DescribeSecurityGroupRulesInput{MaxResults: aws.Int32(5)})
	for rp.HasMorePages() {
		page, err := rp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.SecurityGroupRules))
	}
	if !slices.Equal(sizes, []int{5, 5, 5, 3}) {
		t.Errorf("rule pages %v", sizes)
	}
	_, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{MaxResults: aws.Int32(5), NextToken: aws.String("garbage!")})
	if got := sdkErrCode(err); got != "InvalidPaginationToken" {
		t.Errorf("bad token: %q", got)
	}
}

func TestEC2SecurityGroupLifecycle(t *testing.T) {
	sim, cfg := sdkSim(t, ec2TestWorld(), Options{})
	client := ec2.NewFromConfig(cfg)
	ctx := context.Background()

	created, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("api"), Description: aws.String("api tier"),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup, Tags: []ec2types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(created.GroupId)
	if len(id) != 20 || aws.ToString(created.SecurityGroupArn) != "arn:aws:ec2:us-east-1:111111111111:security-group/"+id || len(created.Tags) != 1 {
		t.Fatalf("created %+v", created)
	}
	_, err = client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("api"), Description: aws.String("again")})
	if got := sdkErrCode(err); got != "InvalidGroup.Duplicate" {
		t.Errorf("duplicate group: %q", got)
	}

	// One permission with four peers is stored as four rules.
	perm := ec2types.IpPermission{IpProtocol: aws.String("6"), FromPort: aws.Int32(8080), ToPort: aws.Int32(8081),
		IpRanges:         []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0"), Description: aws.String("world")}, {CidrIp: aws.String("192.168.0.0/16")}},
		Ipv6Ranges:       []ec2types.Ipv6Range{{CidrIpv6: aws.String("2001:DB8::/32")}},
		UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String("sg-0a1b")}}}
	auth, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{perm}})
	if err != nil {
		t.Fatal(err)
	}
	if !aws.ToBool(auth.Return) || len(auth.SecurityGroupRules) != 4 || aws.ToString(auth.SecurityGroupRules[0].CidrIpv4) != "0.0.0.0/0" ||
		aws.ToString(auth.SecurityGroupRules[3].ReferencedGroupInfo.GroupId) != "sg-0a1b" {
		t.Errorf("authorize: %+v", auth)
	}
	sim.Do(func(w *World) {
		g := ec2Group(w.AWS.Accounts[0], "us-east-1", id)
		want := []Rule{
			{Protocol: "tcp", FromPort: 8080, ToPort: 8081, CIDR: "0.0.0.0/0", Description: "world"},
			{Protocol: "tcp", FromPort: 8080, ToPort: 8081, CIDR: "192.168.0.0/16"},
			{Protocol: "tcp", FromPort: 8080, ToPort: 8081, CIDR: "2001:db8::/32"},
			{Protocol: "tcp", FromPort: 8080, ToPort: 8081, SourceGroup: "sg-0a1b"},
		}
		if !slices.Equal(g.Ingress, want) {
			t.Errorf("stored ingress %+v", g.Ingress)
		}
		if !slices.Equal(g.Egress, []Rule{{Protocol: "-1", FromPort: -1, ToPort: -1, CIDR: "0.0.0.0/0"}}) {
			t.Errorf("default egress %+v", g.Egress)
		}
	})

	errCases := []struct {
		name string
		call func() error
		code string
	}{
		{"duplicate rule", func() error {
			_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{
				{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(9000), ToPort: aws.Int32(9000), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.1.0.0/16")}}},
				{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(8080), ToPort: aws.Int32(8081), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}})
			return err
		}, "InvalidPermission.Duplicate"},
		{"bad cidr", func() error {
			_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{
				{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(1), ToPort: aws.Int32(2), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.1.0.0")}}}}})
			return err
		}, "InvalidParameterValue"},
		{"unknown peer group", func() error {
			_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{
				{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String("sg-404")}}}}})
			return err
		}, "InvalidGroup.NotFound"},
		{"unknown target", func() error {
			_, err := client.AuthorizeSecurityGroupEgress(ctx, &ec2.AuthorizeSecurityGroupEgressInput{GroupId: aws.String("sg-404"), IpPermissions: []ec2types.IpPermission{
				{IpProtocol: aws.String("-1"), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8")}}}}})
			return err
		}, "InvalidGroup.NotFound"},
		{"revoke absent", func() error {
			_, err := client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{
				{IpProtocol: aws.String("udp"), FromPort: aws.Int32(53), ToPort: aws.Int32(53), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}})
			return err
		}, "InvalidPermission.NotFound"},
		{"delete referenced", func() error {
			_, err := client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String("sg-0c0d")})
			return err
		}, "DependencyViolation"},
		{"dry run", func() error {
			_, err := client.CreateTags(ctx, &ec2.CreateTagsInput{DryRun: aws.Bool(true), Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("k")}}})
			return err
		}, "DryRunOperation"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sdkErrCode(tc.call()); got != tc.code {
				t.Errorf("error code %q, want %q", got, tc.code)
			}
		})
	}

	describe := func() ec2types.SecurityGroup {
		t.Helper()
		out, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		return out.SecurityGroups[0]
	}
	if got, want := permSummary(describe().IpPermissions), []string{
		"tcp 8080-8081 v4=[0.0.0.0/0:world 192.168.0.0/16] v6=[2001:db8::/32] groups=[sg-0a1b@111111111111] pl=[]",
	}; !slices.Equal(got, want) {
		t.Errorf("after authorize %q", got)
	}

	// Revoking one present and one absent peer removes the first and reports the second.
	rev, err := client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{
		{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(8080), ToPort: aws.Int32(8081),
			IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}, {CidrIp: aws.String("172.16.0.0/12")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !aws.ToBool(rev.Return) || len(rev.RevokedSecurityGroupRules) != 1 || len(rev.UnknownIpPermissions) != 1 ||
		aws.ToString(rev.UnknownIpPermissions[0].IpRanges[0].CidrIp) != "172.16.0.0/12" {
		t.Errorf("revoke: %+v", rev)
	}

	// Revoke by rule id, found through DescribeSecurityGroupRules.
	rules, err := client.DescribeSecurityGroupRules(ctx, &ec2.DescribeSecurityGroupRulesInput{Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: []string{id}}}})
	if err != nil {
		t.Fatal(err)
	}
	var v6Rule string
	for _, r := range rules.SecurityGroupRules {
		if aws.ToString(r.CidrIpv6) == "2001:db8::/32" {
			v6Rule = aws.ToString(r.SecurityGroupRuleId)
		}
	}
	if len(rules.SecurityGroupRules) != 4 || v6Rule == "" {
		t.Fatalf("rules: %d, v6 rule %q", len(rules.SecurityGroupRules), v6Rule)
	}
	if _, err := client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(id), SecurityGroupRuleIds: []string{v6Rule}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RevokeSecurityGroupEgress(ctx, &ec2.RevokeSecurityGroupEgressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{
		{IpProtocol: aws.String("-1"), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AuthorizeSecurityGroupEgress(ctx, &ec2.AuthorizeSecurityGroupEgressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{
		{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(443), ToPort: aws.Int32(443), PrefixListIds: []ec2types.PrefixListId{{PrefixListId: aws.String("pl-63a5400a")}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("owner"), Value: aws.String("sec")}}}); err != nil {
		t.Fatal(err)
	}
	g := describe()
	if got, want := permSummary(g.IpPermissions), []string{"tcp 8080-8081 v4=[192.168.0.0/16] v6=[] groups=[sg-0a1b@111111111111] pl=[]"}; !slices.Equal(got, want) {
		t.Errorf("ingress after revoke %q", got)
	}
	if got, want := permSummary(g.IpPermissionsEgress), []string{"tcp 443-443 v4=[] v6=[] groups=[] pl=[pl-63a5400a]"}; !slices.Equal(got, want) {
		t.Errorf("egress %q", got)
	}
	if len(g.Tags) != 2 || aws.ToString(g.Tags[1].Key) != "owner" {
		t.Errorf("tags %+v", g.Tags)
	}

	// The new group references sg-0a1b, so sg-0a1b cannot go; the new group can.
	if _, err := client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String("sg-0a1b")}); sdkErrCode(err) != "DependencyViolation" {
		t.Errorf("delete referenced: %v", err)
	}
	if _, err := client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}}); sdkErrCode(err) != "InvalidGroup.NotFound" {
		t.Errorf("deleted group: %v", err)
	}
}

func TestEC2Faults(t *testing.T) {
	sim, cfg := sdkSim(t, ec2TestWorld(), Options{})
	ctx := context.Background()
	if err := sim.SetFaults([]Fault{{Service: "ec2", Region: "us-east-1", AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	east := ec2.NewFromConfig(cfg)
	west := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Region = "eu-west-1" })
	if _, err := east.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); sdkErrCode(err) != "UnauthorizedOperation" {
		t.Errorf("us-east-1: %v", err)
	}
	out, err := west.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	if err != nil || len(out.SecurityGroups) != 1 || aws.ToString(out.SecurityGroups[0].GroupId) != "sg-0e0f" {
		t.Errorf("eu-west-1: %v %+v", err, out)
	}
	if st := sim.Calls()["ec2:DescribeSecurityGroups"]; st.Calls != 2 || st.AccessDenied != 1 {
		t.Errorf("call stats %+v", st)
	}

	if err := sim.SetFaults([]Fault{{Service: "ec2", ThrottleRate: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	once := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.RetryMaxAttempts = 1 })
	if _, err := once.DescribeRegions(ctx, &ec2.DescribeRegionsInput{}); sdkErrCode(err) != "RequestLimitExceeded" {
		t.Errorf("throttled: %v", err)
	}
}
