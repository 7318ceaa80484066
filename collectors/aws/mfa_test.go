package aws_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	acmtypes "github.com/aws/aws-sdk-go-v2/service/acm/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/smithy-go/middleware"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

// The account view, MFA devices, root key use and ACM transparency logging.

const (
	acct1     = "111111111111"
	iam1      = "arn:aws:iam::" + acct1 + ":"
	certCT    = "arn:aws:acm:eu-west-1:" + acct1 + ":certificate/0f1e2d3c-0000-4000-8000-" + acct1
	certNoCT  = "arn:aws:acm:eu-west-1:" + acct1 + ":certificate/aaaaaaaa-0000-4000-8000-000000000002"
	hwSerial  = "GAHT12345678"
	fidoARN   = "arn:aws:iam::" + acct1 + ":u2f/user/bob/yubikey-ABCDEFGHIJKLMNOP"
	bobVirtID = "arn:aws:iam::" + acct1 + ":mfa/bob-phone"
)

// bobDevices are bob's devices as collected: by serial.
const bobDevices = "[map[enabled:2025-03-04T05:06:07Z serial:GAHT12345678 type:hardware] " +
	"map[enabled:2025-03-04T05:06:07Z serial:" + bobVirtID + " type:virtual] " +
	"map[enabled:2025-03-04T05:06:07Z serial:" + fidoARN + " type:hardware]]"

var (
	rootKey1Used = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	rootKey2Used = time.Date(2026, 11, 2, 7, 15, 0, 0, time.UTC)
	rootKey2Made = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	bobMFAAt     = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
)

// mfaWorld is one account with every new fact: a root with a hardware device and both
// keys used, users with virtual, hardware and no devices, a support and an audit role,
// a SAML provider, an alias, a certificate that opted out of transparency logging.
func mfaWorld() *cloudsim.World {
	a := account(acct1)
	a.Alias = "acme-prod"
	a.SAMLProviders = []*cloudsim.SAMLProvider{{Name: "okta", Created: t0}}
	a.UnassignedMFADevices = []string{"arn:aws:iam::" + acct1 + ":mfa/spare"}
	a.Root = cloudsim.Root{MFA: true, MFAType: "hardware", AccessKeysActive: 2, PasswordLastUsed: &lastUsed,
		AccessKey1LastUsed: &rootKey1Used, AccessKey2LastUsed: &rootKey2Used, AccessKey1Created: &t0, AccessKey2Created: &rootKey2Made}
	a.Users = append(a.Users,
		&cloudsim.User{Name: "bob", Created: t0, PasswordEnabled: true, MFADevices: []*cloudsim.MFADevice{
			{Type: "hardware", Serial: hwSerial, Enabled: bobMFAAt},
			{Type: "hardware", Serial: fidoARN, Enabled: bobMFAAt},
			{Serial: bobVirtID, Enabled: bobMFAAt},
		}},
		&cloudsim.User{Name: "carol", Created: t0, PasswordEnabled: true},
	)
	a.Roles = append(a.Roles,
		&cloudsim.Role{Name: "support", Created: t0, AssumeRolePolicy: trustAccount(acct1),
			AttachedPolicies: []string{"arn:aws:iam::aws:policy/AWSSupportAccess"}},
		&cloudsim.Role{Name: "auditor", Created: t0, AssumeRolePolicy: trustAccount(acct1),
			AttachedPolicies: []string{"arn:aws:iam::aws:policy/SecurityAudit", "arn:aws:iam::aws:policy/AWSSupportAccess"}},
		// A customer policy that borrows the name is not AWS's.
		&cloudsim.Role{Name: "lookalike", Created: t0, AssumeRolePolicy: trustAccount(acct1),
			AttachedPolicies: []string{"arn:aws:iam::" + acct1 + ":policy/SecurityAudit"}},
	)
	a.Policies = append(a.Policies, &cloudsim.Policy{Name: "SecurityAudit", Document: adminDoc, Created: t0},
		&cloudsim.Policy{Name: "SecurityAudit", AWSManaged: true, Document: adminDoc, Created: t0},
		&cloudsim.Policy{Name: "AWSSupportAccess", AWSManaged: true, Document: adminDoc, Created: t0})
	a.Certificates[0].TransparencyLogging = "DISABLED"
	a.Certificates = append(a.Certificates, &cloudsim.Certificate{ID: "aaaaaaaa-0000-4000-8000-000000000002", Region: "eu-west-1",
		Domain: "api.example.com", Type: "IMPORTED", Cert: cloudsim.CertSpec{Subject: "CN=api.example.com", DNSNames: []string{"api.example.com"},
			NotBefore: t0, NotAfter: t0.AddDate(3, 0, 0)}})
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{a}}}
}

func TestCollectMFAAndAccountView(t *testing.T) {
	r, sim := collect(t, mfaWorld(), awscollector.Config{})
	tests := []struct {
		uid, path string
		want      string // fmt.Sprint of the JSON value; "<absent>" for a missing attribute
	}{
		{iam1 + "root", "mfa_active", "true"},
		{iam1 + "root", "virtual_mfa", "false"},
		{iam1 + "root", "access_keys_active", "2"},
		{iam1 + "root", "access_keys_last_used", "2026-11-02T07:15:00Z"},
		// Each key with its creation and last use, as users' keys; the first was created
		// with the root user.
		{iam1 + "root", "access_keys", "[map[created:" + t0.Format(time.RFC3339) + " last_used:2026-10-01T12:00:00Z slot:1 status:Active] map[created:2026-06-01T08:00:00Z last_used:2026-11-02T07:15:00Z slot:2 status:Active]]"},
		{iam1 + "user/alice", "mfa_devices", "[map[enabled:2024-01-10T09:00:00Z serial:arn:aws:iam::111111111111:mfa/alice type:virtual]]"},
		{iam1 + "user/bob", "mfa_active", "true"},
		{iam1 + "user/bob", "mfa_devices", bobDevices},
		{iam1 + "user/carol", "mfa_devices", "[]"},
		{iam1 + "user/automation/ci-bot", "mfa_devices", "[]"},
		{iam1 + "account", "support_roles", "[auditor support]"},
		{iam1 + "account", "security_audit_roles", "[auditor]"},
		{iam1 + "account", "saml_providers", "[arn:aws:iam::111111111111:saml-provider/okta]"},
		{iam1 + "account", "alias", "acme-prod"},
		{certCT, "transparency_logging", "DISABLED"},
		{certNoCT, "transparency_logging", "ENABLED"},
		{certNoCT, "cert_type", "IMPORTED"},
	}
	for _, tc := range tests {
		t.Run(tc.uid[strings.LastIndexAny(tc.uid, ":/")+1:]+"/"+tc.path, func(t *testing.T) {
			res, ok := r.byUID[tc.uid]
			if !ok {
				t.Fatalf("no resource %s", tc.uid)
			}
			if got := attrOrAbsent(t, res, tc.path); got != tc.want {
				t.Errorf("%s = %s, want %s", tc.path, got, tc.want)
			}
		})
	}
	acctRes := r.byUID[iam1+"account"]
	if acctRes.Name != "acme-prod" || acctRes.Region != "global" || acctRes.Scope != "aws/"+acct1+"/iam" || acctRes.Type != "aws.iam.account" {
		t.Errorf("account view = %+v, want aws.iam.account acme-prod, global, in the iam scope", acctRes)
	}
	if s := r.scopes["aws/"+acct1+"/iam"]; s.Status != snapshot.ScopeOK {
		t.Errorf("iam scope = %+v, want ok", s)
	}
	// One ListVirtualMFADevices for the account; ListMFADevices only for the users the
	// credential report shows with MFA (alice, bob), not carol or ci-bot: the summary
	// counts 5 devices in use, the virtual list and the root's account for 3.
	calls := sim.Calls()
	for op, want := range map[string]int{"iam:ListVirtualMFADevices": 1, "iam:ListMFADevices": 2, "iam:ListSAMLProviders": 1, "iam:ListAccountAliases": 1} {
		if got := calls[op].Calls; got != want {
			t.Errorf("%s called %d times, want %d", op, got, want)
		}
	}
}

// attrOrAbsent is the attribute at path as fmt.Sprint prints its JSON value, or
// "<absent>".
func attrOrAbsent(t *testing.T, r snapshot.Resource, path string) string {
	t.Helper()
	v, ok := any(r.Attributes), true
	for _, k := range strings.Split(path, ".") {
		m, isMap := v.(map[string]any)
		if !isMap {
			return "<absent>"
		}
		if v, ok = m[k]; !ok {
			return "<absent>"
		}
	}
	return fmt.Sprint(attr(t, r, path))
}

func TestCollectMFAAndAccountView_rootVirtualAndNone(t *testing.T) {
	w := mfaWorld()
	a := w.AWS.Accounts[0]
	a.Alias, a.SAMLProviders = "", nil
	a.Root = cloudsim.Root{MFA: true, AccessKeysActive: 1, Created: t0} // a virtual device, a key never used
	r, _ := collect(t, w, awscollector.Config{})
	root, acctRes := r.byUID[iam1+"root"], r.byUID[iam1+"account"]
	for path, want := range map[string]string{"virtual_mfa": "true", "access_keys_last_used": "<absent>", "access_keys_active": "1",
		"access_keys": "[map[created:" + t0.Format(time.RFC3339) + " slot:1 status:Active]]"} {
		if got := attrOrAbsent(t, root, path); got != want {
			t.Errorf("root %s = %s, want %s", path, got, want)
		}
	}
	for path, want := range map[string]string{"alias": "", "saml_providers": "[]"} {
		if got := attrOrAbsent(t, acctRes, path); got != want {
			t.Errorf("account %s = %q, want %q", path, got, want)
		}
	}
	if acctRes.Name != acct1 {
		t.Errorf("account without alias named %q, want its id", acctRes.Name)
	}

	// Without MFA the root's device kind is not a question: virtual_mfa is absent.
	a.Root = cloudsim.Root{}
	r, _ = collect(t, w, awscollector.Config{})
	if got := attrOrAbsent(t, r.byUID[iam1+"root"], "virtual_mfa"); got != "<absent>" {
		t.Errorf("root without MFA: virtual_mfa = %s, want absent", got)
	}
}

// TestCollectMFAFaults: a call that fails leaves what it would tell absent (unknown, not
// "none"), marks the scope partial and counts the denial; throttling is retried away.
func TestCollectMFAFaults(t *testing.T) {
	clean, _ := collect(t, mfaWorld(), awscollector.Config{})
	type want map[string]string // "uid path" → value
	tests := []struct {
		name    string
		faults  []cloudsim.Fault
		status  string
		errPart string
		attrs   want
		calls   map[string]int
	}{
		{"virtual devices denied", []cloudsim.Fault{{Service: "iam", Action: "ListVirtualMFADevices", AccessDenied: true}},
			snapshot.ScopePartial, "iam:ListVirtualMFADevices", want{
				"root virtual_mfa": "<absent>", "root mfa_active": "true",
				"user/bob mfa_devices": "<absent>", "user/carol mfa_devices": "<absent>", "user/bob mfa_active": "true",
				"account alias": "acme-prod",
			}, map[string]int{"iam:ListMFADevices": 0}},
		{"a user's devices denied", []cloudsim.Fault{{Service: "iam", Action: "ListMFADevices", AccessDenied: true}},
			snapshot.ScopePartial, "iam:ListMFADevices", want{
				"user/bob mfa_devices": "<absent>", "user/alice mfa_devices": "<absent>", "user/carol mfa_devices": "[]",
				"root virtual_mfa": "false",
			}, nil},
		// Without the count of devices in use, a user with a virtual device may hold
		// hardware ones too: each is asked.
		{"summary denied", []cloudsim.Fault{{Service: "iam", Action: "GetAccountSummary", AccessDenied: true}},
			snapshot.ScopePartial, "iam:GetAccountSummary", want{
				"user/bob mfa_devices": bobDevices, "user/carol mfa_devices": "[]",
			}, map[string]int{"iam:ListMFADevices": 2}},
		{"SAML providers denied", []cloudsim.Fault{{Service: "iam", Action: "ListSAMLProviders", AccessDenied: true}},
			snapshot.ScopePartial, "iam:ListSAMLProviders", want{
				"account saml_providers": "<absent>", "account support_roles": "[auditor support]", "account alias": "acme-prod",
			}, nil},
		{"alias denied", []cloudsim.Fault{{Service: "iam", Action: "ListAccountAliases", AccessDenied: true}},
			snapshot.ScopePartial, "iam:ListAccountAliases", want{
				"account alias": "<absent>", "account saml_providers": "[arn:aws:iam::111111111111:saml-provider/okta]",
			}, nil},
		// Without the report nobody is known to lack MFA: every user is asked.
		{"credential report denied", []cloudsim.Fault{{Service: "iam", Action: "*CredentialReport", AccessDenied: true}},
			snapshot.ScopePartial, "iam:GetCredentialReport", want{
				"user/carol mfa_devices": "[]", "user/bob mfa_active": "<absent>", "root access_keys_last_used": "<absent>",
				"root virtual_mfa": "false", "root mfa_active": "true",
			}, map[string]int{"iam:ListMFADevices": 4}},
		{"throttled", []cloudsim.Fault{{Service: "iam", Action: "List*", ThrottleRate: 0.4}},
			snapshot.ScopeOK, "", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mfaWorld()
			w.Faults = tc.faults
			w.Seed = 7
			r, sim := collect(t, w, awscollector.Config{})
			s := r.scopes["aws/"+acct1+"/iam"]
			if s.Status != tc.status || !strings.Contains(s.Error, tc.errPart) {
				t.Errorf("iam scope = %+v, want %s naming %q", s, tc.status, tc.errPart)
			}
			if tc.status == snapshot.ScopePartial && s.AccessDenied == 0 {
				t.Errorf("iam scope counts no denial: %+v", s)
			}
			if tc.attrs == nil {
				same(t, clean, r)
			}
			for key, want := range tc.attrs {
				res, path, _ := strings.Cut(key, " ")
				if got := attrOrAbsent(t, r.byUID[iam1+res], path); got != want {
					t.Errorf("%s %s = %s, want %s", res, path, got, want)
				}
			}
			for op, n := range tc.calls {
				if got := sim.Calls()[op].Calls; got != n {
					t.Errorf("%s called %d times, want %d", op, got, n)
				}
			}
			if tc.name == "throttled" && s.Throttled == 0 {
				t.Errorf("no throttled attempt counted: %+v", s)
			}
		})
	}
}

// readerOf is a collector of the world's caller account, and the simulator under it.
func readerOf(t *testing.T, w *cloudsim.World) (*awscollector.Collector, *cloudsim.Sim, string) {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	sdk := simtest.AWSConfig(url)
	c := awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk, MaxAttempts: 3,
		RateLimits:  map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	return c, sim, url
}

// TestReadNewAttributes reads each new kind alone, as a re-read before and after a fix
// does: the answer is what Collect reported, and a change made since is seen.
func TestReadNewAttributes(t *testing.T) {
	collected, _ := collect(t, mfaWorld(), awscollector.Config{})
	c, sim, url := readerOf(t, mfaWorld())
	ctx := context.Background()
	for _, uid := range []string{iam1 + "root", iam1 + "account", iam1 + "user/bob", iam1 + "user/carol", iam1 + "user/alice", certCT, certNoCT} {
		sim.ResetCalls()
		got, err := c.Read(ctx, uid)
		if err != nil {
			t.Errorf("Read(%s): %v", uid, err)
			continue
		}
		if g, w := jsonOf(t, got), jsonOf(t, collected.byUID[uid]); g != w {
			t.Errorf("Read(%s) differs from Collect:\nread    %s\ncollect %s", uid, g, w)
		}
		// A user without MFA needs no list of the account's virtual devices.
		if n := sim.Calls()["iam:ListVirtualMFADevices"].Calls; uid == iam1+"user/carol" && n != 0 {
			t.Errorf("Read(carol) listed the virtual devices %d times", n)
		}
	}

	sdk := simtest.AWSConfig(url)
	if _, err := iam.NewFromConfig(sdk).DeactivateMFADevice(ctx, &iam.DeactivateMFADeviceInput{
		UserName: aws.String("bob"), SerialNumber: aws.String(bobVirtID)}); err != nil {
		t.Fatal(err)
	}
	sdk.Region = "eu-west-1"
	if _, err := acm.NewFromConfig(sdk).UpdateCertificateOptions(ctx, &acm.UpdateCertificateOptionsInput{CertificateArn: aws.String(certCT),
		Options: &acmtypes.CertificateOptions{CertificateTransparencyLoggingPreference: acmtypes.CertificateTransparencyLoggingPreferenceEnabled}}); err != nil {
		t.Fatal(err)
	}
	bob, err := c.Read(ctx, iam1+"user/bob")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := attrOrAbsent(t, bob, "mfa_devices"), "[map[enabled:2025-03-04T05:06:07Z serial:GAHT12345678 type:hardware] "+
		"map[enabled:2025-03-04T05:06:07Z serial:"+fidoARN+" type:hardware]]"; got != want {
		t.Errorf("bob after deactivating his virtual device: mfa_devices = %s, want %s", got, want)
	}
	cert, err := c.Read(ctx, certCT)
	if err != nil {
		t.Fatal(err)
	}
	if got := attrOrAbsent(t, cert, "transparency_logging"); got != "ENABLED" {
		t.Errorf("certificate after UpdateCertificateOptions: transparency_logging = %s, want ENABLED", got)
	}
}

// TestReadNewAttributes_failures: a read that could not see says so, and never that the
// thing is gone.
func TestReadNewAttributes_failures(t *testing.T) {
	tests := []struct {
		uid   string
		fault cloudsim.Fault
	}{
		{iam1 + "root", cloudsim.Fault{Service: "iam", Action: "ListVirtualMFADevices", AccessDenied: true}},
		{iam1 + "root", cloudsim.Fault{Service: "iam", Action: "GetCredentialReport", AccessDenied: true}},
		{iam1 + "user/bob", cloudsim.Fault{Service: "iam", Action: "ListVirtualMFADevices", AccessDenied: true}},
		{iam1 + "user/bob", cloudsim.Fault{Service: "iam", Action: "ListMFADevices", AccessDenied: true}},
		{iam1 + "account", cloudsim.Fault{Service: "iam", Action: "ListSAMLProviders", AccessDenied: true}},
		{iam1 + "account", cloudsim.Fault{Service: "iam", Action: "ListAccountAliases", AccessDenied: true}},
		{iam1 + "account", cloudsim.Fault{Service: "iam", Action: "ListEntitiesForPolicy", AccessDenied: true}},
		{iam1 + "account", cloudsim.Fault{Service: "iam", Action: "ListEntitiesForPolicy", ErrorRate: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.uid[strings.LastIndexAny(tc.uid, ":/")+1:]+"/"+tc.fault.Action, func(t *testing.T) {
			c, sim, _ := readerOf(t, mfaWorld())
			if _, err := c.Discover(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := sim.SetFaults([]cloudsim.Fault{tc.fault}, nil); err != nil {
				t.Fatal(err)
			}
			_, err := c.Read(context.Background(), tc.uid)
			if err == nil || errors.Is(err, collectors.ErrNotFound) || !strings.Contains(err.Error(), tc.fault.Action) {
				t.Errorf("Read(%s) = %v, want an error naming %s, not ErrNotFound", tc.uid, err, tc.fault.Action)
			}
		})
	}
}

// TestCollectCertificateWithoutOptions: an ACM answer without Options says nothing of
// transparency logging: the attribute is absent, not a guess.
func TestCollectCertificateWithoutOptions(t *testing.T) {
	clear := strip("DescribeCertificate", func(r any) { r.(*acm.DescribeCertificateOutput).Certificate.Options = nil })
	r, _ := collect(t, mfaWorld(), awscollector.Config{AWS: &aws.Config{APIOptions: []func(*middleware.Stack) error{clear}}})
	for _, uid := range []string{certCT, certNoCT} {
		res, ok := r.byUID[uid]
		if !ok {
			t.Fatalf("no resource %s", uid)
		}
		if got := attrOrAbsent(t, res, "transparency_logging"); got != "<absent>" {
			t.Errorf("%s: transparency_logging = %s, want absent", uid, got)
		}
	}
}

// TestCollectMFADevicesCalls: ListMFADevices is asked only where the virtual list and
// the summary's count of devices in use leave a user's devices unknown.
func TestCollectMFADevicesCalls(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(a *cloudsim.Account)
		calls int
		want  map[string]string // user → mfa_devices
	}{
		{"every device virtual", func(a *cloudsim.Account) {
			a.Root.MFAType = ""
			a.Users[2].MFADevices = a.Users[2].MFADevices[2:] // bob keeps his phone
		}, 0, map[string]string{"bob": "[map[enabled:2025-03-04T05:06:07Z serial:" + bobVirtID + " type:virtual]]"}},
		{"a hardware-only user is asked, alone", func(a *cloudsim.Account) {
			a.Users[2].MFADevices = a.Users[2].MFADevices[2:]
			a.Users[3].MFADevices = []*cloudsim.MFADevice{{Type: "hardware", Serial: "GAHT00000003", Enabled: bobMFAAt}}
		}, 1, map[string]string{"carol": "[map[enabled:2025-03-04T05:06:07Z serial:GAHT00000003 type:hardware]]"}},
		{"hardware beside a virtual device: every user with MFA is asked", func(a *cloudsim.Account) {}, 2,
			map[string]string{"bob": bobDevices}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mfaWorld()
			tc.edit(w.AWS.Accounts[0])
			r, sim := collect(t, w, awscollector.Config{})
			if got := sim.Calls()["iam:ListMFADevices"].Calls; got != tc.calls {
				t.Errorf("ListMFADevices called %d times, want %d", got, tc.calls)
			}
			for user, want := range tc.want {
				if got := attrOrAbsent(t, r.byUID[iam1+"user/"+user], "mfa_devices"); got != want {
					t.Errorf("%s: mfa_devices = %s, want %s", user, got, want)
				}
			}
			// What was inferred is what a read of each user, asking IAM, sees.
			c, _, _ := readerOf(t, w)
			for _, u := range w.AWS.Accounts[0].Users {
				uid := iam1 + "user" + or(u.Path, "/") + u.Name
				got, err := c.Read(context.Background(), uid)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := jsonOf(t, got), jsonOf(t, r.byUID[uid]); g != w {
					t.Errorf("Read(%s) differs from Collect:\nread    %s\ncollect %s", uid, g, w)
				}
			}
		})
	}
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
