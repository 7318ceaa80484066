package cloudsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// World is the whole state of a simulated cloud: AWS accounts (optionally an
// organisation), GCP projects, and the faults and limits the simulator injects. It is what
// a world file (fixtures/acme/world.yaml) holds; the simulator mutates it as writes come in.
//
// An organisation of any size need not be listed: aws.organization.generated
// (GeneratedAccounts) and gcp.generated (GeneratedProjects) make accounts and projects on
// demand from a seed, holding only the most recently used in memory, with faults in a
// chosen share of them and, for accounts, drift at a chosen rate
// (internal/cloudsim/testdata/generated-org.yaml).
type World struct {
	AWS AWS `yaml:"aws"`
	GCP GCP `yaml:"gcp"`
	// Latency is added to every call, before any fault's own latency.
	Latency Duration `yaml:"latency,omitempty"`
	// RateLimits caps calls per second per service and account ("iam": 20); a call over the
	// limit is throttled the way the service throttles.
	RateLimits map[string]float64 `yaml:"rate_limits,omitempty"`
	// Faults are injected failures, matched per call.
	Faults []Fault `yaml:"faults,omitempty"`
	// Seed makes injected faults reproducible; 0 picks 1.
	Seed uint64 `yaml:"seed,omitempty"`
	// Clock, when set, is the simulator's time when it starts (it runs on from there);
	// a past start leaves room to move it forward (POST /_sim/clock) without stamping
	// times ahead of the machine's. Options.Now, when given, wins.
	Clock time.Time `yaml:"clock,omitempty"`
}

// AWS is the simulated AWS partition.
type AWS struct {
	// Caller is the account of credentials the simulator did not issue itself; default the
	// organisation's management account, else the first account.
	Caller string `yaml:"caller,omitempty"`
	// Organization, when set, makes the accounts one AWS Organization.
	Organization *Organization `yaml:"organization,omitempty"`
	Accounts     []*Account    `yaml:"accounts"`
	// S3 holds the buckets, each owned by one of the accounts.
	S3 S3 `yaml:"s3,omitempty"`
	// EnforceIAM authorizes every call of a world user or role session against its
	// identity policies (iam_enforce.go); off, they may do anything, as the root user.
	EnforceIAM bool `yaml:"enforce_iam,omitempty"`
}

// Organization is an AWS Organization over the world's accounts.
type Organization struct {
	ID         string `yaml:"id"`
	Management string `yaml:"management"`
	// Generated, when set, adds accounts made on demand from a seed, as many as asked,
	// after aws.accounts (gen_world.go): an organisation of any size in bounded memory.
	Generated *GeneratedAccounts `yaml:"generated,omitempty"`
}

// Account is one AWS account and everything in it.
type Account struct {
	ID     string `yaml:"id"`
	Name   string `yaml:"name,omitempty"`
	Email  string `yaml:"email,omitempty"`
	Status string `yaml:"status,omitempty"` // ACTIVE (default) or SUSPENDED
	// Regions are the enabled regions; default us-east-1.
	Regions            []string             `yaml:"regions,omitempty"`
	Root               Root                 `yaml:"root"`
	PasswordPolicy     *PasswordPolicy      `yaml:"password_policy,omitempty"`
	Users              []*User              `yaml:"users,omitempty"`
	Groups             []*Group             `yaml:"groups,omitempty"`
	Roles              []*Role              `yaml:"roles,omitempty"`
	Policies           []*Policy            `yaml:"policies,omitempty"`
	ServerCertificates []*ServerCertificate `yaml:"server_certificates,omitempty"`
	SecurityGroups     []*SecurityGroup     `yaml:"security_groups,omitempty"`
	// NetworkInterfaces are the account's elastic network interfaces
	// (DescribeNetworkInterfaces): what uses its security groups.
	NetworkInterfaces []*NetworkInterface `yaml:"network_interfaces,omitempty"`
	Certificates      []*Certificate      `yaml:"certificates,omitempty"`
	Secrets           []*Secret           `yaml:"secrets,omitempty"`
	// Alias is the account alias (ListAccountAliases); empty: none.
	Alias string `yaml:"alias,omitempty"`
	// SAMLProviders are the account's IAM SAML identity providers (ListSAMLProviders).
	SAMLProviders []*SAMLProvider `yaml:"saml_providers,omitempty"`
	// UnassignedMFADevices names the virtual MFA devices created but assigned to no one
	// (ListVirtualMFADevices with AssignmentStatus Unassigned): arn:aws:iam::ACCT:mfa/NAME.
	UnassignedMFADevices []string `yaml:"unassigned_mfa_devices,omitempty"`
	// AccessAnalyzer is the account's IAM Access Analyzer unused-access analyzer
	// (iam_analyzer.go); nil: none.
	AccessAnalyzer *AccessAnalyzer `yaml:"access_analyzer,omitempty"`
	// SecurityHubDisabled starts AWS Security Hub disabled in the account's regions
	// (securityhub.go) until EnableSecurityHub; by default it is enabled.
	SecurityHubDisabled bool `yaml:"securityhub_disabled,omitempty"`

	// roleAt is where findRole last found each role name asked for in Roles: every call
	// of an assumed role looks its role up, twice, among thousands. A hint only, checked
	// at each use, so that Roles may change under it; the simulator's lock guards it.
	roleAt map[string]int
}

// SAMLProvider is an IAM SAML identity provider; its ARN is
// arn:aws:iam::ACCT:saml-provider/NAME.
type SAMLProvider struct {
	Name       string    `yaml:"name"`
	Created    time.Time `yaml:"created,omitempty"`
	ValidUntil time.Time `yaml:"valid_until,omitempty"` // default a year after Created
}

// MFADevice is an MFA device of a user or of the root user.
type MFADevice struct {
	// Type is virtual (default: an authenticator app, listed by ListVirtualMFADevices) or
	// hardware (a TOTP token or a FIDO security key, which ListVirtualMFADevices does not
	// list).
	Type string `yaml:"type,omitempty"`
	// Serial is the device's serial number; default arn:aws:iam::ACCT:mfa/USER for a
	// virtual device, a made-up token serial (GAHT…) for a hardware one.
	Serial string `yaml:"serial,omitempty"`
	// Enabled is when the device was enabled for its user; default the user's creation.
	Enabled time.Time `yaml:"enabled,omitempty"`
}

// Root is the account's root user, as the credential report and account summary show it.
type Root struct {
	MFA bool `yaml:"mfa"`
	// MFAType is the kind of the root's MFA device, when MFA is on: virtual (default) or
	// hardware.
	MFAType          string     `yaml:"mfa_type,omitempty"`
	AccessKeysActive int        `yaml:"access_keys_active,omitempty"`
	PasswordLastUsed *time.Time `yaml:"password_last_used,omitempty"`
	Created          time.Time  `yaml:"created,omitempty"`
	// AccessKey1LastUsed and AccessKey2LastUsed are the last uses of the root's access
	// keys (the credential report's access_key_N_last_used_date); nil: never used.
	AccessKey1LastUsed *time.Time `yaml:"access_key_1_last_used,omitempty"`
	AccessKey2LastUsed *time.Time `yaml:"access_key_2_last_used,omitempty"`
	// AccessKey1Created and AccessKey2Created are when the root's keys were created (the
	// credential report's access_key_N_last_rotated); nil: when the root was (Created).
	AccessKey1Created *time.Time `yaml:"access_key_1_created,omitempty"`
	AccessKey2Created *time.Time `yaml:"access_key_2_created,omitempty"`
}

// PasswordPolicy is the account password policy (GetAccountPasswordPolicy).
type PasswordPolicy struct {
	MinimumPasswordLength      int  `yaml:"minimum_password_length"`
	RequireSymbols             bool `yaml:"require_symbols"`
	RequireNumbers             bool `yaml:"require_numbers"`
	RequireUppercaseCharacters bool `yaml:"require_uppercase_characters"`
	RequireLowercaseCharacters bool `yaml:"require_lowercase_characters"`
	AllowUsersToChangePassword bool `yaml:"allow_users_to_change_password"`
	MaxPasswordAge             int  `yaml:"max_password_age,omitempty"`
	PasswordReusePrevention    int  `yaml:"password_reuse_prevention,omitempty"`
	HardExpiry                 bool `yaml:"hard_expiry,omitempty"`
}

// User is an IAM user.
type User struct {
	Name                string     `yaml:"name"`
	Path                string     `yaml:"path,omitempty"`
	ID                  string     `yaml:"id,omitempty"`
	Created             time.Time  `yaml:"created,omitempty"`
	PasswordEnabled     bool       `yaml:"password_enabled,omitempty"`
	PasswordLastUsed    *time.Time `yaml:"password_last_used,omitempty"`
	PasswordLastChanged *time.Time `yaml:"password_last_changed,omitempty"`
	// MFA is shorthand for one virtual MFA device named after the user, unless
	// MFADevices lists the user's devices.
	MFA bool `yaml:"mfa,omitempty"`
	// MFADevices are the user's MFA devices, virtual or hardware; a user with any has MFA.
	MFADevices       []*MFADevice      `yaml:"mfa_devices,omitempty"`
	AccessKeys       []*AccessKey      `yaml:"access_keys,omitempty"`
	Groups           []string          `yaml:"groups,omitempty"`
	AttachedPolicies []string          `yaml:"attached_policies,omitempty"` // policy ARNs
	InlinePolicies   []InlinePolicy    `yaml:"inline_policies,omitempty"`
	Tags             map[string]string `yaml:"tags,omitempty"`
	// LastAccessed is the user's past use of services (access.go); the calls it makes
	// add to it.
	LastAccessed []AccessRecord `yaml:"last_accessed,omitempty"`
}

// AccessKey is an IAM user's access key.
type AccessKey struct {
	ID              string     `yaml:"id"`
	Secret          string     `yaml:"secret,omitempty"`
	Status          string     `yaml:"status,omitempty"` // Active (default) or Inactive
	Created         time.Time  `yaml:"created,omitempty"`
	LastUsed        *time.Time `yaml:"last_used,omitempty"`
	LastUsedService string     `yaml:"last_used_service,omitempty"`
	LastUsedRegion  string     `yaml:"last_used_region,omitempty"`
}

// InlinePolicy is a policy embedded in a user, group or role.
type InlinePolicy struct {
	Name     string `yaml:"name"`
	Document Doc    `yaml:"document"`
}

// Group is an IAM group; its members are the users that name it.
type Group struct {
	Name             string         `yaml:"name"`
	Path             string         `yaml:"path,omitempty"`
	ID               string         `yaml:"id,omitempty"`
	Created          time.Time      `yaml:"created,omitempty"`
	AttachedPolicies []string       `yaml:"attached_policies,omitempty"`
	InlinePolicies   []InlinePolicy `yaml:"inline_policies,omitempty"`
	// LastAccessed is use declared for the group itself. IAM keeps no use of a group
	// (a group's report is its members' use): these records stand for members the world
	// leaves out.
	LastAccessed []AccessRecord `yaml:"last_accessed,omitempty"`
}

// Role is an IAM role.
type Role struct {
	Name               string            `yaml:"name"`
	Path               string            `yaml:"path,omitempty"`
	ID                 string            `yaml:"id,omitempty"`
	Created            time.Time         `yaml:"created,omitempty"`
	Description        string            `yaml:"description,omitempty"`
	AssumeRolePolicy   Doc               `yaml:"assume_role_policy"`
	MaxSessionDuration int               `yaml:"max_session_duration,omitempty"`
	LastUsed           *time.Time        `yaml:"last_used,omitempty"`
	LastUsedRegion     string            `yaml:"last_used_region,omitempty"`
	AttachedPolicies   []string          `yaml:"attached_policies,omitempty"`
	InlinePolicies     []InlinePolicy    `yaml:"inline_policies,omitempty"`
	Tags               map[string]string `yaml:"tags,omitempty"`
	// LastAccessed is the role's past use of services (access.go); the calls of its
	// sessions add to it.
	LastAccessed []AccessRecord `yaml:"last_accessed,omitempty"`
}

// Policy is a managed policy. AWS-managed policies live in every account that attaches
// them (their ARN has the account "aws").
type Policy struct {
	Name        string    `yaml:"name"`
	Path        string    `yaml:"path,omitempty"`
	ID          string    `yaml:"id,omitempty"`
	ARN         string    `yaml:"arn,omitempty"`
	AWSManaged  bool      `yaml:"aws_managed,omitempty"`
	Description string    `yaml:"description,omitempty"`
	Created     time.Time `yaml:"created,omitempty"`
	Updated     time.Time `yaml:"updated,omitempty"`
	// Document is the default version's document; Versions, when given, replace it.
	Document       Doc             `yaml:"document,omitempty"`
	DefaultVersion string          `yaml:"default_version,omitempty"`
	Versions       []PolicyVersion `yaml:"versions,omitempty"`
}

// PolicyVersion is one version of a managed policy.
type PolicyVersion struct {
	ID       string    `yaml:"id"`
	Document Doc       `yaml:"document"`
	Created  time.Time `yaml:"created,omitempty"`
}

// ServerCertificate is an IAM server certificate.
type ServerCertificate struct {
	Name     string    `yaml:"name"`
	Path     string    `yaml:"path,omitempty"`
	ID       string    `yaml:"id,omitempty"`
	Uploaded time.Time `yaml:"uploaded,omitempty"`
	Cert     CertSpec  `yaml:"certificate"`
}

// SecurityGroup is an EC2 security group in one region.
type SecurityGroup struct {
	ID          string            `yaml:"id"`
	Name        string            `yaml:"name"`
	Region      string            `yaml:"region"`
	VPC         string            `yaml:"vpc,omitempty"`
	Description string            `yaml:"description,omitempty"`
	Ingress     []Rule            `yaml:"ingress,omitempty"`
	Egress      []Rule            `yaml:"egress,omitempty"`
	Tags        map[string]string `yaml:"tags,omitempty"`
}

// Rule is one security-group rule: a protocol, a port range and one peer.
type Rule struct {
	Protocol    string `yaml:"protocol"` // tcp, udp, icmp, icmpv6 or -1
	FromPort    int    `yaml:"from_port"`
	ToPort      int    `yaml:"to_port"`
	CIDR        string `yaml:"cidr,omitempty"`         // IPv4 or IPv6
	SourceGroup string `yaml:"source_group,omitempty"` // sg-… or pl-…
	Description string `yaml:"description,omitempty"`
}

// Certificate is an ACM certificate in one region.
type Certificate struct {
	ID                   string    `yaml:"id"` // the uuid at the end of the ARN
	Region               string    `yaml:"region"`
	Domain               string    `yaml:"domain"`
	SANs                 []string  `yaml:"subject_alternative_names,omitempty"`
	Type                 string    `yaml:"type,omitempty"`   // AMAZON_ISSUED (default), IMPORTED, PRIVATE
	Status               string    `yaml:"status,omitempty"` // ISSUED (default), EXPIRED, …
	InUseBy              []string  `yaml:"in_use_by,omitempty"`
	RenewalEligibility   string    `yaml:"renewal_eligibility,omitempty"`
	RenewalStatus        string    `yaml:"renewal_status,omitempty"`
	RenewalFailureReason string    `yaml:"renewal_failure_reason,omitempty"`
	Created              time.Time `yaml:"created,omitempty"`
	Cert                 CertSpec  `yaml:"certificate"`
	// Tags are the certificate's tags (ImportCertificate, AddTagsToCertificate).
	Tags map[string]string `yaml:"tags,omitempty"`
	// TransparencyLogging is the certificate transparency logging preference, ENABLED
	// (default) or DISABLED (DescribeCertificate Options, UpdateCertificateOptions).
	TransparencyLogging string `yaml:"transparency_logging,omitempty"`
}

// Secret is a Secrets Manager secret in one region. A world file may give its value as
// String or Binary instead of Versions: it becomes the secret's one version, AWSCURRENT.
type Secret struct {
	Name   string `yaml:"name"`
	Region string `yaml:"region"`
	// Suffix is the six characters Secrets Manager appends to the name in the ARN
	// ("prod/db-a1B2c3"); default derived from the account, region and name.
	Suffix      string            `yaml:"suffix,omitempty"`
	Description string            `yaml:"description,omitempty"`
	KMSKeyID    string            `yaml:"kms_key_id,omitempty"`
	Tags        map[string]string `yaml:"tags,omitempty"`
	Created     time.Time         `yaml:"created,omitempty"`
	Changed     time.Time         `yaml:"changed,omitempty"`  // LastChangedDate; default Created
	Accessed    *time.Time        `yaml:"accessed,omitempty"` // LastAccessedDate: a day, as AWS keeps it
	// Deleted is when DeleteSecret marked the secret for deletion, Purge when the deletion
	// happens (DeletionDate). A marked secret refuses reads and writes until RestoreSecret;
	// once the simulator's clock passes Purge it is gone.
	Deleted  *time.Time       `yaml:"deleted,omitempty"`
	Purge    *time.Time       `yaml:"deletion_date,omitempty"`
	String   string           `yaml:"string,omitempty"`
	Binary   []byte           `yaml:"binary,omitempty"`
	Versions []*SecretVersion `yaml:"versions,omitempty"`
}

// SecretVersion is one version of a secret's value, with its staging labels (AWSCURRENT,
// AWSPREVIOUS, AWSPENDING or the caller's own); a version without any is deprecated.
type SecretVersion struct {
	ID      string    `yaml:"id"` // VersionId, the ClientRequestToken that made it
	Stages  []string  `yaml:"stages,omitempty"`
	String  string    `yaml:"string,omitempty"`
	Binary  []byte    `yaml:"binary,omitempty"`
	Created time.Time `yaml:"created,omitempty"`
}

// CertSpec is a certificate: either its PEM, or what to mint (the simulator signs it at
// load with a made-up issuer of the given name, so that collectors parse real X.509).
type CertSpec struct {
	PEM                string    `yaml:"pem,omitempty"`
	Subject            string    `yaml:"subject,omitempty"` // "CN=shop.example,O=Example"
	Issuer             string    `yaml:"issuer,omitempty"`  // empty: self-signed
	Serial             string    `yaml:"serial,omitempty"`  // hex
	NotBefore          time.Time `yaml:"not_before,omitempty"`
	NotAfter           time.Time `yaml:"not_after,omitempty"`
	DNSNames           []string  `yaml:"dns_names,omitempty"`
	KeyAlgorithm       string    `yaml:"key_algorithm,omitempty"` // RSA (default), EC, ED25519
	KeySize            int       `yaml:"key_size,omitempty"`
	SignatureAlgorithm string    `yaml:"signature_algorithm,omitempty"` // Go x509 name
	IsCA               bool      `yaml:"is_ca,omitempty"`
	// Chain is the PEM of the issuing certificates, filled in when minted.
	Chain string `yaml:"chain,omitempty"`
}

// Doc is a JSON document (an IAM policy): in YAML either a JSON string or a mapping.
type Doc string

// UnmarshalYAML accepts a string holding JSON or any YAML value, stored as compact JSON.
func (d *Doc) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		var v any
		if err := json.Unmarshal([]byte(n.Value), &v); err != nil {
			return fmt.Errorf("line %d: document is not JSON: %v", n.Line, err)
		}
		*d = Doc(compactJSON(n.Value))
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return err
	}
	b, err := json.Marshal(jsonShape(v))
	if err != nil {
		return fmt.Errorf("line %d: document: %v", n.Line, err)
	}
	*d = Doc(b)
	return nil
}

// MarshalYAML writes the document as a YAML mapping, readable in a world file.
func (d Doc) MarshalYAML() (any, error) {
	if d == "" {
		return nil, nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(d), &n); err != nil {
		return string(d), nil
	}
	if len(n.Content) == 1 {
		setFlow(n.Content[0])
		return n.Content[0], nil
	}
	return string(d), nil
}

// setFlow writes short lists in flow style, as a person would.
func setFlow(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	for _, c := range n.Content {
		setFlow(c)
	}
	if n.Kind == yaml.SequenceNode {
		scalars := true
		for _, c := range n.Content {
			scalars = scalars && c.Kind == yaml.ScalarNode
		}
		if scalars {
			n.Style |= yaml.FlowStyle
		}
	}
}

// jsonShape makes a value decoded from YAML JSON-shaped: string keys everywhere (YAML
// allows keys of any type). It is config.JSONShape, kept here so that the simulator, which
// every layer's tests start, depends on no warden package above it.
func jsonShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonShape(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonShape(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = jsonShape(e)
		}
		return x
	}
	return v
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// Duration is a time.Duration written as "20ms" in YAML.
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// LoadWorld reads a world file. Unknown fields are errors that name the line.
func LoadWorld(path string) (*World, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read world: %w", err)
	}
	w, err := ParseWorld(b)
	if err != nil {
		return nil, fmt.Errorf("read world %s: %w", path, err)
	}
	return w, nil
}

// ParseWorld reads a world from YAML.
func ParseWorld(b []byte) (*World, error) {
	w := &World{}
	if len(bytes.TrimSpace(b)) == 0 {
		return w, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(w); err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	// An empty list entry ("-" alone, or null) decodes to a nil pointer, which validate
	// and the simulator would dereference: refuse it, naming where it is.
	if path := nilEntry(reflect.ValueOf(w).Elem(), ""); path != "" {
		return nil, fmt.Errorf("%s: empty list entry", path)
	}
	if err := w.validate(); err != nil {
		return nil, err
	}
	return w, nil
}

// nilEntry returns the path (aws.accounts[0].users[2]) of the first nil pointer in a list
// of v, which is a value of the world's types, or "" when there is none.
func nilEntry(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		return nilEntry(v.Elem(), path)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if path != "" {
				name = path + "." + name
			}
			if p := nilEntry(v.Field(i), name); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "" // bytes (a policy document, a secret): no entries to check
		}
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			at := fmt.Sprintf("%s[%d]", path, i)
			if e.Kind() == reflect.Pointer && e.IsNil() {
				return at
			}
			if p := nilEntry(e, at); p != "" {
				return p
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			e := it.Value()
			at := fmt.Sprintf("%s.%v", path, it.Key())
			if e.Kind() == reflect.Pointer && e.IsNil() {
				return at
			}
			if p := nilEntry(e, at); p != "" {
				return p
			}
		}
	}
	return ""
}

// Marshal writes the world as YAML.
func (w *World) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func (w *World) validate() error {
	seen := map[string]bool{}
	for i, a := range w.AWS.Accounts {
		if len(a.ID) != 12 || strings.Trim(a.ID, "0123456789") != "" {
			return fmt.Errorf("aws.accounts[%d].id: %q is not a 12-digit account id", i, a.ID)
		}
		if seen[a.ID] {
			return fmt.Errorf("aws.accounts[%d].id: account %s appears twice", i, a.ID)
		}
		seen[a.ID] = true
		for j, sg := range a.SecurityGroups {
			if sg.Region == "" {
				return fmt.Errorf("aws.accounts[%d].security_groups[%d] (%s): region is required", i, j, sg.ID)
			}
		}
		if err := validateInterfaces(a); err != nil {
			return fmt.Errorf("aws.accounts[%d].%w", i, err)
		}
		for j, c := range a.Certificates {
			if c.Region == "" {
				return fmt.Errorf("aws.accounts[%d].certificates[%d] (%s): region is required", i, j, c.ID)
			}
			if t := c.TransparencyLogging; t != "" && t != "ENABLED" && t != "DISABLED" {
				return fmt.Errorf("aws.accounts[%d].certificates[%d] (%s): transparency_logging %q is not ENABLED or DISABLED", i, j, c.ID, t)
			}
		}
		if err := validateMFA(a); err != nil {
			return fmt.Errorf("aws.accounts[%d].%w", i, err)
		}
		if err := validateSecrets(a.Secrets); err != nil {
			return fmt.Errorf("aws.accounts[%d].%w", i, err)
		}
		if err := validateAccess(a); err != nil {
			return fmt.Errorf("aws.accounts[%d].%w", i, err)
		}
	}
	if err := validateOrganization(w.AWS.Organization, seen); err != nil {
		return err
	}
	if w.AWS.Caller != "" && !seen[w.AWS.Caller] && !generates(w.AWS.Organization, w.AWS.Caller) {
		return fmt.Errorf("aws.caller: %q is not one of aws.accounts", w.AWS.Caller)
	}
	if err := validateS3(w.AWS.S3, seen); err != nil {
		return err
	}
	fseen := map[string]bool{}
	for i, f := range w.GCP.Folders {
		if f.ID == "" || strings.Trim(f.ID, "0123456789") != "" {
			return fmt.Errorf("gcp.folders[%d].id: %q is not a numeric folder id", i, f.ID)
		}
		if fseen[f.ID] {
			return fmt.Errorf("gcp.folders[%d].id: folder %s appears twice", i, f.ID)
		}
		fseen[f.ID] = true
		if !strings.HasPrefix(f.Parent, "organizations/") && !strings.HasPrefix(f.Parent, "folders/") {
			return fmt.Errorf("gcp.folders[%d].parent: %q is not organizations/N or folders/N", i, f.Parent)
		}
	}
	pseen := map[string]bool{}
	for i, p := range w.GCP.Projects {
		if p.ID == "" || p.Number == "" {
			return fmt.Errorf("gcp.projects[%d]: id and number are required", i)
		}
		if pseen[p.ID] {
			return fmt.Errorf("gcp.projects[%d].id: project %s appears twice", i, p.ID)
		}
		pseen[p.ID] = true
		if err := validateGCPProject(p); err != nil {
			return fmt.Errorf("gcp.projects[%d] (%s).%w", i, p.ID, err)
		}
	}
	if g := w.GCP.Generated; g != nil {
		d := g.withDefaults()
		if err := d.validate(); err != nil {
			return fmt.Errorf("gcp.generated.%w", err)
		}
		for _, p := range w.GCP.Projects {
			if d.index(p.ID) >= 0 || d.index(p.Number) >= 0 {
				return fmt.Errorf("gcp.generated: project %s (%s) is also in gcp.projects", p.ID, p.Number)
			}
		}
	}
	for i, f := range w.Faults {
		if err := f.validate(); err != nil {
			return fmt.Errorf("faults[%d]: %w", i, err)
		}
	}
	return nil
}

// generates reports whether the organisation generates account id.
func generates(o *Organization, id string) bool {
	return o != nil && o.Generated != nil && o.Generated.withDefaults().index(id) >= 0
}

// validateOrganization checks the organisation over the listed accounts (seen) and those
// it generates: its management account is one of them, no listed account is generated.
func validateOrganization(o *Organization, seen map[string]bool) error {
	if o == nil {
		return nil
	}
	g := o.Generated
	if g != nil {
		d := g.withDefaults()
		if err := d.validate(); err != nil {
			return fmt.Errorf("aws.organization.generated.%w", err)
		}
		for id := range seen {
			if d.index(id) >= 0 {
				return fmt.Errorf("aws.organization.generated: account %s is also in aws.accounts", id)
			}
		}
		if d.index(o.Management) >= 0 {
			return nil
		}
	}
	if !seen[o.Management] {
		return fmt.Errorf("aws.organization.management: %q is not one of aws.accounts", o.Management)
	}
	return nil
}
