package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// approvalsCLI runs one of the approval commands as a user would and returns its exit
// code (as run computes it) and output.
func approvalsCLI(t *testing.T, actorName string, mk func(*app) *cobra.Command, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv(audit.ActorEnv, actorName)
	var out, errb bytes.Buffer
	a := &app{stdout: &out, stderr: &errb}
	cmd := mk(a)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	code := exitOK
	if err != nil {
		code = exitError
		var ee *exitErr
		if errors.As(err, &ee) {
			code = ee.code
		}
		errb.WriteString(err.Error())
	}
	return code, out.String(), errb.String()
}

// seedRequest makes, as warden apply would, a pending request for a critical fix
// requested by alice, and returns its id.
func seedRequest(t *testing.T, db string, cfg gates.Config) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := gates.New(st, audit.New(st, audit.Options{Now: time.Now}), cfg, time.Now)
	var id string
	err = st.InTx(ctx, func(tx *store.Tx) error {
		r, err := g.Request(ctx, tx, remediators.Action{ID: "act-1", Remediator: "aws.iam.detach_policy",
			Target: "arn:aws:iam::111122223333:user/ci", Part: "arn:aws:iam::aws:policy/AdministratorAccess", Risk: findings.RiskCritical}, "h1", "alice")
		id = r.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestApprovalsCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "warden.db")
	cfgFile := write(t, dir, "warden.yaml", "db: "+db+"\ngates:\n  approvers: [bob, carol]\n  unchecked_names: true\n")
	id := seedRequest(t, db, gates.Config{Approvers: []string{"bob", "carol"}, UncheckedNames: true})

	code, out, _ := approvalsCLI(t, "bob", (*app).approvalsCmd, "list", "--config", cfgFile)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "aws.iam.detach_policy") || !strings.Contains(out, "0/2") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}

	refusals := []struct {
		name, actor string
		cmd         func(*app) *cobra.Command
		args        []string
		inErr       string
	}{
		{"requester", "alice", (*app).approveCmd, []string{id}, "the requester of an action cannot decide its approval: alice requested it"},
		{"not an approver", "mallory", (*app).approveCmd, []string{id}, "not an approver: mallory is not in gates.approvers (bob, carol)"},
		{"unknown id", "bob", (*app).approveCmd, []string{"apr-nope"}, "no such approval request"},
		{"deny without reason", "bob", (*app).denyCmd, []string{id}, `required flag(s) "reason" not set`},
		{"deny with an empty reason", "bob", (*app).denyCmd, []string{id, "--reason", ""}, "a deny needs a reason"},
	}
	for _, tt := range refusals {
		code, _, stderr := approvalsCLI(t, tt.actor, tt.cmd, append(tt.args, "--config", cfgFile)...)
		if code != exitError || !strings.Contains(stderr, tt.inErr) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tt.name, code, stderr, tt.inErr)
		}
	}

	code, out, stderr := approvalsCLI(t, "bob", (*app).approveCmd, id, "--config", cfgFile, "--reason", "CHG-1")
	if code != 0 || !strings.Contains(out, "1 of 2 approvals") {
		t.Fatalf("bob approves: exit %d, %s%s", code, out, stderr)
	}
	code, _, stderr = approvalsCLI(t, "bob", (*app).approveCmd, id, "--config", cfgFile)
	if code != exitError || !strings.Contains(stderr, "already decided (bob approved it") {
		t.Errorf("bob again: exit %d, %s", code, stderr)
	}
	code, out, _ = approvalsCLI(t, "carol", (*app).approveCmd, id, "--db", db, "--config", cfgFile)
	if code != 0 || !strings.Contains(out, "approved (2 of 2 approvals)") {
		t.Fatalf("carol approves: exit %d, %s", code, out)
	}

	code, out, _ = approvalsCLI(t, "bob", (*app).approvalsCmd, "list", "--config", cfgFile)
	if code != 0 || !strings.Contains(out, "no pending approval requests") {
		t.Errorf("list after approval: exit %d\n%s", code, out)
	}
	code, out, _ = approvalsCLI(t, "bob", (*app).approvalsCmd, "list", "--all", "--format", "json", "--config", cfgFile)
	var doc struct {
		Requests []gates.Request `json:"requests"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
		t.Fatalf("list --all --format json: exit %d, %v\n%s", code, err, out)
	}
	if len(doc.Requests) != 1 || doc.Requests[0].State != gates.StateApproved || len(doc.Requests[0].Decisions) != 2 ||
		doc.Requests[0].Requester != "alice" || doc.Requests[0].Decisions[0].Channel != gates.ChannelCLI {
		t.Errorf("json requests = %+v", doc.Requests)
	}

	code, _, stderr = approvalsCLI(t, "carol", (*app).denyCmd, id, "--reason", "too late", "--config", cfgFile)
	if code != exitError || !strings.Contains(stderr, "already decided") {
		t.Errorf("deny after approval: exit %d, %s", code, stderr)
	}
}

func TestApprovalsCLI_missingDatabase(t *testing.T) {
	code, _, stderr := approvalsCLI(t, "bob", (*app).approvalsCmd, "list", "--db", filepath.Join(t.TempDir(), "nope.db"))
	if code != exitError || !strings.Contains(stderr, "nope.db") {
		t.Errorf("exit %d, %s; want 2 naming the file", code, stderr)
	}
}
