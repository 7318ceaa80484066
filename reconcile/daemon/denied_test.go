package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/secret"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/reconcile/metrics"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/reconcile/watch"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

const rightsizedDoc = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:ListBucket","kms:Decrypt","lambda:*"],"Resource":"*"}]}`

// rightsizedWorld is an account whose role app is granted s3, kms and lambda by its
// inline policy and used s3 two days ago, lambda 300 days ago, kms never: its
// right-sizing keeps s3:ListBucket alone.
func rightsizedWorld() *cloudsim.World {
	now := time.Now().UTC().Truncate(time.Second)
	role := func(name string) *cloudsim.Role {
		return &cloudsim.Role{Name: name, Created: now.AddDate(-2, 0, 0), LastUsed: &now, LastUsedRegion: "us-east-1",
			AssumeRolePolicy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
			InlinePolicies:   []cloudsim.InlinePolicy{{Name: "app", Document: rightsizedDoc}},
			LastAccessed: []cloudsim.AccessRecord{
				{Service: "s3", Action: "s3:ListBucket", At: now.AddDate(0, 0, -2), Region: "us-east-1"},
				{Service: "lambda", At: now.AddDate(0, 0, -300), Region: "us-east-1"},
			}}
	}
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: remediatetest.Account, Regions: []string{"us-east-1"},
		Roles: []*cloudsim.Role{role("app")}}}}}
}

// rightsized applies the right-sizing of role app's inline policy for real, through the
// machine on the simulator (approved by bob, as its high risk asks), and returns its
// action id.
func rightsized(t *testing.T, e *remediatetest.Env) string {
	t.Helper()
	ctx := context.Background()
	p := remediatetest.Only(e.Plan(t, "alice"), watch.RightsizeInline, 1)
	if len(p.Actions) != 1 || p.Actions[0].Target != "arn:aws:iam::"+remediatetest.Account+":role/app" {
		t.Fatalf("plan: %+v", p.Actions)
	}
	id := p.Actions[0].ID
	alice := e.Machine("alice", remediate.Limits{})
	res, err := alice.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Gate.Decide(ctx, remediatetest.ItemOf(t, res, id).Request, "bob", "cli", true, "CHG-29"); err != nil {
		t.Fatal(err)
	}
	if res, err = alice.Apply(ctx, p, true); err != nil {
		t.Fatal(err)
	}
	if it := remediatetest.ItemOf(t, res, id); it.State != remediate.StateVerified {
		t.Fatalf("the right-sizing: %+v", it)
	}
	if got := appDoc(t, e); !strings.Contains(got, "s3:ListBucket") || strings.Contains(got, "kms") {
		t.Fatalf("the policy after the fix: %s", got)
	}
	return id
}

// appDoc is role app's inline policy as IAM holds it, read with the IAM client and
// re-encoded canonically.
func appDoc(t *testing.T, e *remediatetest.Env) string {
	t.Helper()
	out, err := iam.NewFromConfig(e.SDK).GetRolePolicy(context.Background(), &iam.GetRolePolicyInput{RoleName: aws.String("app"), PolicyName: aws.String("app")})
	if err != nil {
		t.Fatal(err)
	}
	text, err := url.QueryUnescape(aws.ToString(out.PolicyDocument))
	if err != nil {
		t.Fatal(err)
	}
	return canonical(t, text)
}

func canonical(t *testing.T, doc string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// deniedEvent is a CloudTrail record of role's session refused action (service:Name),
// as EventBridge delivers it, timed now.
func deniedEvent(role, action, id string) string {
	svc, name, _ := strings.Cut(action, ":")
	acct := remediatetest.Account
	return fmt.Sprintf(`{"version":"0","id":"eb-%[5]s","detail-type":"AWS API Call via CloudTrail","source":"aws.%[3]s","account":"%[1]s",
"time":"%[6]s","region":"us-east-1","resources":[],"detail":{"eventVersion":"1.09",
"userIdentity":{"type":"AssumedRole","principalId":"AROAEXAMPLE:task","arn":"arn:aws:sts::%[1]s:assumed-role/%[2]s/task","accountId":"%[1]s",
"sessionContext":{"sessionIssuer":{"type":"Role","principalId":"AROAEXAMPLE","arn":"arn:aws:iam::%[1]s:role/%[2]s","accountId":"%[1]s","userName":"%[2]s"}}},
"eventTime":"%[6]s","eventSource":"%[3]s.amazonaws.com","eventName":"%[4]s","awsRegion":"us-east-1","errorCode":"AccessDeniedException",
"errorMessage":"not authorized","requestParameters":null,"responseElements":null,"eventID":"%[5]s","readOnly":true,"recipientAccountId":"%[1]s"}}`,
		acct, role, svc, name, id, time.Now().UTC().Format(time.RFC3339))
}

// denyHarness is a daemon over an Env whose right-sizing is applied, with its metrics
// and its events endpoint.
type denyHarness struct {
	e   *remediatetest.Env
	id  string
	reg *prometheus.Registry
	url string
}

func startDenied(t *testing.T, dsn string, rollback bool) *denyHarness {
	t.Helper()
	ctx := context.Background()
	e := remediatetest.Start(t, dsn, rightsizedWorld(), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true},
		remediatetest.Options{Usage: true})
	h := &denyHarness{e: e, id: rightsized(t, e), reg: prometheus.NewRegistry()}
	hooks, endpoint := daemon.MetricsHooks(metrics.New(h.reg))
	d, err := daemon.New(ctx, daemon.Options{Store: e.Store, Log: e.Log, Hooks: hooks,
		Reconciler: reconcile.New(reconcile.Options{Store: e.Store, Log: e.Log, Engine: e.Engine}),
		Machine:    e.Machine("warden", remediate.Limits{}), Plan: reconcile.PlanOptions{Registry: e.Registry, Gates: e.Gates},
		// No schedule: nothing but the events runs.
		Targets:          []daemon.Target{{Name: "aws", Collector: e.Reader, Reader: e.Reader}},
		RollbackOnDenied: rollback, ApprovalPoll: 50 * time.Millisecond, WatchEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx, 10*time.Second) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("the daemon did not stop within 30s")
		}
	})
	srv := httptest.NewServer(d.EventsHandler(secret.New(token), endpoint))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// watchFindings are the WARDEN-WATCH-001 findings the daemon's state holds.
func (h *denyHarness) watchFindings(t *testing.T) []state.Finding {
	t.Helper()
	var out []state.Finding
	err := h.e.Store.Read(context.Background(), func(q *store.Reader) error {
		var err error
		out, err = state.Findings(context.Background(), q, func(l state.Life) bool { return l.Policy == watch.PolicyID })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (h *denyHarness) audited(t *testing.T) []audit.Entry {
	t.Helper()
	es, err := h.e.Log.EntriesOfKind(context.Background(), watch.AuditKind)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func (h *denyHarness) counted(t *testing.T) float64 {
	t.Helper()
	families, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "warden_rightsize_denied_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "remediator" && l.GetValue() == watch.RightsizeInline {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("no warden_rightsize_denied_total series for the inline right-sizing")
	return 0
}

// TestDaemon_deniedAfterRightsizing: on both databases, a right-sizing applied for real
// in the simulator, then an access-denied event for an action it removed, POSTed to
// /v1/events, opens one critical finding naming the principal, the action and the
// rollback command, audits rightsize.denied and counts 1; the same event again, a
// denial of an action it kept and one of another principal change nothing. The fix
// rolled back by hand, as the finding says, resolves it.
func TestDaemon_deniedAfterRightsizing(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			h := startDenied(t, dsn(t), false)
			role := "arn:aws:iam::" + remediatetest.Account + ":role/app"
			if got := post(t, h.url, "Bearer "+token, deniedEvent("app", "kms:Decrypt", "deny-1")); got != 202 {
				t.Fatalf("the denial: %d, want 202", got)
			}
			fs := h.watchFindings(t)
			if len(fs) != 1 {
				t.Fatalf("%d watch findings, want 1: %+v", len(fs), fs)
			}
			f := fs[0]
			if f.Status != findings.StatusOpen || f.Finding.Severity != findings.Critical || f.Finding.Resource != role ||
				f.Finding.Scope != "aws/"+remediatetest.Account+"/watch" {
				t.Errorf("finding %+v", f)
			}
			for _, s := range []string{role, "kms:Decrypt", h.id, "warden rollback " + h.id} {
				if !strings.Contains(f.Finding.Message, s) {
					t.Errorf("message %q lacks %q", f.Finding.Message, s)
				}
			}
			es := h.audited(t)
			if len(es) != 1 || es[0].Subject != h.id {
				t.Fatalf("rightsize.denied entries %+v", es)
			}
			if n := h.counted(t); n != 1 {
				t.Errorf("warden_rightsize_denied_total = %v, want 1", n)
			}

			for _, c := range []struct{ why, body string }{
				{"the same event again", deniedEvent("app", "kms:Decrypt", "deny-1")},
				{"an action the fix kept", deniedEvent("app", "s3:ListBucket", "deny-2")},
				{"another principal", deniedEvent("other", "kms:Decrypt", "deny-3")},
			} {
				if got := post(t, h.url, "Bearer "+token, c.body); got != 202 {
					t.Errorf("%s: %d, want 202", c.why, got)
				}
			}
			if fs := h.watchFindings(t); len(fs) != 1 || fs[0].SeenAt != f.SeenAt {
				t.Errorf("watch findings after the others: %+v", fs)
			}
			if es := h.audited(t); len(es) != 1 {
				t.Errorf("%d rightsize.denied entries, want 1", len(es))
			}
			if n := h.counted(t); n != 1 {
				t.Errorf("warden_rightsize_denied_total = %v, want 1", n)
			}
			m := h.e.Machine("x", remediate.Limits{})
			if r, err := m.Action(context.Background(), h.id); err != nil || r.State != remediate.StateVerified {
				t.Fatalf("the fix without rollback_on_denied: %+v %v", r, err)
			}
			// The command the finding names, run by hand: the finding is resolved.
			if it, err := m.Rollback(context.Background(), h.id); err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("warden rollback %s: %+v %v", h.id, it, err)
			}
			if got, want := appDoc(t, h.e), canonical(t, rightsizedDoc); got != want {
				t.Errorf("the policy after the rollback: %s\nwant %s", got, want)
			}
			waitFor(t, "the finding resolved", func() bool {
				fs := h.watchFindings(t)
				return len(fs) == 1 && fs[0].Status == findings.StatusResolved
			})
			h.e.VerifyAudit(t)
		})
	}
}

// TestDaemon_rollbackOnDenied: with rollback_on_denied, the denial rolls the fix back:
// the policy document read back from the simulator with the IAM client is the original,
// the action rolled back and its finding resolved.
func TestDaemon_rollbackOnDenied(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			h := startDenied(t, dsn(t), true)
			if got := post(t, h.url, "Bearer "+token, deniedEvent("app", "lambda:InvokeFunction", "deny-1")); got != 202 {
				t.Fatalf("the denial: %d, want 202", got)
			}
			m := h.e.Machine("x", remediate.Limits{})
			waitFor(t, "the fix rolled back", func() bool {
				r, err := m.Action(context.Background(), h.id)
				return err == nil && r.State == remediate.StateRolledBack
			})
			if got, want := appDoc(t, h.e), canonical(t, rightsizedDoc); got != want {
				t.Errorf("the policy after the rollback: %s\nwant %s", got, want)
			}
			waitFor(t, "the finding resolved", func() bool {
				fs := h.watchFindings(t)
				return len(fs) == 1 && fs[0].Status == findings.StatusResolved
			})
			if n := h.counted(t); n != 1 {
				t.Errorf("warden_rightsize_denied_total = %v, want 1", n)
			}
			es := h.audited(t)
			if len(es) != 1 || !strings.Contains(string(es[0].Data), `"auto_rollback":true`) {
				t.Errorf("rightsize.denied entries %+v", es)
			}
			h.e.VerifyAudit(t)
		})
	}
}
