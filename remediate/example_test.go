package remediate_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// Plan the fixes of a simulated account, see what applying them would do, then apply:
// the low-risk fix (a password policy too short) runs at once, is verified by reading
// the account again, and is audited; the medium-risk one (SSH open to the internet)
// waits for an approver, as the default gates ask.
func ExampleMachine_Apply() {
	ctx := context.Background()
	w := &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111", Regions: []string{"us-east-1"},
		PasswordPolicy: &cloudsim.PasswordPolicy{MinimumPasswordLength: 8, PasswordReusePrevention: 24, RequireNumbers: true,
			RequireSymbols: true, RequireUppercaseCharacters: true, RequireLowercaseCharacters: true, MaxPasswordAge: 90},
		SecurityGroups: []*cloudsim.SecurityGroup{{ID: "sg-0000000000000001", Name: "web", Region: "us-east-1", Description: "web",
			Ingress: []cloudsim.Rule{{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0"}}}},
	}}}}
	sim, err := cloudsim.New(w, cloudsim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// The fixes and the re-reads share one set of paced, retrying AWS sessions.
	creds := &aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	sessions, err := awsapi.NewSessions(ctx, awsapi.Options{Endpoint: srv.URL, AWS: creds})
	if err != nil {
		log.Fatal(err)
	}
	reader := awscollector.New(awscollector.Config{Sessions: sessions, Regions: []string{"us-east-1"}})
	reg, err := builtin.Registry(sessions, nil)
	if err != nil {
		log.Fatal(err)
	}
	eng, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		log.Fatal(err)
	}

	// Plan: collect, evaluate, and turn the open findings into actions.
	var sink collectors.MemorySink
	if err := reader.Collect(ctx, &sink); err != nil {
		log.Fatal(err)
	}
	now := time.Now().UTC()
	h := snapshot.Header{Version: 1, CollectedAt: now, Accounts: []string{"111111111111"}, Scopes: sink.Scopes}
	found, err := eng.Evaluate(ctx, h, now, sink.Resources)
	if err != nil {
		log.Fatal(err)
	}
	byUID := map[string]snapshot.Resource{}
	for _, r := range sink.Resources {
		byUID[r.UID] = r
	}
	gcfg := gates.Config{Approvers: []string{"bob"}, UncheckedNames: true}
	plan, err := remediate.NewPlan(remediate.PlanInput{Header: h, Name: "example", Findings: found.Findings,
		Resource: func(uid string) (snapshot.Resource, bool) { r, ok := byUID[uid]; return r, ok },
		Registry: reg, Gates: gcfg, Actor: "alice", Now: now})
	if err != nil {
		log.Fatal(err)
	}

	// The machine keeps its actions, their approvals and its audit log in the store.
	dir, err := os.MkdirTemp("", "remediate-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	auditLog := audit.New(st, audit.Options{})
	m := remediate.New(remediate.Options{Store: st, Log: auditLog, Gate: gates.New(st, auditLog, gcfg, time.Now), Gates: gcfg,
		Registry: reg, Observer: remediate.Readers{reader}, Engine: eng, Actor: "alice"})

	for _, a := range plan.Actions {
		fmt.Printf("planned %s (%s risk): %s\n", a.Remediator, a.Risk, a.Approvals.Verdict)
	}
	show := func(run string, res *remediate.Result) {
		for _, it := range res.Items {
			fmt.Printf("%s: %s %s: %s\n", run, it.Remediator, it.State, it.Outcome)
		}
	}

	// Apply without confirm is the dry run: it reads, and writes nothing.
	dry, err := m.Apply(ctx, plan, false)
	if err != nil {
		log.Fatal(err)
	}
	show("dry run", dry)
	res, err := m.Apply(ctx, plan, true)
	if err != nil {
		log.Fatal(err)
	}
	show("apply", res)
	// Output:
	// planned aws.ec2.revoke_ingress (medium risk): approval
	// planned aws.iam.set_password_policy (low risk): auto
	// dry run: aws.ec2.revoke_ingress planned: would request approval (1 needed): aws.ec2.revoke_ingress on arn:aws:ec2:us-east-1:111111111111:security-group/sg-0000000000000001#ingress/tcp/22-22/0.0.0.0/0 (arn:aws:ec2:us-east-1:111111111111:security-group/sg-0000000000000001)
	// dry run: aws.iam.set_password_policy planned: would apply: aws.iam.set_password_policy on password_policy (arn:aws:iam::111111111111:account-password-policy)
	// apply: aws.ec2.revoke_ingress pending_approval: waits for approval: 0 of 1
	// apply: aws.iam.set_password_policy verified: applied and verified
}
