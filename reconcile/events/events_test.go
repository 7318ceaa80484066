package events_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/reconcile/events"
)

const (
	acct    = "111111111111"
	project = "acme-prod"
	sgID    = "sg-0a1b2c3d4e5f60718"
	certARN = "arn:aws:acm:eu-west-1:111111111111:certificate/8f1c6c2e-2b7a-4d5e-9c3f-1a2b3c4d5e6f"
	saEmail = "deployer@acme-prod.iam.gserviceaccount.com"
	saKey   = "1f0e2d3c4b5a69788796a5b4c3d2e1f001122334"
)

// Refs as docs/resources.md names them.
func user(name string) events.Ref {
	return events.Ref{UID: "arn:aws:iam::" + acct + ":user/" + name, Type: "aws.iam.user", Name: name, ByName: true}
}

func userAt(path, name string) events.Ref {
	return events.Ref{UID: "arn:aws:iam::" + acct + ":user" + path + name, Type: "aws.iam.user", Name: name}
}

func key(u events.Ref, id string) events.Ref {
	return events.Ref{UID: u.UID + "/accesskey/" + id, Type: "aws.iam.access_key", Name: id, ByName: u.ByName}
}

func group(name string, byName bool) events.Ref {
	return events.Ref{UID: "arn:aws:iam::" + acct + ":group/" + name, Type: "aws.iam.group", Name: name, ByName: byName}
}

func role(path, name string, byName bool) events.Ref {
	return events.Ref{UID: "arn:aws:iam::" + acct + ":role" + path + name, Type: "aws.iam.role", Name: name, ByName: byName}
}

func policy(arn string) events.Ref {
	return events.Ref{UID: arn, Type: "aws.iam.policy", Name: arn[strings.LastIndexByte(arn, '/')+1:]}
}

func sg(region, id string) events.Ref {
	return events.Ref{UID: "arn:aws:ec2:" + region + ":" + acct + ":security-group/" + id, Type: "aws.ec2.security_group"}
}

var (
	root      = events.Ref{UID: "arn:aws:iam::" + acct + ":root", Type: "aws.iam.root_user", Name: "root"}
	bob       = user("bob")
	ciBot     = userAt("/automation/", "ci-bot")
	s3Read    = policy("arn:aws:iam::" + acct + ":policy/boundaries/s3-read")
	admin     = policy("arn:aws:iam::aws:policy/AdministratorAccess")
	partner   = role("/", "partner-access", true)
	webSG     = sg("eu-west-1", sgID)
	cert      = events.Ref{UID: certARN, Type: "aws.acm.certificate"}
	deployer  = events.Ref{UID: "//iam.googleapis.com/projects/acme-prod/serviceAccounts/" + saEmail, Type: "gcp.iam.service_account", Name: saEmail}
	deployKey = events.Ref{UID: deployer.UID + "/keys/" + saKey, Type: "gcp.iam.service_account_key", Name: saKey}
)

func firewall(name string) events.Ref {
	return events.Ref{UID: "//compute.googleapis.com/projects/acme-prod/global/firewalls/" + name, Type: "gcp.compute.firewall", Name: name}
}

const (
	iamScope = "aws/" + acct + "/iam"
	ec2Scope = "aws/" + acct + "/ec2/eu-west-1"
	acmScope = "aws/" + acct + "/acm/eu-west-1"
)

// golden is what one testdata file maps to.
type golden struct {
	file  string
	scope string
	event string
	refs  []events.Ref
	whole bool
}

var awsGolden = []golden{
	// IAM users, login profiles, MFA.
	{"iam-create-user.json", iamScope, "iam:CreateUser", []events.Ref{userAt("/automation/", "deploy-bot")}, false},
	{"iam-delete-user.json", iamScope, "iam:DeleteUser", []events.Ref{bob}, false},
	{"iam-update-user-rename.json", iamScope, "iam:UpdateUser", []events.Ref{bob, userAt("/staff/", "robert")}, false},
	{"iam-tag-user.json", iamScope, "iam:TagUser", []events.Ref{bob}, false},
	{"iam-create-login-profile.json", iamScope, "iam:CreateLoginProfile", []events.Ref{bob}, false},
	{"iam-update-login-profile.json", iamScope, "iam:UpdateLoginProfile", []events.Ref{bob}, false},
	{"iam-delete-login-profile.json", iamScope, "iam:DeleteLoginProfile", []events.Ref{bob}, false},
	{"iam-change-password.json", iamScope, "iam:ChangePassword", []events.Ref{ciBot}, false},
	{"iam-enable-mfa-device.json", iamScope, "iam:EnableMFADevice", []events.Ref{bob}, false},
	{"iam-deactivate-mfa-device.json", iamScope, "iam:DeactivateMFADevice", []events.Ref{bob}, false},
	// The root user has no read of its own: its account's IAM scope is read.
	{"iam-enable-mfa-device-root.json", iamScope, "iam:EnableMFADevice", []events.Ref{root}, true},
	// Access keys: the key and its user.
	{"iam-create-access-key.json", iamScope, "iam:CreateAccessKey", []events.Ref{key(bob, "AKIA5YQPKMTVBOBKEY02"), bob}, false},
	{"iam-create-access-key-self.json", iamScope, "iam:CreateAccessKey", []events.Ref{key(ciBot, "AKIA5YQPKMTVCIBOT002"), ciBot}, false},
	{"iam-create-access-key-root.json", iamScope, "iam:CreateAccessKey", []events.Ref{root}, true},
	{"iam-update-access-key.json", iamScope, "iam:UpdateAccessKey", []events.Ref{key(bob, "AKIA5YQPKMTVBOBKEY01"), bob}, false},
	{"iam-delete-access-key.json", iamScope, "iam:DeleteAccessKey", []events.Ref{key(bob, "AKIA5YQPKMTVBOBKEY01"), bob}, false},
	// Groups.
	{"iam-create-group.json", iamScope, "iam:CreateGroup", []events.Ref{group("admins", false)}, false},
	{"iam-add-user-to-group.json", iamScope, "iam:AddUserToGroup", []events.Ref{group("admins", true), bob}, false},
	{"iam-remove-user-from-group.json", iamScope, "iam:RemoveUserFromGroup", []events.Ref{group("admins", true), bob}, false},
	{"iam-attach-group-policy.json", iamScope, "iam:AttachGroupPolicy", []events.Ref{group("admins", true), admin}, false},
	{"iam-put-group-policy.json", iamScope, "iam:PutGroupPolicy", []events.Ref{group("admins", true)}, false},
	// A user's policies.
	{"iam-attach-user-policy.json", iamScope, "iam:AttachUserPolicy", []events.Ref{bob, admin}, false},
	{"iam-detach-user-policy.json", iamScope, "iam:DetachUserPolicy", []events.Ref{bob, s3Read}, false},
	{"iam-put-user-policy.json", iamScope, "iam:PutUserPolicy", []events.Ref{bob}, false},
	{"iam-delete-user-policy.json", iamScope, "iam:DeleteUserPolicy", []events.Ref{bob}, false},
	// Roles: trust policy, attached and inline policies.
	{"iam-create-role.json", iamScope, "iam:CreateRole", []events.Ref{role("/partners/", "partner-access", false)}, false},
	{"iam-create-service-linked-role.json", iamScope, "iam:CreateServiceLinkedRole",
		[]events.Ref{role("/aws-service-role/autoscaling.amazonaws.com/", "AWSServiceRoleForAutoScaling", false)}, false},
	{"iam-update-assume-role-policy.json", iamScope, "iam:UpdateAssumeRolePolicy", []events.Ref{partner}, false},
	{"iam-attach-role-policy.json", iamScope, "iam:AttachRolePolicy", []events.Ref{partner, policy("arn:aws:iam::aws:policy/ReadOnlyAccess")}, false},
	{"iam-update-role-description.json", iamScope, "iam:UpdateRoleDescription", []events.Ref{partner}, false},
	{"iam-put-role-policy.json", iamScope, "iam:PutRolePolicy", []events.Ref{partner}, false},
	{"iam-delete-role.json", iamScope, "iam:DeleteRole", []events.Ref{partner}, false},
	// Managed policies.
	{"iam-create-policy.json", iamScope, "iam:CreatePolicy", []events.Ref{s3Read}, false},
	{"iam-create-policy-version.json", iamScope, "iam:CreatePolicyVersion", []events.Ref{s3Read}, false},
	{"iam-set-default-policy-version.json", iamScope, "iam:SetDefaultPolicyVersion", []events.Ref{s3Read}, false},
	{"iam-delete-policy.json", iamScope, "iam:DeletePolicy", []events.Ref{s3Read}, false},
	// Server certificates and the password policy.
	{"iam-upload-server-certificate.json", iamScope, "iam:UploadServerCertificate", []events.Ref{{
		UID: "arn:aws:iam::" + acct + ":server-certificate/cloudfront/shop-2026", Type: "aws.iam.server_certificate", Name: "shop-2026"}}, false},
	{"iam-delete-server-certificate.json", iamScope, "iam:DeleteServerCertificate", []events.Ref{{
		UID: "arn:aws:iam::" + acct + ":server-certificate/shop-2025", Type: "aws.iam.server_certificate", Name: "shop-2025", ByName: true}}, false},
	{"iam-update-account-password-policy.json", iamScope, "iam:UpdateAccountPasswordPolicy", []events.Ref{{
		UID: "arn:aws:iam::" + acct + ":account-password-policy", Type: "aws.iam.password_policy", Name: "account-password-policy"}}, false},
	// Security groups: a rule change touches its group.
	{"ec2-authorize-ingress.json", ec2Scope, "ec2:AuthorizeSecurityGroupIngress", []events.Ref{webSG}, false},
	{"ec2-authorize-egress.json", ec2Scope, "ec2:AuthorizeSecurityGroupEgress", []events.Ref{webSG}, false},
	{"ec2-revoke-ingress-rule-ids.json", ec2Scope, "ec2:RevokeSecurityGroupIngress", []events.Ref{webSG}, false},
	{"ec2-revoke-egress.json", ec2Scope, "ec2:RevokeSecurityGroupEgress", []events.Ref{webSG}, false},
	{"ec2-modify-security-group-rules.json", ec2Scope, "ec2:ModifySecurityGroupRules", []events.Ref{webSG}, false},
	{"ec2-update-rule-descriptions-ingress.json", ec2Scope, "ec2:UpdateSecurityGroupRuleDescriptionsIngress", []events.Ref{webSG}, false},
	{"ec2-update-rule-descriptions-egress.json", ec2Scope, "ec2:UpdateSecurityGroupRuleDescriptionsEgress", []events.Ref{webSG}, false},
	{"ec2-create-security-group.json", ec2Scope, "ec2:CreateSecurityGroup", []events.Ref{{
		UID: "arn:aws:ec2:eu-west-1:" + acct + ":security-group/sg-0bb22cc33dd44ee55", Type: "aws.ec2.security_group", Name: "web-public"}}, false},
	{"ec2-delete-security-group.json", ec2Scope, "ec2:DeleteSecurityGroup", []events.Ref{sg("eu-west-1", "sg-0bb22cc33dd44ee55")}, false},
	{"ec2-create-tags.json", ec2Scope, "ec2:CreateTags", []events.Ref{webSG}, false},
	// What uses a group: a new instance or interface touches the groups it joins.
	{"ec2-run-instances.json", ec2Scope, "ec2:RunInstances", []events.Ref{webSG}, false},
	{"ec2-create-network-interface.json", ec2Scope, "ec2:CreateNetworkInterface", []events.Ref{webSG}, false},
	// Named by groupName in a default VPC: the region's scope is read.
	{"ec2-authorize-ingress-by-name.json", "aws/" + acct + "/ec2/us-east-1", "ec2:AuthorizeSecurityGroupIngress", nil, true},
	// ACM.
	{"acm-import-certificate.json", acmScope, "acm:ImportCertificate", []events.Ref{cert}, false},
	{"acm-reimport-certificate.json", acmScope, "acm:ImportCertificate", []events.Ref{cert}, false},
	{"acm-request-certificate.json", acmScope, "acm:RequestCertificate", []events.Ref{cert}, false},
	{"acm-add-tags-to-certificate.json", acmScope, "acm:AddTagsToCertificate", []events.Ref{cert}, false},
	{"acm-remove-tags-from-certificate.json", acmScope, "acm:RemoveTagsFromCertificate", []events.Ref{cert}, false},
	{"acm-update-certificate-options.json", acmScope, "acm:UpdateCertificateOptions", []events.Ref{cert}, false},
	{"acm-delete-certificate.json", acmScope, "acm:DeleteCertificate", []events.Ref{cert}, false},
	{"acm-renew-certificate.json", acmScope, "acm:RenewCertificate", []events.Ref{cert}, false},
	{"acm-certificate-expired.json", acmScope, "ACM Certificate Expired", []events.Ref{cert}, false},
	// Other partitions, from the caller's ARN and from the region.
	{"iam-create-access-key-china.json", "aws/222222222222/iam", "iam:CreateAccessKey", []events.Ref{
		{UID: "arn:aws-cn:iam::222222222222:user/bob/accesskey/AKIAQWERTYUIOPCN0001", Type: "aws.iam.access_key", Name: "AKIAQWERTYUIOPCN0001", ByName: true},
		{UID: "arn:aws-cn:iam::222222222222:user/bob", Type: "aws.iam.user", Name: "bob", ByName: true}}, false},
	{"ec2-authorize-ingress-govcloud.json", "aws/" + acct + "/ec2/us-gov-west-1", "ec2:AuthorizeSecurityGroupIngress", []events.Ref{
		{UID: "arn:aws-us-gov:ec2:us-gov-west-1:" + acct + ":security-group/sg-0c0c0c0c0c0c0c0c0", Type: "aws.ec2.security_group"}}, false},
}

var gcpGolden = []golden{
	{"project-set-iam-policy", "gcp/acme-prod/iam", "cloudresourcemanager.SetIamPolicy", []events.Ref{{
		UID: "//cloudresourcemanager.googleapis.com/projects/acme-prod", Type: "gcp.project.iam_policy", Name: "acme-prod"}}, false},
	{"project-set-iam-policy-v3", "gcp/acme-data-1193/iam", "google.cloud.resourcemanager.v3.Projects.SetIamPolicy", []events.Ref{{
		UID: "//cloudresourcemanager.googleapis.com/projects/acme-data-1193", Type: "gcp.project.iam_policy", Name: "acme-data-1193"}}, false},
	{"folder-set-iam-policy", "gcp/folders/200000000001/iam", "cloudresourcemanager.SetIamPolicy", []events.Ref{{
		UID: "//cloudresourcemanager.googleapis.com/folders/200000000001", Type: "gcp.folder.iam_policy"}}, false},
	{"folder-set-iam-policy-v3", "gcp/folders/200000000001/iam", "google.cloud.resourcemanager.v3.Folders.SetIamPolicy", []events.Ref{{
		UID: "//cloudresourcemanager.googleapis.com/folders/200000000001", Type: "gcp.folder.iam_policy"}}, false},
	{"organization-set-iam-policy-v3", "gcp/organizations/123456789012/iam", "google.cloud.resourcemanager.v3.Organizations.SetIamPolicy", []events.Ref{{
		UID: "//cloudresourcemanager.googleapis.com/organizations/123456789012", Type: "gcp.organization.iam_policy"}}, false},
	{"organization-set-iam-policy", "gcp/organizations/123456789012/iam", "cloudresourcemanager.SetIamPolicy", []events.Ref{{
		UID: "//cloudresourcemanager.googleapis.com/organizations/123456789012", Type: "gcp.organization.iam_policy"}}, false},
	{"service-account-create", "gcp/acme-prod/iam", "google.iam.admin.v1.CreateServiceAccount", []events.Ref{{
		UID:  "//iam.googleapis.com/projects/acme-prod/serviceAccounts/reporter@acme-prod.iam.gserviceaccount.com",
		Type: "gcp.iam.service_account", Name: "reporter@acme-prod.iam.gserviceaccount.com"}}, false},
	{"service-account-delete", "gcp/acme-prod/iam", "google.iam.admin.v1.DeleteServiceAccount", []events.Ref{deployer}, false},
	{"service-account-disable", "gcp/acme-prod/iam", "google.iam.admin.v1.DisableServiceAccount", []events.Ref{deployer}, false},
	{"service-account-set-iam-policy", "gcp/acme-prod/iam", "google.iam.admin.v1.SetIAMPolicy", []events.Ref{deployer}, false},
	// Named by its unique id only: the project's IAM scope is read.
	{"service-account-unique-id-only", "gcp/acme-prod/iam", "google.iam.admin.v1.EnableServiceAccount", nil, true},
	{"service-account-key-create", "gcp/acme-prod/iam", "google.iam.admin.v1.CreateServiceAccountKey", []events.Ref{deployKey}, false},
	{"service-account-key-delete", "gcp/acme-prod/iam", "google.iam.admin.v1.DeleteServiceAccountKey", []events.Ref{deployKey}, false},
	{"service-account-key-disable", "gcp/acme-prod/iam", "google.iam.admin.v1.DisableServiceAccountKey", []events.Ref{deployKey}, false},
	{"firewall-insert", "gcp/acme-prod/compute", "compute.firewalls.insert", []events.Ref{firewall("allow-ssh-anywhere")}, false},
	{"firewall-patch", "gcp/acme-prod/compute", "compute.firewalls.patch", []events.Ref{firewall("allow-web")}, false},
	{"firewall-update-beta", "gcp/acme-prod/compute", "compute.firewalls.update", []events.Ref{firewall("allow-web")}, false},
	{"firewall-delete", "gcp/acme-prod/compute", "compute.firewalls.delete", []events.Ref{firewall("allow-ssh-anywhere")}, false},
	{"ssl-certificate-insert", "gcp/acme-prod/compute", "compute.sslCertificates.insert", []events.Ref{{
		UID: "//compute.googleapis.com/projects/acme-prod/global/sslCertificates/shop-2026", Type: "gcp.compute.ssl_certificate", Name: "shop-2026"}}, false},
	// An instance is no resource of the snapshot, but what firewall rules target: the
	// project's compute scope is read whole.
	{"instance-insert", "gcp/acme-prod/compute", "compute.instances.insert", nil, true},
	{"instance-set-tags", "gcp/acme-prod/compute", "compute.instances.setTags", nil, true},
	{"instance-set-service-account", "gcp/acme-prod/compute", "compute.instances.setServiceAccount", nil, true},
}

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseOne parses a body that must map to exactly one change.
func parseOne(t *testing.T, body []byte) events.Change {
	t.Helper()
	cs, err := events.Parse(body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(cs) != 1 {
		t.Fatalf("Parse: %d changes, want 1: %+v", len(cs), cs)
	}
	return cs[0]
}

// check compares a change with what a golden file says it is.
func check(t *testing.T, g golden, c events.Change) {
	t.Helper()
	provider, rest, _ := strings.Cut(g.scope, "/")
	wantAcct := rest[:strings.LastIndexByte(rest, '/')]
	wantRegion := "global"
	if provider == "aws" && !strings.HasSuffix(g.scope, "/iam") {
		parts := strings.Split(g.scope, "/")
		wantAcct, wantRegion = parts[1], parts[3]
	}
	if c.Provider != provider || c.Account != wantAcct || c.Region != wantRegion || c.Scope != g.scope {
		t.Errorf("provider, account, region, scope = %q %q %q %q, want %q %q %q %q",
			c.Provider, c.Account, c.Region, c.Scope, provider, wantAcct, wantRegion, g.scope)
	}
	if c.Event != g.event {
		t.Errorf("Event = %q, want %q", c.Event, g.event)
	}
	if !reflect.DeepEqual(c.Resources, g.refs) && !(len(c.Resources) == 0 && len(g.refs) == 0) {
		t.Errorf("Resources =\n\t%+v\nwant\n\t%+v", c.Resources, g.refs)
	}
	var uids []string
	for _, r := range g.refs {
		uids = append(uids, r.UID)
	}
	if !slices.Equal(c.UIDs, uids) {
		t.Errorf("UIDs = %q, want %q", c.UIDs, uids)
	}
	if c.WholeScope != g.whole || (c.Why != "") != g.whole {
		t.Errorf("WholeScope, Why = %v %q, want WholeScope %v and a reason with it", c.WholeScope, c.Why, g.whole)
	}
	if c.Source == "" || c.At.IsZero() || c.Actor == "" {
		t.Errorf("Source, At, Actor = %q %v %q: want all three", c.Source, c.At, c.Actor)
	}
}

// TestParse_awsGolden maps each CloudTrail sample, as EventBridge delivers it, to the
// resources its call touched.
func TestParse_awsGolden(t *testing.T) {
	for _, g := range awsGolden {
		t.Run(g.file, func(t *testing.T) {
			check(t, g, parseOne(t, read(t, filepath.Join("testdata/aws", g.file))))
		})
	}
}

// TestParse_gcpGolden maps each audit log sample, as a Pub/Sub push request and as the
// bare LogEntry, to the resource its call touched.
func TestParse_gcpGolden(t *testing.T) {
	for _, g := range gcpGolden {
		t.Run(g.file, func(t *testing.T) {
			push := parseOne(t, read(t, filepath.Join("testdata/gcp", g.file+".push.json")))
			check(t, g, push)
			bare := parseOne(t, read(t, filepath.Join("testdata/gcp", g.file+".logentry.json")))
			check(t, g, bare)
			if push.Delivery == "" || bare.Delivery != "" {
				t.Errorf("Delivery = %q pushed, %q bare: want the messageId, then none", push.Delivery, bare.Delivery)
			}
			push.Delivery = ""
			if !reflect.DeepEqual(push, bare) {
				t.Errorf("pushed and bare differ beyond Delivery:\n\t%+v\n\t%+v", push, bare)
			}
		})
	}
}

// TestParse_everyMappedCallHasASample: the golden files cover every family of mapped
// calls, and every golden file is in a table.
func TestParse_everyMappedCallHasASample(t *testing.T) {
	tested := map[string]bool{}
	for _, g := range append(slices.Clone(awsGolden), gcpGolden...) {
		tested[g.file] = true
	}
	files, err := filepath.Glob("testdata/aws/*.json")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("testdata/gcp/*.logentry.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, more...) {
		name := strings.TrimSuffix(filepath.Base(f), ".logentry.json")
		if !tested[name] && name != "batch.json" && name != "cloudtrail-log-file.json" {
			t.Errorf("%s is in no golden table", f)
		}
	}
	// A family is a call without its verb: iam:User of iam:CreateUser and iam:DeleteUser.
	families := func(calls []string, verbs []string) map[string]bool {
		out := map[string]bool{}
		for _, c := range calls {
			i := strings.LastIndexAny(c, ":.") + 1
			for _, v := range verbs {
				if strings.HasPrefix(c[i:], v) {
					c = c[:i] + c[i+len(v):]
					break
				}
			}
			out[c] = true
		}
		return out
	}
	verbs := []string{"Create", "Delete", "Update", "Put", "Attach", "Detach", "Tag", "Untag", "Add", "Remove", "Authorize", "Revoke",
		"Modify", "Set", "Enable", "Deactivate", "Disable", "Change", "Upload", "Import", "Request", "Renew", "Undelete", "Patch",
		"insert", "patch", "update", "delete"}
	seen := map[string]bool{}
	for _, g := range append(slices.Clone(awsGolden), gcpGolden...) {
		seen[g.event] = true
	}
	covered := families(slices.Collect(func(yield func(string) bool) {
		for e := range seen {
			if !yield(e) {
				return
			}
		}
	}), verbs)
	for f := range families(append(events.AWSCalls(), events.GCPCalls()...), verbs) {
		if !covered[f] {
			t.Errorf("no golden sample of the family %q", f)
		}
	}
}

// TestParse_ids: each change carries the event's own id, the delivery's, the time and
// the caller, whichever shape carried it.
func TestParse_ids(t *testing.T) {
	var eb struct {
		ID     string `json:"id"`
		Detail struct {
			EventID   string `json:"eventID"`
			EventTime string `json:"eventTime"`
		} `json:"detail"`
	}
	body := read(t, "testdata/aws/iam-create-access-key.json")
	if err := json.Unmarshal(body, &eb); err != nil {
		t.Fatal(err)
	}
	c := parseOne(t, body)
	if c.Source != eb.Detail.EventID || c.Delivery != eb.ID || c.At != time.Date(2026, 9, 14, 10, 21, 7, 0, time.UTC) ||
		c.Actor != "arn:aws:sts::"+acct+":assumed-role/AWSReservedSSO_AdministratorAccess_5c2e1b6e0f3b2a71/alice@acme.example" {
		t.Errorf("EventBridge: Source %q Delivery %q At %v Actor %q", c.Source, c.Delivery, c.At, c.Actor)
	}
	if c := parseOne(t, read(t, "testdata/aws/ec2-authorize-ingress-govcloud.json")); c.Actor != "cloudformation.amazonaws.com" {
		t.Errorf("a service's call: Actor %q, want the service", c.Actor)
	}

	var push struct {
		Message struct {
			Data      string `json:"data"`
			MessageID string `json:"messageId"`
		} `json:"message"`
	}
	body = read(t, "testdata/gcp/service-account-key-create.push.json")
	if err := json.Unmarshal(body, &push); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(push.Message.Data)
	if err != nil {
		t.Fatal(err)
	}
	var entry struct {
		InsertID  string    `json:"insertId"`
		Timestamp time.Time `json:"timestamp"`
	}
	if err := json.Unmarshal(raw, &entry); err != nil {
		t.Fatal(err)
	}
	c = parseOne(t, body)
	if c.Source != entry.InsertID || c.Delivery != push.Message.MessageID || !c.At.Equal(entry.Timestamp) || c.Actor != "alice@acme.example" {
		t.Errorf("Pub/Sub: Source %q Delivery %q At %v Actor %q", c.Source, c.Delivery, c.At, c.Actor)
	}
}

// TestParse_pushFilesCarryTheirEntries: each .push.json's message.data is its
// .logentry.json, so the two tables test one event.
func TestParse_pushFilesCarryTheirEntries(t *testing.T) {
	pushes, err := filepath.Glob("testdata/*/*.push.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(pushes) < len(gcpGolden) {
		t.Fatalf("%d push files, want at least %d", len(pushes), len(gcpGolden))
	}
	for _, p := range pushes {
		var env struct {
			Message struct {
				Data string `json:"data"`
			} `json:"message"`
			Subscription string `json:"subscription"`
		}
		if err := json.Unmarshal(read(t, p), &env); err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(env.Message.Data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if want := read(t, strings.TrimSuffix(p, ".push.json")+".logentry.json"); string(raw) != string(want) {
			t.Errorf("%s carries another entry than its .logentry.json", p)
		}
		if env.Subscription == "" {
			t.Errorf("%s: no subscription", p)
		}
	}
}

// TestParse_severalEvents: an array of EventBridge events and a CloudTrail log file map
// to one change an event, in order.
func TestParse_severalEvents(t *testing.T) {
	for _, tc := range []struct {
		file string
		want [][]string
	}{
		{"batch.json", [][]string{{"arn:aws:iam::" + acct + ":user/dave"}, {sg("eu-west-1", "sg-0dd44ee55ff660011").UID}}},
		{"cloudtrail-log-file.json", [][]string{
			{"arn:aws:iam::" + acct + ":user/carol/accesskey/AKIA5YQPKMTVCAROL001", "arn:aws:iam::" + acct + ":user/carol"},
			{webSG.UID}}},
	} {
		cs, err := events.Parse(read(t, filepath.Join("testdata/aws", tc.file)))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		var got [][]string
		for _, c := range cs {
			got = append(got, c.UIDs)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: UIDs %q, want %q", tc.file, got, tc.want)
		}
	}
}

// TestParse_arrayKeepsWhatMapped: in an array, the events that map are returned beside
// the errors of those that do not, each error naming its element.
func TestParse_arrayKeepsWhatMapped(t *testing.T) {
	good := read(t, "testdata/aws/iam-delete-user.json")
	ignored := read(t, "testdata/unknown/iam-list-users.json")
	body := []byte("[" + string(good) + "," + string(ignored) + `,"nonsense"]`)
	cs, err := events.Parse(body)
	if len(cs) != 1 || cs[0].Event != "iam:DeleteUser" {
		t.Errorf("changes %+v, want the DeleteUser", cs)
	}
	if !errors.Is(err, events.ErrUnknown) || !errors.Is(err, events.ErrMalformed) {
		t.Fatalf("err %v: want the unknown [1] and the malformed [2]", err)
	}
	for _, want := range []string{"[1].detail.eventName", "[2]: want an event object"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err %q does not name %q", err, want)
		}
	}
	if got := events.Status(err); got != http.StatusBadRequest {
		t.Errorf("Status = %d, want 400", got)
	}
}

// TestParse_unknown: well-formed events warden does not act on are ErrUnknown, with the
// call named when there is one.
func TestParse_unknown(t *testing.T) {
	want := map[string]string{
		"iam-list-users.json":                        "iam:ListUsers",
		"iam-get-account-authorization-details.json": "iam:GetAccountAuthorizationDetails",
		"iam-create-access-key-failed.json":          "iam:CreateAccessKey",
		"ec2-authorize-ingress-denied.json":          "ec2:AuthorizeSecurityGroupIngress",
		"ec2-create-tags-instance.json":              "ec2:CreateTags",
		"s3-put-bucket-policy.json":                  "s3:PutBucketPolicy",
		"ec2-instance-state-change.json":             "EC2 Instance State-change Notification",
		"signin-console-login.json":                  "AWS Console Sign In via CloudTrail",
		"acm-approaching-expiration.json":            "ACM Certificate Approaching Expiration",
		"gcp-storage-set-iam-policy.logentry.json":   "storage.setIamPermissions",
		"gcp-storage-set-iam-policy.push.json":       "storage.setIamPermissions",
		"gcp-get-service-account.logentry.json":      "google.iam.admin.v1.GetServiceAccount",
		"gcp-get-service-account.push.json":          "google.iam.admin.v1.GetServiceAccount",
		"gcp-create-key-denied.logentry.json":        "google.iam.admin.v1.CreateServiceAccountKey",
		"gcp-create-key-denied.push.json":            "google.iam.admin.v1.CreateServiceAccountKey",
		"gcp-compute-instances-stop.logentry.json":   "compute.instances.stop",
		"gcp-compute-instances-stop.push.json":       "compute.instances.stop",
		"gcp-text-payload.logentry.json":             "",
	}
	files, err := filepath.Glob("testdata/unknown/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("%d files in testdata/unknown, %d in the table", len(files), len(want))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cs, err := events.Parse(read(t, f))
			var e *events.Error
			if len(cs) != 0 || !errors.Is(err, events.ErrUnknown) || !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want ErrUnknown and no change", cs, err)
			}
			if w, ok := want[filepath.Base(f)]; !ok || e.Event != w {
				t.Errorf("Event = %q, want %q", e.Event, w)
			}
			if e.Field == "" || e.Reason == "" {
				t.Errorf("error %+v names no field or reason", e)
			}
			if got := events.Status(err); got != http.StatusBadRequest {
				t.Errorf("Status = %d, want 400", got)
			}
		})
	}
}

// TestParse_limits: a body over MaxBody, or with more events than MaxEvents, is
// ErrTooLarge, answered 413.
func TestParse_limits(t *testing.T) {
	body := read(t, "testdata/aws/batch.json")
	for _, tc := range []struct {
		opts  events.Options
		field string
	}{
		{events.Options{MaxBody: len(body) - 1}, "body"},
		{events.Options{MaxEvents: 1}, "body"},
	} {
		_, err := events.New(tc.opts).Parse(body)
		var e *events.Error
		if !errors.Is(err, events.ErrTooLarge) || !errors.As(err, &e) || e.Field != tc.field {
			t.Errorf("%+v: err %v, want ErrTooLarge of %s", tc.opts, err, tc.field)
		}
		if got := events.Status(err); got != http.StatusRequestEntityTooLarge {
			t.Errorf("Status = %d, want 413", got)
		}
	}
	_, err := events.New(events.Options{MaxEvents: 1}).Parse(read(t, "testdata/aws/cloudtrail-log-file.json"))
	if !errors.Is(err, events.ErrTooLarge) {
		t.Errorf("a log file over MaxEvents: err %v, want ErrTooLarge", err)
	}
	if cs, err := events.New(events.Options{MaxBody: len(body), MaxEvents: 2}).Parse(body); err != nil || len(cs) != 2 {
		t.Errorf("at the limits: %d changes, %v; want 2, nil", len(cs), err)
	}
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, http.StatusAccepted},
		{&events.Error{Kind: events.ErrMalformed, Field: "body", Reason: "x"}, http.StatusBadRequest},
		{&events.Error{Kind: events.ErrUnknown, Field: "detail.eventName", Reason: "x"}, http.StatusBadRequest},
		{&events.Error{Kind: events.ErrTooLarge, Field: "body", Reason: "x"}, http.StatusRequestEntityTooLarge},
		{errors.New("something else"), http.StatusInternalServerError},
	} {
		if got := events.Status(tc.err); got != tc.want {
			t.Errorf("Status(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
