// Package permissions generates the least-privilege permissions warden itself needs, split
// by role, from what the collectors and remediators declare about their own calls
// (awscollector.Permissions, gcpcollector.Permissions, remediators.Spec.Permissions), so that
// the documents cannot drift from the code:
//
//   - scanner: read-only. On AWS an IAM policy with every read the collectors make, plus
//     organizations:ListAccounts and sts:AssumeRole on the member role for an
//     organisation; a CloudFormation template (for a StackSet) creating that member role
//     in every member account; on GCP a custom role.
//   - exporter: the calls of the sinks that send findings to AWS Security Hub and Google
//     Security Command Center (publish/securityhub.Permissions, publish/scc.Permissions),
//     for the export: section and `warden report --to`.
//   - remediator: only the calls of the enabled remediators (all registered ones by
//     default), their writes and the reads they make to find the target's current state.
//     It is attached beside the scanner's: warden re-reads a target through its collector
//     before and after a fix.
//
// Output is deterministic (sorted, stable), so that the documents can be checked in and
// diffed. Only cmd/warden imports this package, and deploy's tests, which hold the
// Terraform modules of deploy/terraform (Terraform) to it.
package permissions

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	awscollector "github.com/warden-sec/warden/collectors/aws"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/publish/scc"
	"github.com/warden-sec/warden/publish/securityhub"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
)

// DefaultOrgRole is the name of the role the stack set creates in member accounts and
// the scanner policy lets warden assume. warden assumes OrganizationAccountAccessRole
// unless told otherwise, a role with administrator access: run it with
// --aws-org-role WardenAccess (or aws.org_role in the config) to use this one instead.
const DefaultOrgRole = "WardenAccess"

// Options choose what the documents grant.
type Options struct {
	// Actions are the remediators (action names, "aws.iam.deactivate_access_key") whose
	// permissions the remediator documents grant; empty means every registered one.
	Actions []string
	// OrgRole is the role warden assumes in member accounts; default DefaultOrgRole.
	OrgRole string
	// RotationSecretName is the secret name template of aws.iam.rotate_access_key
	// (rotation.secret_name); Secrets Manager actions are granted on the secrets whose
	// names start with its part before the first placeholder. Default
	// awsfix.DefaultRotationSecretName.
	RotationSecretName string
}

func (o Options) withDefaults() Options {
	if o.OrgRole == "" {
		o.OrgRole = DefaultOrgRole
	}
	if o.RotationSecretName == "" {
		o.RotationSecretName = awsfix.DefaultRotationSecretName
	}
	return o
}

// Grants are the permissions of one role on both clouds: IAM actions and GCP
// permissions, each sorted and without repeats.
type Grants struct {
	AWS []string
	GCP []string
}

// Exporter is what the export of findings needs: Security Hub's calls on AWS, Security
// Command Center's on GCP.
func Exporter() Grants {
	return Grants{AWS: sortedSet(securityhub.Permissions()), GCP: sortedSet(scc.Permissions())}
}

// Scanner is what the collectors need to read an account or project: the reads of every
// collector. Walking an AWS organisation needs Org as well, in warden's own account.
func Scanner() Grants {
	return Grants{AWS: awscollector.Permissions(), GCP: gcpcollector.Permissions()}
}

// Org are the AWS actions warden needs in its own account, beyond Scanner, to walk an
// organisation: list the accounts and assume the member role.
func Org() []string { return awscollector.OrgPermissions() }

// Remediator is what the enabled remediators of reg need: opts.Actions, or every
// registered one. An unknown action name, or a remediator that declares no permissions,
// is an error.
func Remediator(reg *remediators.Registry, opts Options) (Grants, error) {
	names := opts.Actions
	if len(names) == 0 {
		names = reg.Names()
	}
	var g Grants
	var errs []error
	for _, name := range names {
		r, ok := reg.Get(name)
		if !ok {
			errs = append(errs, fmt.Errorf("unknown remediator %q%s (registered: %s)", name, suggest(name, reg.Names()),
				strings.Join(reg.Names(), ", ")))
			continue
		}
		perms := r.Spec().Permissions
		if len(perms.AWS)+len(perms.GCP) == 0 {
			errs = append(errs, fmt.Errorf("remediator %q declares no permissions (remediators.Spec.Permissions)", name))
			continue
		}
		g.AWS = append(g.AWS, perms.AWS...)
		g.GCP = append(g.GCP, perms.GCP...)
	}
	if err := errors.Join(errs...); err != nil {
		return Grants{}, err
	}
	g.AWS, g.GCP = sortedSet(g.AWS), sortedSet(g.GCP)
	return g, g.validate()
}

// The shapes of an IAM action ("iam:ListUsers") and of a GCP permission
// ("compute.firewalls.update"), so that a typo in a declaration fails here rather
// than when AWS or Google refuse the document.
var (
	awsAction     = regexp.MustCompile(`^[a-z0-9-]+:[A-Z][A-Za-z0-9]+$`)
	gcpPermission = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*){2,3}$`)
)

// validate refuses a declared permission that is not shaped like one.
func (g Grants) validate() error {
	var errs []error
	for _, a := range g.AWS {
		if !awsAction.MatchString(a) {
			errs = append(errs, fmt.Errorf("%q is not an IAM action (service:Action)", a))
		}
	}
	for _, p := range g.GCP {
		if !gcpPermission.MatchString(p) {
			errs = append(errs, fmt.Errorf("%q is not a GCP permission (service.resource.verb)", p))
		}
	}
	return errors.Join(errs...)
}

// sortedSet is ss sorted, without repeats, in a fresh slice.
func sortedSet(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

// suggest is ", did you mean X?" for the registered name closest to name, when one
// shares its last part ("deactivate_access_key" for "aws.iam.deactivate_key" does not).
func suggest(name string, names []string) string {
	last := name[strings.LastIndexByte(name, '.')+1:]
	for _, n := range names {
		if strings.HasSuffix(n, "."+last) {
			return fmt.Sprintf(" (did you mean %q?)", n)
		}
	}
	return ""
}

// Document is one generated file.
type Document struct {
	// Name is the file name it is written as: "aws-scanner-policy.json", or
	// "aws-account/main.tf" in a Terraform module.
	Name string
	// Cloud is "aws" or "gcp"; Role "scanner" or "remediator"; Format "json", "yaml",
	// "cloudformation" or "terraform" (a module's file: its documents keep their Role, its
	// .tf files and README have none, the README no Cloud).
	Cloud, Role, Format string
	// About says in one line what it is and where it goes.
	About string
	// Body is the document, ending in a newline.
	Body []byte
}

// Documents generates every document, in a stable order: the AWS scanner and
// remediator policies, the StackSet template of the member role, the GCP scanner and
// remediator roles.
func Documents(reg *remediators.Registry, opts Options) ([]Document, error) {
	opts = opts.withDefaults()
	scan := Scanner()
	if err := scan.validate(); err != nil {
		return nil, fmt.Errorf("collector permissions: %w", err)
	}
	fix, err := Remediator(reg, opts)
	if err != nil {
		return nil, fmt.Errorf("remediator permissions: %w", err)
	}
	scanner, err := marshalJSON(ScannerPolicy(opts))
	if err != nil {
		return nil, err
	}
	remediator, err := marshalJSON(RemediatorPolicy(fix, opts))
	if err != nil {
		return nil, err
	}
	stackset, err := StackSet(fix, opts)
	if err != nil {
		return nil, err
	}
	gcpScanner, err := marshalYAML(GCPScannerRole())
	if err != nil {
		return nil, err
	}
	gcpRemediator, err := marshalYAML(GCPRemediatorRole(fix))
	if err != nil {
		return nil, err
	}
	exporter, err := marshalJSON(ExporterPolicy())
	if err != nil {
		return nil, err
	}
	gcpExporter, err := marshalYAML(GCPExporterRole())
	if err != nil {
		return nil, err
	}
	return []Document{
		{Name: "aws-scanner-policy.json", Cloud: "aws", Role: "scanner", Format: "json", Body: scanner,
			About: "IAM policy of warden's principal: every read of the collectors, and the organisation walk"},
		{Name: "aws-remediator-policy.json", Cloud: "aws", Role: "remediator", Format: "json", Body: remediator,
			About: "IAM policy of the principal that applies fixes, beside the scanner policy"},
		{Name: "aws-member-role-stackset.yaml", Cloud: "aws", Role: "scanner", Format: "cloudformation", Body: stackset,
			About: "CloudFormation template (for a StackSet) of the role warden assumes in member accounts"},
		{Name: "gcp-scanner-role.yaml", Cloud: "gcp", Role: "scanner", Format: "yaml", Body: gcpScanner,
			About: "GCP custom role for scans (gcloud iam roles create --file)"},
		{Name: "gcp-remediator-role.yaml", Cloud: "gcp", Role: "remediator", Format: "yaml", Body: gcpRemediator,
			About: "GCP custom role for fixes, beside the scanner role (gcloud iam roles create --file)"},
		{Name: "aws-exporter-policy.json", Cloud: "aws", Role: "exporter", Format: "json", Body: exporter,
			About: "IAM policy of the principal that sends findings to Security Hub (export.securityhub)"},
		{Name: "gcp-exporter-role.yaml", Cloud: "gcp", Role: "exporter", Format: "yaml", Body: gcpExporter,
			About: "GCP custom role for sending findings to Security Command Center, on the organization (export.scc)"},
	}, nil
}
