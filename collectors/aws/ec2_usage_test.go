package aws_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

const (
	sgDefault = "arn:aws:ec2:us-east-1:111111111111:security-group/sg-0000000000000001"
	sgSSH     = "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000002"
	sgNamed   = "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000003"
	sgUnused  = "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000004"
)

// groupUseWorld is one account whose eu-west-1 group "ssh" serves an instance (through two
// interfaces) and an interface of every other kind the simulator renders; "named" serves nothing but ssh's
// rules name it; "spare" serves nothing and nothing names it.
func groupUseWorld() *cloudsim.World {
	w := world()
	w.AWS.Organization = nil
	w.AWS.Accounts = w.AWS.Accounts[:1]
	a := w.AWS.Accounts[0]
	a.SecurityGroups = append(a.SecurityGroups,
		&cloudsim.SecurityGroup{ID: "sg-0000000000000003", Name: "named", Region: "eu-west-1", Description: "peers"},
		&cloudsim.SecurityGroup{ID: "sg-0000000000000004", Name: "spare", Region: "eu-west-1", Description: "left over"})
	a.SecurityGroups[1].Egress = []cloudsim.Rule{{Protocol: "tcp", FromPort: 5432, ToPort: 5432, SourceGroup: "sg-0000000000000003"}}
	a.NetworkInterfaces = []*cloudsim.NetworkInterface{
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, AttachedTo: "i-0aaa"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, AttachedTo: "i-0aaa"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, Kind: "lambda", AttachedTo: "orders"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, Kind: "elb", AttachedTo: "shop/1"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, Kind: "nlb", AttachedTo: "edge/2"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, Kind: "rds", AttachedTo: "orders-db"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, Kind: "elasticache", AttachedTo: "sessions-001"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, Kind: "nat_gateway", AttachedTo: "nat-0abc"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, Kind: "vpc_endpoint", AttachedTo: "vpce-0abc"},
		{Region: "eu-west-1", Groups: []string{"sg-0000000000000002"}, Kind: "detached"},
	}
	return w
}

// TestCollect_securityGroupUse: each group carries what uses it, from one read of its
// region's network interfaces, and, when nothing does, which groups name it.
func TestCollect_securityGroupUse(t *testing.T) {
	r, sim := collect(t, groupUseWorld(), awscollector.Config{})
	tests := []struct {
		uid      string
		attached bool
		att      string
		refs     string
	}{
		{sgSSH, true, `{"complete":true,"count":10,"error":"","kinds":{"detached":1,"ec2_instance":1,"elasticache":1,"elb":2,"lambda":1,"nat_gateway":1,"rds":1,"vpc_endpoint":1}}`, `null`},
		{sgNamed, false, `{"complete":true,"count":0,"error":"","kinds":{}}`, `["sg-0000000000000002"]`},
		{sgUnused, false, `{"complete":true,"count":0,"error":"","kinds":{}}`, `[]`},
		{sgDefault, false, `{"complete":true,"count":0,"error":"","kinds":{}}`, `[]`},
	}
	for _, tc := range tests {
		res, ok := r.byUID[tc.uid]
		if !ok {
			t.Fatalf("%s not collected", tc.uid)
		}
		if got := attr(t, res, "attached"); got != tc.attached {
			t.Errorf("%s: attached %v, want %v", tc.uid, got, tc.attached)
		}
		if got := jsonString(attr(t, res, "attachments")); got != tc.att {
			t.Errorf("%s: attachments %s, want %s", tc.uid, got, tc.att)
		}
		if got := jsonString(attr(t, res, "referenced_by")); got != tc.refs {
			t.Errorf("%s: referenced_by %s, want %s", tc.uid, got, tc.refs)
		}
	}
	// One read of each region's interfaces serves all its groups.
	if st := sim.Calls()["ec2:DescribeNetworkInterfaces"]; st.Calls != 2 {
		t.Errorf("DescribeNetworkInterfaces called %d times, want once per region (2)", st.Calls)
	}
}

// TestCollect_securityGroupUseDeniedIsUnknown: when the interfaces cannot be read, no group
// is said to be unattached: attached is left out and attachments says why; the groups
// themselves are read whole.
func TestCollect_securityGroupUseDeniedIsUnknown(t *testing.T) {
	w := groupUseWorld()
	w.Faults = []cloudsim.Fault{{Service: "ec2", Action: "DescribeNetworkInterfaces", Region: "eu-west-1", AccessDenied: true}}
	r, _ := collect(t, w, awscollector.Config{})
	for _, uid := range []string{sgSSH, sgNamed, sgUnused} {
		res := r.byUID[uid]
		if _, ok := res.Attributes["attached"]; ok {
			t.Errorf("%s: attached %v although the interfaces could not be read", uid, res.Attributes["attached"])
		}
		att, _ := attr(t, res, "attachments").(map[string]any)
		if att["complete"] != false || !strings.Contains(att["error"].(string), "ec2:DescribeNetworkInterfaces") {
			t.Errorf("%s: attachments %v, want incomplete with the denied call", uid, att)
		}
		if _, ok := att["count"]; ok {
			t.Errorf("%s: attachments counts %v interfaces it could not read", uid, att["count"])
		}
	}
	if s := r.scopes["aws/111111111111/ec2/eu-west-1"]; s.Status != snapshot.ScopeOK || s.Resources != 3 || s.AccessDenied != 1 {
		t.Errorf("scope %+v, want ok with its 3 groups and the one denied call", s)
	}
	if got := attr(t, r.byUID[sgDefault], "attached"); got != false {
		t.Errorf("the other region's group: attached %v, want false", got)
	}
}

// TestRead_securityGroupUse: a group read alone carries the same use as collected, and is
// unknown when its interfaces cannot be read.
func TestRead_securityGroupUse(t *testing.T) {
	sim, url := simtest.Start(t, groupUseWorld(), cloudsim.Options{})
	sdk := simtest.AWSConfig(url)
	c := awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0}})
	ctx := context.Background()
	if _, err := c.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	var sink collectors.MemorySink
	if err := c.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	collected := map[string]snapshot.Resource{}
	for _, r := range sink.Resources {
		collected[r.UID] = r
	}
	// A group in use: its own read and its interfaces'. One unused: also the groups that
	// name it, by their ingress and by their egress rules.
	for uid, groupCalls := range map[string]int{sgSSH: 1, sgNamed: 3, sgUnused: 3} {
		sim.ResetCalls()
		got, err := c.Read(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		if g, want := jsonOf(t, got), jsonOf(t, collected[uid]); g != want {
			t.Errorf("Read(%s):\nread    %s\ncollect %s", uid, g, want)
		}
		if a, b := sim.Calls()["ec2:DescribeSecurityGroups"].Calls, sim.Calls()["ec2:DescribeNetworkInterfaces"].Calls; a != groupCalls || b != 1 {
			t.Errorf("Read(%s): %d DescribeSecurityGroups and %d DescribeNetworkInterfaces, want %d and 1", uid, a, b, groupCalls)
		}
	}
	if err := sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Action: "DescribeNetworkInterfaces", AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := c.Read(ctx, sgUnused)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Attributes["attached"]; ok || attr(t, got, "attachments.complete") != false {
		t.Errorf("denied Read: attached %v, attachments %v", got.Attributes["attached"], got.Attributes["attachments"])
	}
	if _, ok := got.Attributes["referenced_by"]; ok {
		t.Errorf("denied Read: referenced_by %v, although whether it matters is unknown", got.Attributes["referenced_by"])
	}
}
