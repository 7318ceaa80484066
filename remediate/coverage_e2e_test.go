package remediate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// The GCP fixes of the coverage policies, through plan, gates (high risk needs an
// approver), apply and verify, with the official Google clients: separation of duties
// takes the acting role (serviceAccountUser, cryptoKeyEncrypterDecrypter) from the member
// that also administers, leaving the admin role and every other member alone; a
// user-managed key is disabled. Each is checked by reading the simulator, and the audit
// log verifies.
func TestApply_gcpSeparationOfDutiesAndUserManagedKey(t *testing.T) {
	ctx := context.Background()
	const sa = "deployer@" + gcpProject + ".iam.gserviceaccount.com"
	const keyID = "0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6"
	created := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	w := &cloudsim.World{GCP: cloudsim.GCP{
		Organizations: []*cloudsim.GCPOrganization{{ID: "123456789012", Domain: "acme.example",
			IAMPolicy: cloudsim.IAMPolicy{AuditConfigs: []cloudsim.AuditConfig{{Service: "allServices", LogConfigs: []cloudsim.AuditLogConfig{
				{LogType: "ADMIN_READ"}, {LogType: "DATA_READ"}, {LogType: "DATA_WRITE"}}}}}}},
		Projects: []*cloudsim.Project{{ID: gcpProject, Number: "222222222222", Parent: "organizations/123456789012",
			IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{
				{Role: "roles/iam.serviceAccountAdmin", Members: []string{"group:platform@acme.example"}},
				{Role: "roles/iam.serviceAccountUser", Members: []string{"group:platform@acme.example", "group:deployers@acme.example"}},
				{Role: "roles/cloudkms.admin", Members: []string{"group:security@acme.example"}},
				{Role: "roles/cloudkms.cryptoKeyEncrypterDecrypter", Members: []string{"group:security@acme.example", "serviceAccount:" + sa}},
			}},
			ServiceAccounts: []*cloudsim.ServiceAccount{{Email: sa, Keys: []*cloudsim.SAKey{
				{ID: keyID, ValidAfter: created, ValidBefore: created.AddDate(10, 0, 0)}}}},
			Networks: []*cloudsim.Network{{Name: "prod"}},
		}},
	}}
	e := startGCP(t, w, gates.Config{Auto: []findings.Risk{findings.RiskLow}, Approvers: []string{"bob"}, UncheckedNames: true})
	clients, m, gate, log := e.clients, e.machine, e.gate, e.log
	plan := e.plan(t)
	want := map[string]string{ // policy → the part its fix touches
		"WARDEN-GCP-IAM-009": "roles/iam.serviceAccountUser/group:platform@acme.example",
		"WARDEN-GCP-IAM-010": "roles/cloudkms.cryptoKeyEncrypterDecrypter/group:security@acme.example",
		"WARDEN-GCP-IAM-008": keyID,
	}
	p := plan.Only(func(a remediate.PlannedAction) bool { _, ok := want[a.Policy]; return ok })
	got := map[string]string{}
	for _, a := range p.Actions {
		got[a.Policy] = a.Part
		if a.Risk != findings.RiskHigh {
			t.Errorf("%s: risk %s, want high", a.ID, a.Risk)
		}
	}
	for pol, part := range want {
		if got[pol] != part {
			t.Errorf("%s plans part %q, want %q (plan: %v)", pol, got[pol], part, got)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// High risk: the first apply asks, nothing is written until bob approves.
	r, err := m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Actions {
		it := itemOf(t, r, a.ID)
		if it.State != remediate.StatePending || it.Wrote {
			t.Fatalf("%s before approval: %+v", a.Policy, it)
		}
		if _, err := gate.Decide(ctx, it.Request, "bob", "cli", true, "separation of duties"); err != nil {
			t.Fatal(err)
		}
	}
	if got := projectBindings(t, clients); !slices.Contains(got, "roles/iam.serviceAccountUser=group:deployers@acme.example,group:platform@acme.example") {
		t.Fatalf("written before approval: %v", got)
	}
	r, err = m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Actions {
		if it := itemOf(t, r, a.ID); it.State != remediate.StateVerified || !it.Wrote {
			t.Errorf("%s after approval: %+v", a.Policy, it)
		}
	}
	wantBindings := []string{
		"roles/cloudkms.admin=group:security@acme.example",
		"roles/cloudkms.cryptoKeyEncrypterDecrypter=serviceAccount:" + sa,
		"roles/iam.serviceAccountAdmin=group:platform@acme.example",
		"roles/iam.serviceAccountUser=group:deployers@acme.example",
	}
	if got := projectBindings(t, clients); !slices.Equal(got, wantBindings) {
		t.Errorf("project policy after the fixes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantBindings, "\n"))
	}
	key, err := clients.IAM.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{
		Name: "projects/" + gcpProject + "/serviceAccounts/" + sa + "/keys/" + keyID})
	if err != nil || !key.GetDisabled() {
		t.Errorf("key after the fix: disabled %v, %v", key.GetDisabled(), err)
	}
	if rep, err := log.Verify(ctx, nil); err != nil || rep.Entries == 0 {
		t.Fatalf("audit verify: %+v %v", rep, err)
	}
}

// projectBindings is the project's policy as sorted "role=member,member" lines.
func projectBindings(t *testing.T, clients *gcpapi.Clients) []string {
	t.Helper()
	pol, err := clients.Projects.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/" + gcpProject,
		Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range pol.Bindings {
		if len(b.Members) == 0 {
			continue
		}
		out = append(out, b.Role+"="+strings.Join(slices.Sorted(slices.Values(b.Members)), ","))
	}
	slices.Sort(out)
	return out
}

// The AWS fixes of the coverage policies through the machine: the rules a service
// policy finds open to the internet (Telnet, SMB) are revoked one by one, the private
// rule beside them kept; the password policy's missing character class is required,
// nothing else of it changed. Read back through EC2's DescribeSecurityGroupRules and
// IAM's GetAccountPasswordPolicy. A dry run writes nothing.
func TestApply_awsServicePortRulesAndPasswordClass(t *testing.T) {
	ctx := context.Background()
	w := remediatetest.World(0)
	a := w.AWS.Accounts[0]
	a.PasswordPolicy = &cloudsim.PasswordPolicy{MinimumPasswordLength: 14, PasswordReusePrevention: 24,
		RequireNumbers: true, RequireUppercaseCharacters: true, RequireLowercaseCharacters: true, MaxPasswordAge: 90}
	a.SecurityGroups = []*cloudsim.SecurityGroup{{ID: "sg-0000000000000legacy", Name: "legacy", Region: "us-east-1", VPC: "vpc-1",
		Description: "legacy services", Ingress: []cloudsim.Rule{
			{Protocol: "tcp", FromPort: 23, ToPort: 23, CIDR: "0.0.0.0/0", Description: "telnet"},
			{Protocol: "tcp", FromPort: 445, ToPort: 445, CIDR: "0.0.0.0/0", Description: "smb"},
			{Protocol: "tcp", FromPort: 23, ToPort: 23, CIDR: "10.0.0.0/8", Description: "telnet from the office"},
		}}}
	e := start(t, storetest.Backends(t)["sqlite"](t), w, gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := e.Plan(t, "alice").Only(func(a remediate.PlannedAction) bool {
		return a.Policy == "WARDEN-AWS-NET-007" || a.Policy == "WARDEN-AWS-NET-009" || a.Policy == "WARDEN-AWS-IAM-027"
	})
	if len(p.Actions) != 3 {
		t.Fatalf("plan: %d actions of NET-007, NET-009 and IAM-027, want 3: %+v", len(p.Actions), p.Actions)
	}
	m := e.Machine("alice", remediate.Limits{})
	e.Sim.ResetCalls()
	if _, err := m.Apply(ctx, p, false); err != nil {
		t.Fatal(err)
	}
	if n := e.Sim.WriteCount(); n != 0 {
		t.Fatalf("dry run made %d writes", n)
	}
	r, err := m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Actions {
		if it := itemOf(t, r, a.ID); it.State != remediate.StateVerified || !it.Wrote {
			t.Errorf("%s: %+v", a.Policy, it)
		}
	}
	out, err := ec2.NewFromConfig(e.SDK).DescribeSecurityGroupRules(ctx, &ec2.DescribeSecurityGroupRulesInput{
		Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: []string{"sg-0000000000000legacy"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var ingress []string
	for _, r := range out.SecurityGroupRules {
		if !aws.ToBool(r.IsEgress) {
			ingress = append(ingress, fmt.Sprintf("%s %d %s", aws.ToString(r.IpProtocol), aws.ToInt32(r.FromPort), aws.ToString(r.CidrIpv4)))
		}
	}
	if want := []string{"tcp 23 10.0.0.0/8"}; !slices.Equal(ingress, want) {
		t.Errorf("ingress after the fixes: %v, want %v", ingress, want)
	}
	pol, err := iam.NewFromConfig(e.SDK).GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
	if err != nil {
		t.Fatal(err)
	}
	if pp := pol.PasswordPolicy; !pp.RequireSymbols || aws.ToInt32(pp.MinimumPasswordLength) != 14 || aws.ToInt32(pp.PasswordReusePrevention) != 24 ||
		aws.ToInt32(pp.MaxPasswordAge) != 90 || !pp.RequireNumbers || !pp.RequireUppercaseCharacters || !pp.RequireLowercaseCharacters {
		t.Errorf("password policy after the fix: %+v, want symbols required and the rest as before", pp)
	}
	e.VerifyAudit(t)
}

// Two machines (two replicas on one database) fixing two settings of one password
// policy at the same moment: each fix reads the whole policy and writes it back whole,
// so without the target's hold the slower write would drop the faster one's setting.
// With it, the second waits, re-checks and writes on top of the first: both settings are
// in the cloud afterwards, read through IAM.
func TestApply_twoFixesOfOneTargetDoNotInterleave(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := remediatetest.World(0)
			w.AWS.Accounts[0].PasswordPolicy = &cloudsim.PasswordPolicy{MinimumPasswordLength: 14, PasswordReusePrevention: 24,
				RequireNumbers: true, RequireLowercaseCharacters: true, MaxPasswordAge: 90}
			e := start(t, dsn(t), w, gates.Config{Auto: []findings.Risk{findings.RiskLow}})
			p := e.Plan(t, "alice").Only(func(a remediate.PlannedAction) bool { return a.Policy == "WARDEN-AWS-IAM-027" })
			if len(p.Actions) != 2 {
				t.Fatalf("plan: %d character-class fixes, want 2 (symbols, upper case): %+v", len(p.Actions), p.Actions)
			}
			// Every write waits, so that both fixes would read before either writes.
			if err := e.Sim.SetFaults([]cloudsim.Fault{{Service: "iam", Writes: true, Latency: cloudsim.Duration(300 * time.Millisecond)}}, nil); err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 2)
			for i, a := range p.Actions {
				one := p.Only(func(x remediate.PlannedAction) bool { return x.ID == a.ID })
				m := e.Machine(fmt.Sprintf("replica-%d", i), remediate.Limits{})
				go func() {
					res, err := m.Apply(ctx, one, true)
					if err == nil && itemOf(t, res, a.ID).State != remediate.StateVerified {
						err = fmt.Errorf("%s: %+v", a.Part, itemOf(t, res, a.ID))
					}
					errs <- err
				}()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			pol, err := iam.NewFromConfig(e.SDK).GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
			if err != nil {
				t.Fatal(err)
			}
			if pp := pol.PasswordPolicy; !pp.RequireSymbols || !pp.RequireUppercaseCharacters || !pp.RequireLowercaseCharacters {
				t.Errorf("policy after both fixes: symbols %v, upper case %v, lower case %v; want all three", pp.RequireSymbols, pp.RequireUppercaseCharacters, pp.RequireLowercaseCharacters)
			}
		})
	}
}
