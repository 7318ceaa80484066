package cloudsim

import "time"

// The Google Cloud part of a World (world.go).

// GCP is the simulated Google Cloud.
type GCP struct {
	Organizations []*GCPOrganization `yaml:"organizations,omitempty"`
	Folders       []*GCPFolder       `yaml:"folders,omitempty"`
	Projects      []*Project         `yaml:"projects"`
	// EnforceIAM authorizes every GCP call made by a member (a request with a
	// "Bearer sim:MEMBER" token) against the roles bound to it (gcp_enforce.go); calls
	// without one are the operator's and are not restricted.
	EnforceIAM bool `yaml:"enforce_iam,omitempty"`
	// RecommendFromUsage makes the IAM recommender also derive role recommendations from
	// the permissions members exercised (gcp_usage.go), besides those the world declares.
	RecommendFromUsage bool `yaml:"recommend_from_usage,omitempty"`
	// Generated, when set, adds projects made on demand from a seed, as many as asked,
	// after gcp.projects (gen_gcp.go): GCP projects of any number in bounded memory.
	Generated *GeneratedProjects `yaml:"generated,omitempty"`

	// usage is what members did and when bindings appeared, from which recommendations
	// are derived; created when the simulator starts.
	usage *gcpUsage
}

// ProjectCount is how many projects there are: those listed and those generated.
func (g GCP) ProjectCount() int {
	n := len(g.Projects)
	if g.Generated != nil {
		n += g.Generated.Projects
	}
	return n
}

// GCPOrganization is a Google Cloud organisation.
type GCPOrganization struct {
	ID        string    `yaml:"id"` // numeric
	Domain    string    `yaml:"domain"`
	IAMPolicy IAMPolicy `yaml:"iam_policy,omitempty"`
}

// GCPFolder is a Resource Manager folder, under an organisation or another folder.
type GCPFolder struct {
	ID          string    `yaml:"id"` // numeric
	DisplayName string    `yaml:"display_name,omitempty"`
	Parent      string    `yaml:"parent"` // organizations/N or folders/N
	IAMPolicy   IAMPolicy `yaml:"iam_policy,omitempty"`
}

// Project is a GCP project and what it holds.
type Project struct {
	ID              string            `yaml:"id"`
	Number          string            `yaml:"number"`
	Name            string            `yaml:"name,omitempty"`
	Parent          string            `yaml:"parent,omitempty"` // organizations/N or folders/N
	IAMPolicy       IAMPolicy         `yaml:"iam_policy"`
	ServiceAccounts []*ServiceAccount `yaml:"service_accounts,omitempty"`
	Networks        []*Network        `yaml:"networks,omitempty"`
	Firewalls       []*Firewall       `yaml:"firewalls,omitempty"`
	SslCertificates []*SslCertificate `yaml:"ssl_certificates,omitempty"`
	// Instances are the project's Compute Engine VM instances, in any zone.
	Instances []*Instance `yaml:"instances,omitempty"`
	// SharedVPCHost makes the project a Shared VPC host (Compute's xpnProjectStatus HOST):
	// its networks' firewall rules also reach the instances of its service projects.
	SharedVPCHost bool `yaml:"shared_vpc_host,omitempty"`
	// WorkloadIdentityPools are the project's IAM workload identity pools (location global).
	WorkloadIdentityPools []*WorkloadIdentityPool `yaml:"workload_identity_pools,omitempty"`
	// Recommendations are what the IAM recommender (google.iam.policy.Recommender) says of
	// the project's role bindings, each with the permissions-usage insight behind it.
	Recommendations []*RoleRecommendation `yaml:"recommendations,omitempty"`
	// ActivitySince is the start of the Policy Analyzer's observation period for the
	// project's authentication activities; zero: activityObservationDays before its end.
	ActivitySince time.Time `yaml:"activity_since,omitempty"`
}

// RoleRecommendation is one IAM recommender recommendation on a project's policy: remove
// Role from Member (NewRoles empty: REMOVE_ROLE) or replace it with NewRoles
// (REPLACE_ROLE), from the permissions Member used of Role over the last 90 days.
type RoleRecommendation struct {
	ID     string `yaml:"id"`
	Member string `yaml:"member"` // "serviceAccount:ci@p.iam.gserviceaccount.com", "user:x@example.com"
	Role   string `yaml:"role"`
	// NewRoles are the smaller roles Google suggests instead of Role.
	NewRoles []string `yaml:"new_roles,omitempty"`
	// ExercisedPermissions are the permissions of Role used in the observation period;
	// InferredPermissions those Google's model expects to be needed though not seen.
	ExercisedPermissions []string `yaml:"exercised_permissions,omitempty"`
	InferredPermissions  []string `yaml:"inferred_permissions,omitempty"`
	// TotalPermissions is the number of permissions Role holds (the insight's
	// currentTotalPermissionsCount); 0 leaves it unknown.
	TotalPermissions int       `yaml:"total_permissions,omitempty"`
	LastRefresh      time.Time `yaml:"last_refresh"`
	// State is ACTIVE (default), CLAIMED, SUCCEEDED, FAILED or DISMISSED.
	State         string            `yaml:"state,omitempty"`
	StateMetadata map[string]string `yaml:"state_metadata,omitempty"`
	// Etag is the recommendation's current etag; empty: derived from its id. Every state
	// change replaces it.
	Etag string `yaml:"etag,omitempty"`

	// generated marks a recommendation the simulator derived from usage (gcp_usage.go),
	// which it refreshes, rather than one the world declared.
	generated bool
}

// WorkloadIdentityPool is an IAM workload identity pool and its providers.
type WorkloadIdentityPool struct {
	ID          string                      `yaml:"id"`
	DisplayName string                      `yaml:"display_name,omitempty"`
	Disabled    bool                        `yaml:"disabled,omitempty"`
	State       string                      `yaml:"state,omitempty"` // ACTIVE (default) or DELETED
	Providers   []*WorkloadIdentityProvider `yaml:"providers,omitempty"`
}

// WorkloadIdentityProvider is a provider of a workload identity pool: exactly one of
// OIDC, AWS, SAML and X509 says which kind (none: OIDC without an issuer).
type WorkloadIdentityProvider struct {
	ID                 string            `yaml:"id"`
	DisplayName        string            `yaml:"display_name,omitempty"`
	Disabled           bool              `yaml:"disabled,omitempty"`
	State              string            `yaml:"state,omitempty"` // ACTIVE (default) or DELETED
	AttributeCondition string            `yaml:"attribute_condition,omitempty"`
	AttributeMapping   map[string]string `yaml:"attribute_mapping,omitempty"`
	OIDC               *OIDCProvider     `yaml:"oidc,omitempty"`
	AWS                *AWSProvider      `yaml:"aws,omitempty"`
	SAML               *SAMLProviderSpec `yaml:"saml,omitempty"`
	X509               bool              `yaml:"x509,omitempty"`
}

// OIDCProvider is an OIDC workload identity provider's issuer and audiences.
type OIDCProvider struct {
	IssuerURI        string   `yaml:"issuer_uri"`
	AllowedAudiences []string `yaml:"allowed_audiences,omitempty"`
}

// AWSProvider is an AWS workload identity provider: the AWS account it trusts.
type AWSProvider struct {
	AccountID string `yaml:"account_id"`
}

// SAMLProviderSpec is a SAML workload identity provider's IdP metadata.
type SAMLProviderSpec struct {
	IdPMetadataXML string `yaml:"idp_metadata_xml,omitempty"`
}

// IAMPolicy is a GCP IAM policy with its etag.
type IAMPolicy struct {
	Etag     string    `yaml:"etag,omitempty"`
	Version  int       `yaml:"version,omitempty"`
	Bindings []Binding `yaml:"bindings,omitempty"`
	// AuditConfigs are the policy's Data Access audit log settings.
	AuditConfigs []AuditConfig `yaml:"audit_configs,omitempty"`
}

// AuditConfig enables audit log types for a service ("allServices" or e.g.
// "storage.googleapis.com").
type AuditConfig struct {
	Service    string           `yaml:"service"`
	LogConfigs []AuditLogConfig `yaml:"audit_log_configs,omitempty"`
}

// AuditLogConfig is one log type (ADMIN_READ, DATA_READ, DATA_WRITE) and the members
// exempted from it.
type AuditLogConfig struct {
	LogType         string   `yaml:"log_type"`
	ExemptedMembers []string `yaml:"exempted_members,omitempty"`
}

// Binding grants a role to members, optionally under a condition.
type Binding struct {
	Role      string   `yaml:"role"`
	Members   []string `yaml:"members"`
	Condition *Expr    `yaml:"condition,omitempty"`
}

// Expr is an IAM condition.
type Expr struct {
	Title       string `yaml:"title,omitempty"`
	Description string `yaml:"description,omitempty"`
	Expression  string `yaml:"expression"`
}

// ServiceAccount is a GCP service account and its keys.
type ServiceAccount struct {
	Email       string   `yaml:"email"`
	UniqueID    string   `yaml:"unique_id,omitempty"`
	DisplayName string   `yaml:"display_name,omitempty"`
	Disabled    bool     `yaml:"disabled,omitempty"`
	Keys        []*SAKey `yaml:"keys,omitempty"`
	// LastAuthenticated is when the account last authenticated to a Google API, as the
	// Policy Analyzer's serviceAccountLastAuthentication activity reports it; nil: never
	// within the observation period.
	LastAuthenticated *time.Time `yaml:"last_authenticated,omitempty"`
}

// SAKey is a service-account key.
type SAKey struct {
	ID          string    `yaml:"id"`
	Type        string    `yaml:"type,omitempty"` // USER_MANAGED (default) or SYSTEM_MANAGED
	ValidAfter  time.Time `yaml:"valid_after"`
	ValidBefore time.Time `yaml:"valid_before"`
	Disabled    bool      `yaml:"disabled,omitempty"`
	Algorithm   string    `yaml:"algorithm,omitempty"` // KEY_ALG_RSA_2048 (default)
	// LastAuthenticated is when the key last authenticated a call (the
	// serviceAccountKeyLastAuthentication activity); nil: never within the observation period.
	LastAuthenticated *time.Time `yaml:"last_authenticated,omitempty"`
}

// Network is a VPC network.
type Network struct {
	Name                  string `yaml:"name"`
	ID                    string `yaml:"id,omitempty"`
	AutoCreateSubnetworks bool   `yaml:"auto_create_subnetworks,omitempty"`
	// Legacy is a legacy (non-VPC) network: the API shows no autoCreateSubnetworks field
	// but an IPv4Range (IPv4Range, default 10.240.0.0/16).
	Legacy    bool   `yaml:"legacy,omitempty"`
	IPv4Range string `yaml:"ipv4_range,omitempty"`
}

// Firewall is a VPC firewall rule.
type Firewall struct {
	Name              string   `yaml:"name"`
	ID                string   `yaml:"id,omitempty"`
	Network           string   `yaml:"network"` // network name
	Direction         string   `yaml:"direction,omitempty"`
	Disabled          bool     `yaml:"disabled,omitempty"`
	Priority          int      `yaml:"priority,omitempty"`
	SourceRanges      []string `yaml:"source_ranges,omitempty"`
	DestinationRanges []string `yaml:"destination_ranges,omitempty"`
	SourceTags        []string `yaml:"source_tags,omitempty"`
	TargetTags        []string `yaml:"target_tags,omitempty"`
	// TargetServiceAccounts limits the rule to instances running as these service
	// accounts (emails); like TargetTags, empty means every instance of the network.
	TargetServiceAccounts []string       `yaml:"target_service_accounts,omitempty"`
	Allowed               []FirewallRule `yaml:"allowed,omitempty"`
	Denied                []FirewallRule `yaml:"denied,omitempty"`
	Description           string         `yaml:"description,omitempty"`
}

// Instance is a Compute Engine VM instance: what a firewall rule applies to, by the network
// of one of its interfaces, one of its network tags or the service account it runs as.
type Instance struct {
	Name string `yaml:"name"`
	ID   string `yaml:"id,omitempty"`
	Zone string `yaml:"zone"` // "europe-west1-b"
	// Networks are the networks (names) of its network interfaces, nic0 first; empty: the
	// default network.
	Networks []string `yaml:"networks,omitempty"`
	// Tags are its network tags, which firewall rules' target and source tags name.
	Tags []string `yaml:"tags,omitempty"`
	// ServiceAccounts are the emails of the accounts it runs as (at most one, as Compute allows).
	ServiceAccounts []string `yaml:"service_accounts,omitempty"`
	Status          string   `yaml:"status,omitempty"` // RUNNING (default), TERMINATED, STOPPING…
}

// FirewallRule is a protocol and its ports (empty: every port).
type FirewallRule struct {
	Protocol string   `yaml:"protocol"`
	Ports    []string `yaml:"ports,omitempty"`
}

// SslCertificate is a Compute SSL certificate (global).
type SslCertificate struct {
	Name          string    `yaml:"name"`
	ID            string    `yaml:"id,omitempty"`
	Type          string    `yaml:"type,omitempty"` // SELF_MANAGED (default) or MANAGED
	ManagedStatus string    `yaml:"managed_status,omitempty"`
	Domains       []string  `yaml:"domains,omitempty"`
	Created       time.Time `yaml:"created,omitempty"`
	Cert          CertSpec  `yaml:"certificate"`
}
