package cloudsim

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// genMgmt is the management account of the test organisations: the first generated one.
const genMgmt = "200000000000"

var genRegions = []string{"us-east-1", "eu-west-1"}

// genTestWorld is an organisation of n generated accounts of about resources each.
func genTestWorld(n, resources, cache int, seed uint64) *World {
	return &World{AWS: AWS{Organization: &Organization{ID: "o-gen0000001", Management: genMgmt,
		Generated: &GeneratedAccounts{Accounts: n, Seed: seed, Resources: resources, Cache: cache, Regions: genRegions}}}}
}

// fixedClock is a simulator clock that does not move, so that two simulators stamp the
// same times.
func fixedClock() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }

// assumeInto returns a configuration acting in member account acct as
// OrganizationAccountAccessRole, the way warden's collector enters member accounts.
func assumeInto(t testing.TB, cfg aws.Config, acct string) aws.Config {
	t.Helper()
	out, err := sts.NewFromConfig(cfg).AssumeRole(context.Background(), &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::" + acct + ":role/OrganizationAccountAccessRole"), RoleSessionName: aws.String("warden")})
	if err != nil {
		t.Fatalf("assume role in %s: %v", acct, err)
	}
	c := cfg.Copy()
	cr := out.Credentials
	c.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken))
	return c
}

// readAccount reads an account the way a collection does — IAM's authorization details
// and credential report, every region's security groups — and returns each resource's
// content by "type/key". OrganizationAccountAccessRole is left out: the reads themselves
// record its use.
func readAccount(t testing.TB, cfg aws.Config) map[string]string {
	t.Helper()
	out, err := readAccountE(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readAccountE is readAccount, for goroutines other than the test's: the first error
// ends the read.
func readAccountE(cfg aws.Config) (map[string]string, error) {
	ctx := context.Background()
	out := map[string]string{}
	put := func(key string, v any) {
		b, _ := json.Marshal(v)
		out[key] = string(b)
	}
	ic := iam.NewFromConfig(cfg)
	p := iam.NewGetAccountAuthorizationDetailsPaginator(ic, &iam.GetAccountAuthorizationDetailsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("GetAccountAuthorizationDetails: %w", err)
		}
		for _, u := range page.UserDetailList {
			put("user/"+aws.ToString(u.UserName), u)
		}
		for _, r := range page.RoleDetailList {
			if aws.ToString(r.RoleName) != "OrganizationAccountAccessRole" {
				put("role/"+aws.ToString(r.RoleName), r)
			}
		}
		for _, g := range page.GroupDetailList {
			put("group/"+aws.ToString(g.GroupName), g)
		}
		for _, pol := range page.Policies {
			put("policy/"+aws.ToString(pol.Arn), pol)
		}
	}
	if _, err := ic.GenerateCredentialReport(ctx, &iam.GenerateCredentialReportInput{}); err != nil {
		return nil, fmt.Errorf("GenerateCredentialReport: %w", err)
	}
	rep, err := ic.GetCredentialReport(ctx, &iam.GetCredentialReportInput{})
	if err != nil {
		return nil, fmt.Errorf("GetCredentialReport: %w", err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(rep.Content))).ReadAll()
	if err != nil {
		return nil, err
	}
	for _, row := range rows[1:] {
		if row[0] != "<root_account>" {
			// The user's keys (access_key_N_active, _last_rotated): a key created changes them.
			out["user/"+row[0]] += "|" + strings.Join(row[8:10], ",") + "|" + strings.Join(row[13:15], ",")
		}
	}
	for _, region := range genRegions {
		ec := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Region = region })
		sp := ec2.NewDescribeSecurityGroupsPaginator(ec, &ec2.DescribeSecurityGroupsInput{})
		for sp.HasMorePages() {
			page, err := sp.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("DescribeSecurityGroups %s: %w", region, err)
			}
			for _, g := range page.SecurityGroups {
				put("sg/"+aws.ToString(g.GroupId), g)
			}
		}
	}
	return out, nil
}

// changed counts the resources of after that are not as in before (new ones included).
func changed(before, after map[string]string) int {
	n := 0
	for k, v := range after {
		if before[k] != v {
			n++
		}
	}
	return n
}

// The same seed and account give the same content, whether the account is built for the
// first time, built again after it was dropped (a cache of one account), or built by
// another simulator; another seed gives other content.
func TestGenerated_sameContentAcrossEviction(t *testing.T) {
	sim, cfg := sdkSim(t, genTestWorld(3, 400, 1, 7), Options{Now: fixedClock})
	a, b := "200000000001", "200000000002"
	first := readAccount(t, assumeInto(t, cfg, a))
	if len(first) < 300 {
		t.Fatalf("account %s holds %d resources; want about 400", a, len(first))
	}
	readAccount(t, assumeInto(t, cfg, b)) // drops a
	again := readAccount(t, assumeInto(t, cfg, a))
	if d := changed(first, again); d != 0 || len(again) != len(first) {
		t.Errorf("account %s read again after its eviction: %d of %d resources differ", a, d, len(first))
	}
	sim.Do(func(*World) {
		if sim.gen.cache.built < 3 || sim.gen.cache.evicted < 2 || sim.gen.cache.lru.Len() != 1 {
			t.Errorf("built %d, evicted %d, held %d; want a, b, a built, two dropped, one held", sim.gen.cache.built, sim.gen.cache.evicted, sim.gen.cache.lru.Len())
		}
	})

	_, cfg2 := sdkSim(t, genTestWorld(3, 400, 1, 7), Options{Now: fixedClock})
	if d := changed(first, readAccount(t, assumeInto(t, cfg2, a))); d != 0 {
		t.Errorf("another simulator with the same seed: %d resources differ", d)
	}
	_, cfg3 := sdkSim(t, genTestWorld(3, 400, 1, 8), Options{Now: fixedClock})
	if d := changed(first, readAccount(t, assumeInto(t, cfg3, a))); d == 0 {
		t.Errorf("another seed gives the same account")
	}
}

// Writes to a generated account survive its eviction: settings, a resource changed, one
// added, one removed.
func TestGenerated_writeSurvivesEviction(t *testing.T) {
	sim, cfg := sdkSim(t, genTestWorld(3, 400, 1, 7), Options{})
	ctx := context.Background()
	a, b := "200000000001", "200000000002"
	ca := assumeInto(t, cfg, a)
	pre := readAccount(t, ca)
	ic := iam.NewFromConfig(ca)
	if _, err := ic.UpdateAccountPasswordPolicy(ctx, &iam.UpdateAccountPasswordPolicyInput{MinimumPasswordLength: aws.Int32(21)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ic.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("alice")}); err != nil {
		t.Fatal(err)
	}
	if _, err := ic.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String("svc-00001"), PolicyName: aws.String("logs")}); err != nil {
		t.Fatal(err)
	}
	if _, err := ic.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String("svc-00001")}); err != nil {
		t.Fatal(err)
	}
	ec := ec2.NewFromConfig(ca)
	if _, err := ec.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String("sg-00000000000000001"),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(22), ToPort: aws.Int32(22),
			IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}}); err != nil {
		t.Fatal(err)
	}
	written := readAccount(t, ca)
	if _, ok := written["user/alice"]; !ok {
		t.Fatal("alice was not created")
	}
	if _, ok := written["role/svc-00001"]; ok {
		t.Fatal("svc-00001 was not deleted")
	}
	// alice added, the group changed; svc-00001 gone.
	if d := changed(pre, written); d != 2 || len(written) != len(pre) {
		t.Fatalf("the writes changed %d resources, %d then %d; want 2 changed, as many", d, len(pre), len(written))
	}

	readAccount(t, assumeInto(t, cfg, b)) // drops a
	sim.Do(func(*World) {
		ov := sim.gen.cache.overlays[a]
		if _, held := sim.gen.cache.byID[a]; held || ov == nil {
			t.Fatalf("account %s held %v, overlay %v: want it dropped with an overlay", a, held, ov)
		}
		// alice, svc-00001 deleted, the group, and OrganizationAccountAccessRole's last use;
		// the password policy in the header.
		if n, whole := ov.size(); n != 4 || whole || !ov.header.IsValid() {
			t.Errorf("overlay of %d resources (whole list %v, header %v); want 4 and the header", n, whole, ov.header.IsValid())
		}
	})
	ca = assumeInto(t, cfg, a)
	again := readAccount(t, ca)
	if d := changed(written, again); d != 0 || len(again) != len(written) {
		t.Errorf("after eviction %d of %d resources differ from what was written (%d now)", d, len(written), len(again))
	}
	pp, err := iam.NewFromConfig(ca).GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
	if err != nil || aws.ToInt32(pp.PasswordPolicy.MinimumPasswordLength) != 21 {
		if err == nil {
			err = fmt.Errorf("minimum length %d", aws.ToInt32(pp.PasswordPolicy.MinimumPasswordLength))
		}
		t.Errorf("password policy after eviction: %v; want the minimum length 21 written", err)
	}
}

// The organisation lists every generated account after the listed ones, page by page,
// without building any; DescribeAccount answers for them too.
func TestOrgGenerated_listAccounts(t *testing.T) {
	w := &World{AWS: AWS{
		Organization: &Organization{ID: "o-gen0000001", Management: "111111111111",
			Generated: &GeneratedAccounts{Accounts: 45, FirstID: "300000000000"}},
		Accounts: []*Account{{ID: "111111111111", Name: "management"}},
	}}
	sim, cfg := sdkSim(t, w, Options{})
	client := organizations.NewFromConfig(cfg)
	ctx := context.Background()
	var ids []string
	pages := 0
	p := organizations.NewListAccountsPaginator(client, &organizations.ListAccountsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, a := range page.Accounts {
			ids = append(ids, aws.ToString(a.Id))
		}
	}
	want := []string{"111111111111"}
	for i := range 45 {
		want = append(want, fmt.Sprintf("3%011d", i))
	}
	if !slices.Equal(ids, want) || pages != 3 {
		t.Errorf("ListAccounts: %d accounts in %d pages, %v…; want 46 in 3 pages", len(ids), pages, ids[:min(3, len(ids))])
	}
	d, err := client.DescribeAccount(ctx, &organizations.DescribeAccountInput{AccountId: aws.String("300000000044")})
	if err != nil || aws.ToString(d.Account.Name) != "org-00044" || aws.ToString(d.Account.Email) != "aws+300000000044@org.example" {
		t.Errorf("DescribeAccount 300000000044 = %+v, %v", d, err)
	}
	if _, err := client.DescribeAccount(ctx, &organizations.DescribeAccountInput{AccountId: aws.String("300000000045")}); sdkErrCode(err) != "AccountNotFoundException" {
		t.Errorf("DescribeAccount past the last account: %v", err)
	}
	sim.Do(func(*World) {
		if sim.gen.cache.built != 0 {
			t.Errorf("listing built %d accounts; want none", sim.gen.cache.built)
		}
	})
	// A member's own calls find its generated account.
	id, err := sts.NewFromConfig(assumeInto(t, cfg, "300000000007")).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(id.Account) != "300000000007" {
		t.Errorf("GetCallerIdentity in a generated member = %+v, %v", id, err)
	}
}

// About fault_share of the member accounts refuse their calls, each with one of the
// faults, drawn the same way by every simulator of the seed; the management account never.
func TestGenerated_faultShare(t *testing.T) {
	const n, share = 400, 0.2
	faulty := func() map[string]string {
		w := genTestWorld(n, 20, 4, 3)
		w.AWS.Organization.Generated.FaultShare = share
		w.AWS.Organization.Generated.Faults = []Fault{{AccessDenied: true}, {ThrottleRate: 1}, {ErrorRate: 1}}
		_, cfg := sdkSim(t, w, Options{})
		out := map[string]string{}
		for i := range n {
			acct := fmt.Sprintf("2%011d", i)
			c := cfg
			if acct != genMgmt {
				c = assumeInto(t, cfg, acct)
			}
			_, err := iam.NewFromConfig(c, func(o *iam.Options) { o.RetryMaxAttempts = 1 }).ListRoles(context.Background(), &iam.ListRolesInput{MaxItems: aws.Int32(1)})
			if err != nil {
				out[acct] = sdkErrCode(err)
			}
		}
		return out
	}
	got := faulty()
	kinds := map[string]int{}
	for _, code := range got {
		kinds[code]++
	}
	// 399 members, 20% each: 80 expected, σ = 8.
	if len(got) < 56 || len(got) > 104 {
		t.Errorf("%d of %d accounts refuse; want about %.0f", len(got), n-1, share*(n-1))
	}
	if len(kinds) != 3 || kinds["AccessDenied"] == 0 || kinds["Throttling"] == 0 || kinds["ServiceUnavailable"] == 0 {
		t.Errorf("refusals by code %v; want AccessDenied, Throttling and ServiceUnavailable", kinds)
	}
	if _, ok := got[genMgmt]; ok {
		t.Error("the management account refuses")
	}
	again := faulty()
	if len(again) != len(got) {
		t.Errorf("another simulator of the seed: %d faulty accounts, then %d", len(got), len(again))
	}
	for acct, code := range got {
		if again[acct] != code {
			t.Errorf("account %s: %s, then %q", acct, code, again[acct])
		}
	}
	t.Logf("%d of %d accounts refuse: %v", len(got), n-1, kinds)
}

// A drift epoch changes about drift_rate of the generated accounts' resources, the same
// ones in every simulator of the seed, and nothing else changes on further reads, accounts
// dropped and built again in between.
func TestGenerated_driftRate(t *testing.T) {
	const n, rate = 12, 0.05
	w := genTestWorld(n, 500, 3, 11)
	w.AWS.Organization.Generated.DriftRate = rate
	_, cfg := sdkSim(t, w, Options{Now: fixedClock})
	srvURL := aws.ToString(cfg.BaseEndpoint)
	// read reads the members in order, or from the last when backwards: the last read
	// are then still held, so that the drift reaches them in the cache as well as when
	// they are built again.
	read := func(c aws.Config, backwards bool) []map[string]string {
		out := make([]map[string]string, n-1)
		for j := range n - 1 {
			i := j + 1
			if backwards {
				i = n - 1 - j
			}
			out[i-1] = readAccount(t, assumeInto(t, c, fmt.Sprintf("2%011d", i)))
		}
		return out
	}
	before := read(cfg, false)
	resp, err := http.Post(srvURL+"/_sim/drift", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ep struct{ Epoch int }
	if err := json.NewDecoder(resp.Body).Decode(&ep); err != nil || resp.StatusCode != 200 || ep.Epoch != 1 {
		t.Fatalf("POST /_sim/drift: %s, %+v, %v", resp.Status, ep, err)
	}
	resp.Body.Close()
	after := read(cfg, true)
	total, diff := 0, 0
	for i := range before {
		total += len(before[i])
		diff += changed(before[i], after[i])
	}
	got := float64(diff) / float64(total)
	// About 5,500 resources: 275 expected, σ ≈ 16.
	if got < rate*0.8 || got > rate*1.2 {
		t.Errorf("drift changed %d of %d resources (%.2f%%); want about %.0f%%", diff, total, 100*got, 100*rate)
	}
	t.Logf("drift changed %d of %d resources: %.2f%%", diff, total, 100*got)
	resp, err = http.Get(srvURL + "/_sim/generated")
	if err != nil {
		t.Fatal(err)
	}
	var stats map[string]GeneratedStats
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	st := stats["aws"]
	resp.Body.Close()
	// 11 members read twice, each read building the account but for the 3 still held (a
	// cache of 3); the 8 dropped each with an overlay: its role's recorded use.
	if st.Members != n || st.Cache != 3 || st.Held != 3 || st.Built != 2*(n-1)-3 || st.Evicted != st.Built-3 ||
		st.DriftEpochs != 1 || st.Overlays != n-1-3 {
		t.Errorf("GET /_sim/generated: %+v", st)
	}
	stable := read(cfg, false)
	for i := range after {
		if d := changed(after[i], stable[i]); d != 0 {
			t.Errorf("account %d: %d resources changed with no drift", i+1, d)
		}
	}

	// Another simulator of the seed, building the accounts after the drift, drifts the
	// same resources: of an account held at the drift (11), of one dropped before it (4).
	sim2, cfg2 := sdkSim(t, w, Options{Now: fixedClock})
	if _, err := sim2.Drift(0); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{11, 4} {
		other := readAccount(t, assumeInto(t, cfg2, fmt.Sprintf("2%011d", i)))
		if d := changed(after[i-1], other); d != 0 {
			t.Errorf("another simulator of the seed: %d resources of account %d differ after the same drift", d, i)
		}
	}
}

// The world file's generated organisation: parsed, checked, and counted.
func TestGenerated_worldFile(t *testing.T) {
	ok := `aws:
  organization:
    id: o-generated1
    management: "200000000000"
    generated: {accounts: 500, seed: 1, resources: 4000, fault_share: 0.05, faults: [{access_denied: true}], drift_rate: 0.01}
`
	w, err := ParseWorld([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if w.AWS.AccountCount() != 500 || w.AWS.Organization.Generated.FaultShare != 0.05 {
		t.Errorf("parsed %+v: %d accounts", w.AWS.Organization.Generated, w.AWS.AccountCount())
	}
	for _, tc := range []struct{ name, gen, mgmt, want string }{
		{"no accounts", "{accounts: 0}", "200000000000", "accounts: want at least 1"},
		{"management outside", "{accounts: 5}", "200000000005", `management: "200000000005" is not one of aws.accounts`},
		{"bad first id", "{accounts: 5, first_id: '12'}", "200000000000", "first_id"},
		{"share", "{accounts: 5, fault_share: 1.5}", "200000000000", "fault_share and drift_rate"},
		{"fault account", "{accounts: 5, faults: [{account: '200000000001', access_denied: true}]}", "200000000000", "faults[0].account"},
		{"past the last id", "{accounts: 5, first_id: '999999999998'}", "999999999998", "run past"},
	} {
		_, err := ParseWorld([]byte("aws:\n  organization:\n    id: o-x\n    management: \"" + tc.mgmt + "\"\n    generated: " + tc.gen + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error with %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, gen, want string }{
		{"no projects", "{projects: 0}", "projects: want at least 1"},
		{"bad prefix", "{projects: 2, prefix: Gen}", "prefix"},
		{"bad parent", "{projects: 2, parent: projects/x}", "parent"},
		{"listed and generated", "{projects: 2}\n  projects: [{id: gen-proj-00001, number: '1'}]", "also in gcp.projects"},
	} {
		_, err := ParseWorld([]byte("gcp:\n  generated: " + tc.gen + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("gcp %s: %v; want an error with %q", tc.name, err, tc.want)
		}
	}
	if w, err := ParseWorld([]byte("gcp:\n  generated: {projects: 40, parent: organizations/1}\n  projects: [{id: mine-123, number: '5'}]\n")); err != nil || w.GCP.ProjectCount() != 41 {
		t.Errorf("gcp.generated: %v", err)
	}
	listed := ok + "  accounts:\n    - id: \"200000000003\"\n"
	if _, err := ParseWorld([]byte(listed)); err == nil || !strings.Contains(err.Error(), "also in aws.accounts") {
		t.Errorf("a listed account among the generated ones: %v", err)
	}

	// The example world: 500 accounts listed, none built to list them.
	w, err = LoadWorld("testdata/generated-org.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sim, cfg := sdkSim(t, w, Options{})
	n := 0
	p := organizations.NewListAccountsPaginator(organizations.NewFromConfig(cfg), &organizations.ListAccountsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Accounts)
	}
	sim.Do(func(*World) {
		if n != 500 || sim.gen.cache.built != 0 {
			t.Errorf("testdata/generated-org.yaml: %d accounts listed, %d built; want 500, none", n, sim.gen.cache.built)
		}
	})
}

// With IAM enforced, a member's OrganizationAccountAccessRole session may do anything, and
// keeps acting as its role, as it is now, after the account was dropped and built again.
func TestGenerated_enforceIAMAcrossEviction(t *testing.T) {
	w := genTestWorld(3, 100, 1, 5)
	w.AWS.EnforceIAM = true
	_, cfg := sdkSim(t, w, Options{})
	ctx := context.Background()
	ca := assumeInto(t, cfg, "200000000001")
	list := func() error {
		_, err := iam.NewFromConfig(ca).ListRoles(ctx, &iam.ListRolesInput{MaxItems: aws.Int32(1)})
		return err
	}
	if err := list(); err != nil {
		t.Fatalf("ListRoles as OrganizationAccountAccessRole: %v", err)
	}
	readAccount(t, assumeInto(t, cfg, "200000000002")) // drops 200000000001
	if err := list(); err != nil {
		t.Errorf("ListRoles with the session, its account built again: %v", err)
	}
	ic := iam.NewFromConfig(ca)
	if _, err := ic.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String("OrganizationAccountAccessRole"),
		PolicyArn: aws.String("arn:aws:iam::aws:policy/AdministratorAccess")}); err != nil {
		t.Fatal(err)
	}
	readAccount(t, assumeInto(t, cfg, "200000000002"))
	if err := list(); sdkErrCode(err) != "AccessDenied" {
		t.Errorf("ListRoles with the session of a role whose policy was detached, its account built again: %v; want AccessDenied", err)
	}
}

// Clients reading more accounts at once than the cache holds each get the accounts'
// content, whatever the others make the cache drop.
func TestGenerated_concurrentReads(t *testing.T) {
	_, cfg := sdkSim(t, genTestWorld(9, 100, 2, 9), Options{Now: fixedClock})
	want := map[string]map[string]string{}
	for i := 1; i < 9; i++ {
		id := fmt.Sprintf("2%011d", i)
		want[id] = readAccount(t, assumeInto(t, cfg, id))
	}
	// The sessions are taken first: assumeInto may only fail the test from its goroutine.
	sessions := map[string]aws.Config{}
	for id := range want {
		sessions[id] = assumeInto(t, cfg, id)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 4 {
				id := fmt.Sprintf("2%011d", (g+k)%8+1)
				got, err := readAccountE(sessions[id])
				if d := changed(want[id], got); err != nil || d != 0 || len(got) != len(want[id]) {
					t.Errorf("reader %d, account %s: %d resources differ, %v", g, id, d, err)
				}
			}
		})
	}
	wg.Wait()
}
