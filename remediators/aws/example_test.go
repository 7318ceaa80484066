package aws_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/snapshot"
)

// A fix finds its part in an observed resource, applies once, and knows when there is
// nothing left to do.
func ExampleDeactivateAccessKey() {
	sim, _ := cloudsim.New(&cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111",
		Users: []*cloudsim.User{{Name: "alice", AccessKeys: []*cloudsim.AccessKey{{ID: "AKIAEXAMPLE0001"}}}}}}}}, cloudsim.Options{})
	srv, _ := sim.Listen("127.0.0.1:0")
	defer srv.Close()
	ctx := context.Background()
	sessions, err := awsapi.NewSessions(ctx, awsapi.Options{Endpoint: srv.URL, AWS: &aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}})
	if err != nil {
		panic(err)
	}
	fix := awsfix.NewDeactivateAccessKey(sessions)
	key := snapshot.Resource{UID: "arn:aws:iam::111111111111:user/alice/accesskey/AKIAEXAMPLE0001", Type: "aws.iam.access_key",
		Account: "111111111111", Attributes: map[string]any{"access_key_id": "AKIAEXAMPLE0001", "user_name": "alice", "status": "Active"}}
	targets, _ := fix.Targets(key, nil)
	a := remediators.Action{Remediator: fix.Spec().Action, Target: key.UID, Account: key.Account, Part: targets[0].Part, Before: targets[0].Before}

	fmt.Println("apply:", fix.Apply(ctx, a))
	fmt.Println("again converged:", errors.Is(fix.Apply(ctx, a), remediators.ErrConverged))
	sim.Do(func(w *cloudsim.World) { fmt.Println("status:", w.AWS.Accounts[0].Users[0].AccessKeys[0].Status) })
	fmt.Println("rollback:", fix.Rollback(ctx, a))
	// Output:
	// apply: <nil>
	// again converged: true
	// status: Inactive
	// rollback: <nil>
}
