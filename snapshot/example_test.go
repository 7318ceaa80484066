package snapshot_test

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/warden-sec/warden/snapshot"
)

// Write a snapshot as a collector does, then stream it back.
func ExampleNewWriter() {
	var buf bytes.Buffer
	w, _ := snapshot.NewWriter(&buf, snapshot.Header{CollectedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Accounts: []string{"111111111111"}})
	w.Write(snapshot.Resource{UID: "arn:aws:iam::111111111111:user/alice", Type: "aws.iam.user", Name: "alice",
		Account: "111111111111", Region: "global", Attributes: map[string]any{"mfa_active": true, "password_enabled": false}})
	// EC2 in one region could not be read: its resources are unknown, not deleted.
	w.AddScope(snapshot.Scope{ID: "aws/111111111111/iam", Status: snapshot.ScopeOK})
	w.AddScope(snapshot.Scope{ID: "aws/111111111111/ec2/eu-west-1", Status: snapshot.ScopeFailed, Error: "AccessDenied"})
	w.Close()

	rd := snapshot.NewReader(&buf, "example.json")
	p := snapshot.NewParser("example.json")
	for {
		el, err := rd.Next()
		if err == io.EOF {
			break
		}
		r, _ := p.Decode(el)
		fmt.Println(r.Type, r.Name, r.Scope)
	}
	for _, s := range rd.Header().Scopes {
		fmt.Println(s.ID, s.Status)
	}
	// Output:
	// aws.iam.user alice aws/111111111111/iam
	// aws/111111111111/iam ok
	// aws/111111111111/ec2/eu-west-1 failed
}
