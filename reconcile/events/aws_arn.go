package events

// The ARNs and uids of the AWS resources an event names. What is here checks a name, id
// or ARN an event carries and builds the uid the AWS collector gives the resource, in
// the event's partition, account and region (awsHome); it reads no event field: the
// call table (aws_calls.go) reads the fields and says what each call touched.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/warden-sec/warden/internal/awsarn"
)

var (
	accountRe   = regexp.MustCompile(`^[0-9]{12}$`)
	regionRe    = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
	partitionRe = regexp.MustCompile(`^aws(-[a-z]+)*$`)
	// IAM's patterns for names ([\w+=,.@-]+) and paths (/ or /…/ of printable ASCII).
	iamNameRe = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
	iamPathRe = regexp.MustCompile(`^/([\x21-\x7E]{1,510}/)?$`)
	keyIDRe   = regexp.MustCompile(`^\w{16,128}$`)
	sgIDRe    = regexp.MustCompile(`^sg-[0-9a-f]{1,32}$`)
	acmIDRe   = regexp.MustCompile(`^[\w-]{1,128}$`)
)

// partitionOf is the partition of the caller's ARN, else the one region belongs to.
func partitionOf(identARN, region string) string {
	if a, ok := awsarn.Parse(identARN); ok && partitionRe.MatchString(a.Partition) {
		return a.Partition
	}
	for _, p := range []struct{ prefix, partition string }{
		{"cn-", "aws-cn"}, {"us-gov-", "aws-us-gov"}, {"us-isob-", "aws-iso-b"}, {"us-iso-", "aws-iso"},
		{"eu-isoe-", "aws-iso-e"}, {"us-isof-", "aws-iso-f"},
	} {
		if strings.HasPrefix(region, p.prefix) {
			return p.partition
		}
	}
	return "aws"
}

// awsHome is where a CloudTrail record or an ACM event happened: the partition, account
// and region the uids it names are built in and checked against.
type awsHome struct {
	partition, account, region string
}

// arn is the ARN of resource in service and region, in the event's partition and account.
func (h awsHome) arn(service, region, resource string) string {
	return "arn:" + h.partition + ":" + service + ":" + region + ":" + h.account + ":" + resource
}

// iamKind is one kind of named IAM entity.
type iamKind struct{ typ, prefix string }

var (
	userKind  = iamKind{"aws.iam.user", "user/"}
	groupKind = iamKind{"aws.iam.group", "group/"}
	roleKind  = iamKind{"aws.iam.role", "role/"}
	certKind  = iamKind{"aws.iam.server_certificate", "server-certificate/"}
	// A managed policy's ARN may be in AWS's account ("aws") rather than the event's.
	policyKind = iamKind{"aws.iam.policy", "policy/"}
)

// iamName checks a name from field.
func iamName(field, name string) error {
	if !iamNameRe.MatchString(name) {
		return malformed(field, fmt.Sprintf("%q is not an IAM name", name))
	}
	return nil
}

// byName is the ref of the k named name, its uid without the path the event lacks.
func (h awsHome) byName(k iamKind, field, name string) (Ref, error) {
	if err := iamName(field, name); err != nil {
		return Ref{}, err
	}
	return Ref{UID: h.arn("iam", "", k.prefix+name), Type: k.typ, Name: name, ByName: true}, nil
}

// withPath is the ref of the k named name under path, its exact uid.
func (h awsHome) withPath(k iamKind, nameField, name, pathField, path string) (Ref, error) {
	if err := iamName(nameField, name); err != nil {
		return Ref{}, err
	}
	if path == "" {
		path = "/" // IAM's default
	}
	if !iamPathRe.MatchString(path) {
		return Ref{}, malformed(pathField, fmt.Sprintf("%q is not an IAM path", path))
	}
	return Ref{UID: h.arn("iam", "", k.prefix+path[1:]+name), Type: k.typ, Name: name}, nil
}

// iamARN is the ref of an ARN of kind k the event carries, which must be in the event's
// partition and account (or AWS's, for a managed policy).
func (h awsHome) iamARN(k iamKind, field, s string) (Ref, error) {
	a, ok := awsarn.Parse(s)
	if !ok || a.Service != "iam" || a.Region != "" || !strings.HasPrefix(a.Resource, k.prefix) {
		return Ref{}, malformed(field, fmt.Sprintf("%q is not an IAM %s ARN", s, strings.TrimSuffix(k.prefix, "/")))
	}
	if err := h.sameAccount(field, a, k == policyKind); err != nil {
		return Ref{}, err
	}
	rest := a.Resource[len(k.prefix):]
	name := rest[strings.LastIndexByte(rest, '/')+1:]
	if err := iamName(field, name); err != nil {
		return Ref{}, err
	}
	if path := "/" + rest[:len(rest)-len(name)]; !iamPathRe.MatchString(path) {
		return Ref{}, malformed(field, fmt.Sprintf("%q has no valid IAM path", s))
	}
	return Ref{UID: s, Type: k.typ, Name: name}, nil
}

// sameAccount refuses an ARN of another partition or account than the event's (an
// AWS-managed policy's account is "aws" when awsOK).
func (h awsHome) sameAccount(field string, a awsarn.ARN, awsOK bool) error {
	if a.Partition != h.partition {
		return malformed(field, fmt.Sprintf("partition %q, the event's is %q", a.Partition, h.partition))
	}
	if a.Account != h.account && !(awsOK && a.Account == "aws") {
		return malformed(field, fmt.Sprintf("account %q, the event's is %q", a.Account, h.account))
	}
	return nil
}

// sgRef is the ref of the security group id, read from field, in the event's region.
func (h awsHome) sgRef(field, id, name string) (Ref, error) {
	if !sgIDRe.MatchString(id) {
		return Ref{}, malformed(field, fmt.Sprintf("%q is not a security group id", id))
	}
	return Ref{UID: h.arn("ec2", h.region, "security-group/"+id), Type: "aws.ec2.security_group", Name: name}, nil
}

// certARN is the ref of the ACM certificate ARN s, read from field, which must be in the
// event's partition, account and region.
func (h awsHome) certARN(field, s string) (Ref, error) {
	a, ok := awsarn.Parse(s)
	if !ok || a.Service != "acm" || !strings.HasPrefix(a.Resource, "certificate/") || !acmIDRe.MatchString(a.Resource[len("certificate/"):]) {
		return Ref{}, malformed(field, fmt.Sprintf("%q is not an ACM certificate ARN", s))
	}
	if err := h.sameAccount(field, a, false); err != nil {
		return Ref{}, err
	}
	if a.Region != h.region {
		return Ref{}, malformed(field, fmt.Sprintf("region %q, the event's is %q", a.Region, h.region))
	}
	return Ref{UID: s, Type: "aws.acm.certificate"}, nil
}
