package remediators_test

import (
	"fmt"

	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/snapshot"
)

// A registry built without cloud clients plans: Targets finds the part a fix touches
// and its before-state, without a call.
func ExampleRegistry_Get() {
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		panic(err)
	}
	rem, _ := reg.Get("aws.ec2.revoke_ingress")
	sg := "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0a1b"
	rule := sg + "#ingress/tcp/22-22/0.0.0.0/0"
	res := snapshot.Resource{UID: sg, Type: "aws.ec2.security_group", Account: "111111111111", Region: "eu-west-1",
		Attributes: map[string]any{"group_id": "sg-0a1b", "ingress": []any{map[string]any{
			"id": rule, "direction": "ingress", "protocol": "tcp", "from_port": 22, "to_port": 22,
			"cidr": "0.0.0.0/0", "source_group": "", "description": "ssh"}}}}
	targets, err := rem.Targets(res, map[string]any{"target": rule})
	if err != nil {
		panic(err)
	}
	fmt.Println(targets[0].Part == rule, rem.Spec().Rollback.Possible)
	fmt.Println(string(targets[0].Before))
	// Output:
	// true true
	// {"cidr":"0.0.0.0/0","description":"ssh","direction":"ingress","from_port":22,"group_id":"sg-0a1b","id":"arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0a1b#ingress/tcp/22-22/0.0.0.0/0","protocol":"tcp","source_group":"","to_port":22}
}

// The catalog is what the engine checks policies against: every action, with the
// parameters its violations must carry.
func ExampleRegistry_Catalog() {
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		panic(err)
	}
	for _, p := range reg.Catalog()["gcp.iam.remove_binding_member"] {
		fmt.Println(p.Name, p.Required)
	}
	_, renews := reg.Get("certs.renew")
	fmt.Println(renews)
	// Output:
	// role true
	// member true
	// condition false
	// true
}
