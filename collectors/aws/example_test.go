package aws_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
)

// ExampleCollector_Read reads one security group again by its uid, as a drift re-check
// or a verification would, then one that does not exist.
func ExampleCollector_Read() {
	w := &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111", Regions: []string{"eu-west-1"},
		SecurityGroups: []*cloudsim.SecurityGroup{{ID: "sg-0000000000000001", Name: "ssh", Region: "eu-west-1", Description: "ssh",
			Ingress: []cloudsim.Rule{{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0"}}}}}}}}
	sim, err := cloudsim.New(w, cloudsim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c := awscollector.New(awscollector.Config{Endpoint: srv.URL,
		AWS: &aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}})
	ctx := context.Background()
	sg, err := c.Read(ctx, "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000001")
	if err != nil {
		log.Fatal(err)
	}
	rule := sg.Attributes["ingress"].([]any)[0].(map[string]any)
	fmt.Println(sg.Type, sg.Scope, rule["cidr"])
	_, err = c.Read(ctx, "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-00000000000000ff")
	fmt.Println(errors.Is(err, collectors.ErrNotFound))
	// Output:
	// aws.ec2.security_group aws/111111111111/ec2/eu-west-1 0.0.0.0/0
	// true
}
