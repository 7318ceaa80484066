package cloudsim

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/csv"
	"encoding/pem"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// gaadAll reads every page of GetAccountAuthorizationDetails.
func gaadAll(t *testing.T, c *iam.Client, filter []types.EntityType, pageSize int32) (*iam.GetAccountAuthorizationDetailsOutput, int) {
	t.Helper()
	all := &iam.GetAccountAuthorizationDetailsOutput{}
	pages := 0
	p := iam.NewGetAccountAuthorizationDetailsPaginator(c, &iam.GetAccountAuthorizationDetailsInput{Filter: filter, MaxItems: aws.Int32(pageSize)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n := len(out.UserDetailList) + len(out.GroupDetailList) + len(out.RoleDetailList) + len(out.Policies); n > int(pageSize) {
			t.Fatalf("page of %d entities, want at most %d", n, pageSize)
		}
		pages++
		all.UserDetailList = append(all.UserDetailList, out.UserDetailList...)
		all.GroupDetailList = append(all.GroupDetailList, out.GroupDetailList...)
		all.RoleDetailList = append(all.RoleDetailList, out.RoleDetailList...)
		all.Policies = append(all.Policies, out.Policies...)
	}
	return all, pages
}

func TestIAMAccountAuthorizationDetails(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	all, pages := gaadAll(t, c, nil, 2)
	// 3 users, 1 group, 2 roles, 2 local policies and the one AWS-managed policy in use
	// (ReadOnlyAccess is held but attached to nothing, so IAM leaves it out).
	if len(all.UserDetailList) != 3 || len(all.GroupDetailList) != 1 || len(all.RoleDetailList) != 2 || len(all.Policies) != 3 || pages != 5 {
		t.Fatalf("GAAD: %d users, %d groups, %d roles, %d policies in %d pages", len(all.UserDetailList), len(all.GroupDetailList),
			len(all.RoleDetailList), len(all.Policies), pages)
	}

	alice := all.UserDetailList[0]
	if aws.ToString(alice.UserName) != "alice" || !slices.Equal(alice.GroupList, []string{"admins"}) || len(alice.Tags) != 2 ||
		len(alice.AttachedManagedPolicies) != 1 || aws.ToString(alice.AttachedManagedPolicies[0].PolicyName) != "AdministratorAccess" {
		t.Errorf("alice = %+v", alice)
	}
	// Documents are URL-encoded as IAM sends them: spaces as %20, '+' as %2B.
	raw := aws.ToString(alice.UserPolicyList[0].PolicyDocument)
	if !strings.Contains(raw, "a%20b%2Bc") || decodeDoc(t, &raw) != iamS3Doc {
		t.Errorf("alice's inline policy %q", raw)
	}
	deployer := all.RoleDetailList[0]
	if decodeDoc(t, deployer.AssumeRolePolicyDocument) != iamTrust || deployer.RoleLastUsed == nil ||
		aws.ToString(deployer.RoleLastUsed.Region) != "eu-west-1" || !deployer.RoleLastUsed.LastUsedDate.Equal(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)) ||
		len(deployer.AttachedManagedPolicies) != 1 || len(deployer.Tags) != 1 || aws.ToString(deployer.Path) != "/ci/" {
		t.Errorf("deployer = %+v", deployer)
	}
	if idle := all.RoleDetailList[1]; len(idle.RolePolicyList) != 1 || decodeDoc(t, idle.RolePolicyList[0].PolicyDocument) != iamS3Doc {
		t.Errorf("idle = %+v", idle)
	}
	if g := all.GroupDetailList[0]; len(g.GroupPolicyList) != 1 || len(g.AttachedManagedPolicies) != 1 {
		t.Errorf("admins = %+v", g)
	}

	byName := map[string]types.ManagedPolicyDetail{}
	for _, p := range all.Policies {
		byName[aws.ToString(p.PolicyName)] = p
	}
	deploy := byName["deploy"]
	if aws.ToInt32(deploy.AttachmentCount) != 2 || aws.ToString(deploy.DefaultVersionId) != "v2" || !deploy.IsAttachable ||
		len(deploy.PolicyVersionList) != 2 || aws.ToString(deploy.Description) != "deploy lambdas" {
		t.Errorf("deploy = %+v", deploy)
	}
	for _, v := range deploy.PolicyVersionList {
		want := map[string]string{"v1": iamS3Doc, "v2": iamDeployDoc}[aws.ToString(v.VersionId)]
		if decodeDoc(t, v.Document) != want || v.IsDefaultVersion != (aws.ToString(v.VersionId) == "v2") || v.CreateDate == nil {
			t.Errorf("deploy version %+v", v)
		}
	}
	admin := byName["AdministratorAccess"]
	if aws.ToString(admin.Arn) != "arn:aws:iam::aws:policy/AdministratorAccess" || aws.ToInt32(admin.AttachmentCount) != 1 ||
		decodeDoc(t, admin.PolicyVersionList[0].Document) != string(awsPlaceholderDoc) {
		t.Errorf("AdministratorAccess = %+v", admin)
	}
	if u := byName["unused"]; aws.ToInt32(u.AttachmentCount) != 0 || aws.ToString(u.Arn) != "arn:aws:iam::111111111111:policy/x/unused" {
		t.Errorf("unused = %+v", u)
	}

	filters := []struct {
		filter                         []types.EntityType
		users, groups, roles, policies int
	}{
		{[]types.EntityType{types.EntityTypeUser}, 3, 0, 0, 0},
		{[]types.EntityType{types.EntityTypeRole, types.EntityTypeGroup}, 0, 1, 2, 0},
		{[]types.EntityType{types.EntityTypeLocalManagedPolicy}, 0, 0, 0, 2},
		{[]types.EntityType{types.EntityTypeAWSManagedPolicy}, 0, 0, 0, 1},
		{[]types.EntityType{types.EntityTypeUser, types.EntityTypeRole, types.EntityTypeGroup, types.EntityTypeLocalManagedPolicy, types.EntityTypeAWSManagedPolicy}, 3, 1, 2, 3},
	}
	for _, tc := range filters {
		got, _ := gaadAll(t, c, tc.filter, 1000)
		if len(got.UserDetailList) != tc.users || len(got.GroupDetailList) != tc.groups || len(got.RoleDetailList) != tc.roles || len(got.Policies) != tc.policies {
			t.Errorf("filter %v: %d users, %d groups, %d roles, %d policies; want %d %d %d %d", tc.filter, len(got.UserDetailList),
				len(got.GroupDetailList), len(got.RoleDetailList), len(got.Policies), tc.users, tc.groups, tc.roles, tc.policies)
		}
	}
}

func TestIAMCredentialReport(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()

	_, err := c.GetCredentialReport(ctx, &iam.GetCredentialReportInput{})
	var np *types.CredentialReportNotPresentException
	if !errors.As(err, &np) {
		t.Fatalf("GetCredentialReport before generating: %v, want ReportNotPresent", err)
	}
	iamWantErr(t, err, "ReportNotPresent", 410)

	g, err := c.GenerateCredentialReport(ctx, &iam.GenerateCredentialReportInput{})
	if err != nil || g.State != types.ReportStateTypeComplete {
		t.Fatalf("GenerateCredentialReport = %+v, %v; want COMPLETE", g, err)
	}
	rep, err := c.GetCredentialReport(ctx, &iam.GetCredentialReportInput{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ReportFormat != types.ReportFormatTypeTextCsv || !rep.GeneratedTime.Equal(iamTestNow) {
		t.Errorf("report format %s generated %v", rep.ReportFormat, rep.GeneratedTime)
	}
	rows, err := csv.NewReader(bytes.NewReader(rep.Content)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	const header = "user,arn,user_creation_time,password_enabled,password_last_used,password_last_changed,password_next_rotation,mfa_active,access_key_1_active,access_key_1_last_rotated,access_key_1_last_used_date,access_key_1_last_used_region,access_key_1_last_used_service,access_key_2_active,access_key_2_last_rotated,access_key_2_last_used_date,access_key_2_last_used_region,access_key_2_last_used_service,cert_1_active,cert_1_last_rotated,cert_2_active,cert_2_last_rotated"
	if got := strings.SplitN(string(rep.Content), "\n", 2)[0]; got != header {
		t.Fatalf("header\n%s\nwant\n%s", got, header)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want header, root and 3 users", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	tests := []struct {
		row  int
		want map[string]string
	}{
		{1, map[string]string{"user": "<root_account>", "arn": "arn:aws:iam::111111111111:root", "user_creation_time": "2025-01-01T00:00:00+00:00",
			"password_enabled": "not_supported", "password_last_used": "2026-11-30T08:00:00+00:00", "password_last_changed": "not_supported",
			"password_next_rotation": "not_supported", "mfa_active": "false", "access_key_1_active": "true", "access_key_1_last_used_date": "N/A",
			"access_key_2_active": "false", "access_key_2_last_rotated": "N/A", "cert_1_active": "false", "cert_2_last_rotated": "N/A"}},
		{2, map[string]string{"user": "alice", "arn": "arn:aws:iam::111111111111:user/alice", "password_enabled": "true",
			"password_last_used": "2026-11-30T08:00:00+00:00", "password_last_changed": "2026-06-01T00:00:00+00:00",
			"password_next_rotation": "2026-08-30T00:00:00+00:00", "mfa_active": "true",
			"access_key_1_active": "true", "access_key_1_last_rotated": "2025-01-01T00:00:00+00:00", "access_key_1_last_used_date": "2026-11-30T08:00:00+00:00",
			"access_key_1_last_used_region": "eu-west-1", "access_key_1_last_used_service": "s3",
			"access_key_2_active": "false", "access_key_2_last_rotated": "2026-06-01T00:00:00+00:00", "access_key_2_last_used_date": "N/A",
			"access_key_2_last_used_region": "N/A", "access_key_2_last_used_service": "N/A"}},
		{3, map[string]string{"user": "bob", "arn": "arn:aws:iam::111111111111:user/ops/bob", "password_enabled": "true",
			"password_last_used": "no_information", "password_last_changed": "2025-01-01T00:00:00+00:00", "password_next_rotation": "2025-04-01T00:00:00+00:00",
			"mfa_active": "false", "access_key_1_active": "false", "access_key_1_last_rotated": "N/A"}},
		{4, map[string]string{"user": "carol", "password_enabled": "false", "password_last_used": "N/A", "password_last_changed": "N/A",
			"password_next_rotation": "N/A", "cert_1_active": "false", "cert_1_last_rotated": "N/A"}},
	}
	for _, tc := range tests {
		for k, want := range tc.want {
			if got := rows[tc.row][col[k]]; got != want {
				t.Errorf("row %d (%s) %s = %q, want %q", tc.row, rows[tc.row][0], k, got, want)
			}
		}
	}
	// Every request renders the account as it is now.
	if _, err := c.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("erin")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GenerateCredentialReport(ctx, &iam.GenerateCredentialReportInput{}); err != nil {
		t.Fatal(err)
	}
	rep, err = c.GetCredentialReport(ctx, &iam.GetCredentialReportInput{})
	if err != nil || !strings.Contains(string(rep.Content), "\nerin,arn:aws:iam::111111111111:user/erin,2026-12-02T12:00:00+00:00,false,") {
		t.Errorf("report after CreateUser:\n%s%v", rep.Content, err)
	}
}

func TestIAMAccountSummaryAndPasswordPolicy(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	sum, err := c.GetAccountSummary(ctx, &iam.GetAccountSummaryInput{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{"AccountMFAEnabled": 0, "AccountAccessKeysPresent": 1, "Users": 3, "Roles": 2, "Groups": 1,
		"Policies": 2, "MFADevices": 1, "ServerCertificates": 1, "AccessKeysPerUserQuota": 2, "PolicyVersionsInUse": 2}
	for k, v := range want {
		if got, ok := sum.SummaryMap[k]; !ok || got != v {
			t.Errorf("SummaryMap[%s] = %d (present %v), want %d", k, got, ok, v)
		}
	}

	pp, err := c.GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
	if err != nil {
		t.Fatal(err)
	}
	if p := pp.PasswordPolicy; aws.ToInt32(p.MinimumPasswordLength) != 14 || !p.RequireSymbols || p.RequireUppercaseCharacters ||
		!p.ExpirePasswords || aws.ToInt32(p.MaxPasswordAge) != 90 || p.PasswordReusePrevention != nil {
		t.Errorf("password policy %+v", p)
	}
	// Updates replace the whole policy: what is left out takes its default.
	if _, err := c.UpdateAccountPasswordPolicy(ctx, &iam.UpdateAccountPasswordPolicyInput{RequireUppercaseCharacters: true, PasswordReusePrevention: aws.Int32(24)}); err != nil {
		t.Fatal(err)
	}
	pp, err = c.GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
	if p := pp.PasswordPolicy; err != nil || aws.ToInt32(p.MinimumPasswordLength) != 6 || p.RequireSymbols || !p.RequireUppercaseCharacters ||
		p.ExpirePasswords || aws.ToInt32(p.PasswordReusePrevention) != 24 {
		t.Errorf("password policy after update %+v, %v", p, err)
	}
}

// iamSelfSigned makes a PEM certificate and its key.
func iamSelfSigned(t *testing.T, cn string, notAfter time.Time) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: cn}, NotBefore: notAfter.AddDate(-1, 0, 0), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
}

func TestIAMServerCertificates(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	expires := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)
	body, key := iamSelfSigned(t, "shop.example", expires)
	up, err := c.UploadServerCertificate(ctx, &iam.UploadServerCertificateInput{ServerCertificateName: aws.String("shop"),
		Path: aws.String("/cloudfront/"), CertificateBody: aws.String(body), PrivateKey: aws.String(key), CertificateChain: aws.String(body)})
	if err != nil {
		t.Fatal(err)
	}
	if m := up.ServerCertificateMetadata; aws.ToString(m.Arn) != "arn:aws:iam::111111111111:server-certificate/cloudfront/shop" ||
		!m.Expiration.Equal(expires) || !m.UploadDate.Equal(iamTestNow) || !strings.HasPrefix(aws.ToString(m.ServerCertificateId), "ASCA") {
		t.Errorf("uploaded %+v", m)
	}
	_, err = c.UploadServerCertificate(ctx, &iam.UploadServerCertificateInput{ServerCertificateName: aws.String("shop"),
		CertificateBody: aws.String(body), PrivateKey: aws.String(key)})
	iamWantErr(t, err, "EntityAlreadyExists", 409)

	var names []string
	p := iam.NewListServerCertificatesPaginator(c, &iam.ListServerCertificatesInput{MaxItems: aws.Int32(1)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.ServerCertificateMetadataList {
			names = append(names, aws.ToString(m.ServerCertificateName))
		}
	}
	if !slices.Equal(names, []string{"legacy", "shop"}) {
		t.Errorf("server certificates %v", names)
	}

	legacy, err := c.GetServerCertificate(ctx, &iam.GetServerCertificateInput{ServerCertificateName: aws.String("legacy")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode([]byte(aws.ToString(legacy.ServerCertificate.CertificateBody)))
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil || cert.Subject.CommonName != "legacy.example" ||
		!legacy.ServerCertificate.ServerCertificateMetadata.Expiration.Equal(time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("legacy certificate %v, %v, metadata %+v", cert, err, legacy.ServerCertificate.ServerCertificateMetadata)
	}
	shop, err := c.GetServerCertificate(ctx, &iam.GetServerCertificateInput{ServerCertificateName: aws.String("shop")})
	if err != nil || aws.ToString(shop.ServerCertificate.CertificateBody) != body || aws.ToString(shop.ServerCertificate.CertificateChain) != body {
		t.Errorf("GetServerCertificate(shop) = %+v, %v", shop, err)
	}
	if _, err := c.DeleteServerCertificate(ctx, &iam.DeleteServerCertificateInput{ServerCertificateName: aws.String("shop")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetServerCertificate(ctx, &iam.GetServerCertificateInput{ServerCertificateName: aws.String("shop")})
	iamWantErr(t, err, "NoSuchEntity", 404)
}

// TestIAMCredentialReport_keepsItsTimeWhileUnchanged: a report generated again over an
// unchanged account keeps its generation time, as IAM's reused report does; once the
// account changed, the new report has the time it was generated.
func TestIAMCredentialReport_keepsItsTimeWhileUnchanged(t *testing.T) {
	now := iamTestNow
	sim, srv := startSim(t, iamTestWorld(), Options{Now: func() time.Time { return now }})
	c := iam.NewFromConfig(iamTestConfig(srv, "AKIDSIM"))
	ctx := context.Background()
	generated := func() time.Time {
		t.Helper()
		if _, err := c.GenerateCredentialReport(ctx, &iam.GenerateCredentialReportInput{}); err != nil {
			t.Fatal(err)
		}
		rep, err := c.GetCredentialReport(ctx, &iam.GetCredentialReportInput{})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToTime(rep.GeneratedTime)
	}
	first := generated()
	now = now.Add(time.Hour)
	if got := generated(); !got.Equal(first) {
		t.Fatalf("unchanged account: report generated at %v, want the first report's %v", got, first)
	}
	sim.Do(func(w *World) {
		w.AWS.Accounts[0].Users[0].PasswordEnabled = !w.AWS.Accounts[0].Users[0].PasswordEnabled
	})
	if got := generated(); !got.Equal(now) {
		t.Fatalf("changed account: report generated at %v, want now (%v)", got, now)
	}
}
