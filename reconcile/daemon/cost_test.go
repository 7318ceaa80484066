package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// sweepOnce runs one more sweep of the aws target and waits until the queue is idle.
func (h *harness) sweepOnce(correlation string) {
	h.t.Helper()
	n := h.count(daemon.KindSweep + "/completed")
	if _, err := h.d.Sweep(context.Background(), "aws", correlation); err != nil {
		h.t.Fatal(err)
	}
	waitFor(h.t, correlation, func() bool { return h.count(daemon.KindSweep+"/completed") > n })
	h.idle()
}

// fixJobs counts the remediation jobs run, whatever their outcome.
func (h *harness) fixJobs() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for k, v := range h.jobs {
		if strings.HasPrefix(k, daemon.KindRemediate+"/") {
			n += v
		}
	}
	return n
}

// cost is what the daemon spent so far: scopes planned, resources evaluated by scope,
// fix jobs run.
type cost struct {
	plans, fixes int
	evaluated    map[string]int
	replayed     map[string]int
}

func (h *harness) cost() cost {
	fixes := h.fixJobs()
	h.mu.Lock()
	defer h.mu.Unlock()
	return cost{plans: h.plans, fixes: fixes, evaluated: maps.Clone(h.evaluated), replayed: maps.Clone(h.replayed)}
}

// since is what was spent after c: evaluated keeps the scopes that evaluated anything.
func (c cost) since(before cost) cost {
	out := cost{plans: c.plans - before.plans, fixes: c.fixes - before.fixes, evaluated: map[string]int{}, replayed: map[string]int{}}
	for sc, n := range c.evaluated {
		if d := n - before.evaluated[sc]; d != 0 {
			out.evaluated[sc] = d
		}
	}
	for sc, n := range c.replayed {
		if d := n - before.replayed[sc]; d != 0 {
			out.replayed[sc] = d
		}
	}
	return out
}

// runsOf counts the remediation runs of one action.
func (h *harness) runsOf(action string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, it := range h.applied {
		if it.Action == action {
			n++
		}
	}
	return n
}

// Cost proportional to change (issue 30): a sweep that finds nothing changed evaluates
// nothing, plans nothing and enqueues no fix; a change in one scope plans that scope
// alone and fixes it; a scope whose plan is made again does not queue anew the fix
// waiting for its approval.
func TestDaemon_unchangedSweepCostsItsReadsOnly(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			const groups = 2
			h := start(t, dsn(t), groups, daemon.Options{Workers: 2, ApprovalPoll: time.Hour, DecisionPoll: 100 * time.Millisecond})
			h.idle()
			waitFor(t, "the role's fix waiting for approval", func() bool { return h.states()[remediate.StatePending] == 1 })
			reqs, err := h.e.Gate.List(context.Background(), gates.Filter{States: []gates.State{gates.StatePending}})
			if err != nil || len(reqs) != 1 {
				t.Fatalf("pending requests %+v %v, want the role's", reqs, err)
			}
			role := reqs[0].ActionID
			first := h.cost()
			if first.plans == 0 || first.fixes == 0 || len(first.evaluated) == 0 {
				t.Fatalf("the first sweep: %+v, want scopes evaluated, planned and fixed", first)
			}
			h.jobsNameTheirAccounts(t)
			// The second sweep reads the fixed groups: their scope changed (findings
			// resolve). After it, nothing changes any more.
			h.sweepOnce("second")
			before := h.cost()
			h.sweepOnce("unchanged")
			if got := h.cost().since(before); got.plans != 0 || got.fixes != 0 || len(got.evaluated) != 0 {
				t.Errorf("an unchanged sweep: %d scopes planned, %d fix jobs, evaluated %v; want nothing but its reads",
					got.plans, got.fixes, got.evaluated)
			}
			if n := h.runsOf(role); n != 1 {
				t.Errorf("the fix waiting for approval ran %d times, want once (when it asked)", n)
			}
			// Each scope was read by replaying its last read's tape: nothing decoded.
			scopes := h.scopes()
			if got := h.cost().since(before); len(got.replayed) != len(scopes) {
				t.Errorf("an unchanged sweep replayed %d scopes (%v) of %d %v: the others were read and decoded", len(got.replayed), got.replayed, len(scopes), scopes)
			}

			// One security group drifts: its scope alone is evaluated, planned and fixed.
			group := "sg-00000000000000a0"
			arn := fmt.Sprintf("arn:aws:ec2:us-east-1:%s:security-group/%s", remediatetest.Account, group)
			if _, err := ec2.NewFromConfig(h.e.SDK).AuthorizeSecurityGroupIngress(context.Background(), &ec2.AuthorizeSecurityGroupIngressInput{
				GroupId: aws.String(group), IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"),
					FromPort: aws.Int32(22), ToPort: aws.Int32(22), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}}); err != nil {
				t.Fatal(err)
			}
			before = h.cost()
			verified := h.verified(arn)
			h.sweepOnce("one-changed")
			got := h.cost().since(before)
			scope := "aws/" + remediatetest.Account + "/ec2/us-east-1"
			if got.plans != 1 || len(got.evaluated) != 1 || got.evaluated[scope] != 1 {
				t.Errorf("a sweep with one group changed: %d scopes planned, evaluated %v; want %s's one group", got.plans, got.evaluated, scope)
			}
			if got.fixes != 1 {
				t.Errorf("a sweep with one group changed ran %d fix jobs, want its one fix", got.fixes)
			}
			if got.replayed[scope] != 0 || len(got.replayed) != len(scopes)-1 {
				t.Errorf("a sweep with one group changed replayed %v: want every scope but %s", got.replayed, scope)
			}
			if open, _ := h.e.SSHOpen(t, arn); open || h.verified(arn) != verified+1 {
				t.Errorf("the drifted group: SSH open %v, %d fixes verified (want %d)", open, h.verified(arn), verified+1)
			}

			// The drift comes back, the same as before, while no read saw the group fixed:
			// the read finds it as stored, and yet its fix, verified with its finding still
			// seen, has the scope planned and the group fixed again.
			if _, err := ec2.NewFromConfig(h.e.SDK).AuthorizeSecurityGroupIngress(context.Background(), &ec2.AuthorizeSecurityGroupIngressInput{
				GroupId: aws.String(group), IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"),
					FromPort: aws.Int32(22), ToPort: aws.Int32(22), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}}); err != nil {
				t.Fatal(err)
			}
			before = h.cost()
			h.sweepOnce("drift-back")
			got = h.cost().since(before)
			if got.plans != 1 || len(got.evaluated) != 0 || got.fixes != 1 {
				t.Errorf("a sweep with the drift back as stored: %d scopes planned, %d fix jobs, evaluated %v; want %s planned and fixed, nothing evaluated",
					got.plans, got.fixes, got.evaluated, scope)
			}
			if open, _ := h.e.SSHOpen(t, arn); open || h.verified(arn) != verified+2 {
				t.Errorf("the group drifted back: SSH open %v, %d fixes verified (want %d)", open, h.verified(arn), verified+2)
			}

			// The next sweep reads the group fixed (its scope changed again); then a user
			// is added: the account's IAM scope is planned again, and the role's
			// fix, still waiting for its approval, is not queued again.
			h.sweepOnce("group-fixed")
			if _, err := iam.NewFromConfig(h.e.SDK).CreateUser(context.Background(), &iam.CreateUserInput{UserName: aws.String("newcomer")}); err != nil {
				t.Fatal(err)
			}
			before = h.cost()
			h.sweepOnce("iam-changed")
			got = h.cost().since(before)
			if got.plans != 1 || len(got.evaluated) != 1 {
				t.Errorf("a sweep with a user added: %d scopes planned, evaluated %v; want the IAM scope", got.plans, got.evaluated)
			}
			if n := h.runsOf(role); n != 1 {
				t.Errorf("the fix waiting for approval ran %d times after its scope was planned again, want once", n)
			}
			if a, err := h.e.Machine("warden", remediate.Limits{}).Action(context.Background(), role); err != nil || a == nil || a.State != remediate.StatePending {
				t.Errorf("the role's fix: %+v %v, want still pending", a, err)
			}
		})
	}
}

// An approval arriving for a request that waits (here through the gates, as warden
// approve records it) wakes the one job of its action, which applies the fix and
// verifies it, without a sweep.
func TestDaemon_approvalWakesItsFix(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			h := start(t, dsn(t), 1, daemon.Options{Workers: 2, ApprovalPoll: time.Hour, DecisionPoll: 100 * time.Millisecond})
			h.idle()
			ctx := context.Background()
			req := onePending(t, h)
			sweeps, fixes := h.count(daemon.KindSweep+"/completed"), h.fixJobs()
			// No job waits on it meanwhile: nothing polls.
			time.Sleep(500 * time.Millisecond)
			if n := h.fixJobs(); n != fixes {
				t.Errorf("%d fix jobs ran while the request waited", n-fixes)
			}
			for _, who := range []string{"bob", "carol"} {
				if _, err := h.e.Gate.Decide(ctx, req.ID, who, "cli", true, ""); err != nil {
					t.Fatal(err)
				}
			}
			m := h.e.Machine("warden", remediate.Limits{})
			waitFor(t, "the approved fix verified", func() bool {
				a, err := m.Action(ctx, req.ActionID)
				return err == nil && a != nil && a.State == remediate.StateVerified
			})
			// Read back from the simulator: the role no longer trusts everyone.
			out, err := iam.NewFromConfig(h.e.SDK).GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("deploy")})
			if err != nil {
				t.Fatal(err)
			}
			doc, err := url.QueryUnescape(aws.ToString(out.Role.AssumeRolePolicyDocument))
			if err != nil || strings.Contains(doc, `"Allow"`) || !strings.Contains(doc, `"Deny"`) {
				t.Errorf("the role's trust after the approved fix: %s %v, want it to trust no one", doc, err)
			}
			time.Sleep(300 * time.Millisecond) // a few more polls: the decision wakes one job
			if n := h.fixJobs() - fixes; n != 1 {
				t.Errorf("%d fix jobs after the approval, want its one", n)
			}
			if n := h.count(daemon.KindSweep + "/completed"); n != sweeps {
				t.Errorf("%d sweeps ran meanwhile: the approval alone should apply it", n-sweeps)
			}
		})
	}
}

// A request that expires unanswered wakes its action's job too, which records the
// action voided; the next sweep, the world unchanged, plans the fix again and asks anew,
// as every sweep did before.
func TestDaemon_expiredRequestIsAskedAnew(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			h := start(t, dsn(t), 1, daemon.Options{Workers: 2, ApprovalPoll: time.Hour, DecisionPoll: 100 * time.Millisecond})
			h.idle()
			ctx := context.Background()
			req := onePending(t, h)
			later := req.ExpiresAt.Add(time.Minute).Sub(time.Now())
			h.e.SetNow(func() time.Time { return time.Now().Add(later) })
			m := h.e.Machine("warden", remediate.Limits{})
			waitFor(t, "the action voided by its expired request", func() bool {
				a, err := m.Action(ctx, req.ActionID)
				return err == nil && a != nil && a.State == remediate.StateVoided
			})
			if r, err := h.e.Gate.Get(ctx, req.ID); err != nil || r.State != gates.StateExpired {
				t.Errorf("the request: %+v %v, want expired", r, err)
			}
			h.sweepOnce("after-expiry")
			reqs, err := h.e.Gate.List(ctx, gates.Filter{ActionID: req.ActionID, States: []gates.State{gates.StatePending}})
			if err != nil || len(reqs) != 1 || reqs[0].ID == req.ID {
				t.Errorf("after the expiry and a sweep: pending requests %+v %v, want a new one", reqs, err)
			}
			if n := h.runsOf(req.ActionID); n != 3 {
				t.Errorf("the role's fix ran %d times, want 3: asked, expired, asked anew", n)
			}
		})
	}
}

// onePending waits for the one approval request pending and returns it.
func onePending(t *testing.T, h *harness) gates.Request {
	t.Helper()
	var req gates.Request
	waitFor(t, "the role's approval request", func() bool {
		reqs, err := h.e.Gate.List(context.Background(), gates.Filter{States: []gates.State{gates.StatePending}})
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) == 1 {
			req = reqs[0]
		}
		return len(reqs) == 1
	})
	return req
}

// scopes are the ids of the scopes the daemon has read.
func (h *harness) scopes() []string {
	h.t.Helper()
	var ids []string
	err := h.e.Store.Read(context.Background(), func(q *store.Reader) error {
		var err error
		ids, err = state.ScopeIDs(context.Background(), q)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return ids
}

// jobsNameTheirAccounts checks that the sweep's collections and the fixes they planned
// name the organisation's accounts by the digest of the list kept once, rather than
// carrying the list: a sweep of 500 accounts queued 4,500 collections of 500 ids each.
func (h *harness) jobsNameTheirAccounts(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	refs := map[string]int{}
	err := h.e.Store.Read(ctx, func(q *store.Reader) error {
		col := "args::text"
		if h.e.Store.Dialect() == "sqlite" {
			col = "json(args)" // River keeps SQLite's binary JSON
		}
		rows, err := q.QueryContext(ctx, `SELECT kind, `+col+` FROM river_job WHERE kind IN (?, ?)`, daemon.KindCollect, daemon.KindRemediate)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var kind string
			var args []byte
			if err := rows.Scan(&kind, &args); err != nil {
				return err
			}
			var a struct {
				Ref      string          `json:"accounts_ref"`
				Accounts json.RawMessage `json:"accounts"`
				Plan     *struct {
					Accounts json.RawMessage `json:"accounts"`
				} `json:"plan"`
			}
			if err := json.Unmarshal(args, &a); err != nil {
				return err
			}
			if a.Ref == "" || a.Accounts != nil || (a.Plan != nil && a.Plan.Accounts != nil) {
				t.Errorf("a %s job carries its accounts instead of naming them: %s", kind, args)
			}
			refs[a.Ref]++
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 {
		t.Fatalf("the sweep's jobs name %d account lists %v, want one", len(refs), refs)
	}
	for ref := range refs {
		var accounts []string
		if err := h.e.Store.Read(ctx, func(q *store.Reader) error {
			var err error
			accounts, err = state.AccountList(ctx, q, ref)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(accounts, remediatetest.Account) {
			t.Errorf("the list the jobs name is %v: without the organisation's account %s", accounts, remediatetest.Account)
		}
	}
}
