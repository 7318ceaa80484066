package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// warden permissions prints one document as is (JSON a tool can read), several under
// file headers, writes them to a directory with --out, narrows the remediator policy to
// --actions, and refuses unknown values and impossible combinations with exit 2.
func TestPermissions(t *testing.T) {
	t.Run("one AWS policy is plain JSON", func(t *testing.T) {
		code, out, errOut := warden(t, "", "permissions", "--cloud", "aws", "--role", "scanner", "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var p struct {
			Statement []struct {
				Action   []string
				Resource string
			}
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		var actions []string
		for _, s := range p.Statement {
			actions = append(actions, s.Action...)
		}
		for _, want := range []string{"iam:GetAccountAuthorizationDetails", "ec2:DescribeSecurityGroups", "sts:AssumeRole"} {
			if !slices.Contains(actions, want) {
				t.Errorf("scanner policy lacks %s", want)
			}
		}
	})
	t.Run("actions narrow the remediator policy", func(t *testing.T) {
		code, out, errOut := warden(t, "", "permissions", "--cloud", "aws", "--role", "remediator",
			"--actions", "aws.iam.deactivate_access_key")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, `"iam:UpdateAccessKey"`) || strings.Contains(out, "ec2:") || strings.Contains(out, "# file:") {
			t.Errorf("remediator policy of deactivate_access_key alone:\n%s", out)
		}
	})
	t.Run("several documents under headers", func(t *testing.T) {
		code, out, _ := warden(t, "", "permissions", "--cloud", "gcp")
		if code != 0 || strings.Count(out, "# file: ") != 3 || !strings.Contains(out, "includedPermissions:") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	t.Run("out writes every document", func(t *testing.T) {
		dir := t.TempDir()
		code, out, errOut := warden(t, "", "permissions", "--out", dir, "--org-role", "AuditRole")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 7 || strings.Count(out, "wrote ") != 7 {
			t.Errorf("wrote %d files, said:\n%s", len(entries), out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "aws-member-role-stackset.yaml"))
		if err != nil || !strings.Contains(string(b), "Default: AuditRole") {
			t.Errorf("stack set template (%v):\n%s", err, b)
		}
	})
	t.Run("terraform writes the modules", func(t *testing.T) {
		dir := t.TempDir()
		code, out, errOut := warden(t, "", "permissions", "--format", "terraform", "--cloud", "aws", "--out", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		policy, err := os.ReadFile(filepath.Join(dir, "aws-account", "aws-scanner-policy.json"))
		if err != nil {
			t.Fatal(err)
		}
		_, printed, _ := warden(t, "", "permissions", "--cloud", "aws", "--role", "scanner", "--format", "json")
		if string(policy) != printed {
			t.Errorf("the module's scanner policy is not what warden permissions prints:\n%s", policy)
		}
		main, err := os.ReadFile(filepath.Join(dir, "aws-organization", "main.tf"))
		if err != nil || !strings.Contains(string(main), `file("${path.module}/aws-member-role-stackset.yaml")`) {
			t.Errorf("aws-organization/main.tf (%v):\n%s", err, main)
		}
		if _, err := os.Stat(filepath.Join(dir, "gcp")); err == nil || strings.Contains(out, "gcp/") {
			t.Errorf("--cloud aws wrote the GCP module:\n%s", out)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		err  string
	}{
		{"unknown role", []string{"--role", "admin"}, `--role: unknown value "admin"`},
		{"GCP has no CloudFormation", []string{"--cloud", "gcp", "--format", "cloudformation"}, "no document is cloudformation"},
		{"unknown action", []string{"--actions", "aws.iam.nope"}, `unknown remediator "aws.iam.nope"`},
		{"Terraform holds every role", []string{"--format", "terraform", "--role", "remediator"}, "--format terraform: the modules hold every role"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := warden(t, "", append([]string{"permissions"}, c.args...)...)
			if code != 2 || !strings.Contains(errOut, c.err) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, c.err)
			}
		})
	}
}
