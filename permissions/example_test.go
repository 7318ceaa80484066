package permissions_test

import (
	"fmt"

	"github.com/warden-sec/warden/permissions"
	"github.com/warden-sec/warden/remediators/builtin"
)

// The permissions of two enabled fixes, one per cloud, as the remediator documents grant
// them.
func ExampleRemediator() {
	reg, err := builtin.Registry(nil, nil) // planning only: no cloud is called
	if err != nil {
		panic(err)
	}
	g, err := permissions.Remediator(reg, permissions.Options{
		Actions: []string{"aws.iam.deactivate_access_key", "gcp.compute.disable_firewall"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.AWS)
	fmt.Println(g.GCP)
	// Output:
	// [iam:ListAccessKeys iam:UpdateAccessKey]
	// [compute.firewalls.get compute.firewalls.update compute.globalOperations.get compute.networks.updatePolicy]
}
