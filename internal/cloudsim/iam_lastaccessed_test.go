package cloudsim

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/warden-sec/warden/internal/glob"
)

// advisorNow is the simulator clock of the Access Advisor tests: AWS's 400-day tracking
// period then starts at 2025-11-01T10:00:00Z.
var advisorNow = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

// advisorWorld has a role with declared use and policies of every kind (managed and
// inline, a NotAction deny, a deny of a whole service, a conditional deny), and a group
// of two users, one of them with an access key.
const advisorWorld = `
aws:
  accounts:
    - id: "111111111111"
      regions: [us-east-1, eu-west-1]
      policies:
        - name: ReadS3
          document: {Version: "2012-10-17", Statement: [{Effect: Allow, Action: ["s3:GetObject", "s3:ListBucket"], Resource: "*"}]}
      roles:
        - name: app
          assume_role_policy: {Statement: [{Effect: Allow, Principal: {AWS: "arn:aws:iam::111111111111:root"}, Action: "sts:AssumeRole"}]}
          attached_policies: ["arn:aws:iam::111111111111:policy/ReadS3"]
          inline_policies:
            - name: compute
              document:
                Statement:
                  - {Effect: Allow, Action: ["ec2:Describe*", "lambda:InvokeFunction", "dynamodb:*", "kms:Decrypt", "sts:AssumeRole"], Resource: "*"}
                  - {Effect: Deny, Action: "dynamodb:*", Resource: "*"}
                  - {Effect: Deny, Action: "lambda:*", Resource: "*", Condition: {Bool: {"aws:MultiFactorAuthPresent": "false"}}}
            - name: fence
              document:
                Statement: {Effect: Deny, NotAction: ["s3:*", "ec2:*", "lambda:*", "dynamodb:*", "sts:*"], Resource: "*"}
          last_accessed:
            - {service: s3, action: "s3:GetObject", at: 2026-11-30T08:00:00Z, region: eu-west-1}
            - {service: s3, at: 2026-12-01T09:00:00Z, region: us-east-2}
            - {service: ec2, action: "ec2:DescribeInstances", at: 2025-11-01T09:59:59Z, region: eu-west-1}
            - {service: lambda, action: "lambda:InvokeFunction", at: 2026-06-01T00:00:00Z, region: eu-west-1}
            - {service: dynamodb, at: 2026-10-01T00:00:00Z, region: eu-west-1}
            - {service: sts, at: 2025-11-01T10:00:00Z, region: us-east-1}
      groups:
        - name: devs
          inline_policies:
            - name: not-admin
              document: {Statement: [{Effect: Allow, NotAction: ["iam:*", "organizations:*"], Resource: "*"}]}
      users:
        - name: dev
          groups: [devs]
          access_keys: [{id: AKIADEV0000000000001, secret: dev-secret}]
          inline_policies:
            - name: sg
              document: {Statement: [{Effect: Allow, Action: "ec2:DescribeSecurityGroups", Resource: "*"}]}
        - name: ops
          groups: [devs]
          last_accessed:
            - {service: s3, action: "s3:PutObject", at: 2026-12-02T00:00:00Z, region: us-west-2}
            - {service: ec2, at: 2026-11-01T00:00:00Z, region: eu-west-1}
`

const (
	advisorRole  = "arn:aws:iam::111111111111:role/app"
	advisorUser  = "arn:aws:iam::111111111111:user/dev"
	advisorOps   = "arn:aws:iam::111111111111:user/ops"
	advisorGroup = "arn:aws:iam::111111111111:group/devs"
)

func advisorSim(t *testing.T) (*Sim, *Server, aws.Config) {
	t.Helper()
	w, err := ParseWorld([]byte(advisorWorld))
	if err != nil {
		t.Fatal(err)
	}
	s, srv := startSim(t, w, Options{Now: func() time.Time { return advisorNow }})
	return s, srv, iamTestConfig(srv, "AKIDROOT")
}

// advisorReport generates a report and reads it as a client must: it polls until the job
// completes (the first read answers IN_PROGRESS), then reads every page of pageSize.
func advisorReport(t *testing.T, c *iam.Client, arn string, gran types.AccessAdvisorUsageGranularityType, pageSize int32) []types.ServiceLastAccessed {
	t.Helper()
	ctx := context.Background()
	gen, err := c.GenerateServiceLastAccessedDetails(ctx, &iam.GenerateServiceLastAccessedDetailsInput{Arn: aws.String(arn), Granularity: gran})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(gen.JobId)
	if len(id) != 36 {
		t.Fatalf("JobId %q is not 36 characters", id)
	}
	polls := 0
	var page *iam.GetServiceLastAccessedDetailsOutput
	for {
		page, err = c.GetServiceLastAccessedDetails(ctx, &iam.GetServiceLastAccessedDetailsInput{JobId: gen.JobId, MaxItems: aws.Int32(pageSize)})
		if err != nil {
			t.Fatal(err)
		}
		polls++
		if page.JobStatus == types.JobStatusTypeCompleted {
			break
		}
		if page.JobStatus != types.JobStatusTypeInProgress || len(page.ServicesLastAccessed) != 0 || page.JobCompletionDate != nil || polls > 3 {
			t.Fatalf("poll %d: status %s, %d services, completion %v", polls, page.JobStatus, len(page.ServicesLastAccessed), page.JobCompletionDate)
		}
	}
	if polls != 2 {
		t.Errorf("the job completed at poll %d, want 2 (IN_PROGRESS first)", polls)
	}
	want := gran
	if want == "" {
		want = types.AccessAdvisorUsageGranularityTypeServiceLevel
	}
	if page.JobType != want || !page.JobCreationDate.Equal(advisorNow) || !page.JobCompletionDate.Equal(advisorNow) {
		t.Errorf("job type %s created %v completed %v", page.JobType, page.JobCreationDate, page.JobCompletionDate)
	}
	var all []types.ServiceLastAccessed
	for {
		if len(page.ServicesLastAccessed) > int(pageSize) || (page.IsTruncated && len(page.ServicesLastAccessed) != int(pageSize)) {
			t.Fatalf("page of %d services (truncated %v), want %d", len(page.ServicesLastAccessed), page.IsTruncated, pageSize)
		}
		if page.JobStatus != types.JobStatusTypeCompleted {
			t.Fatalf("a later page is %s", page.JobStatus)
		}
		all = append(all, page.ServicesLastAccessed...)
		if !page.IsTruncated {
			if page.Marker != nil {
				t.Errorf("last page has marker %q", aws.ToString(page.Marker))
			}
			break
		}
		if page, err = c.GetServiceLastAccessedDetails(ctx, &iam.GetServiceLastAccessedDetailsInput{JobId: gen.JobId,
			MaxItems: aws.Int32(pageSize), Marker: page.Marker}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.IsSortedFunc(all, func(a, b types.ServiceLastAccessed) int {
		return strings.Compare(aws.ToString(a.ServiceNamespace), aws.ToString(b.ServiceNamespace))
	}) {
		t.Errorf("services not sorted by namespace: %v", namespacesOf(all))
	}
	return all
}

func namespacesOf(svcs []types.ServiceLastAccessed) []string {
	var out []string
	for _, s := range svcs {
		out = append(out, aws.ToString(s.ServiceNamespace))
	}
	return out
}

func serviceIn(t *testing.T, svcs []types.ServiceLastAccessed, ns string) types.ServiceLastAccessed {
	t.Helper()
	for _, s := range svcs {
		if aws.ToString(s.ServiceNamespace) == ns {
			return s
		}
	}
	t.Fatalf("no service %s in %v", ns, namespacesOf(svcs))
	return types.ServiceLastAccessed{}
}

// wantUse checks a service's last use: at nil means never within the tracking period.
func wantUse(t *testing.T, s types.ServiceLastAccessed, at *time.Time, entity, region string, entities int32) {
	t.Helper()
	ns := aws.ToString(s.ServiceNamespace)
	if at == nil {
		if s.LastAuthenticated != nil || s.LastAuthenticatedEntity != nil || s.LastAuthenticatedRegion != nil || aws.ToInt32(s.TotalAuthenticatedEntities) != 0 {
			t.Errorf("%s: used %v by %s in %s (%d), want never", ns, s.LastAuthenticated, aws.ToString(s.LastAuthenticatedEntity),
				aws.ToString(s.LastAuthenticatedRegion), aws.ToInt32(s.TotalAuthenticatedEntities))
		}
		return
	}
	if s.LastAuthenticated == nil || !s.LastAuthenticated.Equal(*at) || aws.ToString(s.LastAuthenticatedEntity) != entity ||
		aws.ToString(s.LastAuthenticatedRegion) != region || aws.ToInt32(s.TotalAuthenticatedEntities) != entities {
		t.Errorf("%s: used %v by %s in %s (%d entities), want %v by %s in %s (%d)", ns, s.LastAuthenticated, aws.ToString(s.LastAuthenticatedEntity),
			aws.ToString(s.LastAuthenticatedRegion), aws.ToInt32(s.TotalAuthenticatedEntities), at, entity, region, entities)
	}
}

// actionsOf maps a service's tracked actions to their last use ("" when never).
func actionsOf(s types.ServiceLastAccessed) map[string]string {
	out := map[string]string{}
	for _, a := range s.TrackedActionsLastAccessed {
		v := ""
		if a.LastAccessedTime != nil {
			v = a.LastAccessedTime.UTC().Format(time.RFC3339) + " " + aws.ToString(a.LastAccessedRegion) + " " + aws.ToString(a.LastAccessedEntity)
		}
		out[aws.ToString(a.ActionName)] = v
	}
	return out
}

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func TestAccessAdvisor_role(t *testing.T) {
	s, srv, cfg := advisorSim(t)
	c := iam.NewFromConfig(cfg)

	for _, gran := range []types.AccessAdvisorUsageGranularityType{"", types.AccessAdvisorUsageGranularityTypeServiceLevel, types.AccessAdvisorUsageGranularityTypeActionLevel} {
		t.Run(string(gran), func(t *testing.T) {
			svcs := advisorReport(t, c, advisorRole, gran, 2)
			// dynamodb is denied outright, kms by the NotAction deny; lambda's deny has a
			// condition, so lambda stays.
			if got := namespacesOf(svcs); !slices.Equal(got, []string{"ec2", "lambda", "s3", "sts"}) {
				t.Fatalf("services %v", got)
			}
			wantUse(t, serviceIn(t, svcs, "ec2"), nil, "", "", 0) // a second too old
			wantUse(t, serviceIn(t, svcs, "lambda"), at("2026-06-01T00:00:00Z"), advisorRole, "eu-west-1", 1)
			wantUse(t, serviceIn(t, svcs, "s3"), at("2026-12-01T09:00:00Z"), advisorRole, "us-east-2", 1)
			wantUse(t, serviceIn(t, svcs, "sts"), at("2025-11-01T10:00:00Z"), advisorRole, "us-east-1", 1) // just within 400 days
			if aws.ToString(serviceIn(t, svcs, "s3").ServiceName) != "Amazon S3" || aws.ToString(serviceIn(t, svcs, "lambda").ServiceName) != "AWS Lambda" {
				t.Errorf("service names %q %q", aws.ToString(svcs[2].ServiceName), aws.ToString(svcs[1].ServiceName))
			}
			if gran != types.AccessAdvisorUsageGranularityTypeActionLevel {
				for _, sv := range svcs {
					if sv.TrackedActionsLastAccessed != nil {
						t.Errorf("%s: tracked actions at service level", aws.ToString(sv.ServiceNamespace))
					}
				}
				return
			}
			if got := actionsOf(serviceIn(t, svcs, "s3")); len(got) != 2 || got["GetObject"] != "2026-11-30T08:00:00Z eu-west-1 "+advisorRole || got["ListBucket"] != "" {
				t.Errorf("s3 actions %v", got)
			}
			if got := actionsOf(serviceIn(t, svcs, "lambda")); len(got) != 1 || got["InvokeFunction"] != "2026-06-01T00:00:00Z eu-west-1 "+advisorRole {
				t.Errorf("lambda actions %v", got)
			}
			if got := actionsOf(serviceIn(t, svcs, "sts")); len(got) != 1 || got["AssumeRole"] != "" {
				t.Errorf("sts actions %v", got)
			}
			// ec2: what ec2:Describe* grants of what the simulator serves, and the action
			// a record names; none used within the period.
			ec2Got := actionsOf(serviceIn(t, svcs, "ec2"))
			for _, n := range []string{"DescribeSecurityGroups", "DescribeRegions", "DescribeInstances"} {
				if v, ok := ec2Got[n]; !ok || v != "" {
					t.Errorf("ec2 action %s: %q, %v", n, v, ok)
				}
			}
			for n := range ec2Got {
				if !strings.HasPrefix(n, "Describe") {
					t.Errorf("ec2 action %s is not granted", n)
				}
			}
		})
	}

	// The role's own calls, through a session: used now, in the region they were signed
	// for. Assuming the role as the root user records nothing.
	ctx := context.Background()
	cr, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(advisorRole), RoleSessionName: aws.String("advisor")})
	if err != nil {
		t.Fatal(err)
	}
	var before int
	s.Do(func(w *World) { before = len(w.AWS.Accounts[0].Roles[0].LastAccessed) })
	if before != 6 {
		t.Errorf("%d records on the role after the root assumed it, want the 6 declared", before)
	}
	session := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL), Credentials: credentials.NewStaticCredentialsProvider(
		aws.ToString(cr.Credentials.AccessKeyId), aws.ToString(cr.Credentials.SecretAccessKey), aws.ToString(cr.Credentials.SessionToken))}
	if _, err := ec2.NewFromConfig(session).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
		t.Fatal(err)
	}
	// A job is answered to whoever generated it only: the session reads its own.
	svcs := advisorReport(t, iam.NewFromConfig(session), advisorRole, types.AccessAdvisorUsageGranularityTypeActionLevel, 2)
	ec2Svc := serviceIn(t, svcs, "ec2")
	wantUse(t, ec2Svc, &advisorNow, advisorRole, "eu-west-1", 1)
	if got := actionsOf(ec2Svc)["DescribeSecurityGroups"]; got != "2026-12-06T10:00:00Z eu-west-1 "+advisorRole {
		t.Errorf("DescribeSecurityGroups after the session's call: %q", got)
	}
	s.Do(func(w *World) {
		recs := w.AWS.Accounts[0].Roles[0].LastAccessed
		last := recs[len(recs)-1]
		// The session's calls: DescribeSecurityGroups, then GenerateServiceLastAccessedDetails
		// and the reads of the job (one record for both reads: the latest use is kept).
		if len(recs) != before+3 || last.Action != "iam:GetServiceLastAccessedDetails" || last.Service != "iam" || last.Region != "us-east-1" {
			t.Errorf("records %+v", recs[before:])
		}
	})
}

func TestAccessAdvisor_userAndGroup(t *testing.T) {
	s, srv, cfg := advisorSim(t)
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()

	// Before the user calls anything: the group's NotAction grants every service but IAM
	// and Organizations; the user's own policy adds nothing new.
	svcs := advisorReport(t, c, advisorUser, types.AccessAdvisorUsageGranularityTypeServiceLevel, 7)
	if len(svcs) != len(serviceCatalog)-2 || slices.Contains(namespacesOf(svcs), "iam") || slices.Contains(namespacesOf(svcs), "organizations") {
		t.Fatalf("user's services %v", namespacesOf(svcs))
	}
	for _, sv := range svcs {
		wantUse(t, sv, nil, "", "", 0)
	}

	// The user signs an EC2 call with its own key.
	user := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIADEV0000000000001", "dev-secret", "")}
	if _, err := ec2.NewFromConfig(user).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
		t.Fatal(err)
	}
	// and an S3 call, recorded under its IAM action (ListBuckets is s3:ListAllMyBuckets).
	if _, err := s3Client(user).ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
		t.Fatal(err)
	}
	svcs = advisorReport(t, c, advisorUser, types.AccessAdvisorUsageGranularityTypeActionLevel, 2)
	if got := actionsOf(serviceIn(t, svcs, "s3")); got["ListAllMyBuckets"] != "2026-12-06T10:00:00Z eu-west-1 "+advisorUser || got["GetObject"] != "" {
		t.Errorf("s3 actions %v", got)
	}
	ec2Svc := serviceIn(t, svcs, "ec2")
	wantUse(t, ec2Svc, &advisorNow, advisorUser, "eu-west-1", 1)
	acts := actionsOf(ec2Svc)
	if acts["DescribeSecurityGroups"] != "2026-12-06T10:00:00Z eu-west-1 "+advisorUser || acts["CreateSecurityGroup"] != "" {
		t.Errorf("ec2 actions %v", acts)
	}
	// kms is granted (by the NotAction) but not tracked at action level.
	if kms := serviceIn(t, svcs, "kms"); kms.TrackedActionsLastAccessed != nil {
		t.Errorf("kms has tracked actions %v", actionsOf(kms))
	}

	// The group: its members' latest use, and how many of them used each service.
	svcs = advisorReport(t, c, advisorGroup, types.AccessAdvisorUsageGranularityTypeActionLevel, 2)
	if len(svcs) != len(serviceCatalog)-2 {
		t.Fatalf("group's services %v", namespacesOf(svcs))
	}
	wantUse(t, serviceIn(t, svcs, "ec2"), &advisorNow, advisorUser, "eu-west-1", 2)
	s3Svc := serviceIn(t, svcs, "s3")
	wantUse(t, s3Svc, &advisorNow, advisorUser, "eu-west-1", 2)
	if got := actionsOf(s3Svc); got["PutObject"] != "2026-12-02T00:00:00Z us-west-2 "+advisorOps || got["GetObject"] != "" {
		t.Errorf("group's s3 actions %v", got)
	}
	wantUse(t, serviceIn(t, svcs, "lambda"), nil, "", "", 0)

	// The root's calls recorded nothing on anyone; the user's key recorded its two calls.
	s.Do(func(w *World) {
		a := w.AWS.Accounts[0]
		if n := len(a.Users[1].LastAccessed); n != 2 {
			t.Errorf("ops has %d records, want its 2", n)
		}
		if r := a.Users[0].LastAccessed; len(r) != 2 || r[0] != (AccessRecord{Service: "ec2", Action: "ec2:DescribeSecurityGroups", At: advisorNow, Region: "eu-west-1"}) ||
			r[1] != (AccessRecord{Service: "s3", Action: "s3:ListAllMyBuckets", At: advisorNow, Region: "eu-west-1"}) {
			t.Errorf("dev's records %+v", r)
		}
		if n := len(a.Roles[0].LastAccessed); n != 6 {
			t.Errorf("the role has %d records, want its 6", n)
		}
	})
}

func TestAccessAdvisor_errors(t *testing.T) {
	_, srv, cfg := advisorSim(t)
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	gen := func(arn string, gran types.AccessAdvisorUsageGranularityType) error {
		_, err := c.GenerateServiceLastAccessedDetails(ctx, &iam.GenerateServiceLastAccessedDetailsInput{Arn: aws.String(arn), Granularity: gran})
		return err
	}
	get := func(c *iam.Client, id string) error {
		_, err := c.GetServiceLastAccessedDetails(ctx, &iam.GetServiceLastAccessedDetailsInput{JobId: aws.String(id)})
		return err
	}
	iamWantErr(t, gen("arn:aws:iam::111111111111:role/nobody", ""), "NoSuchEntity", 404)
	iamWantErr(t, gen("arn:aws:iam::222222222222:role/app", ""), "NoSuchEntity", 404) // another account's
	iamWantErr(t, gen("not an arn at all", ""), "InvalidInput", 400)
	iamWantErr(t, gen(advisorRole, "EVERYTHING"), "InvalidInput", 400)
	iamWantErr(t, get(c, "00000000-0000-0000-0000-000000000000"), "NoSuchEntity", 404)
	iamWantErr(t, get(c, "short"), "ValidationError", 400)

	out, err := c.GenerateServiceLastAccessedDetails(ctx, &iam.GenerateServiceLastAccessedDetailsInput{Arn: aws.String(advisorRole)})
	if err != nil {
		t.Fatal(err)
	}
	// Another principal (the user dev) cannot read the root's job.
	dev := iam.NewFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIADEV0000000000001", "dev-secret", "")})
	iamWantErr(t, get(dev, aws.ToString(out.JobId)), "NoSuchEntity", 404)
	_, err = c.GetServiceLastAccessedDetails(ctx, &iam.GetServiceLastAccessedDetailsInput{JobId: out.JobId, Marker: aws.String("bogus")})
	iamWantErr(t, err, "ValidationError", 400)
}

func TestPolicyGrants(t *testing.T) {
	g := policyGrants([]Doc{
		`{"Statement":{"Effect":"Allow","Action":["S3:Get*","ec2:Describe?ecurityGroups"],"Resource":"*"}}`,
		`{"Statement":[{"Effect":"Allow","NotAction":"iam:*","Resource":"*"},{"Effect":"Deny","Action":"kms:*","Resource":"*"},
		  {"Effect":"Deny","Action":"sqs:*","Resource":"arn:aws:sqs:*:*:q"},{"Effect":"Deny","Action":"sns:Publish","Resource":"*"}]}`,
		`not json`,
	})
	for _, tc := range []struct {
		ns   string
		want bool
	}{{"s3", true}, {"ec2", true}, {"iam", false}, {"kms", false}, {"sqs", true}, {"sns", true}, {"custom", true}} {
		if got := g.allowsService(tc.ns); got != tc.want {
			t.Errorf("allowsService(%s) = %v", tc.ns, got)
		}
	}
	for _, tc := range []struct {
		action string
		want   bool
	}{{"s3:GetObject", true}, {"ec2:DescribeSecurityGroups", true}, {"iam:GetUser", false}, {"kms:Decrypt", false},
		{"sns:Publish", false}, {"sns:Subscribe", true}, {"sqs:SendMessage", true}} {
		if got := g.allowsAction(tc.action); got != tc.want {
			t.Errorf("allowsAction(%s) = %v", tc.action, got)
		}
	}
	if ns := policyGrants([]Doc{`{"Statement":{"Effect":"Allow","Action":["s3:Get*","*:List*","custom:Do"]}}`}).namespaces(); !slices.Equal(ns, []string{"s3", "custom"}) {
		t.Errorf("namespaces %v", ns)
	}
	for _, tc := range []struct {
		p, s string
		want bool
	}{{"*", "", true}, {"a*c", "abbc", true}, {"a?c", "abc", true}, {"a?c", "ac", false}, {"*b*", "abc", true}, {"ab", "abc", false}, {"a*", "b", false}} {
		if got := glob.Match(tc.p, tc.s); got != tc.want {
			t.Errorf("glob.Match(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}

// TestAccessAdvisor_concurrent records calls made at once while reports are generated:
// one record per action however many calls (run it with -race).
func TestAccessAdvisor_concurrent(t *testing.T) {
	s, srv, cfg := advisorSim(t)
	user := ec2.NewFromConfig(aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIADEV0000000000001", "dev-secret", "")})
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	errs := make(chan error, 5)
	for range 4 {
		go func() {
			var err error
			for range 10 {
				if _, err = user.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	go func() {
		var err error
		for range 10 {
			if _, err = c.GenerateServiceLastAccessedDetails(ctx, &iam.GenerateServiceLastAccessedDetailsInput{Arn: aws.String(advisorGroup)}); err != nil {
				break
			}
		}
		errs <- err
	}()
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s.Do(func(w *World) {
		if r := w.AWS.Accounts[0].Users[0].LastAccessed; len(r) != 1 || r[0].Action != "ec2:DescribeSecurityGroups" {
			t.Errorf("dev's records after 40 calls: %+v", r)
		}
	})
	if n := s.Calls()["ec2:DescribeSecurityGroups"].Calls; n != 40 {
		t.Errorf("%d calls served, want 40", n)
	}
}
