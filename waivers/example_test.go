package waivers_test

import (
	"fmt"
	"time"

	"github.com/warden-sec/warden/waivers"
)

func ExampleSet_Match() {
	set, _ := waivers.Parse([]byte(`waivers:
  - policy: WARDEN-AWS-NET-001
    resource: "arn:aws:ec2:*:111111111111:security-group/sg-bastion*"
    reason: SSH limited by a network ACL
    owner: alice@acme.example
    expires: 2027-03-31
`), "waivers.yaml")
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	active, _ := set.Match("WARDEN-AWS-NET-001", "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-bastion1", now)
	fmt.Println(active.Owner)
	// Output: alice@acme.example
}
