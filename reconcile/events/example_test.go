package events_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/warden-sec/warden/reconcile/events"
)

// A CloudTrail record of CreateAccessKey, as EventBridge delivers it, names the new key
// and its user; the daemon reads both again.
func ExampleParse() {
	body, err := os.ReadFile("testdata/aws/iam-create-access-key.json")
	if err != nil {
		panic(err)
	}
	changes, err := events.Parse(body)
	if err != nil {
		fmt.Println(events.Status(err), err)
		return
	}
	for _, c := range changes {
		fmt.Println(c.Event, c.Scope)
		for _, uid := range c.UIDs {
			fmt.Println(" ", uid)
		}
	}
	// Output:
	// iam:CreateAccessKey aws/111111111111/iam
	//   arn:aws:iam::111111111111:user/bob/accesskey/AKIA5YQPKMTVBOBKEY02
	//   arn:aws:iam::111111111111:user/bob
}

// A read-only call is well formed but not warden's to act on: it is counted and answered
// 400 (see Status).
func ExampleStatus() {
	body, err := os.ReadFile("testdata/unknown/iam-list-users.json")
	if err != nil {
		panic(err)
	}
	_, err = events.Parse(body)
	var e *events.Error
	if errors.As(err, &e) {
		fmt.Println(events.Status(err), errors.Is(err, events.ErrUnknown), e.Event)
	}
	// Output:
	// 400 true iam:ListUsers
}

// A service account key created in GCP, as a Pub/Sub push subscription delivers its
// audit log entry.
func ExampleParser_Parse() {
	body, err := os.ReadFile("testdata/gcp/service-account-key-create.push.json")
	if err != nil {
		panic(err)
	}
	changes, err := events.New(events.Options{MaxBody: 256 << 10}).Parse(body)
	if err != nil {
		panic(err)
	}
	fmt.Println(changes[0].Event, changes[0].Scope, changes[0].Actor)
	fmt.Println(changes[0].UIDs[0])
	// Output:
	// google.iam.admin.v1.CreateServiceAccountKey gcp/acme-prod/iam alice@acme.example
	// //iam.googleapis.com/projects/acme-prod/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com/keys/1f0e2d3c4b5a69788796a5b4c3d2e1f001122334
}
