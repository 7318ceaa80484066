// Package securityhub sends warden's findings to AWS Security Hub as a custom
// integration: each finding in the AWS Security Finding Format (ASFF 2018-10-08) through
// BatchImportFindings, a hundred at a time, under the product ARN Security Hub gives
// every account for its own findings (product/ACCOUNT/default). A finding keeps its Id
// (from warden's fingerprint) for life, so that each sweep updates it rather than adds
// one; a resolved finding is archived.
package securityhub

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/securityhub"
	"github.com/aws/aws-sdk-go-v2/service/securityhub/types"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/publish"
)

// SchemaVersion is the ASFF version warden writes.
const SchemaVersion = "2018-10-08"

// BatchSize is the most findings BatchImportFindings takes in one call.
const BatchSize = 100

// Client is what the sink calls of Security Hub (*securityhub.Client): the provider's
// import, and the customer's update for the workflow, which an import cannot change once
// a finding exists.
type Client interface {
	BatchImportFindings(ctx context.Context, in *securityhub.BatchImportFindingsInput, opts ...func(*securityhub.Options)) (*securityhub.BatchImportFindingsOutput, error)
	BatchUpdateFindings(ctx context.Context, in *securityhub.BatchUpdateFindingsInput, opts ...func(*securityhub.Options)) (*securityhub.BatchUpdateFindingsOutput, error)
}

// Permissions are the IAM actions the sink's calls need, one per method of Client:
// what `warden permissions` grants warden's exporter (package permissions), held to the
// calls the sink makes by permissions' tests.
func Permissions() []string {
	return []string{"securityhub:BatchImportFindings", "securityhub:BatchUpdateFindings"}
}

// Options configure the sink.
type Options struct {
	// Region and Account are the Security Hub the findings go to: the product ARN is
	// arn:aws:securityhub:REGION:ACCOUNT:product/ACCOUNT/default.
	Region, Account string
	// All sends every finding, not only AWS ones.
	All bool
	// ImportOnly sets the workflow through the import alone, never BatchUpdateFindings:
	// for an emulator that serves no BatchUpdateFindings and lets an import change the
	// workflow (moto). Against Security Hub it leaves the workflow as first imported.
	ImportOnly bool
}

// Sink is Security Hub as a publish.Sink.
type Sink struct {
	client Client
	o      Options
}

var accountID = regexp.MustCompile(`^[0-9]{12}$`)

// New returns the sink sending to o's Security Hub through client.
func New(client Client, o Options) (*Sink, error) {
	if !accountID.MatchString(o.Account) {
		return nil, fmt.Errorf("security hub: account %q: want the 12 digits of an AWS account id", o.Account)
	}
	if o.Region == "" {
		return nil, fmt.Errorf("security hub: no region: name the region whose Security Hub takes the findings")
	}
	return &Sink{client: client, o: o}, nil
}

// Name implements publish.Sink.
func (s *Sink) Name() string { return "securityhub/" + s.o.Region + "/" + s.o.Account }

// ProductARN is the custom integration's product ARN in the sink's account and region.
func (s *Sink) ProductARN() string {
	return fmt.Sprintf("arn:aws:securityhub:%s:%s:product/%s/default", s.o.Region, s.o.Account, s.o.Account)
}

// Wants implements publish.Sink: AWS findings, or all with Options.All.
func (s *Sink) Wants(f *findings.Finding) bool {
	return s.o.All || strings.HasPrefix(f.ResourceType, "aws.")
}

// BatchSize implements publish.Sink.
func (s *Sink) BatchSize() int { return BatchSize }

// Send implements publish.Sink: one BatchImportFindings call, then, for the findings
// whose workflow status changed (or is new and not NEW), one BatchUpdateFindings call
// per status: Security Hub takes a finding's workflow from its first import only, since
// the workflow is its customers'. The findings either call lists as failed are refused.
func (s *Sink) Send(ctx context.Context, batch []publish.Item) (map[string]string, error) {
	in := &securityhub.BatchImportFindingsInput{Findings: make([]types.AwsSecurityFinding, len(batch))}
	byID := make(map[string]string, len(batch))
	for i := range batch {
		in.Findings[i] = s.Finding(&batch[i])
		byID[aws.ToString(in.Findings[i].Id)] = batch[i].Finding.Fingerprint
	}
	out, err := s.client.BatchImportFindings(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("security hub BatchImportFindings: %w", awsapi.Redact(err))
	}
	refused := map[string]string{}
	for _, f := range out.FailedFindings {
		fp, ok := byID[aws.ToString(f.Id)]
		if !ok {
			return nil, fmt.Errorf("security hub BatchImportFindings: a failed finding %q that was not sent", aws.ToString(f.Id))
		}
		refused[fp] = strings.TrimSpace(aws.ToString(f.ErrorCode) + ": " + aws.ToString(f.ErrorMessage))
	}
	if n := int(aws.ToInt32(out.FailedCount)); n != len(out.FailedFindings) {
		return nil, fmt.Errorf("security hub BatchImportFindings: FailedCount %d, but %d failed findings listed", n, len(out.FailedFindings))
	}
	if s.o.ImportOnly {
		return refused, nil
	}
	return refused, s.updateWorkflows(ctx, batch, byID, refused)
}

// updateWorkflows sets the workflow status of the imported findings of batch whose
// status is not the one last sent (NEW for a new finding), one call per status; the
// findings a call leaves unprocessed are added to refused.
func (s *Sink) updateWorkflows(ctx context.Context, batch []publish.Item, byID, refused map[string]string) error {
	ids := map[types.WorkflowStatus][]types.AwsSecurityFindingIdentifier{}
	for i := range batch {
		it := &batch[i]
		if _, ok := refused[it.Finding.Fingerprint]; ok {
			continue
		}
		was := types.WorkflowStatusNew
		if it.Previous != nil {
			was = workflowStatus(it.Previous)
		}
		if now := workflowStatus(it); now != was {
			ids[now] = append(ids[now], types.AwsSecurityFindingIdentifier{Id: aws.String(ID(it.Finding.Fingerprint)), ProductArn: aws.String(s.ProductARN())})
		}
	}
	for _, st := range []types.WorkflowStatus{types.WorkflowStatusNew, types.WorkflowStatusNotified, types.WorkflowStatusSuppressed, types.WorkflowStatusResolved} {
		if len(ids[st]) == 0 {
			continue
		}
		out, err := s.client.BatchUpdateFindings(ctx, &securityhub.BatchUpdateFindingsInput{FindingIdentifiers: ids[st], Workflow: &types.WorkflowUpdate{Status: st}})
		if err != nil {
			return fmt.Errorf("security hub BatchUpdateFindings (workflow %s, %d findings): %w", st, len(ids[st]), awsapi.Redact(err))
		}
		for _, u := range out.UnprocessedFindings {
			id := ""
			if u.FindingIdentifier != nil {
				id = aws.ToString(u.FindingIdentifier.Id)
			}
			fp, ok := byID[id]
			if !ok {
				return fmt.Errorf("security hub BatchUpdateFindings: an unprocessed finding %q that was not sent", id)
			}
			refused[fp] = strings.TrimSpace("workflow " + string(st) + ": " + aws.ToString(u.ErrorCode) + ": " + aws.ToString(u.ErrorMessage))
		}
	}
	return nil
}

// ID is a finding's Id in Security Hub: warden's fingerprint, which stays the same for
// the finding's whole life.
func ID(fingerprint string) string { return "warden/" + fingerprint }

// Finding is the ASFF finding of it.
func (s *Sink) Finding(it *publish.Item) types.AwsSecurityFinding {
	f := &it.Finding
	region := f.Region
	if region == "" || region == "global" {
		region = s.o.Region
	}
	created, updated := stamp(it.CreatedAt), stamp(it.UpdatedAt)
	sev := &types.Severity{Label: severityLabel(f.Severity), Original: aws.String(f.Severity.String())}
	kinds := []string{"Software and Configuration Checks/warden/" + f.Policy}
	out := types.AwsSecurityFinding{
		SchemaVersion: aws.String(SchemaVersion),
		Id:            aws.String(ID(f.Fingerprint)),
		ProductArn:    aws.String(s.ProductARN()),
		GeneratorId:   aws.String(f.Policy),
		AwsAccountId:  aws.String(s.o.Account),
		Types:         kinds,
		// A provider's later imports change Severity and Types through these.
		FindingProviderFields: &types.FindingProviderFields{Severity: &types.FindingProviderSeverity{Label: sev.Label, Original: sev.Original}, Types: kinds},
		CreatedAt:             aws.String(created),
		UpdatedAt:             aws.String(updated),
		FirstObservedAt:       aws.String(created),
		LastObservedAt:        aws.String(updated),
		Severity:              sev,
		Title:                 aws.String(clip(cmp.Or(f.Title, f.Policy), 256)),
		Description:           aws.String(clip(cmp.Or(f.Message, f.Title, f.Policy), 1024)),
		CompanyName:           aws.String("warden"),
		ProductName:           aws.String("warden"),
		Region:                aws.String(s.o.Region),
		Resources: []types.Resource{{
			Type:      aws.String(resourceType(f.ResourceType)),
			Id:        aws.String(clip(f.Resource, 512)),
			Region:    aws.String(region),
			Partition: types.PartitionAws,
		}},
		Compliance:    &types.Compliance{Status: complianceStatus(f.Status), RelatedRequirements: requirements(it)},
		Workflow:      &types.Workflow{Status: workflowStatus(it)},
		RecordState:   types.RecordStateActive,
		Remediation:   &types.Remediation{Recommendation: &types.Recommendation{Text: aws.String(clip(it.Describe(), 512))}},
		ProductFields: productFields(it),
	}
	if f.Status == findings.StatusResolved {
		out.RecordState = types.RecordStateArchived
	}
	return out
}

// complianceStatus follows warden's lifecycle: open and waived findings fail their
// check (a waiver accepts the risk, it does not remove it), unknown ones could not be
// judged, resolved ones pass.
func complianceStatus(status string) types.ComplianceStatus {
	switch status {
	case findings.StatusUnknown:
		return types.ComplianceStatusNotAvailable
	case findings.StatusResolved:
		return types.ComplianceStatusPassed
	}
	return types.ComplianceStatusFailed
}

// workflowStatus follows warden's lifecycle: NEW while open, NOTIFIED while its fix
// waits for a person's approval, SUPPRESSED when waived, RESOLVED once resolved.
func workflowStatus(it *publish.Item) types.WorkflowStatus {
	switch {
	case it.Finding.Status == findings.StatusResolved:
		return types.WorkflowStatusResolved
	case it.Finding.Status == findings.StatusWaived:
		return types.WorkflowStatusSuppressed
	case it.Fix.AwaitsApproval():
		return types.WorkflowStatusNotified
	}
	return types.WorkflowStatusNew
}

func severityLabel(s findings.Severity) types.SeverityLabel {
	switch s {
	case findings.Critical:
		return types.SeverityLabelCritical
	case findings.High:
		return types.SeverityLabelHigh
	case findings.Medium:
		return types.SeverityLabelMedium
	case findings.Low:
		return types.SeverityLabelLow
	}
	return types.SeverityLabelInformational
}

// resourceTypes are the ASFF resource types of warden's AWS resource types; any other
// is "Other".
var resourceTypes = map[string]string{
	"aws.ec2.security_group":     "AwsEc2SecurityGroup",
	"aws.iam.user":               "AwsIamUser",
	"aws.iam.root_user":          "AwsAccount",
	"aws.iam.account":            "AwsAccount",
	"aws.iam.password_policy":    "AwsAccount",
	"aws.iam.group":              "AwsIamGroup",
	"aws.iam.role":               "AwsIamRole",
	"aws.iam.policy":             "AwsIamPolicy",
	"aws.iam.access_key":         "AwsIamAccessKey",
	"aws.acm.certificate":        "AwsCertificateManagerCertificate",
	"aws.iam.server_certificate": "Other",
}

func resourceType(t string) string {
	if v, ok := resourceTypes[t]; ok {
		return v
	}
	return "Other"
}

// requirements are the finding's framework controls, at most 32 as ASFF allows.
func requirements(it *publish.Item) []string {
	out := it.Controls()
	if len(out) > 32 {
		out = out[:32]
	}
	return out
}

// productFields carry what ASFF has no field for: warden's own status, the fix, its
// action and where it stands (its approval among them), the finding's scope and type.
func productFields(it *publish.Item) map[string]string {
	f := &it.Finding
	m := map[string]string{
		"warden/fingerprint":   f.Fingerprint,
		"warden/status":        f.Status,
		"warden/resource_type": f.ResourceType,
		// The finding's own account: Security Hub files a custom integration's findings
		// under the account that imports them.
		"warden/account": f.Account,
	}
	if f.Scope != "" {
		m["warden/scope"] = f.Scope
	}
	if f.Waiver != nil {
		m["warden/waiver/owner"] = clip(f.Waiver.Owner, 1024)
		m["warden/waiver/reason"] = clip(f.Waiver.Reason, 1024)
		m["warden/waiver/expires"] = stamp(f.Waiver.Expires)
	}
	if fx := it.Fix; fx != nil {
		m["warden/fix/action"] = fx.Action
		m["warden/fix/risk"] = f.Remediation.Risk.String()
		if fx.ID != "" {
			m["warden/fix/id"] = fx.ID
		}
		m["warden/fix/state"] = cmp.Or(fx.State, "proposed")
		m["warden/fix/approval"] = fx.Approval()
	}
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// clip cuts s to at most n characters, on a character boundary.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
