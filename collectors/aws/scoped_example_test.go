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

// ExampleCollector_Scopes lists the scopes of an account, as warden's daemon does before
// it enqueues one collect job per scope, then runs one of those jobs: one region's
// security groups, read alone. An id that is not one of the scopes is ErrUnknownScope.
func ExampleCollector_Scopes() {
	w := &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111", Regions: []string{"eu-west-1", "us-east-1"},
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

	c := awscollector.New(awscollector.Config{Endpoint: srv.URL, Regions: []string{"eu-west-1", "us-east-1"},
		AWS: &aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}})
	ctx := context.Background()
	scopes, err := c.Scopes(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range scopes {
		fmt.Println(s.ID)
	}

	// One job: the scope and its resources reach the sink, nothing else.
	var sink collectors.MemorySink
	if err := c.CollectScope(ctx, "aws/111111111111/ec2/eu-west-1", &sink); err != nil {
		log.Fatal(err)
	}
	s := sink.Scopes[0]
	fmt.Println(s.ID, s.Status, s.Resources, sink.Resources[0].Name)

	err = c.CollectScope(ctx, "aws/111111111111/ec2/ap-south-1", &sink)
	fmt.Println(errors.Is(err, collectors.ErrUnknownScope))
	// Output:
	// aws/111111111111/acm/eu-west-1
	// aws/111111111111/acm/us-east-1
	// aws/111111111111/ec2/eu-west-1
	// aws/111111111111/ec2/us-east-1
	// aws/111111111111/iam
	// aws/111111111111/ec2/eu-west-1 ok 1 ssh
	// true
}
