package cloudsim

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Service and action last use, the data IAM's Access Advisor reports
// (GenerateServiceLastAccessedDetails, iam_lastaccessed.go): a world file declares past
// use, and every AWS call the simulator serves for a user or a role session adds to it.

// AccessRecord is one use of a service by a user or a role: its namespace ("s3"),
// optionally the action ("s3:GetObject"), when and from which region. A record without an
// action counts for the service only.
type AccessRecord struct {
	Service string    `yaml:"service"`
	Action  string    `yaml:"action,omitempty"`
	At      time.Time `yaml:"at"`
	Region  string    `yaml:"region,omitempty"`
}

var (
	// namespaceRE is an AWS service namespace ("s3", "aws-marketplace").
	namespaceRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// actionNameRE is the name of one action, without wildcards ("GetObject").
	actionNameRE = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	// regionRE is a region name as SigV4 scopes carry it ("eu-west-1"): lenient, so that
	// a world the simulator saved, with the regions its clients signed for, reads back.
	regionRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// validateAccess checks the last_accessed records of an account's users, groups and roles.
// The errors name the field, from the account down.
func validateAccess(a *Account) error {
	for j, u := range a.Users {
		if err := validateRecords(u.LastAccessed); err != nil {
			return fmt.Errorf("users[%d] (%s).last_accessed%w", j, u.Name, err)
		}
	}
	for j, g := range a.Groups {
		if err := validateRecords(g.LastAccessed); err != nil {
			return fmt.Errorf("groups[%d] (%s).last_accessed%w", j, g.Name, err)
		}
	}
	for j, r := range a.Roles {
		if err := validateRecords(r.LastAccessed); err != nil {
			return fmt.Errorf("roles[%d] (%s).last_accessed%w", j, r.Name, err)
		}
	}
	return nil
}

// validateRecords checks one entity's records; the error starts with the record's index.
func validateRecords(rs []AccessRecord) error {
	for k, r := range rs {
		switch {
		case !namespaceRE.MatchString(r.Service):
			return fmt.Errorf("[%d].service: %q is not a service namespace (s3, ec2, aws-marketplace)", k, r.Service)
		case r.At.IsZero():
			return fmt.Errorf("[%d].at: the time of the use is required", k)
		case r.Region != "" && !regionRE.MatchString(r.Region):
			return fmt.Errorf("[%d].region: %q is not a region (eu-west-1)", k, r.Region)
		}
		if r.Action != "" {
			ns, name, ok := strings.Cut(r.Action, ":")
			if !ok || ns != r.Service || !actionNameRE.MatchString(name) {
				return fmt.Errorf("[%d].action: %q is not an action of %s (%s:Name, without wildcards)", k, r.Action, r.Service, r.Service)
			}
		}
	}
	return nil
}

// s3Actions are the IAM actions of the S3 operations the simulator serves, where their
// names differ: IAM authorises listing a bucket as s3:ListBucket, reading an object's
// metadata as s3:GetObject.
var s3Actions = map[string]string{
	"ListBuckets":   "ListAllMyBuckets",
	"HeadBucket":    "ListBucket",
	"ListObjectsV2": "ListBucket",
	"HeadObject":    "GetObject",
}

// iamActionOf is the IAM action name of an operation of a service the simulator serves.
func iamActionOf(service, op string) string {
	if a, ok := s3Actions[op]; ok && service == "s3" {
		return a
	}
	if a, ok := analyzerActions[op]; ok && service == "access-analyzer" {
		return a
	}
	return op
}

// recordAccess records a call served successfully on the user or role that made it (none
// for the root user and unknown keys). Only the latest use of each action is kept, which
// is all Access Advisor reports, so that a long-running simulator does not grow with
// every call. s.mu is held.
func (s *Sim) recordAccess(c *call) {
	if c.usedBy == nil || c.Action == "" {
		return
	}
	region := c.signRegion
	switch {
	case c.Service == "iam" || region == "":
		region = "us-east-1" // IAM is global, served from us-east-1 whatever a client signs for
	case !regionRE.MatchString(region):
		region = "" // not a region: recorded without one
	}
	action := c.Service + ":" + iamActionOf(c.Service, c.Action)
	now := s.stamp()
	rs := *c.usedBy
	for i := range rs {
		if rs[i].Action == action {
			if !rs[i].At.After(now) {
				rs[i].At, rs[i].Region = now, region
			}
			return
		}
	}
	*c.usedBy = append(rs, AccessRecord{Service: c.Service, Action: action, At: now, Region: region})
}
