package cloudsim_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// enforceCLIWorld turns IAM enforcement on from the world file, as `warden sim` reads it,
// with a user allowed EC2 reads and the listing of one bucket.
const enforceCLIWorld = `
aws:
  enforce_iam: true
  accounts:
    - id: "111111111111"
      users:
        - name: dev
          access_keys: [{id: AKIADEV0000000000001, secret: dev-secret}]
          inline_policies:
            - name: work
              document:
                Statement:
                  - {Effect: Allow, Action: "ec2:Describe*", Resource: "*"}
                  - {Effect: Allow, Action: "s3:ListBucket", Resource: "arn:aws:s3:::data"}
  s3:
    buckets:
      - {name: data, account: "111111111111"}
      - {name: other, account: "111111111111"}
`

// TestAWSCLIEnforceIAM drives an enforcing simulator with the official AWS CLI signing
// with a world user's key: granted calls succeed, a refused one exits with the CLI's
// service-error status (254) and AWS's AccessDenied message.
func TestAWSCLIEnforceIAM(t *testing.T) {
	cli := simtest.AWSCLI(t)
	w, err := cloudsim.ParseWorld([]byte(enforceCLIWorld))
	if err != nil {
		t.Fatal(err)
	}
	_, url := simtest.Start(t, w, cloudsim.Options{})
	dir := t.TempDir()
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIADEV0000000000001", "AWS_SECRET_ACCESS_KEY=dev-secret", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE="+filepath.Join(dir, "none"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"), "HOME="+dir)
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--endpoint-url", url, "--output", "json"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return string(out), exit.ExitCode()
		case err != nil:
			t.Fatalf("aws %s: %v", strings.Join(args, " "), err)
		}
		return string(out), 0
	}
	for _, args := range [][]string{
		{"ec2", "describe-security-groups"},
		{"s3api", "list-objects-v2", "--bucket", "data"},
	} {
		if out, code := run(args...); code != 0 {
			t.Errorf("aws %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"iam", "list-users"}, "An error occurred (AccessDenied) when calling the ListUsers operation: User: arn:aws:iam::111111111111:user/dev is not authorized to perform: iam:ListUsers on resource: arn:aws:iam::111111111111:user/ because no identity-based policy allows the iam:ListUsers action"},
		{[]string{"s3api", "list-objects-v2", "--bucket", "other"}, `An error occurred (AccessDenied) when calling the ListObjectsV2 operation: User: arn:aws:iam::111111111111:user/dev is not authorized to perform: s3:ListBucket on resource: "arn:aws:s3:::other" because no identity-based policy allows the s3:ListBucket action`},
	} {
		out, code := run(tc.args...)
		if code != 254 || strings.TrimSpace(out) != tc.want {
			t.Errorf("aws %s: exit %d, output\n%s\nwant exit 254 and\n%s", strings.Join(tc.args, " "), code, out, tc.want)
		}
	}
}
