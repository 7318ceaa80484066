package snapshot

import (
	"github.com/warden-sec/warden/internal/suggest"
	"slices"
	"strings"
)

// knownTypes lists the resource types of docs/resources.md with what each describes.
var knownTypes = map[string]string{
	"aws.iam.root_user":                  "the root user of an AWS account",
	"aws.iam.password_policy":            "an AWS account's IAM password policy",
	"aws.iam.account":                    "an AWS account's account-level IAM view",
	"aws.iam.user":                       "an IAM user",
	"aws.iam.group":                      "an IAM group",
	"aws.iam.role":                       "an IAM role",
	"aws.iam.policy":                     "a managed IAM policy",
	"aws.iam.access_key":                 "an IAM user's access key",
	"aws.iam.server_certificate":         "an IAM server certificate",
	"aws.ec2.security_group":             "an EC2 security group and its rules",
	"aws.acm.certificate":                "an ACM certificate",
	"gcp.project.iam_policy":             "a GCP project's IAM policy",
	"gcp.folder.iam_policy":              "a GCP folder's IAM policy",
	"gcp.organization.iam_policy":        "a GCP organisation's IAM policy",
	"gcp.iam.service_account":            "a GCP service account",
	"gcp.iam.service_account_key":        "a GCP service account key",
	"gcp.iam.workload_identity_provider": "a GCP IAM workload identity pool provider",
	"gcp.compute.firewall":               "a GCP VPC firewall rule",
	"gcp.compute.network":                "a GCP VPC network",
	"gcp.compute.ssl_certificate":        "a GCP Compute SSL certificate",
	"tls.endpoint":                       "a TLS endpoint and the certificate it serves",
}

// KnownType reports whether typ is a resource type of the model.
func KnownType(typ string) bool {
	_, ok := knownTypes[typ]
	return ok
}

// Types returns the known resource types, sorted.
func Types() []string {
	out := make([]string, 0, len(knownTypes))
	for t := range knownTypes {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// SuggestType returns the known type closest to an unknown one, or "" when none is close.
func SuggestType(typ string) string { return Suggest(strings.ToLower(typ), Types()) }

// Suggest returns the candidate closest to s, or "" when none is within a few edits.
func Suggest(s string, candidates []string) string { return suggest.Closest(s, candidates) }
