package daemon_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store/storetest"
)

// heldListing reads through the account's collector once the harness has made it
// (lateCollector), and holds its listing of the scopes while a test asks it to, leaving
// out the scopes of drop.
type heldListing struct {
	*lateCollector

	mu      sync.Mutex
	hold    chan struct{} // closed to let a held listing go on; nil: not held
	entered chan struct{} // closed when a held listing starts
	drop    []string
}

var _ collectors.Rereader = (*heldListing)(nil)

// held makes the next listing wait for release, leaving out drop.
func (l *heldListing) held(drop ...string) (entered <-chan struct{}, release func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hold, l.entered, l.drop = make(chan struct{}), make(chan struct{}), drop
	hold := l.hold
	return l.entered, func() { close(hold) }
}

func (l *heldListing) Scopes(ctx context.Context) ([]snapshot.Scope, error) {
	l.mu.Lock()
	hold, entered, drop := l.hold, l.entered, l.drop
	l.hold, l.entered, l.drop = nil, nil, nil
	l.mu.Unlock()
	if hold != nil {
		close(entered)
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	scopes, err := l.lateCollector.Scopes(ctx)
	return slices.DeleteFunc(scopes, func(sc snapshot.Scope) bool { return slices.Contains(drop, sc.ID) }), err
}

// A sweep starts replaying the scopes it listed and read before while it lists the
// organisation again: an unchanged scope is done before the listing ends, a changed one
// waits for the listing to be judged with the accounts as listed, and one the listing
// no longer names (its account left) is neither judged nor fixed. The cloud's state is
// read through the simulator.
func TestSweep_readsWhileTheOrganisationIsListed(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			l := &heldListing{lateCollector: &lateCollector{ready: make(chan struct{})}}
			opts := daemon.Options{Workers: 2, ApprovalPoll: time.Hour, DecisionPoll: 100 * time.Millisecond}
			opts.Targets = []daemon.Target{{Name: "aws", Collector: l, Schedule: river.PeriodicInterval(time.Hour)}}
			h := start(t, dsn(t), 2, opts)
			l.set(h.e.Reader)
			h.idle()
			// The second sweep reads the groups the first fixed; after it nothing changes.
			h.sweepOnce("settle")

			iamScope := "aws/" + remediatetest.Account + "/iam"
			ec2Scope := "aws/" + remediatetest.Account + "/ec2/us-east-1"
			group := "sg-00000000000000a0"
			arn := fmt.Sprintf("arn:aws:ec2:us-east-1:%s:security-group/%s", remediatetest.Account, group)
			openSSH := func() {
				t.Helper()
				if _, err := ec2.NewFromConfig(h.e.SDK).AuthorizeSecurityGroupIngress(context.Background(), &ec2.AuthorizeSecurityGroupIngressInput{
					GroupId: aws.String(group), IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"),
						FromPort: aws.Int32(22), ToPort: aws.Int32(22), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}}); err != nil {
					t.Fatal(err)
				}
			}
			sweepHeld := func(correlation string, drop ...string) (release func()) {
				t.Helper()
				entered, release := l.held(drop...)
				if _, err := h.d.Sweep(context.Background(), "aws", correlation); err != nil {
					t.Fatal(err)
				}
				select {
				case <-entered:
				case <-time.After(30 * time.Second):
					t.Fatal("the sweep did not list within 30s")
				}
				return release
			}

			// One group drifts; the sweep's listing is held.
			openSSH()
			before := h.cost()
			verified := h.verified(arn)
			sweeps := h.count(daemon.KindSweep + "/completed")
			release := sweepHeld("held")
			waitFor(t, "the IAM scope replayed while the listing is held", func() bool { return h.cost().since(before).replayed[iamScope] == 1 })
			time.Sleep(300 * time.Millisecond) // time enough for the changed scope to be judged, were it not waiting
			if got := h.cost().since(before); len(got.evaluated) != 0 || got.plans != 0 || got.fixes != 0 {
				t.Errorf("while the listing is held: evaluated %v, %d plans, %d fixes; want nothing judged before the listing", got.evaluated, got.plans, got.fixes)
			}
			if open, _ := h.e.SSHOpen(t, arn); !open {
				t.Error("the drifted group was fixed before the listing ended")
			}
			release()
			waitFor(t, "the sweep", func() bool { return h.count(daemon.KindSweep+"/completed") > sweeps })
			h.idle()
			got := h.cost().since(before)
			if got.evaluated[ec2Scope] != 1 || len(got.evaluated) != 1 || got.fixes != 1 {
				t.Errorf("after the listing: evaluated %v, %d fixes; want %s's one group judged and fixed", got.evaluated, got.fixes, ec2Scope)
			}
			if open, _ := h.e.SSHOpen(t, arn); open || h.verified(arn) != verified+1 {
				t.Errorf("the drifted group: SSH open %v, %d fixes verified (want %d)", open, h.verified(arn), verified+1)
			}
			h.sweepOnce("group-fixed") // reads the group fixed

			// The group drifts again, and the listing no longer names its region's scope,
			// as when its account leaves the organisation: it is not judged, and not fixed.
			openSSH()
			before = h.cost()
			cancelled := h.count(daemon.KindCollect + "/cancelled")
			sweeps = h.count(daemon.KindSweep + "/completed")
			release = sweepHeld("departed", ec2Scope)
			release()
			waitFor(t, "the sweep", func() bool { return h.count(daemon.KindSweep+"/completed") > sweeps })
			h.idle()
			got = h.cost().since(before)
			if len(got.evaluated) != 0 || got.plans != 0 || got.fixes != 0 {
				t.Errorf("a scope no longer listed: evaluated %v, %d plans, %d fixes; want nothing", got.evaluated, got.plans, got.fixes)
			}
			if n := h.count(daemon.KindCollect+"/cancelled") - cancelled; n != 1 {
				t.Errorf("%d collections cancelled, want the departed scope's", n)
			}
			if open, _ := h.e.SSHOpen(t, arn); !open {
				t.Error("the group of a scope no longer listed was fixed")
			}

			// Listed again, the scope is no longer started before the listing: it is read
			// after it, judged and fixed.
			before = h.cost()
			h.sweepOnce("listed-again")
			if got := h.cost().since(before); got.evaluated[ec2Scope] != 1 || got.fixes != 1 {
				t.Errorf("the scope listed again: evaluated %v, %d fixes; want it judged and fixed", got.evaluated, got.fixes)
			}
			if open, _ := h.e.SSHOpen(t, arn); open {
				t.Error("the group is still open once its scope is listed again")
			}
		})
	}
}
