package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/remediate"
)

// sshKeyFile writes a passphrase-less OpenSSH private key to dir/name and returns its
// path and its public key as an authorized_keys line.
func sshKeyFile(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// TestApproveCLI_signedDecisions: with gates.signers listed, WARDEN_ACTOR=carol without
// carol's key (no key, no agent, bob's key) is refused and nothing is written to the
// cloud; with carol's key file the decision is recorded and the next apply fixes it.
// With gates.unchecked_names, apply and approve say that decisions are unchecked names.
func TestApproveCLI_signedDecisions(t *testing.T) {
	e := startSimEnv(t, cliWorld())
	planFile, p := e.plan(t)
	code, res, stderr := e.applyJSON(t, planFile, "--confirm")
	if code != 0 || !strings.Contains(stderr, "decisions are unchecked names") {
		t.Fatalf("an unchecked apply: exit %d, does not say so:\n%s", code, stderr)
	}
	if _, _, stderr := e.warden(t, "approve", "apr-000000000000"); !strings.Contains(stderr, "decisions are unchecked names") {
		t.Errorf("an unchecked approve does not say so:\n%s", stderr)
	}
	bobKey, bobPub := sshKeyFile(t, e.dir, "bob")
	carolKey, carolPub := sshKeyFile(t, e.dir, "carol")
	cfg, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	signed := strings.Replace(strings.Replace(string(cfg), "  unchecked_names: true\n", "", 1), "gates:\n", "gates:\n  signers:\n    bob: [\""+bobPub+"\"]\n    carol: [\""+carolPub+" carol@laptop\"]\n", 1)
	if err := os.WriteFile(e.cfg, []byte(signed), 0o600); err != nil {
		t.Fatal(err)
	}
	code, res, stderr = e.applyJSON(t, planFile, "--confirm")
	if code != 0 || strings.Contains(stderr, "unchecked") {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	var req, group string
	for _, a := range p.Actions {
		if a.Risk == findings.RiskMedium && a.Remediator == "aws.ec2.revoke_ingress" {
			req, group = itemsByAction(res)[a.ID].Request, a.ID
		}
	}
	if req == "" {
		t.Fatalf("no revoke waits for approval: %+v", res.Items)
	}
	t.Setenv(audit.ActorEnv, "carol")
	t.Setenv("SSH_AUTH_SOCK", "")
	for _, args := range [][]string{{}, {"--sign-key", bobKey}, {"--sign-key", filepath.Join(e.dir, "none")}} {
		code, out, stderr := e.warden(t, append([]string{"approve", req}, args...)...)
		if code != exitError || !strings.Contains(stderr, "not signed") {
			t.Errorf("carol's name without her key %v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	t.Setenv(audit.ActorEnv, "alice")
	e.sim.ResetCalls()
	if _, res, _ := e.applyJSON(t, planFile, "--confirm"); e.sim.Writes()["ec2:RevokeSecurityGroupIngress"] != 0 || !e.sshOpen(t, "sg-0000000000000ssh1") {
		t.Fatalf("a refused decision let the fix run: %v %+v", e.sim.Writes(), res.Items)
	}
	t.Setenv(audit.ActorEnv, "carol")
	if code, out, stderr := e.warden(t, "approve", req, "--sign-key", carolKey); code != 0 || strings.Contains(stderr, "unchecked") {
		t.Fatalf("carol with her key: exit %d\n%s%s", code, out, stderr)
	}
	t.Setenv(audit.ActorEnv, "alice")
	e.sim.ResetCalls()
	code, res, stderr = e.applyJSON(t, planFile, "--confirm")
	if it := itemsByAction(res)[group]; code != 0 || it.State != remediate.StateVerified {
		t.Fatalf("apply after carol's signed approval: exit %d, %+v\n%s", code, it, stderr)
	}
	if e.sim.Writes()["ec2:RevokeSecurityGroupIngress"] == 0 || e.sshOpen(t, "sg-0000000000000ssh1") {
		t.Fatalf("the signed approval did not fix the cloud: %v", e.sim.Writes())
	}
}
