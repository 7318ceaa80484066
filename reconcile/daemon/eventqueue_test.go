package daemon_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/warden-sec/warden/internal/secret"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// A change event's refresh and fix have workers of their own: while a sweep's fix holds
// the replica's only worker (a fix waiting on a slow cloud, paced at its rate limits),
// a drift announced meanwhile is still read, fixed and verified in the simulator.
func TestDaemon_eventFixesDoNotWaitForSweptFixes(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			// The first fix applied once armed keeps its worker until freed.
			hold := newStageHold("apply")
			h := start(t, dsn(t), 2, daemon.Options{Workers: 1, ApprovalPoll: time.Hour, Hooks: daemon.Hooks{Stage: hold.hook}})
			defer hold.free()
			h.idle()
			srv := httptest.NewServer(h.d.EventsHandler(secret.New(token), daemon.EndpointHooks{}))
			t.Cleanup(srv.Close)
			cl := ec2.NewFromConfig(h.e.SDK)
			openSSH := func(group string) {
				t.Helper()
				_, err := cl.AuthorizeSecurityGroupIngress(context.Background(), &ec2.AuthorizeSecurityGroupIngressInput{
					GroupId: aws.String(group), IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"),
						FromPort: aws.Int32(22), ToPort: aws.Int32(22), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}})
				if err != nil {
					t.Fatal(err)
				}
			}
			arnOf := func(group string) string {
				return "arn:aws:ec2:us-east-1:" + remediatetest.Account + ":security-group/" + group
			}

			// A sweep finds the first group open again; its fix takes the only worker
			// and keeps it.
			hold.arm()
			openSSH("sg-00000000000000a0")
			if _, err := h.d.Sweep(context.Background(), "aws", "held-sweep"); err != nil {
				t.Fatal(err)
			}
			hold.wait(t, h)

			// Meanwhile the second group drifts, and its event is heard.
			openSSH("sg-00000000000000a1")
			if got := post(t, srv.URL, "Bearer "+token, event(t, "sg-00000000000000a1")); got != http.StatusAccepted {
				t.Fatalf("the event: %d, want 202", got)
			}
			deadline := time.Now().Add(20 * time.Second)
			for open, _ := h.e.SSHOpen(t, arnOf("sg-00000000000000a1")); open; open, _ = h.e.SSHOpen(t, arnOf("sg-00000000000000a1")) {
				if time.Now().After(deadline) {
					t.Fatalf("the event's drift still open after 20s while a sweep's fix held the default queue's worker: jobs %v", h.snapshot())
				}
				time.Sleep(20 * time.Millisecond)
			}
			waitFor(t, "the event's fix verified", func() bool { return h.verified(arnOf("sg-00000000000000a1")) >= 2 })
			hold.free()
			h.idle()
			if open, _ := h.e.SSHOpen(t, arnOf("sg-00000000000000a0")); open {
				t.Error("the sweep's fix did not close the first group")
			}
			if st := h.states(); st["failed"] != 0 {
				t.Errorf("remediation states %v", st)
			}
		})
	}
}
