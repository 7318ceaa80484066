package cloudsim_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// TestAWSCLI drives the simulator with the official AWS CLI: it must create and list
// what warden reads and fixes, with pagination, error codes and XML as AWS has them.
func TestAWSCLI(t *testing.T) {
	cli := simtest.AWSCLI(t)
	sim, url := simtest.Start(t, &cloudsim.World{
		AWS: cloudsim.AWS{
			Organization: &cloudsim.Organization{ID: "o-abcdefghij", Management: "111111111111"},
			Accounts: []*cloudsim.Account{
				{ID: "111111111111", Name: "main", Regions: []string{"us-east-1", "eu-west-1"}},
				{ID: "222222222222", Name: "member"},
			},
		},
	}, cloudsim.Options{})
	dir := t.TempDir()
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIDCLI", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE="+filepath.Join(dir, "none"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"), "HOME="+dir)
	aws := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--endpoint-url", url, "--output", "json"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		var v map[string]any
		if len(strings.TrimSpace(string(out))) > 0 {
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("aws %s: not JSON: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		return v
	}
	awsFails := func(code string, args ...string) {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--endpoint-url", url}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), code) {
			t.Errorf("aws %s: %v %s, want error %s", strings.Join(args, " "), err, out, code)
		}
	}
	count := func(v map[string]any, key string) int {
		l, _ := v[key].([]any)
		return len(l)
	}

	if id := aws("sts", "get-caller-identity"); id["Account"] != "111111111111" {
		t.Errorf("caller = %v", id)
	}
	for _, u := range []string{"alice", "bob", "carol"} {
		aws("iam", "create-user", "--user-name", u)
	}
	key := aws("iam", "create-access-key", "--user-name", "bob")
	if ak, _ := key["AccessKey"].(map[string]any); ak == nil || !strings.HasPrefix(ak["AccessKeyId"].(string), "AKIA") || ak["SecretAccessKey"] == "" {
		t.Errorf("create-access-key = %v", key)
	}
	aws("iam", "create-login-profile", "--user-name", "alice", "--password", "Sup3r-secret-pass!")
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	aws("iam", "create-role", "--role-name", "web", "--assume-role-policy-document", trust)
	pol := aws("iam", "create-policy", "--policy-name", "ops", "--policy-document", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}`)
	arn := pol["Policy"].(map[string]any)["Arn"].(string)
	aws("iam", "attach-role-policy", "--role-name", "web", "--policy-arn", arn)
	aws("iam", "put-user-policy", "--user-name", "carol", "--policy-name", "all", "--policy-document", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)
	// The CLI follows IAM's Marker pagination itself: a page size of 1 must still list all.
	if n := count(aws("iam", "list-users", "--page-size", "1"), "Users"); n != 3 {
		t.Errorf("list-users listed %d users, want 3", n)
	}
	if n := count(aws("iam", "list-policies", "--scope", "Local"), "Policies"); n != 1 {
		t.Errorf("list-policies --scope Local listed %d", n)
	}
	gaad := aws("iam", "get-account-authorization-details")
	if count(gaad, "UserDetailList") != 3 || count(gaad, "RoleDetailList") != 1 || count(gaad, "Policies") != 1 {
		t.Errorf("get-account-authorization-details: %d users, %d roles, %d policies", count(gaad, "UserDetailList"), count(gaad, "RoleDetailList"), count(gaad, "Policies"))
	}
	awsFails("NoSuchEntity", "iam", "get-user", "--user-name", "mallory")
	awsFails("EntityAlreadyExists", "iam", "create-user", "--user-name", "alice")
	awsFails("DeleteConflict", "iam", "delete-user", "--user-name", "bob")

	certPEM, keyPEM := selfSigned(t, "shop.example.com")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cert, keyFile := write("cert.pem", certPEM), write("key.pem", keyPEM)
	aws("iam", "upload-server-certificate", "--server-certificate-name", "shop", "--certificate-body", "file://"+cert, "--private-key", "file://"+keyFile)
	if n := count(aws("iam", "list-server-certificates"), "ServerCertificateMetadataList"); n != 1 {
		t.Errorf("list-server-certificates listed %d", n)
	}

	sg := aws("ec2", "create-security-group", "--region", "eu-west-1", "--group-name", "ssh", "--description", "ssh from anywhere")
	gid := sg["GroupId"].(string)
	aws("ec2", "authorize-security-group-ingress", "--region", "eu-west-1", "--group-id", gid, "--protocol", "tcp", "--port", "22", "--cidr", "0.0.0.0/0")
	desc := aws("ec2", "describe-security-groups", "--region", "eu-west-1", "--group-ids", gid)
	groups := desc["SecurityGroups"].([]any)
	perms := groups[0].(map[string]any)["IpPermissions"].([]any)
	if len(perms) != 1 || perms[0].(map[string]any)["FromPort"].(float64) != 22 {
		t.Errorf("describe-security-groups: %v", perms)
	}
	awsFails("InvalidPermission.Duplicate", "ec2", "authorize-security-group-ingress", "--region", "eu-west-1", "--group-id", gid, "--protocol", "tcp", "--port", "22", "--cidr", "0.0.0.0/0")
	aws("ec2", "revoke-security-group-ingress", "--region", "eu-west-1", "--group-id", gid, "--protocol", "tcp", "--port", "22", "--cidr", "0.0.0.0/0")
	if n := count(aws("ec2", "describe-regions"), "Regions"); n != 2 {
		t.Errorf("describe-regions listed %d regions, want the 2 enabled", n)
	}

	imp := aws("acm", "import-certificate", "--region", "eu-west-1", "--certificate", "fileb://"+cert, "--private-key", "fileb://"+keyFile)
	if !strings.HasPrefix(imp["CertificateArn"].(string), "arn:aws:acm:eu-west-1:111111111111:certificate/") {
		t.Errorf("import-certificate = %v", imp)
	}
	if n := count(aws("acm", "list-certificates", "--region", "eu-west-1", "--includes", "keyTypes=EC_prime256v1"), "CertificateSummaryList"); n != 1 {
		t.Errorf("list-certificates listed %d", n)
	}
	if n := count(aws("organizations", "list-accounts"), "Accounts"); n != 2 {
		t.Errorf("organizations list-accounts listed %d", n)
	}
	if sim.CallsTo("iam") == 0 || sim.CallsTo("ec2") == 0 || sim.CallsTo("acm") == 0 {
		t.Errorf("calls not counted: %v", sim.Calls())
	}
}

// TestAWSCLI_secretsAndKeys: the AWS CLI keeps a secret's versions in Secrets Manager,
// and signs with an IAM user's key, which the simulator verifies (botocore's SigV4, not
// the Go SDK's) and refuses once the key is deactivated.
func TestAWSCLI_secretsAndKeys(t *testing.T) {
	cli := simtest.AWSCLI(t)
	sim, url := simtest.Start(t, &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{
		{ID: "111111111111", Regions: []string{"us-east-1", "eu-west-1"}}}}}, cloudsim.Options{})
	dir := t.TempDir()
	base := append(os.Environ(), "AWS_DEFAULT_REGION=eu-west-1", "AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"), "HOME="+dir)
	run := func(akid, secret string, args ...string) (map[string]any, string, error) {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--endpoint-url", url, "--output", "json"}, args...)...)
		cmd.Env = append(base, "AWS_ACCESS_KEY_ID="+akid, "AWS_SECRET_ACCESS_KEY="+secret)
		out, err := cmd.CombinedOutput()
		var v map[string]any
		if err == nil && len(strings.TrimSpace(string(out))) > 0 {
			if jerr := json.Unmarshal(out, &v); jerr != nil {
				t.Fatalf("aws %s: not JSON: %v\n%s", strings.Join(args, " "), jerr, out)
			}
		}
		return v, string(out), err
	}
	aws := func(args ...string) map[string]any {
		t.Helper()
		v, out, err := run("AKIDCLI", "secret", args...)
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return v
	}
	awsFails := func(code string, akid, secret string, args ...string) {
		t.Helper()
		if _, out, err := run(akid, secret, args...); err == nil || !strings.Contains(out, code) {
			t.Errorf("aws %s: %v %s, want error %s", strings.Join(args, " "), err, out, code)
		}
	}

	// A secret through its versions.
	created := aws("secretsmanager", "create-secret", "--name", "warden/iam/111111111111/bob", "--secret-string", "v1",
		"--description", "bob's key", "--tags", "Key=owner,Value=warden")
	arn, _ := created["ARN"].(string)
	if !strings.HasPrefix(arn, "arn:aws:secretsmanager:eu-west-1:111111111111:secret:warden/iam/111111111111/bob-") || created["VersionId"] == "" {
		t.Fatalf("create-secret = %v", created)
	}
	put := aws("secretsmanager", "put-secret-value", "--secret-id", arn, "--secret-string", "v2")
	if stages, _ := put["VersionStages"].([]any); len(stages) != 1 || stages[0] != "AWSCURRENT" {
		t.Errorf("put-secret-value = %v", put)
	}
	for stage, want := range map[string]string{"AWSCURRENT": "v2", "AWSPREVIOUS": "v1"} {
		got := aws("secretsmanager", "get-secret-value", "--secret-id", "warden/iam/111111111111/bob", "--version-stage", stage)
		if got["SecretString"] != want || got["ARN"] != arn {
			t.Errorf("get-secret-value --version-stage %s = %v, want %s", stage, got, want)
		}
	}
	desc := aws("secretsmanager", "describe-secret", "--secret-id", arn)
	if vs, _ := desc["VersionIdsToStages"].(map[string]any); len(vs) != 2 || desc["Description"] != "bob's key" {
		t.Errorf("describe-secret = %v", desc)
	}
	aws("secretsmanager", "create-secret", "--name", "other", "--secret-string", "x")
	// The CLI follows NextToken itself: a page size of 1 still lists both.
	if l, _ := aws("secretsmanager", "list-secrets", "--page-size", "1")["SecretList"].([]any); len(l) != 2 {
		t.Errorf("list-secrets listed %d, want 2", len(l))
	}
	awsFails("ResourceExistsException", "AKIDCLI", "secret", "secretsmanager", "create-secret", "--name", "other", "--secret-string", "y")
	awsFails("ResourceNotFoundException", "AKIDCLI", "secret", "secretsmanager", "get-secret-value", "--secret-id", "nope")
	aws("secretsmanager", "delete-secret", "--secret-id", "other", "--recovery-window-in-days", "7")
	awsFails("InvalidRequestException", "AKIDCLI", "secret", "secretsmanager", "get-secret-value", "--secret-id", "other")
	if w := sim.Writes(); w["secretsmanager:CreateSecret"] != 3 || w["secretsmanager:PutSecretValue"] != 1 || w["secretsmanager:DeleteSecret"] != 1 {
		t.Errorf("writes %v", w)
	}

	// An IAM user's key, as the CLI signs with it.
	aws("iam", "create-user", "--user-name", "bob")
	ak := aws("iam", "create-access-key", "--user-name", "bob")["AccessKey"].(map[string]any)
	id, secret := ak["AccessKeyId"].(string), ak["SecretAccessKey"].(string)
	who, out, err := run(id, secret, "sts", "get-caller-identity")
	if err != nil || who["Arn"] != "arn:aws:iam::111111111111:user/bob" {
		t.Errorf("get-caller-identity with bob's key = %v, %v\n%s", who, err, out)
	}
	if v, out, err := run(id, secret, "secretsmanager", "get-secret-value", "--secret-id", arn); err != nil || v["SecretString"] != "v2" {
		t.Errorf("get-secret-value with bob's key = %v, %v\n%s", v, err, out)
	}
	awsFails("SignatureDoesNotMatch", id, secret+"x", "sts", "get-caller-identity")
	awsFails("InvalidSignatureException", id, secret+"x", "secretsmanager", "list-secrets")
	aws("iam", "update-access-key", "--user-name", "bob", "--access-key-id", id, "--status", "Inactive")
	awsFails("InvalidClientTokenId", id, secret, "sts", "get-caller-identity")
}

func selfSigned(t *testing.T, name string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(0, 3, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}))
}
