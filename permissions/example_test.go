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

// The Terraform module of warden's GCP identity: its .tf files and the three roles it
// reads, as `warden permissions --cloud gcp --format terraform --out DIR` writes them.
func ExampleSelect_terraform() {
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		panic(err)
	}
	docs, err := permissions.Documents(reg, permissions.Options{})
	if err != nil {
		panic(err)
	}
	files, err := permissions.Select(docs, permissions.Selection{Role: "all", Cloud: "gcp", Format: permissions.TerraformFormat})
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		fmt.Println(f.Name)
	}
	// Output:
	// gcp/main.tf
	// gcp/outputs.tf
	// gcp/variables.tf
	// gcp/versions.tf
	// gcp/gcp-scanner-role.yaml
	// gcp/gcp-remediator-role.yaml
	// gcp/gcp-exporter-role.yaml
	// README.md
}
