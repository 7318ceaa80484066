package permissions

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/warden-sec/warden/internal/cloudsim"
)

// simCall is one call the simulator served, as its debug line names it: the service and
// operation its counters key by, and the account (AWS account id, GCP project, or
// "folders/N" and "organizations/N" for Resource Manager), which Calls does not keep
// but a GCP permission depends on (getIamPolicy of a project, folder or organisation).
type simCall struct{ Service, Action, Account string }

func (c simCall) key() string { return c.Service + ":" + c.Action }

// action is the IAM action an AWS call needs: its key, but for the operations AWS
// authorizes under another action's name.
func (c simCall) action() string {
	if a, ok := renamedActions[c.key()]; ok {
		return a
	}
	return c.key()
}

// renamedActions are the AWS operations whose IAM action has another name: Access
// Analyzer's V2 finding calls use the actions of the first version (its API reference:
// "ListFindings and ListFindingsV2 both use access-analyzer:ListFindings").
var renamedActions = map[string]string{
	"access-analyzer:ListFindingsV2": "access-analyzer:ListFindings",
	"access-analyzer:GetFindingV2":   "access-analyzer:GetFinding",
}

// callRecorder is the simulator's logger: it keeps the line the simulator writes for
// every call it serves.
type callRecorder struct {
	mu    sync.Mutex
	calls []simCall
}

func (r *callRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *callRecorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "call" {
		return nil
	}
	var c simCall
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "service":
			c.Service = a.Value.String()
		case "action":
			c.Action = a.Value.String()
		case "account":
			c.Account = a.Value.String()
		}
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	return nil
}

func (r *callRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *callRecorder) WithGroup(string) slog.Handler      { return r }

// take returns the calls recorded since the last take and forgets them.
func (r *callRecorder) take() []simCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// sameOperations checks that the recorded lines name the operations the simulator's own
// counters do (a call refused before it is served, for bad credentials, is counted but
// writes no line: it would go unchecked).
func sameOperations(recorded []simCall, counted map[string]cloudsim.CallStats) error {
	var a, b []string
	for _, c := range recorded {
		a = append(a, c.key())
	}
	for k := range counted {
		b = append(b, k)
	}
	a, b = sortedSet(a), sortedSet(b)
	if !slices.Equal(a, b) {
		return fmt.Errorf("the recorded calls %v are not the counted ones %v", a, b)
	}
	return nil
}

// awsServices are the simulator's AWS services; their operations are IAM actions of the
// same name ("iam:ListUsers" is the action iam:ListUsers).
var awsServices = map[string]bool{"iam": true, "sts": true, "ec2": true, "acm": true, "organizations": true, "secretsmanager": true, "s3": true,
	"access-analyzer": true}

// gcpPermissions maps a simulated Google operation to the IAM permissions Google checks
// for it, written out from Google's documentation of each method: the simulator checks
// none, so this table is the test's knowledge of them. A call missing from it fails the
// test (add it here, from the method's documentation).
var gcpPermissions = map[string][]string{
	// Resource Manager. Search lists the projects the caller may get; the policy
	// methods are listed per kind of resource in gcpCallPermissions.
	"cloudresourcemanager:GetProject":      {"resourcemanager.projects.get"},
	"cloudresourcemanager:SearchProjects":  {"resourcemanager.projects.get"},
	"cloudresourcemanager:ListProjects":    {"resourcemanager.projects.list"},
	"cloudresourcemanager:GetFolder":       {"resourcemanager.folders.get"},
	"cloudresourcemanager:GetOrganization": {"resourcemanager.organizations.get"},
	// Compute. Changing a firewall rule also needs compute.networks.updatePolicy on its
	// network; a patch returns an operation, which is polled.
	"compute:ListFirewalls":        {"compute.firewalls.list"},
	"compute:GetFirewall":          {"compute.firewalls.get"},
	"compute:InsertFirewall":       {"compute.firewalls.create", "compute.networks.updatePolicy"},
	"compute:PatchFirewall":        {"compute.firewalls.update", "compute.networks.updatePolicy"},
	"compute:UpdateFirewall":       {"compute.firewalls.update", "compute.networks.updatePolicy"},
	"compute:DeleteFirewall":       {"compute.firewalls.delete", "compute.networks.updatePolicy"},
	"compute:ListNetworks":         {"compute.networks.list"},
	"compute:GetNetwork":           {"compute.networks.get"},
	"compute:ListSslCertificates":  {"compute.sslCertificates.list"},
	"compute:GetSslCertificate":    {"compute.sslCertificates.get"},
	"compute:InsertSslCertificate": {"compute.sslCertificates.create"},
	"compute:DeleteSslCertificate": {"compute.sslCertificates.delete"},
	"compute:GetGlobalOperation":   {"compute.globalOperations.get"},
	// IAM admin: service accounts, their keys, workload identity federation.
	"iamadmin:ListServiceAccounts":               {"iam.serviceAccounts.list"},
	"iamadmin:GetServiceAccount":                 {"iam.serviceAccounts.get"},
	"iamadmin:CreateServiceAccount":              {"iam.serviceAccounts.create"},
	"iamadmin:DeleteServiceAccount":              {"iam.serviceAccounts.delete"},
	"iamadmin:EnableServiceAccount":              {"iam.serviceAccounts.enable"},
	"iamadmin:DisableServiceAccount":             {"iam.serviceAccounts.disable"},
	"iamadmin:ListServiceAccountKeys":            {"iam.serviceAccountKeys.list"},
	"iamadmin:GetServiceAccountKey":              {"iam.serviceAccountKeys.get"},
	"iamadmin:CreateServiceAccountKey":           {"iam.serviceAccountKeys.create"},
	"iamadmin:DeleteServiceAccountKey":           {"iam.serviceAccountKeys.delete"},
	"iamadmin:DisableServiceAccountKey":          {"iam.serviceAccountKeys.disable"},
	"iamadmin:EnableServiceAccountKey":           {"iam.serviceAccountKeys.enable"},
	"iamadmin:ListWorkloadIdentityPools":         {"iam.workloadIdentityPools.list"},
	"iamadmin:GetWorkloadIdentityPool":           {"iam.workloadIdentityPools.get"},
	"iamadmin:ListWorkloadIdentityPoolProviders": {"iam.workloadIdentityPoolProviders.list"},
	"iamadmin:GetWorkloadIdentityPoolProvider":   {"iam.workloadIdentityPoolProviders.get"},
	// Recommender, for the IAM recommender (recommender.*.list / get / update of its type).
	"recommender:ListRecommendations":         {"recommender.iamPolicyRecommendations.list"},
	"recommender:GetRecommendation":           {"recommender.iamPolicyRecommendations.get"},
	"recommender:MarkRecommendationClaimed":   {"recommender.iamPolicyRecommendations.update"},
	"recommender:MarkRecommendationSucceeded": {"recommender.iamPolicyRecommendations.update"},
	"recommender:MarkRecommendationFailed":    {"recommender.iamPolicyRecommendations.update"},
	"recommender:MarkRecommendationDismissed": {"recommender.iamPolicyRecommendations.update"},
	"recommender:ListInsights":                {"recommender.iamPolicyInsights.list"},
	"recommender:GetInsight":                  {"recommender.iamPolicyInsights.get"},
	// Policy Analyzer: activities:query checks the permission of the activity type asked
	// for. The simulator counts both types as one operation, and the collector always
	// queries both, so the call stands for both permissions.
	"policyanalyzer:QueryActivity": {"policyanalyzer.serviceAccountLastAuthenticationActivities.query",
		"policyanalyzer.serviceAccountKeyLastAuthenticationActivities.query"},
}

// gcpCallPermissions are the permissions Google checks for one call; ok is false for an
// operation the table does not know.
func gcpCallPermissions(c simCall) (perms []string, ok bool) {
	if c.Service == "cloudresourcemanager" && (c.Action == "GetIamPolicy" || c.Action == "SetIamPolicy") {
		verb := "getIamPolicy"
		if c.Action == "SetIamPolicy" {
			verb = "setIamPolicy"
		}
		kind := "projects"
		if k, _, found := strings.Cut(c.Account, "/"); found && (k == "folders" || k == "organizations") {
			kind = k
		}
		return []string{"resourcemanager." + kind + "." + verb}, true
	}
	perms, ok = gcpPermissions[c.key()]
	return perms, ok
}
