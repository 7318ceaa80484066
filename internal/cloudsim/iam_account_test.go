package cloudsim

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	acmtypes "github.com/aws/aws-sdk-go-v2/service/acm/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// mfaWorldYAML declares each new AWS fact the way a world file writes it.
const mfaWorldYAML = `
aws:
  accounts:
    - id: "111111111111"
      alias: acme-prod
      saml_providers:
        - {name: okta, created: 2025-02-01T00:00:00Z, valid_until: 2027-02-01T00:00:00Z}
        - {name: azure-ad}
      unassigned_mfa_devices: ["arn:aws:iam::111111111111:mfa/spare"]
      root:
        mfa: true
        mfa_type: hardware
        access_keys_active: 2
        access_key_1_last_used: 2026-10-01T12:00:00Z
        access_key_2_last_used: 2026-11-02T07:15:00Z
        created: 2020-01-01T00:00:00Z
      users:
        - {name: alice, mfa: true, created: 2025-01-01T00:00:00Z}
        - name: bob
          created: 2025-01-01T00:00:00Z
          mfa_devices:
            - {type: hardware, serial: GAHT12345678, enabled: 2025-03-04T05:06:07Z}
            - {type: virtual, serial: "arn:aws:iam::111111111111:mfa/bob-phone"}
            - {type: hardware}
        - {name: carol, created: 2025-01-01T00:00:00Z}
      certificates:
        - id: opted-out
          region: us-east-1
          domain: shop.acme.example
          transparency_logging: DISABLED
          certificate: {subject: CN=shop.acme.example, not_before: 2026-01-01T00:00:00Z, not_after: 2026-12-31T00:00:00Z}
        - id: default
          region: us-east-1
          domain: api.acme.example
          certificate: {subject: CN=api.acme.example, not_before: 2026-01-01T00:00:00Z, not_after: 2026-12-31T00:00:00Z}
`

func mfaTestSim(t *testing.T) (*Sim, aws.Config) {
	t.Helper()
	w, err := ParseWorld([]byte(mfaWorldYAML))
	if err != nil {
		t.Fatal(err)
	}
	s, _, cfg := iamTestSim(t, w, "AKIDROOT")
	return s, cfg
}

func serials[T any](list []T, serial func(T) *string) []string {
	out := []string{}
	for _, d := range list {
		out = append(out, aws.ToString(serial(d)))
	}
	return out
}

func TestIAMListVirtualMFADevices(t *testing.T) {
	_, cfg := mfaTestSim(t)
	cl := iam.NewFromConfig(cfg)
	ctx := context.Background()
	virtualSerial := func(d types.VirtualMFADevice) *string { return d.SerialNumber }
	tests := []struct {
		status types.AssignmentStatusType
		want   string
	}{
		// The root's device is hardware: no virtual device names it.
		{types.AssignmentStatusTypeAssigned, "arn:aws:iam::111111111111:mfa/alice arn:aws:iam::111111111111:mfa/bob-phone"},
		{types.AssignmentStatusTypeUnassigned, "arn:aws:iam::111111111111:mfa/spare"},
		{types.AssignmentStatusTypeAny, "arn:aws:iam::111111111111:mfa/alice arn:aws:iam::111111111111:mfa/bob-phone arn:aws:iam::111111111111:mfa/spare"},
		{"", "arn:aws:iam::111111111111:mfa/alice arn:aws:iam::111111111111:mfa/bob-phone arn:aws:iam::111111111111:mfa/spare"},
	}
	for _, tc := range tests {
		t.Run(string(tc.status), func(t *testing.T) {
			// One device a page: the paginator follows the markers.
			var got []types.VirtualMFADevice
			p := iam.NewListVirtualMFADevicesPaginator(cl, &iam.ListVirtualMFADevicesInput{AssignmentStatus: tc.status, MaxItems: aws.Int32(1)})
			pages := 0
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				got = append(got, page.VirtualMFADevices...)
			}
			if s := strings.Join(serials(got, virtualSerial), " "); s != tc.want {
				t.Errorf("serials %s, want %s", s, tc.want)
			}
			if pages != len(got) {
				t.Errorf("%d devices in %d pages of one", len(got), pages)
			}
			for _, d := range got {
				assigned := !strings.HasSuffix(aws.ToString(d.SerialNumber), "/spare")
				if (d.User != nil) != assigned || (d.EnableDate != nil) != assigned {
					t.Errorf("%s: user %v, enabled %v; want both only when assigned", aws.ToString(d.SerialNumber), d.User, d.EnableDate)
				}
				if d.User != nil && aws.ToString(d.User.Arn) != "arn:aws:iam::111111111111:user/"+aws.ToString(d.User.UserName) {
					t.Errorf("%s: user %s", aws.ToString(d.SerialNumber), aws.ToString(d.User.Arn))
				}
			}
		})
	}
	_, err := cl.ListVirtualMFADevices(ctx, &iam.ListVirtualMFADevicesInput{AssignmentStatus: "Mine"})
	iamWantErr(t, err, "ValidationError", 400)
}

func TestIAMRootVirtualMFA(t *testing.T) {
	w, err := ParseWorld([]byte(mfaWorldYAML))
	if err != nil {
		t.Fatal(err)
	}
	w.AWS.Accounts[0].Root.MFAType = "" // virtual
	_, _, cfg := iamTestSim(t, w, "AKIDROOT")
	out, err := iam.NewFromConfig(cfg).ListVirtualMFADevices(context.Background(), &iam.ListVirtualMFADevicesInput{AssignmentStatus: types.AssignmentStatusTypeAssigned})
	if err != nil {
		t.Fatal(err)
	}
	d := out.VirtualMFADevices[0]
	if aws.ToString(d.SerialNumber) != "arn:aws:iam::111111111111:mfa/root-account-mfa-device" || d.User == nil ||
		aws.ToString(d.User.Arn) != "arn:aws:iam::111111111111:root" || aws.ToString(d.User.UserId) != "111111111111" {
		t.Errorf("first device = %s of %+v, want the root's", aws.ToString(d.SerialNumber), d.User)
	}
}

func TestIAMListMFADevicesKinds(t *testing.T) {
	_, cfg := mfaTestSim(t)
	cl := iam.NewFromConfig(cfg)
	ctx := context.Background()
	devSerial := func(d types.MFADevice) *string { return d.SerialNumber }
	tests := []struct {
		user, want string
	}{
		{"bob", "GAHT12345678 arn:aws:iam::111111111111:mfa/bob-phone " + hardwareSerial("111111111111/bob-3")},
		{"alice", "arn:aws:iam::111111111111:mfa/alice"},
		{"carol", ""},
		{"", hardwareSerial("111111111111/root")}, // the root calling, for itself
	}
	for _, tc := range tests {
		in := &iam.ListMFADevicesInput{}
		if tc.user != "" {
			in.UserName = aws.String(tc.user)
		}
		out, err := cl.ListMFADevices(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(serials(out.MFADevices, devSerial), " "); got != tc.want {
			t.Errorf("ListMFADevices(%q) = %s, want %s", tc.user, got, tc.want)
		}
	}
	out, err := cl.ListMFADevices(ctx, &iam.ListMFADevicesInput{UserName: aws.String("bob")})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.MFADevices[0].EnableDate; got == nil || !got.Equal(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)) {
		t.Errorf("bob's token enabled %v, want the world's date", got)
	}
	if got := out.MFADevices[1].EnableDate; got == nil || !got.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("bob's phone enabled %v, want his creation (the default)", got)
	}
}

// TestIAMDeactivateMFADevice: a deactivated virtual device goes back to the unassigned
// ones; a user whose last device goes has no MFA in the credential report, and can be
// deleted.
func TestIAMDeactivateMFADevice(t *testing.T) {
	_, cfg := mfaTestSim(t)
	cl := iam.NewFromConfig(cfg)
	ctx := context.Background()
	_, err := cl.DeleteUser(ctx, &iam.DeleteUserInput{UserName: aws.String("alice")})
	iamWantErr(t, err, "DeleteConflict", 409)
	_, err = cl.DeactivateMFADevice(ctx, &iam.DeactivateMFADeviceInput{UserName: aws.String("alice"), SerialNumber: aws.String("arn:aws:iam::111111111111:mfa/bob-phone")})
	iamWantErr(t, err, "NoSuchEntity", 404)
	for _, serial := range []string{"arn:aws:iam::111111111111:mfa/alice"} {
		if _, err := cl.DeactivateMFADevice(ctx, &iam.DeactivateMFADeviceInput{UserName: aws.String("alice"), SerialNumber: aws.String(serial)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cl.DeactivateMFADevice(ctx, &iam.DeactivateMFADeviceInput{UserName: aws.String("bob"), SerialNumber: aws.String("GAHT12345678")}); err != nil {
		t.Fatal(err)
	}
	un, err := cl.ListVirtualMFADevices(ctx, &iam.ListVirtualMFADevicesInput{AssignmentStatus: types.AssignmentStatusTypeUnassigned})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(serials(un.VirtualMFADevices, func(d types.VirtualMFADevice) *string { return d.SerialNumber }), " "); got != "arn:aws:iam::111111111111:mfa/spare arn:aws:iam::111111111111:mfa/alice" {
		t.Errorf("unassigned = %s, want spare and alice's (the hardware token is not virtual)", got)
	}
	rows := credentialRows(t, cl)
	if rows["alice"]["mfa_active"] != "false" || rows["bob"]["mfa_active"] != "true" {
		t.Errorf("mfa_active alice %s, bob %s; want false, true", rows["alice"]["mfa_active"], rows["bob"]["mfa_active"])
	}
	if _, err := cl.DeleteUser(ctx, &iam.DeleteUserInput{UserName: aws.String("alice")}); err != nil {
		t.Errorf("delete alice without devices: %v", err)
	}
}

// credentialRows generates and reads the credential report, by user.
func credentialRows(t *testing.T, cl *iam.Client) map[string]map[string]string {
	t.Helper()
	ctx := context.Background()
	if _, err := cl.GenerateCredentialReport(ctx, &iam.GenerateCredentialReportInput{}); err != nil {
		t.Fatal(err)
	}
	rep, err := cl.GetCredentialReport(ctx, &iam.GetCredentialReportInput{})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(rep.Content))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = rec[i]
		}
		out[rec[0]] = row
	}
	return out
}

func TestIAMCredentialReportRootKeyUse(t *testing.T) {
	_, cfg := mfaTestSim(t)
	root := credentialRows(t, iam.NewFromConfig(cfg))["<root_account>"]
	for k, want := range map[string]string{
		"mfa_active": "true", "access_key_1_active": "true", "access_key_2_active": "true",
		"access_key_1_last_used_date": "2026-10-01T12:00:00+00:00", "access_key_2_last_used_date": "2026-11-02T07:15:00+00:00",
	} {
		if root[k] != want {
			t.Errorf("root %s = %q, want %q", k, root[k], want)
		}
	}
	// A key never used, and a use of a key the root does not hold, read N/A.
	w, err := ParseWorld([]byte(mfaWorldYAML))
	if err != nil {
		t.Fatal(err)
	}
	w.AWS.Accounts[0].Root.AccessKeysActive = 1
	w.AWS.Accounts[0].Root.AccessKey1LastUsed = nil
	_, _, cfg = iamTestSim(t, w, "AKIDROOT")
	root = credentialRows(t, iam.NewFromConfig(cfg))["<root_account>"]
	if root["access_key_1_last_used_date"] != "N/A" || root["access_key_2_last_used_date"] != "N/A" || root["access_key_2_active"] != "false" {
		t.Errorf("root row = %v, want both last uses N/A", root)
	}
}

func TestIAMAccountSummaryCountsDevicesAndProviders(t *testing.T) {
	_, cfg := mfaTestSim(t)
	out, err := iam.NewFromConfig(cfg).GetAccountSummary(context.Background(), &iam.GetAccountSummaryInput{})
	if err != nil {
		t.Fatal(err)
	}
	// root 1 + alice 1 + bob 3, and one unassigned.
	for k, want := range map[string]int32{"MFADevices": 6, "MFADevicesInUse": 5, "Providers": 2, "AccountMFAEnabled": 1} {
		if got := out.SummaryMap[k]; got != want {
			t.Errorf("%s = %d, want %d", k, got, want)
		}
	}
}

func TestIAMSAMLProvidersAndAlias(t *testing.T) {
	_, cfg := mfaTestSim(t)
	cl := iam.NewFromConfig(cfg)
	ctx := context.Background()
	saml, err := cl.ListSAMLProviders(ctx, &iam.ListSAMLProvidersInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(saml.SAMLProviderList) != 2 || aws.ToString(saml.SAMLProviderList[0].Arn) != "arn:aws:iam::111111111111:saml-provider/okta" ||
		!saml.SAMLProviderList[0].ValidUntil.Equal(time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)) ||
		aws.ToString(saml.SAMLProviderList[1].Arn) != "arn:aws:iam::111111111111:saml-provider/azure-ad" {
		t.Errorf("SAML providers = %+v", saml.SAMLProviderList)
	}
	alias, err := cl.ListAccountAliases(ctx, &iam.ListAccountAliasesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(alias.AccountAliases) != 1 || alias.AccountAliases[0] != "acme-prod" || alias.IsTruncated {
		t.Errorf("aliases = %v (truncated %v), want [acme-prod]", alias.AccountAliases, alias.IsTruncated)
	}

	// An account without either answers empty lists, not errors.
	_, _, cfg = iamTestSim(t, iamTestWorld(), "AKIDROOT")
	cl = iam.NewFromConfig(cfg)
	if saml, err = cl.ListSAMLProviders(ctx, &iam.ListSAMLProvidersInput{}); err != nil || len(saml.SAMLProviderList) != 0 {
		t.Errorf("ListSAMLProviders = %v, %v; want none", saml, err)
	}
	if alias, err = cl.ListAccountAliases(ctx, &iam.ListAccountAliasesInput{}); err != nil || len(alias.AccountAliases) != 0 {
		t.Errorf("ListAccountAliases = %v, %v; want none", alias, err)
	}
}

func TestACMTransparencyLogging(t *testing.T) {
	_, cfg := mfaTestSim(t)
	cl := acm.NewFromConfig(cfg)
	ctx := context.Background()
	arn := func(id string) *string { return aws.String("arn:aws:acm:us-east-1:111111111111:certificate/" + id) }
	pref := func(id string) acmtypes.CertificateTransparencyLoggingPreference {
		t.Helper()
		d, err := cl.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: arn(id)})
		if err != nil {
			t.Fatal(err)
		}
		return d.Certificate.Options.CertificateTransparencyLoggingPreference
	}
	if got := pref("opted-out"); got != acmtypes.CertificateTransparencyLoggingPreferenceDisabled {
		t.Errorf("opted-out = %s, want DISABLED", got)
	}
	if got := pref("default"); got != acmtypes.CertificateTransparencyLoggingPreferenceEnabled {
		t.Errorf("default = %s, want ENABLED", got)
	}
	if _, err := cl.UpdateCertificateOptions(ctx, &acm.UpdateCertificateOptionsInput{CertificateArn: arn("opted-out"),
		Options: &acmtypes.CertificateOptions{CertificateTransparencyLoggingPreference: acmtypes.CertificateTransparencyLoggingPreferenceEnabled}}); err != nil {
		t.Fatal(err)
	}
	if got := pref("opted-out"); got != acmtypes.CertificateTransparencyLoggingPreferenceEnabled {
		t.Errorf("after UpdateCertificateOptions = %s, want ENABLED", got)
	}
	_, err := cl.UpdateCertificateOptions(ctx, &acm.UpdateCertificateOptionsInput{CertificateArn: arn("default"),
		Options: &acmtypes.CertificateOptions{CertificateTransparencyLoggingPreference: "SOMETIMES"}})
	iamWantErr(t, err, "ValidationException", 400)
	_, err = cl.UpdateCertificateOptions(ctx, &acm.UpdateCertificateOptionsInput{CertificateArn: arn("gone"),
		Options: &acmtypes.CertificateOptions{CertificateTransparencyLoggingPreference: acmtypes.CertificateTransparencyLoggingPreferenceDisabled}})
	iamWantErr(t, err, "ResourceNotFoundException", 400)
}

func TestParseWorldMFAErrors(t *testing.T) {
	acct := "aws:\n  accounts:\n    - id: '111111111111'\n"
	tests := []struct{ name, yaml, want string }{
		{"root mfa type", acct + "      root: {mfa: true, mfa_type: sms}\n", `aws.accounts[0].root.mfa_type: "sms" is not virtual or hardware`},
		{"device type", acct + "      users:\n        - name: u\n          mfa_devices: [{type: sms}]\n", `users[0] (u).mfa_devices[0].type: "sms"`},
		{"serial twice", acct + "      users:\n        - {name: u, mfa_devices: [{serial: X1}]}\n        - {name: v, mfa_devices: [{serial: X1}]}\n", "serial X1 is used twice"},
		{"unassigned not an mfa arn", acct + "      unassigned_mfa_devices: [spare]\n", `unassigned_mfa_devices[0]: "spare"`},
		{"provider without name", acct + "      saml_providers: [{created: 2025-01-01T00:00:00Z}]\n", "saml_providers[0]: name is required"},
		{"transparency value", acct + "      certificates:\n        - {id: c, region: us-east-1, domain: d, transparency_logging: 'yes'}\n", `transparency_logging "yes" is not ENABLED or DISABLED`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWorld([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// What a world says survives Marshal.
	w, err := ParseWorld([]byte(mfaWorldYAML))
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"mfa_type: hardware", "alias: acme-prod", "access_key_2_last_used: 2026-11-02T07:15:00Z", "transparency_logging: DISABLED", "serial: GAHT12345678", "unassigned_mfa_devices:"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("marshalled world lacks %q:\n%s", s, out)
		}
	}
	if _, err := ParseWorld(out); err != nil {
		t.Errorf("re-read: %v", err)
	}
}
