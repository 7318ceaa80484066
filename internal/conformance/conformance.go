// Package conformance runs one suite of warden's end-to-end cases over two AWS backends:
// warden's own simulator (internal/cloudsim) and moto (moto_server), an AWS emulator
// nobody here wrote, so that a wrong belief about AWS cannot hide in both warden and its
// simulator. Both backends are seeded with the same small world through the official AWS
// SDK (Seed): moto has no world file. Where moto differs from AWS, the suite says so and
// does the closest thing (docs/conformance.md lists every difference).
package conformance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// Account is the account both backends serve: moto's fixed default account, which the
// simulator's world takes too.
const Account = "123456789012"

// Cloud is one case's fresh, empty account on a backend.
type Cloud struct {
	// URL is the endpoint of every service.
	URL string
	// Sim is the simulator; nil on moto.
	Sim *cloudsim.Sim
}

// Moto reports whether the cloud is moto's.
func (c *Cloud) Moto() bool { return c.Sim == nil }

// SDK is an AWS SDK configuration calling the cloud as its administrator (moto, without
// its IAM enforcement, accepts any credentials; the simulator takes unknown ones for the
// account's root).
func (c *Cloud) SDK() aws.Config {
	cfg := simtest.AWSConfig(c.URL)
	cfg.RetryMaxAttempts = 1
	return cfg
}

// Backend starts fresh clouds of one kind. Start is called once per test; Fresh once per
// case, each giving an empty account.
type Backend struct {
	Name  string
	Start func(t testing.TB) (fresh func(t testing.TB) *Cloud)
}

// Backends are the simulator and moto. moto_server is found on the PATH; without it,
// moto's cases are skipped, or under CI (CI set) fail.
func Backends() []Backend {
	return []Backend{
		{Name: "cloudsim", Start: func(testing.TB) func(testing.TB) *Cloud {
			return func(t testing.TB) *Cloud {
				sim, url := simtest.Start(t, &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{
					{ID: Account, Regions: []string{"us-east-1"}}}}}, cloudsim.Options{})
				return &Cloud{URL: url, Sim: sim}
			}
		}},
		{Name: "moto", Start: func(t testing.TB) func(testing.TB) *Cloud {
			url := StartMoto(t)
			return func(t testing.TB) *Cloud {
				t.Helper()
				MotoReset(t, url)
				return &Cloud{URL: url}
			}
		}},
	}
}

// StartMoto starts moto_server on a free loopback port, waits until it answers, and
// stops it when the test ends. It returns its base URL.
func StartMoto(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("moto_server is not installed (pip install 'moto[server]'); under CI the conformance suite needs it")
		}
		t.Skip("moto_server is not installed (pip install 'moto[server]')")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	// Its own process group: the pyenv shim runs python as a child, and both must go.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start moto_server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := motoPost(url+"/moto-api/reset", ""); err == nil {
			return url
		}
		select {
		case <-exited:
			t.Fatalf("moto_server exited before answering:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("moto_server did not answer on %s within 30s:\n%s", url, out.String())
		}
	}
}

// MotoReset empties moto (POST /moto-api/reset) and turns its IAM enforcement off.
func MotoReset(t testing.TB, url string) {
	t.Helper()
	// A huge count of unauthenticated actions is moto's "enforcement off".
	if err := motoPost(url+"/moto-api/reset-auth", "1e12"); err != nil {
		t.Fatal(err)
	}
	if err := motoPost(url+"/moto-api/reset", ""); err != nil {
		t.Fatal(err)
	}
}

// MotoEnforce turns moto's IAM enforcement on after n more unauthenticated actions
// (POST /moto-api/reset-auth): from then on every call is authenticated and authorised
// against the caller's IAM policies.
func MotoEnforce(t testing.TB, url string, n int) {
	t.Helper()
	if err := motoPost(url+"/moto-api/reset-auth", strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
}

func motoPost(url, body string) error {
	resp, err := http.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// World is what Seed made.
type World struct {
	// Group is the security group open to SSH from anywhere; GroupARN its ARN.
	Group, GroupARN string
	// PolicyARN is the managed policy granting everything, attached to the user "admin".
	PolicyARN string
}

// Users Seed creates: alice holds an access key; admin holds the admin policy, managed
// and inline.
const (
	UserAlice = "alice"
	UserAdmin = "admin"
)

// AdminDocument allows every action on every resource.
const AdminDocument = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`

// Seed makes the world every case starts from, through the SDK: two users with access
// keys, a managed and an inline policy with admin rights, a security group open to SSH
// from 0.0.0.0/0 (with a second, private rule), and a weak password policy.
func Seed(t testing.TB, c *Cloud) World {
	t.Helper()
	ctx := context.Background()
	cfg := c.SDK()
	im, ec := iam.NewFromConfig(cfg), ec2.NewFromConfig(cfg)
	var w World
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed: %s: %v", what, err)
		}
	}
	for _, u := range []string{UserAlice, UserAdmin} {
		_, err := im.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String(u)})
		must("create user "+u, err)
		_, err = im.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String(u)})
		must("create access key of "+u, err)
	}
	pol, err := im.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("everything"), PolicyDocument: aws.String(AdminDocument)})
	must("create policy", err)
	w.PolicyARN = aws.ToString(pol.Policy.Arn)
	_, err = im.AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: aws.String(UserAdmin), PolicyArn: pol.Policy.Arn})
	must("attach policy", err)
	_, err = im.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: aws.String(UserAdmin), PolicyName: aws.String("inline-everything"),
		PolicyDocument: aws.String(AdminDocument)})
	must("put user policy", err)
	sg, err := ec.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("web"), Description: aws.String("web servers")})
	must("create security group", err)
	w.Group = aws.ToString(sg.GroupId)
	w.GroupARN = "arn:aws:ec2:us-east-1:" + Account + ":security-group/" + w.Group
	_, err = ec.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: []ec2types.IpPermission{
		{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(22), ToPort: aws.Int32(22),
			IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0"), Description: aws.String("anywhere")}}},
		{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(443), ToPort: aws.Int32(443),
			IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8"), Description: aws.String("office")}}},
	}})
	must("authorize ingress", err)
	_, err = im.UpdateAccountPasswordPolicy(ctx, &iam.UpdateAccountPasswordPolicyInput{MinimumPasswordLength: aws.Int32(8),
		RequireNumbers: true, RequireSymbols: true, RequireUppercaseCharacters: true, RequireLowercaseCharacters: true,
		MaxPasswordAge: aws.Int32(90)})
	must("password policy", err)
	return w
}

// SSHOpen reports whether group lets 0.0.0.0/0 in on port 22, read through the SDK, and
// that rule's description.
func SSHOpen(t testing.TB, c *Cloud, group string) (bool, string) {
	t.Helper()
	out, err := ec2.NewFromConfig(c.SDK()).DescribeSecurityGroups(context.Background(), &ec2.DescribeSecurityGroupsInput{GroupIds: []string{group}})
	if err != nil {
		t.Fatalf("describe security group %s: %v", group, err)
	}
	if len(out.SecurityGroups) != 1 {
		t.Fatalf("describe security group %s: %d groups", group, len(out.SecurityGroups))
	}
	for _, p := range out.SecurityGroups[0].IpPermissions {
		if aws.ToInt32(p.FromPort) != 22 {
			continue
		}
		for _, r := range p.IpRanges {
			if aws.ToString(r.CidrIp) == "0.0.0.0/0" {
				return true, aws.ToString(r.Description)
			}
		}
	}
	return false, ""
}

// MinPasswordLength is the account's minimum password length, read through the SDK (0:
// no password policy).
func MinPasswordLength(t testing.TB, c *Cloud) int {
	t.Helper()
	out, err := iam.NewFromConfig(c.SDK()).GetAccountPasswordPolicy(context.Background(), &iam.GetAccountPasswordPolicyInput{})
	var nse interface{ ErrorCode() string }
	if errors.As(err, &nse) && nse.ErrorCode() == "NoSuchEntity" {
		return 0
	}
	if err != nil {
		t.Fatalf("get password policy: %v", err)
	}
	return int(aws.ToInt32(out.PasswordPolicy.MinimumPasswordLength))
}
