package awsapi_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
)

// Example opens the caller's account against the simulator and reads a user that does
// not exist: the answer is classified as "not found", never as denied.
func Example() {
	sim, err := cloudsim.New(&cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111"}}}}, cloudsim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx := context.Background()
	sessions, err := awsapi.NewSessions(ctx, awsapi.Options{
		Endpoint: srv.URL,
		AWS:      &aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")},
	})
	if err != nil {
		log.Fatal(err)
	}
	acct, err := sessions.Account(ctx, "") // the caller's own account
	if err != nil {
		log.Fatal(err)
	}
	_, err = acct.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("nobody")})
	fmt.Println(acct.ID(), awsapi.Code(err), awsapi.IsNotFound(err), awsapi.IsDenied(err))
	// Output: 111111111111 NoSuchEntity true false
}
