package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"google.golang.org/protobuf/proto"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/reconcile/events"
)

// serve starts the simulator over w for the length of the test.
func serve(t *testing.T, w *cloudsim.World) string {
	t.Helper()
	sim, err := cloudsim.New(w, cloudsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL
}

// readBack reads every resource a change names with a collector's Read, as the daemon
// does, and checks the answer is that resource, in the change's account and scope: the
// uid itself when the event named it exactly, the resource of that type and name when
// it named it by name. gone are the uids the change's call deleted: Read must say so.
func readBack(t *testing.T, ctx context.Context, r collectors.Reader, c events.Change, gone ...string) {
	t.Helper()
	if c.WholeScope || len(c.Resources) == 0 {
		t.Fatalf("%s: %+v names nothing to read alone", c.Event, c)
	}
	for _, ref := range c.Resources {
		got, err := r.Read(ctx, ref.UID)
		if slicesContains(gone, ref.UID) {
			if !errors.Is(err, collectors.ErrNotFound) {
				t.Errorf("%s: Read(%s) = %v, want ErrNotFound", c.Event, ref.UID, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Read(%s): %v", c.Event, ref.UID, err)
			continue
		}
		if got.Type != ref.Type || got.Account != c.Account || got.Scope != c.Scope {
			t.Errorf("%s: Read(%s) is a %s in %s, scope %s; the change says a %s in %s, scope %s",
				c.Event, ref.UID, got.Type, got.Account, got.Scope, ref.Type, c.Account, c.Scope)
		}
		switch {
		case !ref.ByName && got.UID != ref.UID:
			t.Errorf("%s: Read(%s) answers %s", c.Event, ref.UID, got.UID)
		case ref.ByName && (got.Name != ref.Name || !strings.HasSuffix(got.UID, "/"+ref.Name)):
			t.Errorf("%s: Read(%s) answers %s named %s, want %s", c.Event, ref.UID, got.UID, got.Name, ref.Name)
		}
		if ref.Name != "" && got.Name != ref.Name {
			t.Errorf("%s: Read(%s) is named %q, the change says %q", c.Event, ref.UID, got.Name, ref.Name)
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// trail is the EventBridge event CloudTrail would deliver for a call the test made, its
// request and response as CloudTrail records them.
func trail(t *testing.T, service, name, region string, req, resp map[string]any) []byte {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	id := fmt.Sprintf("%s-%s-%d", service, name, time.Now().UnixNano())
	b, err := json.Marshal(map[string]any{
		"version": "0", "id": "eb-" + id, "detail-type": "AWS API Call via CloudTrail", "source": "aws." + service,
		"account": acct, "time": now, "region": region, "resources": []any{},
		"detail": map[string]any{
			"eventVersion": "1.09",
			"userIdentity": map[string]any{"type": "AssumedRole", "principalId": "AROA5YQPKMTVEXAMPLE01:alice",
				"arn": "arn:aws:sts::" + acct + ":assumed-role/admin/alice", "accountId": acct},
			"eventTime": now, "eventSource": service + ".amazonaws.com", "eventName": name, "awsRegion": region,
			"sourceIPAddress": "203.0.113.17", "userAgent": "aws-sdk-go-v2",
			"requestParameters": req, "responseElements": resp,
			"requestID": "req-" + id, "eventID": id, "readOnly": false, "eventType": "AwsApiCall",
			"managementEvent": true, "recipientAccountId": acct, "eventCategory": "Management",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParse_awsNamesWhatReadAnswers makes real write calls with the AWS SDK against the
// simulator, maps the CloudTrail events they would raise, and reads each resource named
// with the AWS collector's Read: every uid an event names is one Read answers, in the
// scope the change says.
func TestParse_awsNamesWhatReadAnswers(t *testing.T) {
	const region = "eu-west-1"
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	url := serve(t, &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{
		ID: acct, Regions: []string{region},
		Users: []*cloudsim.User{{Name: "bob", Path: "/staff/"}},
		Roles: []*cloudsim.Role{{Name: "partner-access", Path: "/partners/", AssumeRolePolicy: cloudsim.Doc(trust)}},
		SecurityGroups: []*cloudsim.SecurityGroup{{ID: sgID, Name: "web", Region: region, VPC: "vpc-0123456789abcdef0",
			Description: "web servers"}},
	}}}})
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	iamc := iam.NewFromConfig(cfg)
	ec2c := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Region = region })
	reader := awscollector.New(awscollector.Config{Endpoint: url, AWS: &cfg, Regions: []string{region},
		RateLimits:  map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mapped := func(body []byte) events.Change {
		t.Helper()
		return parseOne(t, body)
	}

	u, err := iamc.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("deploy-bot"), Path: aws.String("/automation/")})
	must(err)
	c := mapped(trail(t, "iam", "CreateUser", "us-east-1", map[string]any{"userName": "deploy-bot", "path": "/automation/"},
		map[string]any{"user": map[string]any{"userName": "deploy-bot", "path": "/automation/", "arn": aws.ToString(u.User.Arn),
			"userId": aws.ToString(u.User.UserId)}}))
	readBack(t, ctx, reader, c)

	k, err := iamc.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("deploy-bot")})
	must(err)
	keyID := aws.ToString(k.AccessKey.AccessKeyId)
	c = mapped(trail(t, "iam", "CreateAccessKey", "us-east-1", map[string]any{"userName": "deploy-bot"},
		map[string]any{"accessKey": map[string]any{"userName": "deploy-bot", "accessKeyId": keyID, "status": "Active"}}))
	readBack(t, ctx, reader, c)

	_, err = iamc.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("deploy-bot"), AccessKeyId: aws.String(keyID),
		Status: iamtypes.StatusTypeInactive})
	must(err)
	readBack(t, ctx, reader, mapped(trail(t, "iam", "UpdateAccessKey", "us-east-1",
		map[string]any{"userName": "deploy-bot", "accessKeyId": keyID, "status": "Inactive"}, nil)))

	_, err = iamc.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String("deploy-bot"), AccessKeyId: aws.String(keyID)})
	must(err)
	c = mapped(trail(t, "iam", "DeleteAccessKey", "us-east-1", map[string]any{"userName": "deploy-bot", "accessKeyId": keyID}, nil))
	readBack(t, ctx, reader, c, c.UIDs[0])

	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`
	p, err := iamc.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("s3-read"), Path: aws.String("/boundaries/"),
		PolicyDocument: aws.String(doc)})
	must(err)
	policyARN := aws.ToString(p.Policy.Arn)
	// CloudTrail may leave the response out: the ARN is then built from name and path.
	readBack(t, ctx, reader, mapped(trail(t, "iam", "CreatePolicy", "us-east-1",
		map[string]any{"policyName": "s3-read", "path": "/boundaries/", "policyDocument": doc}, nil)))

	_, err = iamc.AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: aws.String("bob"), PolicyArn: aws.String(policyARN)})
	must(err)
	c = mapped(trail(t, "iam", "AttachUserPolicy", "us-east-1", map[string]any{"userName": "bob", "policyArn": policyARN}, nil))
	if !c.Resources[0].ByName {
		t.Errorf("bob, named without his path, is not ByName: %+v", c.Resources[0])
	}
	readBack(t, ctx, reader, c)

	_, err = iamc.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: aws.String("bob"), PolicyName: aws.String("inline"), PolicyDocument: aws.String(doc)})
	must(err)
	readBack(t, ctx, reader, mapped(trail(t, "iam", "PutUserPolicy", "us-east-1",
		map[string]any{"userName": "bob", "policyName": "inline", "policyDocument": doc}, nil)))

	_, err = iamc.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String("partner-access"), PolicyDocument: aws.String(trust)})
	must(err)
	readBack(t, ctx, reader, mapped(trail(t, "iam", "UpdateAssumeRolePolicy", "us-east-1",
		map[string]any{"roleName": "partner-access", "policyDocument": trust}, nil)))

	_, err = iamc.UpdateAccountPasswordPolicy(ctx, &iam.UpdateAccountPasswordPolicyInput{MinimumPasswordLength: aws.Int32(14)})
	must(err)
	readBack(t, ctx, reader, mapped(trail(t, "iam", "UpdateAccountPasswordPolicy", "us-east-1", map[string]any{"minimumPasswordLength": 14}, nil)))

	_, err = ec2c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(sgID),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(22), ToPort: aws.Int32(22),
			IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}})
	must(err)
	readBack(t, ctx, reader, mapped(trail(t, "ec2", "AuthorizeSecurityGroupIngress", region, map[string]any{"groupId": sgID,
		"ipPermissions": map[string]any{"items": []any{map[string]any{"ipProtocol": "tcp", "fromPort": 22, "toPort": 22,
			"ipRanges": map[string]any{"items": []any{map[string]any{"cidrIp": "0.0.0.0/0"}}}}}}},
		map[string]any{"_return": true})))

	g, err := ec2c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("web-public"),
		Description: aws.String("public web"), VpcId: aws.String("vpc-0123456789abcdef0")})
	must(err)
	readBack(t, ctx, reader, mapped(trail(t, "ec2", "CreateSecurityGroup", region,
		map[string]any{"groupName": "web-public", "groupDescription": "public web", "vpcId": "vpc-0123456789abcdef0"},
		map[string]any{"_return": true, "groupId": aws.ToString(g.GroupId)})))
}

// TestParse_gcpNamesWhatReadAnswers makes real write calls with Google's clients against
// the simulator, maps the audit log entries they would raise (pushed through Pub/Sub),
// and reads each resource named with the GCP collector's Read.
func TestParse_gcpNamesWhatReadAnswers(t *testing.T) {
	const uniqueID = "100000000000000000001"
	url := serve(t, &cloudsim.World{GCP: cloudsim.GCP{
		Organizations: []*cloudsim.GCPOrganization{{ID: "123456789012", Domain: "acme.example"}},
		Projects: []*cloudsim.Project{{ID: project, Number: "222222222222", Parent: "organizations/123456789012",
			IAMPolicy:       cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{{Role: "roles/owner", Members: []string{"user:alice@acme.example"}}}},
			ServiceAccounts: []*cloudsim.ServiceAccount{{Email: saEmail, UniqueID: uniqueID}},
			Networks:        []*cloudsim.Network{{Name: "default"}},
		}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	api, err := gcpapi.New(ctx, gcpapi.Options{Endpoint: url, RateLimit: 1000, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	reader := gcpcollector.New(gcpcollector.Config{Projects: []string{project}, Clients: api})
	t.Cleanup(func() { _ = reader.Close() })

	saRes := map[string]any{"type": "service_account", "labels": map[string]any{"email_id": saEmail, "project_id": project, "unique_id": uniqueID}}
	logged := func(service, method, resourceName string, resource, req, resp map[string]any) events.Change {
		t.Helper()
		now := time.Now().UTC().Format(time.RFC3339Nano)
		entry, err := json.Marshal(map[string]any{
			"protoPayload": map[string]any{"@type": "type.googleapis.com/google.cloud.audit.AuditLog", "status": map[string]any{},
				"authenticationInfo": map[string]any{"principalEmail": "alice@acme.example"},
				"serviceName":        service, "methodName": method, "resourceName": resourceName, "request": req, "response": resp},
			"insertId": fmt.Sprintf("%x", time.Now().UnixNano()), "resource": resource, "timestamp": now, "severity": "NOTICE",
			"logName": "projects/" + project + "/logs/cloudaudit.googleapis.com%2Factivity", "receiveTimestamp": now,
		})
		if err != nil {
			t.Fatal(err)
		}
		return parseOne(t, pushed(t, entry))
	}

	k, err := api.IAM.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: "projects/" + project + "/serviceAccounts/" + saEmail})
	if err != nil {
		t.Fatal(err)
	}
	readBack(t, ctx, reader, logged("iam.googleapis.com", "google.iam.admin.v1.CreateServiceAccountKey", "projects/-/serviceAccounts/"+uniqueID, saRes,
		map[string]any{"name": "projects/" + project + "/serviceAccounts/" + uniqueID, "private_key_type": 2},
		map[string]any{"name": k.GetName(), "key_type": 1}))

	if err := api.IAM.DisableServiceAccount(ctx, &adminpb.DisableServiceAccountRequest{Name: "projects/" + project + "/serviceAccounts/" + saEmail}); err != nil {
		t.Fatal(err)
	}
	readBack(t, ctx, reader, logged("iam.googleapis.com", "google.iam.admin.v1.DisableServiceAccount", "projects/-/serviceAccounts/"+uniqueID, saRes,
		map[string]any{"name": "projects/" + project + "/serviceAccounts/" + saEmail}, nil))

	if err := api.IAM.DeleteServiceAccountKey(ctx, &adminpb.DeleteServiceAccountKeyRequest{Name: k.GetName()}); err != nil {
		t.Fatal(err)
	}
	c := logged("iam.googleapis.com", "google.iam.admin.v1.DeleteServiceAccountKey", "projects/-/serviceAccounts/"+uniqueID+"/keys/"+k.GetName()[strings.LastIndexByte(k.GetName(), '/')+1:],
		saRes, map[string]any{"name": k.GetName()}, nil)
	readBack(t, ctx, reader, c, c.UIDs[0])

	op, err := api.Firewalls.Insert(ctx, &computepb.InsertFirewallRequest{Project: project, FirewallResource: &computepb.Firewall{
		Name: proto.String("allow-ssh"), Network: proto.String("global/networks/default"), Direction: proto.String("INGRESS"),
		SourceRanges: []string{"0.0.0.0/0"}, Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp"), Ports: []string{"22"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	readBack(t, ctx, reader, logged("compute.googleapis.com", "v1.compute.firewalls.insert", "projects/"+project+"/global/firewalls/allow-ssh",
		map[string]any{"type": "gce_firewall_rule", "labels": map[string]any{"project_id": project, "firewall_rule_id": "1"}},
		map[string]any{"@type": "type.googleapis.com/compute.firewalls.insert", "name": "allow-ssh"}, nil))

	pol, err := api.Projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + project})
	if err != nil {
		t.Fatal(err)
	}
	pol.Bindings = append(pol.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"user:bob@acme.example"}})
	if _, err := api.Projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/" + project, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	readBack(t, ctx, reader, logged("cloudresourcemanager.googleapis.com", "google.cloud.resourcemanager.v3.Projects.SetIamPolicy", "projects/"+project,
		map[string]any{"type": "project", "labels": map[string]any{"project_id": project}},
		map[string]any{"@type": "type.googleapis.com/google.iam.v1.SetIamPolicyRequest", "resource": "projects/" + project}, nil))
}
