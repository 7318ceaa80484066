package permissions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/fixtures/acme"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/snapshot"
)

// acmeCaller is the account of the acme world's credentials: warden's own account, the
// organisation's management account. Every other account is a member, read through the
// organisation role.
const acmeCaller = "111111111111"

// orgRole is the role the acme world has in its member accounts.
const orgRole = "OrganizationAccountAccessRole"

// noPermission are the calls no policy can allow or deny: AWS answers them for any
// valid credentials.
var noPermission = map[string]string{
	"sts:GetCallerIdentity": "AWS answers it for any credentials, even with every action denied",
}

// sessionCalls are calls of the remediator phase that the remediator policy does not
// grant, because the principal applying fixes holds the scanner policy beside it.
var sessionCalls = map[string]string{
	"sts:AssumeRole": "opening a member account to fix it: the scanner policy grants it on the member role",
}

// unexercisedFixes are the permissions the remediator documents grant that this test
// cannot make a call for against the simulator, each with why. Anything else granted and
// never called fails the test. (The scanner documents have no such list: every read is
// made.)
var unexercisedFixes = map[string]string{
	// certs.renew needs a real ACME server (remediators/certs runs it against pebble);
	// the registry here is built without certificate configuration, for planning only.
	"acm:GetCertificate":    "certs.renew reads back a certificate it delivered to ACM: needs ACME (pebble)",
	"acm:ImportCertificate": "certs.renew delivers a renewed certificate to ACM: needs ACME (pebble)",
	// The simulator answers a firewall patch with its operation already DONE, so the fix
	// never polls it; against Google the operation is usually still running.
	"compute.globalOperations.get": "the simulator's firewall patches are done at once: the fix never polls the operation",
}

// The documents grant exactly what warden calls. The collectors (AWS through the
// organisation, GCP through discovery) read the acme world whole and re-read every
// resource by uid; then every fix the plan of that snapshot holds is applied and rolled
// back (steps run and undone) through the official SDK clients. Each call the simulator
// served is mapped to its IAM action or GCP permission and must be granted by the
// document of its role (member accounts: the member role's); and every permission a
// document grants must have been used by some call, unless unexercisedFixes says why
// not. Each fix is also held to its own declaration (remediators.Spec.Permissions).
func TestLeastPrivilege(t *testing.T) {
	if testing.Short() {
		t.Skip("collects and remediates the whole acme world")
	}
	ctx := context.Background()
	w, err := cloudsim.ParseWorld(acme.World())
	if err != nil {
		t.Fatal(err)
	}
	widen(t, w)
	// Each failure once, however many calls repeat it.
	reported := map[string]bool{}
	errorf := func(format string, args ...any) {
		t.Helper()
		if msg := fmt.Sprintf(format, args...); !reported[msg] {
			reported[msg] = true
			t.Error(msg)
		}
	}
	rec := &callRecorder{}
	sim, url := simtest.Start(t, w, cloudsim.Options{Logger: slog.New(rec)})
	opts := Options{OrgRole: orgRole, RotationSecretName: "warden/iam/{account}"}
	reg := registry(t)
	fix, err := Remediator(reg, opts)
	if err != nil {
		t.Fatal(err)
	}

	// Scanner: collect, re-read, name the scopes.
	resources := scan(ctx, t, url)
	scanAnalyzer(ctx, t, url)
	scanned := rec.take()
	if err := sameOperations(scanned, sim.Calls()); err != nil {
		t.Fatal(err)
	}
	scanner, member := ScannerPolicy(opts).Actions(), MemberPolicy().Actions()
	used := map[string]bool{}
	for _, c := range scanned {
		if !awsServices[c.Service] {
			continue
		}
		action := c.action()
		if noPermission[action] != "" {
			continue
		}
		granted, doc := scanner, "scanner policy"
		if c.Account != acmeCaller {
			granted, doc = member, "member role's policy"
		}
		if !slices.Contains(granted, action) {
			errorf("the scanner called %s in account %s: the %s does not grant it", action, c.Account, doc)
		}
		used[action] = true
	}
	checkUsed(t, "AWS scanner policy", slices.Concat(scanner, member), used, nil)
	checkGCP(t, "GCP scanner role", GCPScannerRole().IncludedPermissions, scanned, nil)

	// Remediator: a fresh process's sessions and clients, every planned fix, each call
	// charged to the remediator that made it.
	sim.ResetCalls()
	byFix := fixAll(ctx, t, url, rec, resources)
	var fixed []simCall
	for _, calls := range byFix {
		fixed = append(fixed, calls...)
	}
	if err := sameOperations(fixed, sim.Calls()); err != nil {
		t.Fatal(err)
	}
	remediator := RemediatorPolicy(fix, opts).Actions()
	used = map[string]bool{}
	for name, calls := range byFix {
		r, _ := reg.Get(name)
		declared := r.Spec().Permissions
		for _, c := range calls {
			if !awsServices[c.Service] {
				for _, p := range must(gcpCallPermissions(c)) {
					if !slices.Contains(declared.GCP, p) {
						errorf("%s called %s on %s, which needs %s: it does not declare it", name, c.key(), c.Account, p)
					}
				}
				continue
			}
			action := c.action()
			if noPermission[action] != "" {
				continue
			}
			if sessionCalls[action] != "" {
				if !slices.Contains(scanner, action) {
					errorf("%s called %s, which the scanner policy was expected to grant", name, action)
				}
				continue
			}
			if !slices.Contains(declared.AWS, action) {
				errorf("%s called %s in account %s: it does not declare it", name, action, c.Account)
			}
			if !slices.Contains(remediator, action) {
				errorf("%s called %s in account %s: the remediator policy does not grant it", name, action, c.Account)
			}
			used[action] = true
		}
	}
	checkUsed(t, "AWS remediator policy", remediator, used, unexercisedFixes)
	checkGCP(t, "GCP remediator role", GCPRemediatorRole(fix).IncludedPermissions, fixed, unexercisedFixes)
}

// must is perms, or nil for a call gcpCallPermissions does not know (checkGCP fails
// the test for it).
func must(perms []string, ok bool) []string {
	if !ok {
		return nil
	}
	return perms
}

// widen adds to the acme world what its plan lacks for some of the fixes' calls: a user
// with AdministratorAccess attached directly and a group with an inline admin policy
// (detach_policy's user and group-inline calls), and a folder between the organisation
// and a project whose policy still names a deleted account (the folder reads and
// remove_binding_member's folder calls), and a role whose inline policy grants an action
// it never used (the right-sizing fix's role calls). acme's own usage and IAM
// recommendation make the collector read Access Advisor and the recommender's insights.
func widen(t *testing.T, w *cloudsim.World) {
	t.Helper()
	i := slices.IndexFunc(w.AWS.Accounts, func(a *cloudsim.Account) bool { return a.ID == acmeCaller })
	if i < 0 || len(w.GCP.Organizations) == 0 || len(w.GCP.Projects) == 0 {
		t.Fatal("the acme world has changed shape: no caller account, organisation or project")
	}
	created := time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)
	a := w.AWS.Accounts[i]
	a.Users = append(a.Users, &cloudsim.User{Name: "perm-test-admin", Created: created,
		AttachedPolicies: []string{"arn:aws:iam::aws:policy/AdministratorAccess"}})
	a.Groups = append(a.Groups, &cloudsim.Group{Name: "perm-test-ops", Created: created, InlinePolicies: []cloudsim.InlinePolicy{
		{Name: "everything", Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`}}})
	// A role that reads objects and may delete them, which it never did: the right-sizing
	// fix narrows its inline policy (the role calls), where the detach fix runs first on
	// the inline admin policies it also narrows. The simulator runs on the machine's clock.
	a.Roles = append(a.Roles, &cloudsim.Role{Name: "perm-test-reader", Path: "/", Created: created,
		AssumeRolePolicy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
		InlinePolicies: []cloudsim.InlinePolicy{{Name: "objects",
			Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::perm-test/*"}]}`}},
		LastAccessed: []cloudsim.AccessRecord{{Service: "s3", Action: "s3:GetObject", At: time.Now().UTC().Add(-24 * time.Hour), Region: "eu-west-1"}}})
	// An unused-access analyzer in the caller account, for the collector's
	// access_analyzer source (scanAnalyzer): its findings (perm-test-reader's unused
	// s3:DeleteObject among them) are listed and read; the member accounts have none.
	a.AccessAnalyzer = &cloudsim.AccessAnalyzer{Region: "us-east-1", UnusedAccessAge: 90}
	org := "organizations/" + w.GCP.Organizations[0].ID
	w.GCP.Folders = append(w.GCP.Folders, &cloudsim.GCPFolder{ID: "300000000001", DisplayName: "perm-test", Parent: org,
		IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{
			{Role: "roles/viewer", Members: []string{"deleted:user:gone@acme.example?uid=123456789012345678901"}}}}})
	w.GCP.Projects[len(w.GCP.Projects)-1].Parent = "folders/300000000001"
}

// checkUsed fails for each granted permission no call used, unless unexercised names it;
// and for an unexercised entry that was used after all (the list must not go stale).
func checkUsed(t *testing.T, doc string, granted []string, used map[string]bool, unexercised map[string]string) {
	t.Helper()
	for _, p := range sortedSet(granted) {
		switch {
		case !used[p] && unexercised[p] == "":
			t.Errorf("the %s grants %s, which no call used", doc, p)
		case used[p] && unexercised[p] != "":
			t.Errorf("%s is listed as unexercised (%s) but was used: take it off the list", p, unexercised[p])
		}
	}
}

// checkGCP maps every Google call to its permissions, each of which role must include,
// and checks that role includes nothing unused.
func checkGCP(t *testing.T, doc string, role []string, calls []simCall, unexercised map[string]string) {
	t.Helper()
	used := map[string]bool{}
	var problems []string
	for _, c := range calls {
		if awsServices[c.Service] {
			continue
		}
		perms, ok := gcpCallPermissions(c)
		if !ok {
			problems = append(problems, fmt.Sprintf("no permission is known for the Google call %s: add it to gcpPermissions", c.key()))
			continue
		}
		for _, p := range perms {
			if !slices.Contains(role, p) {
				problems = append(problems, fmt.Sprintf("%s on %s needs %s: the %s does not include it", c.key(), c.Account, p, doc))
			}
			used[p] = true
		}
	}
	for _, msg := range sortedSet(problems) {
		t.Error(msg)
	}
	checkUsed(t, doc, role, used, unexercised)
}

// fastAWS are sessions on the simulator without pacing and with quick retries.
func fastAWS(ctx context.Context, t *testing.T, url string) *awsapi.Sessions {
	t.Helper()
	base := simtest.AWSConfig(url)
	s, err := awsapi.NewSessions(ctx, awsapi.Options{Endpoint: url, AWS: &base, OrgRole: orgRole,
		RateLimits:  map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0, "secretsmanager": 0, "access-analyzer": 0},
		MaxAttempts: 2, BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// scanAnalyzer collects the AWS organisation again with usage from IAM Access Analyzer
// (targets.aws.usage.source: access_analyzer), whose calls the scanner documents grant
// beside Access Advisor's: ListAnalyzers in every account, and in the caller's, which
// has an analyzer, ListFindingsV2 and GetFindingV2.
func scanAnalyzer(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	aws := awscollector.New(awscollector.Config{Org: true, Sessions: fastAWS(ctx, t, url),
		Usage: awscollector.UsageConfig{Enabled: true, Source: awscollector.UsageSourceAccessAnalyzer}})
	var sink collectors.MemorySink
	if err := aws.Collect(ctx, &sink); err != nil {
		t.Fatalf("%s: collect with usage from Access Analyzer: %v", aws.Name(), err)
	}
	analyzed := 0
	for _, r := range sink.Resources {
		if u, _ := r.Attributes["usage"].(map[string]any); u != nil && u["source"] == "aws.access_analyzer" && u["complete"] == true {
			analyzed++
		}
	}
	if analyzed == 0 {
		t.Error("no principal's usage came from the caller account's analyzer")
	}
}

// fastGCP are Google clients on the simulator, likewise.
func fastGCP(ctx context.Context, t *testing.T, url string) *gcpapi.Clients {
	t.Helper()
	c, err := gcpapi.New(ctx, gcpapi.Options{Endpoint: url, RateLimit: 10000, MaxAttempts: 2,
		BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// scan runs both collectors as a scan and the daemon do: Collect (the AWS one over the
// organisation, the GCP one over the projects it discovers), Scopes, and Read of every
// resource collected. It returns what Collect read.
func scan(ctx context.Context, t *testing.T, url string) []snapshot.Resource {
	t.Helper()
	aws := awscollector.New(awscollector.Config{Org: true, Sessions: fastAWS(ctx, t, url),
		Usage: awscollector.UsageConfig{Enabled: true, PollInterval: time.Millisecond}})
	gcp := gcpcollector.New(gcpcollector.Config{Clients: fastGCP(ctx, t, url), Recommendations: true, Activity: true})
	var sink collectors.MemorySink
	for _, c := range []interface {
		collectors.ScopeCollector
		collectors.Reader
	}{aws, gcp} {
		if err := c.Collect(ctx, &sink); err != nil {
			t.Fatalf("%s: collect: %v", c.Name(), err)
		}
		if _, err := c.Scopes(ctx); err != nil {
			t.Fatalf("%s: scopes: %v", c.Name(), err)
		}
	}
	failed := 0
	for _, s := range sink.Scopes {
		if s.Status == snapshot.ScopeFailed {
			failed++
		}
	}
	if failed > 1 { // the acme world denies one scope on purpose
		t.Fatalf("%d scopes failed, want 1 (acme's denied eu-central-1): %+v", failed, sink.Scopes)
	}
	read := 0
	for _, r := range sink.Resources {
		var reader collectors.Reader = aws
		if strings.HasPrefix(r.Type, "gcp.") {
			reader = gcp
		}
		_, err := reader.Read(ctx, r.UID)
		switch {
		case errors.Is(err, collectors.ErrUnsupported):
		case err != nil:
			t.Errorf("read %s: %v", r.UID, err)
		default:
			read++
		}
	}
	t.Logf("scanner: %d resources in %d scopes, %d read again by uid", len(sink.Resources), len(sink.Scopes), read)
	return sink.Resources
}

// fixAll plans every finding of resources and runs every planned fix with a fresh
// process's sessions and clients: Apply, then Rollback (in reverse order) where the plan
// says rollback is possible; a Stepper's steps to the end for the first action of its
// fix that can run (then Undo, where rollback is possible), and to the hand-over then
// Undo for the others, so that both of Undo's paths run.
// It returns the calls each remediator made. A fix that fails is logged, not failed: the
// world holds findings whose fix the simulator refuses (a project policy that still holds
// another public member), and the call was made all the same; the e2e tests of package
// remediate judge the fixes.
func fixAll(ctx context.Context, t *testing.T, url string, rec *callRecorder, resources []snapshot.Resource) map[string][]simCall {
	t.Helper()
	reg, err := builtin.New(builtin.Deps{AWS: fastAWS(ctx, t, url), GCP: fastGCP(ctx, t, url),
		// One secret per account, so that a second rotation finds it and adds a version.
		Rotation: awsfix.RotationConfig{SecretName: "warden/iam/{account}"}})
	if err != nil {
		t.Fatal(err)
	}
	plan := planOf(ctx, t, reg, resources)
	byFix := map[string][]simCall{}
	ok := map[string]int{}
	charge := func(a remediators.Action, what string, err error) {
		byFix[a.Remediator] = append(byFix[a.Remediator], rec.take()...)
		if err != nil && !errors.Is(err, remediators.ErrConverged) {
			t.Logf("%s %s %s %s: %v", what, a.Remediator, a.Target, a.Part, err)
			return
		}
		ok[a.Remediator]++
	}
	// Two fixes take PowerUserAccess from acme's staging-deployer: the detachment from
	// everything it is attached to (WARDEN-AWS-IAM-002) and its replacement by what the
	// role used (036). The replacement runs first, so that its calls are made; the
	// detachment then finds the role's attachment gone.
	slices.SortStableFunc(plan.Actions, func(a, b remediate.PlannedAction) int {
		first := func(p remediate.PlannedAction) bool { return p.Remediator == "aws.iam.replace_managed_attachment" }
		switch {
		case first(a) && !first(b):
			return -1
		case first(b) && !first(a):
			return 1
		}
		return 0
	})
	var applied []remediators.Action
	ranFull := map[string]bool{}
	for _, pa := range plan.Actions {
		a := pa.Action
		r, _ := reg.Get(a.Remediator)
		if s, isStepper := r.(remediators.Stepper); isStepper {
			full := !ranFull[a.Remediator]
			p, err := runSteps(ctx, s, a, full)
			charge(a, "steps of", err)
			if full && err == nil {
				ranFull[a.Remediator] = true
				if a.Rollback.Possible {
					charge(a, "undo", s.Undo(ctx, a, p))
				}
			}
			continue
		}
		err := r.Apply(ctx, a)
		charge(a, "apply", err)
		if err == nil {
			applied = append(applied, a)
		}
	}
	for _, a := range slices.Backward(applied) {
		if r, _ := reg.Get(a.Remediator); a.Rollback.Possible {
			charge(a, "roll back", r.Rollback(ctx, a))
		}
	}
	perRemediator := map[string]int{}
	for _, a := range plan.Actions {
		perRemediator[a.Remediator]++
	}
	t.Logf("remediator: %d actions %v; applies, steps and rollbacks without error %v", len(plan.Actions), perRemediator, ok)
	for _, name := range reg.Names() {
		if ok[name] == 0 && !exercisedElsewhere(name) {
			t.Errorf("no action of %s ran without error: its permissions go unchecked", name)
		}
	}
	if !ranFull["aws.iam.rotate_access_key"] {
		t.Error("no rotation ran to its end")
	}
	return byFix
}

// exercisedElsewhere are the remediators this test cannot run: their permissions are in
// unexercisedFixes.
func exercisedElsewhere(name string) bool { return name == "certs.renew" }

// runSteps runs a multi-step fix as the machine does, each step when due: to the end
// when full, else up to the hand-over, then undoes it.
func runSteps(ctx context.Context, s remediators.Stepper, a remediators.Action, full bool) (remediators.Progress, error) {
	now := time.Now()
	var p remediators.Progress
	for range 10 {
		if p.Done || p.Hold != "" || !full && p.Step == "stored" {
			break
		}
		if p.Due.After(now) {
			now = p.Due
		}
		next, err := s.Step(ctx, a, p, now)
		if err != nil {
			return p, fmt.Errorf("after step %q: %w", p.Step, err)
		}
		p = next
	}
	if full {
		if !p.Done {
			return p, fmt.Errorf("not done after its steps: %+v", p)
		}
		return p, nil
	}
	if err := s.Undo(ctx, a, p); err != nil {
		return p, fmt.Errorf("undo at %q: %w", p.Step, err)
	}
	return p, nil
}

// planOf evaluates resources with the built-in pack and plans every finding, as warden
// plan does.
func planOf(ctx context.Context, t *testing.T, reg *remediators.Registry, resources []snapshot.Resource) *remediate.Plan {
	t.Helper()
	eng := remediatetest.Engine(t, reg, nil)
	now := time.Now().UTC()
	h := snapshot.Header{Version: 1, CollectedAt: now}
	res, err := eng.Evaluate(ctx, h, now, resources)
	if err != nil {
		t.Fatal(err)
	}
	byUID := map[string]snapshot.Resource{}
	for _, r := range resources {
		byUID[r.UID] = r
	}
	p, err := remediate.NewPlan(remediate.PlanInput{Header: h, Name: "acme", Findings: res.Findings,
		Resource: func(uid string) (snapshot.Resource, bool) { r, ok := byUID[uid]; return r, ok },
		Complete: func(string) bool { return true }, Registry: reg, Gates: gates.Config{}, Actor: "permissions-test", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
