package permissions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Policy is an IAM policy document.
type Policy struct {
	Version   string      `json:"Version" yaml:"Version"`
	Statement []Statement `json:"Statement" yaml:"Statement"`
}

// Statement is one statement of a Policy: warden's only allow.
type Statement struct {
	Sid      string   `json:"Sid" yaml:"Sid"`
	Effect   string   `json:"Effect" yaml:"Effect"`
	Action   []string `json:"Action" yaml:"Action"`
	Resource string   `json:"Resource" yaml:"Resource"`
}

// Actions lists the actions the policy allows, sorted.
func (p Policy) Actions() []string {
	var out []string
	for _, s := range p.Statement {
		out = append(out, s.Action...)
	}
	return sortedSet(out)
}

// policyVersion is the current IAM policy language version.
const policyVersion = "2012-10-17"

// byService groups actions into one statement per service, in service order, on every
// resource ("*") unless resources names another for a service. Sids are prefix and the
// service ("WardenScannerIam").
func byService(prefix string, actions []string, resources map[string]string) []Statement {
	groups := map[string][]string{}
	for _, a := range actions {
		svc, _, _ := strings.Cut(a, ":")
		groups[svc] = append(groups[svc], a)
	}
	var out []Statement
	for _, svc := range slices.Sorted(maps.Keys(groups)) {
		res := resources[svc]
		if res == "" {
			res = "*"
		}
		out = append(out, Statement{Sid: prefix + sidWord(svc), Effect: "Allow", Action: sortedSet(groups[svc]), Resource: res})
	}
	return out
}

// sidWord is a service prefix as a Sid part: "secretsmanager" → "Secretsmanager". Sids
// are alphanumeric.
func sidWord(svc string) string {
	var b strings.Builder
	up := true
	for _, r := range svc {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// roleARN is the ARN pattern of the member role in every account.
func roleARN(role string) string { return "arn:aws:iam::*:role/" + role }

// ScannerPolicy is the IAM policy of warden's own principal: every read of the
// collectors, listing the organisation's accounts, and assuming the member role
// (opts.OrgRole) in them. Reads are granted on every resource: the collectors read
// everything of their kinds.
func ScannerPolicy(opts Options) Policy {
	opts = opts.withDefaults()
	var reads []string
	org := Org()
	for _, a := range slices.Concat(Scanner().AWS, org) {
		if a != "sts:AssumeRole" {
			reads = append(reads, a)
		}
	}
	p := Policy{Version: policyVersion, Statement: byService("WardenScanner", reads, nil)}
	if slices.Contains(org, "sts:AssumeRole") {
		p.Statement = append(p.Statement, Statement{Sid: "WardenAssumeMemberRole", Effect: "Allow",
			Action: []string{"sts:AssumeRole"}, Resource: roleARN(opts.OrgRole)})
	}
	return p
}

// MemberPolicy is the inline policy of the member role: the collectors' reads in a
// member account; the organisation walk happens in warden's own account only.
func MemberPolicy() Policy {
	return Policy{Version: policyVersion, Statement: byService("WardenScanner", Scanner().AWS, nil)}
}

// RemediatorPolicy is the IAM policy of the fixes in g. Secrets Manager actions (the
// hand-over of a rotated key) are granted only on the secrets the rotation names.
func RemediatorPolicy(g Grants, opts Options) Policy {
	opts = opts.withDefaults()
	prefix, _, _ := strings.Cut(opts.RotationSecretName, "{")
	res := map[string]string{"secretsmanager": "arn:aws:secretsmanager:*:*:secret:" + prefix + "*"}
	return Policy{Version: policyVersion, Statement: byService("WardenRemediator", g.AWS, res)}
}

// ExporterPolicy is the IAM policy of the principal that sends findings to Security Hub
// (the export: section, `warden report --to securityhub`): the sink's calls, in the
// account whose Security Hub takes the findings.
func ExporterPolicy() Policy {
	return Policy{Version: policyVersion, Statement: byService("WardenExporter", Exporter().AWS, nil)}
}

// marshalJSON is v as indented JSON with a final newline.
func marshalJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return append(b, '\n'), nil
}

// marshalYAML is v as YAML, indented by two spaces.
func marshalYAML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return buf.Bytes(), nil
}

// The CloudFormation template, field by field, so that its keys come out in the order a
// reader expects rather than sorted.
type (
	cfnTemplate struct {
		AWSTemplateFormatVersion string                  `yaml:"AWSTemplateFormatVersion"`
		Description              string                  `yaml:"Description"`
		Parameters               map[string]cfnParameter `yaml:"Parameters"`
		Conditions               map[string]any          `yaml:"Conditions"`
		Resources                map[string]cfnRole      `yaml:"Resources"`
		Outputs                  map[string]cfnOutput    `yaml:"Outputs"`
	}
	cfnParameter struct {
		Type           string   `yaml:"Type"`
		Default        *string  `yaml:"Default,omitempty"`
		AllowedValues  []string `yaml:"AllowedValues,omitempty"`
		AllowedPattern string   `yaml:"AllowedPattern,omitempty"`
		Description    string   `yaml:"Description"`
	}
	cfnRole struct {
		Type       string       `yaml:"Type"`
		Properties cfnRoleProps `yaml:"Properties"`
	}
	cfnRoleProps struct {
		RoleName                 map[string]string `yaml:"RoleName"`
		Description              string            `yaml:"Description"`
		MaxSessionDuration       int               `yaml:"MaxSessionDuration"`
		AssumeRolePolicyDocument any               `yaml:"AssumeRolePolicyDocument"`
		Policies                 []any             `yaml:"Policies"`
	}
	cfnInlinePolicy struct {
		PolicyName     string `yaml:"PolicyName"`
		PolicyDocument Policy `yaml:"PolicyDocument"`
	}
	cfnOutput struct {
		Description string         `yaml:"Description"`
		Value       map[string]any `yaml:"Value"`
	}
)

// StackSet is a CloudFormation template, meant for a service-managed StackSet over the
// organisation's accounts, creating the member role warden assumes: trusted by warden's
// principal (parameter WardenPrincipalArn) only, with MemberPolicy inline and, when the
// parameter Remediate is "true", the remediator policy of g too.
func StackSet(g Grants, opts Options) ([]byte, error) {
	opts = opts.withDefaults()
	role, def := opts.OrgRole, "false"
	t := cfnTemplate{
		AWSTemplateFormatVersion: "2010-09-09",
		Description: "warden member role: read-only access for warden's scans and, with Remediate=true, the " +
			"permissions of its fixes. Generated by `warden permissions --cloud aws --format cloudformation`.",
		Parameters: map[string]cfnParameter{
			"WardenPrincipalArn": {Type: "String", AllowedPattern: `^arn:aws[a-z-]*:(iam|sts)::[0-9]{12}:.+$`,
				Description: "ARN of the IAM role (or user) warden runs as, in the management or delegated administrator account"},
			"RoleName": {Type: "String", Default: &role,
				Description: "name of the role; run warden with --aws-org-role set to it"},
			"Remediate": {Type: "String", Default: &def, AllowedValues: []string{"false", "true"},
				Description: "also grant the permissions of warden's fixes in this account"},
		},
		Conditions: map[string]any{"GrantRemediation": map[string]any{"Fn::Equals": []any{map[string]string{"Ref": "Remediate"}, "true"}}},
		Resources: map[string]cfnRole{"WardenRole": {Type: "AWS::IAM::Role", Properties: cfnRoleProps{
			RoleName:           map[string]string{"Ref": "RoleName"},
			Description:        "Assumed by warden to scan (and, with Remediate=true, fix) this account",
			MaxSessionDuration: 3600,
			AssumeRolePolicyDocument: map[string]any{"Version": policyVersion, "Statement": []any{map[string]any{
				"Effect": "Allow", "Action": "sts:AssumeRole",
				"Principal": map[string]any{"AWS": map[string]string{"Ref": "WardenPrincipalArn"}},
			}}},
			Policies: []any{
				cfnInlinePolicy{PolicyName: "warden-scanner", PolicyDocument: MemberPolicy()},
				map[string]any{"Fn::If": []any{"GrantRemediation",
					cfnInlinePolicy{PolicyName: "warden-remediator", PolicyDocument: RemediatorPolicy(g, opts)},
					map[string]string{"Ref": "AWS::NoValue"}}},
			},
		}}},
		Outputs: map[string]cfnOutput{"RoleArn": {Description: "ARN of the member role",
			Value: map[string]any{"Fn::GetAtt": []string{"WardenRole", "Arn"}}}},
	}
	b, err := marshalYAML(t)
	if err != nil {
		return nil, err
	}
	header := "# warden member role, for a CloudFormation StackSet over the organisation's accounts.\n" +
		"# Generated by `warden permissions --cloud aws --format cloudformation`; do not edit.\n"
	return append([]byte(header), b...), nil
}
