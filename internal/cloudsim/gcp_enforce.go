package cloudsim

import (
	"slices"
	"strings"
)

// GCP IAM enforcement.
//
// Who calls: a GCP request (REST or gRPC) carrying "Authorization: Bearer sim:MEMBER"
// (SimToken) is made by MEMBER, e.g. "serviceAccount:ci@p.iam.gserviceaccount.com" or
// "user:alice@example.com". A request without one, or with a token of another form, is
// the operator's: never restricted, never recorded, as every call was before.
//
// What is checked: when the world's gcp.enforce_iam is set, each call of a member is
// mapped to the permissions Google checks for it (gcpCallPermissions) and allowed only
// when every one is held on the resource: the project (or folder, organisation) the call
// names. A member holds a permission when a role containing it (gcpRoles) is bound to the
// member itself, unconditionally, on that resource or on one of its ancestors (the
// project's folders and organisation). A refused call answers as Google does: HTTP 403
// PERMISSION_DENIED (REST) or codes.PermissionDenied (gRPC), naming the permission; it
// is counted as denied (CallStats.AccessDenied) and not recorded as used (gcp_usage.go).
//
// Not modelled: group, domain and principalSet membership (a binding to group:x does not
// grant its members); conditional bindings (ignored: they grant nothing, failing closed);
// deny policies; custom roles (grant nothing); service-account-level and other
// resource-level policies; project listing and search (ListProjects, SearchProjects are
// never refused). The role table holds only the permissions of the calls the simulator
// serves, so a role's size there is not Google's count.

// simTokenPrefix starts the bearer tokens that name a member.
const simTokenPrefix = "sim:"

// SimToken is the bearer token with which a client calls the simulator's GCP APIs as
// member ("serviceAccount:…", "user:…"): pass it as an OAuth2 access token.
func SimToken(member string) string { return simTokenPrefix + member }

// gcpCaller reads the member out of an Authorization header value; "" for the operator.
func gcpCaller(authorization string) string {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(authorization, "bearer ")
	}
	member, isSim := strings.CutPrefix(strings.TrimSpace(tok), simTokenPrefix)
	if !ok || !isSim || !strings.Contains(member, ":") {
		return ""
	}
	return member
}

// GCPCallPermissions are the permissions Google checks for a call of service (as the
// simulator counts calls) and action on account (a project id, "folders/N" or
// "organizations/N"), from Google's documentation of each method; detail is the Policy
// Analyzer's activity type. Nil: not checked. The simulator enforces them, and package
// permissions' tests check warden's declared permissions against them: one table.
func GCPCallPermissions(service, action, account, detail string) []string {
	switch service {
	case "cloudresourcemanager":
		kind := "projects"
		if k, _, ok := strings.Cut(account, "/"); ok {
			kind = k
		}
		switch action {
		case "GetProject", "GetFolder", "GetOrganization":
			return []string{"resourcemanager." + kind + ".get"}
		case "GetIamPolicy":
			return []string{"resourcemanager." + kind + ".getIamPolicy"}
		case "SetIamPolicy":
			return []string{"resourcemanager." + kind + ".setIamPolicy"}
		}
		return nil
	case "policyanalyzer":
		switch detail {
		case saLastAuthn:
			return []string{"policyanalyzer.serviceAccountLastAuthenticationActivities.query"}
		case saKeyLastAuthn:
			return []string{"policyanalyzer.serviceAccountKeyLastAuthenticationActivities.query"}
		}
		return nil
	}
	return gcpActionPermissions[service+":"+action]
}

// gcpActionPermissions maps the other calls ("service:Action") to their permissions.
var gcpActionPermissions = map[string][]string{
	"compute:ListFirewalls":           {"compute.firewalls.list"},
	"compute:GetFirewall":             {"compute.firewalls.get"},
	"compute:InsertFirewall":          {"compute.firewalls.create", "compute.networks.updatePolicy"},
	"compute:PatchFirewall":           {"compute.firewalls.update", "compute.networks.updatePolicy"},
	"compute:UpdateFirewall":          {"compute.firewalls.update", "compute.networks.updatePolicy"},
	"compute:DeleteFirewall":          {"compute.firewalls.delete", "compute.networks.updatePolicy"},
	"compute:ListNetworks":            {"compute.networks.list"},
	"compute:GetNetwork":              {"compute.networks.get"},
	"compute:ListSslCertificates":     {"compute.sslCertificates.list"},
	"compute:GetSslCertificate":       {"compute.sslCertificates.get"},
	"compute:InsertSslCertificate":    {"compute.sslCertificates.create"},
	"compute:DeleteSslCertificate":    {"compute.sslCertificates.delete"},
	"compute:GetGlobalOperation":      {"compute.globalOperations.get"},
	"compute:AggregatedListInstances": {"compute.instances.list"},
	"compute:ListInstances":           {"compute.instances.list"},
	"compute:GetProject":              {"compute.projects.get"},

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

	"recommender:ListRecommendations":         {"recommender.iamPolicyRecommendations.list"},
	"recommender:GetRecommendation":           {"recommender.iamPolicyRecommendations.get"},
	"recommender:MarkRecommendationClaimed":   {"recommender.iamPolicyRecommendations.update"},
	"recommender:MarkRecommendationSucceeded": {"recommender.iamPolicyRecommendations.update"},
	"recommender:MarkRecommendationFailed":    {"recommender.iamPolicyRecommendations.update"},
	"recommender:MarkRecommendationDismissed": {"recommender.iamPolicyRecommendations.update"},
	"recommender:ListInsights":                {"recommender.iamPolicyInsights.list"},
	"recommender:GetInsight":                  {"recommender.iamPolicyInsights.get"},
	"recommender:MarkInsightAccepted":         {"recommender.iamPolicyInsights.update"},
	"recommender:GetRecommenderConfig":        {"recommender.iamPolicyRecommenderConfig.get"},
	"recommender:GetInsightTypeConfig":        {"recommender.iamPolicyInsightTypeConfig.get"},
	"recommender:UpdateRecommenderConfig":     {"recommender.iamPolicyRecommenderConfig.update"},
	"recommender:UpdateInsightTypeConfig":     {"recommender.iamPolicyInsightTypeConfig.update"},

	"securitycenter:CreateSource":    {"securitycenter.sources.create"},
	"securitycenter:GetSource":       {"securitycenter.sources.get"},
	"securitycenter:ListSources":     {"securitycenter.sources.list"},
	"securitycenter:CreateFinding":   {"securitycenter.findings.create"},
	"securitycenter:UpdateFinding":   {"securitycenter.findings.update"},
	"securitycenter:SetFindingState": {"securitycenter.findings.setState"},
	"securitycenter:SetMute":         {"securitycenter.findings.setMute"},
	"securitycenter:ListFindings":    {"securitycenter.findings.list"},
}

// Permission groups the role table is built from.
var (
	permHierarchyRead = []string{
		"resourcemanager.projects.get", "resourcemanager.projects.getIamPolicy",
		"resourcemanager.folders.get", "resourcemanager.folders.getIamPolicy",
		"resourcemanager.organizations.get", "resourcemanager.organizations.getIamPolicy",
	}
	permComputeRead = []string{
		"compute.firewalls.list", "compute.firewalls.get", "compute.networks.list", "compute.networks.get",
		"compute.sslCertificates.list", "compute.sslCertificates.get", "compute.globalOperations.get",
	}
	permComputeWrite = []string{
		"compute.firewalls.create", "compute.firewalls.update", "compute.firewalls.delete",
		"compute.networks.updatePolicy", "compute.sslCertificates.create", "compute.sslCertificates.delete",
	}
	permSARead  = []string{"iam.serviceAccounts.list", "iam.serviceAccounts.get", "iam.serviceAccountKeys.list", "iam.serviceAccountKeys.get"}
	permSAWrite = []string{
		"iam.serviceAccounts.create", "iam.serviceAccounts.delete", "iam.serviceAccounts.enable", "iam.serviceAccounts.disable",
		"iam.serviceAccountKeys.create", "iam.serviceAccountKeys.delete", "iam.serviceAccountKeys.enable", "iam.serviceAccountKeys.disable",
	}
	permWIFRead = []string{
		"iam.workloadIdentityPools.list", "iam.workloadIdentityPools.get",
		"iam.workloadIdentityPoolProviders.list", "iam.workloadIdentityPoolProviders.get",
	}
	permRecommenderRead = []string{
		"recommender.iamPolicyRecommendations.list", "recommender.iamPolicyRecommendations.get",
		"recommender.iamPolicyInsights.list", "recommender.iamPolicyInsights.get",
	}
	permRecommenderWrite = []string{"recommender.iamPolicyRecommendations.update", "recommender.iamPolicyInsights.update"}
	permActivity         = []string{
		"policyanalyzer.serviceAccountLastAuthenticationActivities.query",
		"policyanalyzer.serviceAccountKeyLastAuthenticationActivities.query",
	}
	permSCCRead     = []string{"securitycenter.sources.get", "securitycenter.sources.list", "securitycenter.findings.list"}
	permSCCFindings = []string{"securitycenter.findings.create", "securitycenter.findings.update", "securitycenter.findings.setState", "securitycenter.findings.setMute"}
	permSetPolicy   = []string{
		"resourcemanager.projects.setIamPolicy", "resourcemanager.folders.setIamPolicy", "resourcemanager.organizations.setIamPolicy",
	}
)

func union(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		for _, p := range g {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// gcpRoles are the predefined roles the simulator knows, each with the permissions it
// holds among those of the calls served: viewer reads everything but activity, editor
// adds every write but IAM policies (setIamPolicy is owner's, as in Google), owner adds
// those and the Policy Analyzer's activity queries. The narrower roles follow Google's
// definitions restricted to the same permissions.
var gcpRoles = func() map[string][]string {
	viewer := union(permHierarchyRead, permComputeRead, permSARead, permWIFRead, permRecommenderRead, permSCCRead)
	editor := union(viewer, permComputeWrite, permSAWrite, permRecommenderWrite, permSCCFindings, []string{"securitycenter.sources.create"})
	return map[string][]string{
		"roles/viewer": viewer,
		"roles/editor": editor,
		"roles/owner":  union(editor, permSetPolicy, permActivity),
		"roles/browser": union([]string{
			"resourcemanager.projects.get", "resourcemanager.projects.getIamPolicy",
			"resourcemanager.folders.get", "resourcemanager.organizations.get",
		}),
		"roles/iam.securityReviewer": union([]string{
			"resourcemanager.projects.getIamPolicy", "resourcemanager.folders.getIamPolicy", "resourcemanager.organizations.getIamPolicy",
			"iam.serviceAccounts.list", "iam.serviceAccountKeys.list", "iam.workloadIdentityPools.list",
			"iam.workloadIdentityPoolProviders.list", "compute.firewalls.list", "compute.networks.list", "compute.sslCertificates.list",
		}),
		"roles/compute.viewer":        union(permComputeRead, []string{"resourcemanager.projects.get"}),
		"roles/compute.networkViewer": union([]string{"compute.firewalls.list", "compute.firewalls.get", "compute.networks.list", "compute.networks.get"}),
		"roles/compute.securityAdmin": union(permComputeRead, []string{
			"compute.firewalls.create", "compute.firewalls.update", "compute.firewalls.delete", "compute.networks.updatePolicy",
			"compute.sslCertificates.create", "compute.sslCertificates.delete", "resourcemanager.projects.get",
		}),
		"roles/iam.serviceAccountViewer":              union(permSARead, []string{"resourcemanager.projects.get"}),
		"roles/iam.serviceAccountAdmin":               union(permSARead, permSAWrite[:4], []string{"resourcemanager.projects.get"}),
		"roles/iam.serviceAccountKeyAdmin":            union(permSARead, permSAWrite[4:], []string{"resourcemanager.projects.get"}),
		"roles/iam.workloadIdentityPoolViewer":        union(permWIFRead),
		"roles/securitycenter.findingsEditor":         union(permSCCRead, permSCCFindings),
		"roles/securitycenter.sourcesEditor":          union(permSCCRead, []string{"securitycenter.sources.create"}),
		"roles/securitycenter.adminViewer":            union(permSCCRead),
		"roles/securitycenter.admin":                  union(permSCCRead, permSCCFindings, []string{"securitycenter.sources.create"}),
		"roles/recommender.iamViewer":                 union(permRecommenderRead),
		"roles/recommender.iamAdmin":                  union(permRecommenderRead, permRecommenderWrite),
		"roles/policyanalyzer.activityAnalysisViewer": union(permActivity),
		"roles/resourcemanager.projectIamAdmin":       union([]string{"resourcemanager.projects.getIamPolicy", "resourcemanager.projects.setIamPolicy"}),
		"roles/resourcemanager.folderIamAdmin":        union([]string{"resourcemanager.folders.getIamPolicy", "resourcemanager.folders.setIamPolicy"}),
		"roles/resourcemanager.organizationAdmin":     union(permHierarchyRead, permSetPolicy),
		"roles/iam.securityAdmin":                     union(permHierarchyRead, permSetPolicy, permSARead),
		"roles/resourcemanager.organizationViewer":    {"resourcemanager.organizations.get"},
		"roles/resourcemanager.folderViewer":          {"resourcemanager.folders.get"},
	}
}()

// gcpPolicyChain is the IAM policies that apply to account (a project id, "folders/N",
// "organizations/N"): its own and its ancestors'. nil when the resource is unknown (the
// handler then answers as it does for a resource the caller cannot see). s.mu is held.
func (s *Sim) gcpPolicyChain(account string) []*IAMPolicy {
	var chain []*IAMPolicy
	parent := ""
	switch {
	case strings.HasPrefix(account, "folders/"), strings.HasPrefix(account, "organizations/"):
		parent = account
	default:
		p := s.gcpProject(account)
		if p == nil {
			return nil
		}
		chain = append(chain, &p.IAMPolicy)
		parent = p.Parent
	}
	for seen := 0; parent != "" && seen < 32; seen++ {
		kind, id, _ := strings.Cut(parent, "/")
		parent = ""
		switch kind {
		case "folders":
			for _, f := range s.world.GCP.Folders {
				if f.ID == id {
					chain, parent = append(chain, &f.IAMPolicy), f.Parent
				}
			}
		case "organizations":
			for _, o := range s.world.GCP.Organizations {
				if o.ID == id {
					chain = append(chain, &o.IAMPolicy)
				}
			}
		}
	}
	return chain
}

// gcpHolds tells whether member holds perm through the policies of chain. s.mu is held.
func gcpHolds(chain []*IAMPolicy, member, perm string) bool {
	for _, pol := range chain {
		for _, b := range pol.Bindings {
			if b.Condition == nil && slices.Contains(b.Members, member) && slices.Contains(gcpRoles[b.Role], perm) {
				return true
			}
		}
	}
	return false
}

// authorizeGCP refuses a member's call that needs a permission the member does not hold
// on the call's resource, when the world enforces GCP IAM. The operator (member "") and
// calls without a known permission or resource are not restricted. s.mu is held.
func (s *Sim) authorizeGCP(member string, c *call, detail string) error {
	if member == "" || !s.world.GCP.EnforceIAM {
		return nil
	}
	chain := s.gcpPolicyChain(c.Account)
	if chain == nil {
		return nil
	}
	for _, perm := range GCPCallPermissions(c.Service, c.Action, c.Account, detail) {
		if !gcpHolds(chain, member, perm) {
			resource := c.Account
			if !strings.Contains(resource, "/") {
				resource = "projects/" + resource
			}
			s.faultMu.Lock()
			if st := s.calls[c.Service+":"+c.Action]; st != nil {
				st.AccessDenied++ // counted as AWS's refusals are (iam_enforce.go)
			}
			s.faultMu.Unlock()
			return errf(kindDenied, "forbidden", "Permission '%s' denied on resource '//cloudresourcemanager.googleapis.com/%s' (or it may not exist).", perm, resource)
		}
	}
	return nil
}

// gcpServiceAccountProject is the project of "projects/-/serviceAccounts/EMAIL…" (the
// wildcard resolved through the account), or the name's own project. s.mu is held.
func (s *Sim) gcpServiceAccountProject(name string) string {
	key := projectOf(name)
	if key != "-" {
		if p := s.gcpProject(key); p != nil {
			return p.ID
		}
		return key
	}
	saName, _, _ := strings.Cut(name, "/keys/")
	if p, _, err := s.serviceAccountFor(saName); err == nil {
		return p.ID
	}
	return key
}
