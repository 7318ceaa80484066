package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/conformance"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
)

// fixes is the plan's low-risk password-policy fix (applied without approval) and its
// medium-risk revocation of the open SSH rule (applied once approved).
type fixes struct {
	f           *fixer
	plan        *remediate.Plan
	low, medium remediate.PlannedAction
}

// planFixes plans as alice and keeps the two fixes, checking that the plan has them.
func planFixes(t *testing.T, w conformance.World) fixes {
	t.Helper()
	f := newFixer(t)
	p := f.plan(t, "alice")
	low := remediatetest.Only(p, "aws.iam.set_password_policy", 1)
	med := remediatetest.Only(p, "aws.ec2.revoke_ingress", 1)
	if len(low.Actions) != 1 || len(med.Actions) != 1 {
		var got []string
		for _, a := range p.Actions {
			got = append(got, a.Remediator+" "+a.Target)
		}
		t.Fatalf("plan: %d password-policy and %d revoke actions, want 1 each; planned %v", len(low.Actions), len(med.Actions), got)
	}
	if med.Actions[0].Target != w.GroupARN {
		t.Errorf("revoke targets %s, want %s", med.Actions[0].Target, w.GroupARN)
	}
	lowID, medID := low.Actions[0].ID, med.Actions[0].ID
	both := p.Only(func(a remediate.PlannedAction) bool { return a.ID == lowID || a.ID == medID })
	return fixes{f: f, plan: both, low: low.Actions[0], medium: med.Actions[0]}
}

// applyApproved applies the fixes as alice: the low one at once, the medium one once bob
// (not alice, who asked) approves it.
func applyApproved(t *testing.T, c *conformance.Cloud, x fixes) {
	t.Helper()
	ctx := context.Background()
	alice := x.f.machine(t, "alice")
	res, err := alice.Apply(ctx, x.plan, true)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if it := remediatetest.ItemOf(t, res, x.low.ID); it.State != remediate.StateVerified || !it.Wrote {
		t.Fatalf("low-risk fix: %+v", it)
	}
	pending := remediatetest.ItemOf(t, res, x.medium.ID)
	if pending.State != remediate.StatePending || pending.Request == "" {
		t.Fatalf("medium-risk fix: %+v", pending)
	}
	if open, _ := conformance.SSHOpen(t, c, groupOf(x.medium.Target)); !open {
		t.Fatal("the fix awaiting approval was applied")
	}
	if _, err := x.f.Gate.Decide(ctx, pending.Request, "alice", "cli", true, ""); !errors.Is(err, gates.ErrSelfApproval) {
		t.Fatalf("alice approving her own fix: %v, want %v", err, gates.ErrSelfApproval)
	}
	if _, err := x.f.Gate.Decide(ctx, pending.Request, "bob", "cli", true, "ok"); err != nil {
		t.Fatalf("bob approving: %v", err)
	}
	res, err = alice.Apply(ctx, x.plan, true)
	if err != nil {
		t.Fatalf("apply once approved: %v", err)
	}
	if it := remediatetest.ItemOf(t, res, x.medium.ID); it.State != remediate.StateVerified || !it.Wrote {
		t.Fatalf("approved fix: %+v", it)
	}
}

func groupOf(arn string) string { return arn[strings.LastIndex(arn, "/")+1:] }

// cli runs the AWS CLI against the cloud and decodes its JSON answer.
func cli(t *testing.T, c *conformance.Cloud, args ...string) map[string]any {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(simtest.AWSCLI(t), append([]string{"--endpoint-url", c.URL, "--output", "json"}, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "AWS_ACCESS_KEY_ID=AKIDCLI", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE="+filepath.Join(dir, "none"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"), "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("aws %s: %v", strings.Join(args, " "), err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("aws %s: not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

func init() {
	cases = append(cases,
		kase{"plan", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
			x := planFixes(t, w)
			if x.low.Approvals.Verdict != "auto" || x.medium.Approvals.Verdict != "approval" || x.medium.Approvals.Needed != 1 {
				t.Errorf("gates: password policy %+v, revoke %+v; want auto and one approval", x.low.Approvals, x.medium.Approvals)
			}
		}},
		kase{"dry run", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
			x := planFixes(t, w)
			if c.Sim != nil {
				c.Sim.ResetCalls()
			}
			res, err := x.f.machine(t, "alice").Apply(context.Background(), x.plan, false)
			if err != nil {
				t.Fatalf("dry run: %v", err)
			}
			if !res.DryRun {
				t.Error("the result is not a dry run")
			}
			// moto counts no writes: the account is read back instead, on both backends.
			if c.Sim != nil {
				if n := c.Sim.WriteCount(); n != 0 {
					t.Errorf("the dry run made %d writes", n)
				}
			}
			if open, desc := conformance.SSHOpen(t, c, w.Group); !open || desc != "anywhere" {
				t.Errorf("after the dry run: SSH open %v (%q), want still open", open, desc)
			}
			if n := conformance.MinPasswordLength(t, c); n != 8 {
				t.Errorf("after the dry run: minimum password length %d, want still 8", n)
			}
			if rs, _ := x.f.machine(t, "alice").Actions(context.Background()); len(rs) != 0 {
				t.Errorf("the dry run recorded %d actions", len(rs))
			}
		}},
		kase{"apply with approvals", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
			x := planFixes(t, w)
			applyApproved(t, c, x)
			// Read back with the AWS CLI, not warden's account of it nor warden's SDK use.
			sgs := cli(t, c, "ec2", "describe-security-groups", "--group-ids", w.Group)
			groups, _ := sgs["SecurityGroups"].([]any)
			if len(groups) != 1 {
				t.Fatalf("describe-security-groups: %v", sgs)
			}
			perms, _ := groups[0].(map[string]any)["IpPermissions"].([]any)
			var office bool
			for _, p := range perms {
				p := p.(map[string]any)
				ranges, _ := p["IpRanges"].([]any)
				for _, r := range ranges {
					cidr := r.(map[string]any)["CidrIp"]
					if cidr == "0.0.0.0/0" {
						t.Errorf("after the fix the group still lets %v in from 0.0.0.0/0", p["FromPort"])
					}
					if cidr == "10.0.0.0/8" && p["FromPort"] == float64(443) {
						office = true
					}
				}
			}
			if !office {
				t.Errorf("the fix took the private rule too: %v", perms)
			}
			pol := cli(t, c, "iam", "get-account-password-policy")
			pp, _ := pol["PasswordPolicy"].(map[string]any)
			if n, _ := pp["MinimumPasswordLength"].(float64); n < 14 {
				t.Errorf("get-account-password-policy after the fix: %v", pol)
			}
		}},
		kase{"rollback", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
			x := planFixes(t, w)
			applyApproved(t, c, x)
			alice := x.f.machine(t, "alice")
			for _, id := range []string{x.medium.ID, x.low.ID} {
				if it, err := alice.Rollback(context.Background(), id); err != nil || it.State != remediate.StateRolledBack {
					t.Fatalf("rollback %s: %+v %v", id, it, err)
				}
			}
			if open, desc := conformance.SSHOpen(t, c, w.Group); !open || desc != "anywhere" {
				t.Errorf("after rollback: SSH open %v, description %q; want the rule back as it was", open, desc)
			}
			if n := conformance.MinPasswordLength(t, c); n != 8 {
				t.Errorf("after rollback: minimum password length %d, want 8 again", n)
			}
		}},
		kase{"audit verify", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
			x := planFixes(t, w)
			applyApproved(t, c, x)
			if _, err := x.f.machine(t, "alice").Rollback(context.Background(), x.medium.ID); err != nil {
				t.Fatal(err)
			}
			rep := x.f.verifyAudit(t)
			if rep.Entries == 0 || len(rep.Problems) > 0 {
				t.Errorf("audit verify: %d entries, problems %v", rep.Entries, rep.Problems)
			}
		}},
	)
}
