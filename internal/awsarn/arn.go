// Package awsarn splits Amazon Resource Names into their fields, the one parser of ARNs
// that the collectors (reading one resource again by its uid) and the event mapper
// (building the uids a CloudTrail record touched) share, so that both read a uid alike.
package awsarn

import "strings"

// ARN is the fields of "arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE". Region is empty
// for global services (IAM); Resource keeps its own ':' and '/' separators.
type ARN struct {
	Partition, Service, Region, Account, Resource string
}

// Parse splits s, and reports false unless it has all six fields with a partition, a
// service, an account and a resource (only the region may be empty).
func Parse(s string) (ARN, bool) {
	f := strings.SplitN(s, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[1] == "" || f[2] == "" || f[4] == "" || f[5] == "" {
		return ARN{}, false
	}
	return ARN{Partition: f[1], Service: f[2], Region: f[3], Account: f[4], Resource: f[5]}, true
}

// String is the ARN written out again.
func (a ARN) String() string {
	return "arn:" + a.Partition + ":" + a.Service + ":" + a.Region + ":" + a.Account + ":" + a.Resource
}
