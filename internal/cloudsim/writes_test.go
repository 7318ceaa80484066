package cloudsim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"google.golang.org/api/googleapi"
)

func TestIsWrite(t *testing.T) {
	tests := []struct {
		service, action string
		want            bool
	}{
		{"iam", "UpdateAccessKey", true},
		{"iam", "DetachUserPolicy", true},
		{"iam", "GetAccountAuthorizationDetails", false},
		{"iam", "ListAccessKeys", false},
		{"iam", "GenerateCredentialReport", false},
		{"iam", "GenerateServiceLastAccessedDetails", false},
		{"sts", "AssumeRole", false},
		{"sts", "GetCallerIdentity", false},
		{"ec2", "DescribeSecurityGroupRules", false},
		{"ec2", "RevokeSecurityGroupIngress", true},
		{"cloudresourcemanager", "SearchProjects", false},
		{"cloudresourcemanager", "SetIamPolicy", true},
		{"compute", "PatchFirewall", true},
		{"compute", "GetGlobalOperation", false},
		{"compute", "AggregatedListInstances", false},
		{"iamadmin", "DisableServiceAccountKey", true},
		{"secretsmanager", "CreateSecret", true},
		{"secretsmanager", "PutSecretValue", true},
		{"secretsmanager", "UpdateSecretVersionStage", true},
		{"secretsmanager", "DeleteSecret", true},
		{"secretsmanager", "RestoreSecret", true},
		{"secretsmanager", "TagResource", true},
		{"secretsmanager", "GetSecretValue", false},
		{"secretsmanager", "DescribeSecret", false},
		{"secretsmanager", "ListSecretVersionIds", false},
	}
	for _, tt := range tests {
		if got := IsWrite(tt.service, tt.action); got != tt.want {
			t.Errorf("IsWrite(%s, %s) = %v, want %v", tt.service, tt.action, got, tt.want)
		}
	}
}

func TestSim_countsWritesApartFromReads(t *testing.T) {
	ctx := context.Background()
	sim, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	if _, err := c.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: aws.String("alice")}); err != nil {
		t.Fatal(err)
	}
	if n := sim.WriteCount(); n != 0 {
		t.Fatalf("after a read: %d writes (%v), want none", n, sim.Writes())
	}
	if _, err := c.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("alice"), AccessKeyId: aws.String(iamAliceKey), Status: "Inactive"}); err != nil {
		t.Fatal(err)
	}
	// A write the cloud refuses was still attempted: it counts.
	_, err := c.DetachUserPolicy(ctx, &iam.DetachUserPolicyInput{UserName: aws.String("carol"), PolicyArn: aws.String("arn:aws:iam::aws:policy/AdministratorAccess")})
	iamWantErr(t, err, "NoSuchEntity", 404)
	want := map[string]int{"iam:UpdateAccessKey": 1, "iam:DetachUserPolicy": 1}
	if got := sim.Writes(); !mapsEqual(got, want) {
		t.Errorf("Writes() = %v, want %v", got, want)
	}
	if st := sim.Calls()["iam:UpdateAccessKey"]; !st.Write {
		t.Errorf("CallStats of a write: %+v, want Write", st)
	}
	if st := sim.Calls()["iam:ListAccessKeys"]; st.Write || st.Calls != 1 {
		t.Errorf("CallStats of a read: %+v, want one call, not a write", st)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestFault_writesOnlyDeniesWritesAndLetsReadsThrough(t *testing.T) {
	ctx := context.Background()
	w := iamTestWorld()
	w.Faults = []Fault{{Service: "iam", Writes: true, AccessDenied: true}}
	sim, _, cfg := iamTestSim(t, w, "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	if _, err := c.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: aws.String("alice")}); err != nil {
		t.Fatalf("read under a writes-only fault: %v", err)
	}
	_, err := c.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("alice"), AccessKeyId: aws.String(iamAliceKey), Status: "Inactive"})
	iamWantErr(t, err, "AccessDenied", 403)
	var status string
	sim.Do(func(w *World) { status = w.AWS.Accounts[0].Users[0].AccessKeys[0].Status })
	if status == "Inactive" {
		t.Error("a denied write changed the world")
	}
}

func TestSim_revokedRuleCanBeRestoredWithItsIDAndDescription(t *testing.T) {
	ctx := context.Background()
	_, cfg := sdkSim(t, ec2TestWorld(), Options{})
	c := ec2.NewFromConfig(cfg)
	rules := func() []ec2types.SecurityGroupRule {
		out, err := c.DescribeSecurityGroupRules(ctx, &ec2.DescribeSecurityGroupRulesInput{
			Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: []string{"sg-0a1b"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.SecurityGroupRules
	}
	find := func(rs []ec2types.SecurityGroupRule) *ec2types.SecurityGroupRule {
		for _, r := range rs {
			if !aws.ToBool(r.IsEgress) && aws.ToString(r.CidrIpv4) == "0.0.0.0/0" && aws.ToInt32(r.FromPort) == 443 {
				return &r
			}
		}
		return nil
	}
	https := find(rules())
	if https == nil {
		t.Fatal("no https rule")
	}
	id := aws.ToString(https.SecurityGroupRuleId)
	if _, err := c.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String("sg-0a1b"), SecurityGroupRuleIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	if find(rules()) != nil {
		t.Fatal("rule still there after revoke")
	}
	_, err := c.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String("sg-0a1b"), SecurityGroupRuleIds: []string{id}})
	if code := sdkErrCode(err); code != "InvalidSecurityGroupRuleId.NotFound" {
		t.Errorf("revoke by a gone rule id: %s, want InvalidSecurityGroupRuleId.NotFound", code)
	}
	perm := ec2types.IpPermission{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(443), ToPort: aws.Int32(443),
		IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0"), Description: aws.String("https")}}}
	_, err = c.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String("sg-0a1b"), IpPermissions: []ec2types.IpPermission{perm}})
	if code := sdkErrCode(err); code != "InvalidPermission.NotFound" {
		t.Errorf("revoke of a gone permission: %s, want InvalidPermission.NotFound", code)
	}
	if _, err := c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String("sg-0a1b"), IpPermissions: []ec2types.IpPermission{perm}}); err != nil {
		t.Fatal(err)
	}
	back := find(rules())
	if back == nil || aws.ToString(back.SecurityGroupRuleId) != id || aws.ToString(back.Description) != "https" {
		t.Errorf("restored rule %+v, want id %s and description https", back, id)
	}
}

func TestOnNextCall_slipsAConcurrentWriterBetweenReadAndWrite(t *testing.T) {
	ctx := context.Background()
	sim, srv := startGCP(t, gcpTestWorld())
	pc, err := resourcemanager.NewProjectsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	other, err := resourcemanager.NewProjectsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const res = "projects/acme-prod"
	read, err := pc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res})
	if err != nil {
		t.Fatal(err)
	}
	hooked := 0
	sim.OnNextCall("cloudresourcemanager:SetIamPolicy", func() {
		hooked++
		cur, err := other.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res})
		if err != nil {
			t.Error(err)
			return
		}
		cur.Bindings = append(cur.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"user:eve@acme.example"}})
		if _, err := other.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: cur}); err != nil {
			t.Error(err)
		}
	})
	read.Bindings = read.Bindings[1:]
	_, err = pc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: read})
	var herr *googleapi.Error
	if !errors.As(err, &herr) || herr.Code != 409 || !strings.Contains(herr.Body, `"ABORTED"`) {
		t.Fatalf("write after a concurrent change: %v, want 409 ABORTED", err)
	}
	if hooked != 1 {
		t.Errorf("hook ran %d times, want once (the concurrent writer's own call must not run it again)", hooked)
	}
	now, err := pc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res})
	if err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, b := range now.Bindings {
		roles = append(roles, b.Role)
	}
	if !slices.Equal(roles, []string{"roles/owner", "roles/editor", "roles/viewer"}) {
		t.Errorf("policy after the refused write: %v, want the concurrent writer's", roles)
	}
}

func TestAdmin_changesFaultsAndLatencyWhileServing(t *testing.T) {
	ctx := context.Background()
	sim, srv, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg, func(o *iam.Options) { o.RetryMaxAttempts = 1 })
	post := func(path, body string) int {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("/_sim/latency", "150ms"); code != http.StatusNoContent {
		t.Fatalf("POST latency: %d", code)
	}
	start := time.Now()
	if _, err := c.ListUsers(ctx, &iam.ListUsersInput{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("call took %v under 150ms latency", d)
	}
	if code := post("/_sim/latency", "0s"); code != http.StatusNoContent {
		t.Fatalf("POST latency 0: %d", code)
	}
	if code := post("/_sim/latency", "soon"); code != http.StatusBadRequest {
		t.Errorf("POST latency soon: %d, want 400", code)
	}
	if code := post("/_sim/faults", "faults:\n- {service: iam, action: Update*, access_denied: true}\n"); code != http.StatusNoContent {
		t.Fatalf("POST faults: %d", code)
	}
	_, err := c.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("alice"), AccessKeyId: aws.String(iamAliceKey), Status: "Inactive"})
	iamWantErr(t, err, "AccessDenied", 403)
	if code := post("/_sim/faults", "faults: [{throttle_rate: 2}]"); code != http.StatusBadRequest {
		t.Errorf("POST an invalid fault: %d, want 400", code)
	}
	if code := post("/_sim/faults", "bogus: 1"); code != http.StatusBadRequest {
		t.Errorf("POST an unknown field: %d, want 400", code)
	}
	resp, err := http.Get(srv.URL + "/_sim/writes")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"iam:UpdateAccessKey": 1`) || strings.Contains(string(body), "ListUsers") {
		t.Errorf("GET /_sim/writes = %s, want the one write only", body)
	}
	// By place: the read answered, the denied write served but not answered.
	resp, err = http.Get(srv.URL + "/_sim/calls/places")
	if err != nil {
		t.Fatal(err)
	}
	var places map[string]PlaceCalls
	err = json.NewDecoder(resp.Body).Decode(&places)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]PlaceCalls{
		"iam:ListUsers " + iamTestAcct + " global":       {Calls: 1, Answered: 1},
		"iam:UpdateAccessKey " + iamTestAcct + " global": {Calls: 1},
	}
	if !maps.Equal(places, want) {
		t.Errorf("GET /_sim/calls/places = %v, want %v", places, want)
	}
	if code := post("/_sim/calls/reset", ""); code != http.StatusNoContent || sim.WriteCount() != 0 || len(sim.Calls()) != 0 || len(sim.CallsByPlace()) != 0 {
		t.Errorf("reset: %d, calls left %v, by place %v", code, sim.Calls(), sim.CallsByPlace())
	}
	if code := post("/_sim/faults", ""); code != http.StatusNoContent {
		t.Fatalf("POST no faults: %d", code)
	}
	if _, err := c.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("alice"), AccessKeyId: aws.String(iamAliceKey), Status: "Inactive"}); err != nil {
		t.Errorf("write after the faults were cleared: %v", err)
	}
}

// A world file can slow down the writes alone, for a test that kills a process in the
// middle of its writes without waiting through its reads.
func TestParseWorld_writesOnlyLatency(t *testing.T) {
	w, err := ParseWorld([]byte("latency: 5ms\nfaults:\n- {writes: true, latency: 200ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(w.Latency) != 5*time.Millisecond || len(w.Faults) != 1 || !w.Faults[0].Writes || time.Duration(w.Faults[0].Latency) != 200*time.Millisecond {
		t.Fatalf("parsed %+v", w)
	}
	w.AWS = iamTestWorld().AWS
	_, _, cfg := iamTestSim(t, w, "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	start := time.Now()
	if _, err := c.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: aws.String("alice")}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 200*time.Millisecond {
		t.Errorf("a read took %v: the writes-only latency applied to it", d)
	}
	start = time.Now()
	if _, err := c.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("alice"), AccessKeyId: aws.String(iamAliceKey), Status: "Inactive"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("a write took %v, want the 200ms latency", d)
	}
}

// TestFaults_answerLatency: with AnswerLatency the call is served before its answer is
// delayed; a client that gives up meanwhile never hears of a write that happened.
func TestFaults_answerLatency(t *testing.T) {
	w := &World{AWS: AWS{Accounts: []*Account{{ID: "111111111111"}}}}
	w.Faults = []Fault{{Service: "iam", Action: "CreateUser", AnswerLatency: Duration(time.Hour)}}
	sim, cfg := sdkSim(t, w, Options{})
	cfg.Retryer = func() aws.Retryer { return aws.NopRetryer{} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := iam.NewFromConfig(cfg).CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("ghost")})
		done <- err
	}()
	// Give up once the user exists: the call was served, its answer not yet sent.
	for exists := false; !exists; {
		sim.Do(func(w *World) { exists = findUser(w.AWS.Accounts[0], "ghost") != nil })
		if !exists {
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateUser = %v, want the client's own cancellation", err)
	}
	// Another action is not delayed, and sees the user.
	if _, err := iam.NewFromConfig(cfg).GetUser(context.Background(), &iam.GetUserInput{UserName: aws.String("ghost")}); err != nil {
		t.Errorf("GetUser after the unanswered CreateUser: %v", err)
	}
}

// POST /_sim/clock moves the clock forward: what the simulator stamps afterwards (a user
// created) is that much later; a negative or unreadable duration is refused.
func TestAdmin_clockMovesForward(t *testing.T) {
	ctx := context.Background()
	_, srv, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg, func(o *iam.Options) { o.RetryMaxAttempts = 1 })
	post := func(body string) (int, string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/_sim/clock", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	_, was := post("0s")
	code, at := post("2400h")
	before, err1 := time.Parse(time.RFC3339, was)
	moved, err2 := time.Parse(time.RFC3339, at)
	if code != http.StatusOK || err1 != nil || err2 != nil || moved.Sub(before) != 2400*time.Hour {
		t.Fatalf("POST clock 2400h: %d, %q → %q", code, was, at)
	}
	out, err := c.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("later")})
	if err != nil {
		t.Fatal(err)
	}
	if !out.User.CreateDate.Equal(moved) {
		t.Errorf("a user created after the move is dated %v, want %v", out.User.CreateDate, moved)
	}
	for _, bad := range []string{"-1h", "soon"} {
		if code, _ := post(bad); code != http.StatusBadRequest {
			t.Errorf("POST clock %q: %d, want 400", bad, code)
		}
	}
}
