package cloudsim_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// TestAWSCLI_securityHub drives the simulator's Security Hub with the official AWS CLI
// (botocore's REST-JSON client, not the Go SDK's): a finding imported, updated by the
// customer and read back, as the CLI writes and reads them.
func TestAWSCLI_securityHub(t *testing.T) {
	cli := simtest.AWSCLI(t)
	sim, url := simtest.Start(t, &cloudsim.World{}, cloudsim.Options{})
	dir := t.TempDir()
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIDCLI", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE="+filepath.Join(dir, "none"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"), "HOME="+dir)
	aws := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--endpoint-url", url, "--output", "json", "securityhub"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws securityhub %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("aws securityhub %s: not JSON: %v\n%s", strings.Join(args, " "), err, out)
		}
		return v
	}
	// An empty world answers as the root of account 123456789012.
	const product = "arn:aws:securityhub:us-east-1:123456789012:product/123456789012/default"
	finding := `[{"SchemaVersion": "2018-10-08", "Id": "warden-1", "ProductArn": "` + product + `",
		"GeneratorId": "warden/WARDEN-AWS-NET-001", "AwsAccountId": "123456789012", "Types": ["Software and Configuration Checks"],
		"CreatedAt": "2026-12-01T10:00:00Z", "UpdatedAt": "2026-12-01T10:00:00Z", "Severity": {"Label": "HIGH"},
		"Title": "SSH open", "Description": "Port 22 reachable from 0.0.0.0/0.",
		"Resources": [{"Type": "AwsEc2SecurityGroup", "Id": "arn:aws:ec2:us-east-1:123456789012:security-group/sg-1"}]}]`
	if out := aws("batch-import-findings", "--findings", finding); out["SuccessCount"] != 1.0 || out["FailedCount"] != 0.0 {
		t.Fatalf("batch-import-findings: %v", out)
	}
	aws("batch-update-findings", "--finding-identifiers", `[{"Id": "warden-1", "ProductArn": "`+product+`"}]`,
		"--workflow", "Status=SUPPRESSED", "--note", "Text=waived until 2027-01-01,UpdatedBy=warden")
	out := aws("get-findings", "--filters", `{"Id": [{"Value": "warden-1", "Comparison": "EQUALS"}]}`)
	fs, _ := out["Findings"].([]any)
	if len(fs) != 1 {
		t.Fatalf("get-findings: %v", out)
	}
	f := fs[0].(map[string]any)
	if wf, _ := f["Workflow"].(map[string]any); wf["Status"] != "SUPPRESSED" || f["RecordState"] != "ACTIVE" || f["Region"] != "us-east-1" {
		t.Fatalf("finding read back: %v", f)
	}
	if n := sim.CallsTo("securityhub"); n != 3 {
		t.Fatalf("CallsTo(securityhub) = %d, want 3", n)
	}
}
