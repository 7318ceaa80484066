package cloudsim

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// eniTestWorld is ec2TestWorld with interfaces of every kind on sg-0a1b, one instance's on
// both of us-east-1's groups, and one in eu-west-1.
func eniTestWorld() *World {
	w := ec2TestWorld()
	a := w.AWS.Accounts[0]
	a.NetworkInterfaces = []*NetworkInterface{
		{ID: "eni-01", Region: "us-east-1", Groups: []string{"sg-0a1b", "sg-0c0d"}, AttachedTo: "i-0123"},
		{ID: "eni-02", Region: "us-east-1", Groups: []string{"sg-0a1b"}, Kind: "lambda", AttachedTo: "orders-api"},
		{ID: "eni-03", Region: "us-east-1", Groups: []string{"sg-0a1b"}, Kind: "elb", AttachedTo: "web-alb/50dc6c495c0c9188"},
		{ID: "eni-04", Region: "us-east-1", Groups: []string{"sg-0a1b"}, Kind: "nlb", AttachedTo: "edge/1f2e3d"},
		{ID: "eni-05", Region: "us-east-1", Groups: []string{"sg-0a1b"}, Kind: "rds", AttachedTo: "orders-db"},
		{ID: "eni-06", Region: "us-east-1", Groups: []string{"sg-0a1b"}, Kind: "nat_gateway", AttachedTo: "nat-0abc"},
		{ID: "eni-09", Region: "us-east-1", Groups: []string{"sg-0a1b"}, Kind: "elasticache", AttachedTo: "sessions-001"},
		{ID: "eni-07", Region: "us-east-1", Groups: []string{"sg-0a1b"}, Kind: "vpc_endpoint", AttachedTo: "vpce-0abc"},
		{ID: "eni-08", Region: "us-east-1", Groups: []string{"sg-0a1b"}, Kind: "detached"},
		{Region: "eu-west-1", Groups: []string{"sg-0e0f"}},
	}
	return w
}

// TestEC2DescribeNetworkInterfaces_rendersEachKindAsAWS: each kind of interface reads, through
// the SDK, as AWS shows it: the type, requester and attachment a reader tells it by.
func TestEC2DescribeNetworkInterfaces_rendersEachKindAsAWS(t *testing.T) {
	_, cfg := sdkSim(t, eniTestWorld(), Options{})
	ctx := context.Background()
	client := ec2.NewFromConfig(cfg)
	var all []ec2types.NetworkInterface
	for p := ec2.NewDescribeNetworkInterfacesPaginator(client, &ec2.DescribeNetworkInterfacesInput{MaxResults: aws.Int32(5)}); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, out.NetworkInterfaces...)
	}
	if len(all) != 9 {
		t.Fatalf("us-east-1 has %d interfaces over its pages, want 9", len(all))
	}
	type shape struct {
		typ, requester, instance, owner, status string
		managed                                 bool
	}
	want := map[string]shape{
		"eni-01": {"interface", "", "i-0123", "111111111111", "in-use", false},
		"eni-02": {"lambda", "", "", "amazon-aws", "in-use", true},
		"eni-03": {"interface", "amazon-elb", "", "amazon-elb", "in-use", true},
		"eni-04": {"network_load_balancer", "amazon-elb", "", "amazon-elb", "in-use", true},
		"eni-05": {"interface", "amazon-rds", "", "amazon-rds", "in-use", true},
		"eni-06": {"nat_gateway", "amazon-aws", "", "amazon-aws", "in-use", true},
		"eni-07": {"vpc_endpoint", "amazon-aws", "", "amazon-aws", "in-use", true},
		"eni-08": {"interface", "", "", "", "available", false},
		"eni-09": {"interface", "amazon-elasticache", "", "amazon-elasticache", "in-use", true},
	}
	for _, n := range all {
		id := aws.ToString(n.NetworkInterfaceId)
		got := shape{typ: string(n.InterfaceType), status: string(n.Status), managed: aws.ToBool(n.RequesterManaged)}
		got.requester = aws.ToString(n.RequesterId)
		if id == "eni-02" {
			if !strings.HasSuffix(got.requester, ":orders-api") {
				t.Errorf("%s: requester %q, want the function's role session", id, got.requester)
			}
			got.requester = ""
		}
		if n.Attachment != nil {
			got.instance, got.owner = aws.ToString(n.Attachment.InstanceId), aws.ToString(n.Attachment.InstanceOwnerId)
		}
		if got != want[id] {
			t.Errorf("%s: %+v, want %+v", id, got, want[id])
		}
		if len(n.Groups) == 0 || aws.ToString(n.Groups[0].GroupId) != "sg-0a1b" || aws.ToString(n.Groups[0].GroupName) != "web" {
			t.Errorf("%s: groups %+v, want sg-0a1b (web) first", id, n.Groups)
		}
	}
}

func TestEC2DescribeNetworkInterfaces_filtersAndRegions(t *testing.T) {
	_, cfg := sdkSim(t, eniTestWorld(), Options{})
	ctx := context.Background()
	east := ec2.NewFromConfig(cfg)
	ids := func(out *ec2.DescribeNetworkInterfacesOutput) []string {
		var s []string
		for _, n := range out.NetworkInterfaces {
			s = append(s, aws.ToString(n.NetworkInterfaceId))
		}
		return s
	}
	out, err := east.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{
		Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: []string{"sg-0c0d"}}}})
	if err != nil || !slices.Equal(ids(out), []string{"eni-01"}) {
		t.Errorf("group-id sg-0c0d: %v %v", err, ids(out))
	}
	out, err = east.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{
		Filters: []ec2types.Filter{{Name: aws.String("interface-type"), Values: []string{"lambda", "nat_gateway"}}}})
	if err != nil || !slices.Equal(ids(out), []string{"eni-02", "eni-06"}) {
		t.Errorf("interface-type: %v %v", err, ids(out))
	}
	west := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Region = "eu-west-1" })
	out, err = west.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{})
	if err != nil || len(out.NetworkInterfaces) != 1 || !strings.HasPrefix(ids(out)[0], "eni-") ||
		!strings.HasPrefix(aws.ToString(out.NetworkInterfaces[0].Attachment.InstanceId), "i-") {
		t.Errorf("eu-west-1 (derived id and instance): %v %+v", err, out)
	}
	if _, err := east.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{
		Filters: []ec2types.Filter{{Name: aws.String("no-such-filter"), Values: []string{"x"}}}}); sdkErrCode(err) != "InvalidParameterValue" {
		t.Errorf("unknown filter: %v", err)
	}
	if _, err := east.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{"eni-99"}}); sdkErrCode(err) != "InvalidNetworkInterfaceID.NotFound" {
		t.Errorf("unknown id: %v", err)
	}
	// A group in use cannot be deleted; AWS names the dependency.
	if _, err := east.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String("sg-0c0d")}); sdkErrCode(err) != "DependencyViolation" {
		t.Errorf("delete a group in use: %v", err)
	}
}

func TestWorld_rejectsInterfaceOnUnknownGroup(t *testing.T) {
	w := eniTestWorld()
	w.AWS.Accounts[0].NetworkInterfaces[0].Groups = []string{"sg-0e0f"} // eu-west-1's
	if err := w.validate(); err == nil || !strings.Contains(err.Error(), "sg-0e0f is not one of the account's in us-east-1") {
		t.Errorf("validate: %v", err)
	}
}
