package events_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/warden-sec/warden/reconcile/events"
)

// del marks a field to delete in edit.
var del = &struct{}{}

// edit returns the JSON of a testdata file with the field at path (dotted, array
// indexes as numbers) set to v, or deleted when v is del.
func edit(t *testing.T, file, path string, v any) []byte {
	t.Helper()
	return editJSON(t, read(t, file), path, v)
}

// editJSON is edit of a body.
func editJSON(t *testing.T, body []byte, path string, v any) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	keys := strings.Split(path, ".")
	cur := doc
	for i, k := range keys {
		last := i == len(keys)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if v == del {
					delete(c, k)
				} else {
					c[k] = v
				}
				break
			}
			cur = c[k]
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n >= len(c) {
				t.Fatalf("%s: no element %s", path, k)
			}
			if last {
				c[n] = v
				break
			}
			cur = c[n]
		default:
			t.Fatalf("%s: %s is not in an object", path, k)
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pushed wraps a LogEntry into a Pub/Sub push request.
func pushed(t *testing.T, entry []byte) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"message": map[string]any{"data": base64.StdEncoding.EncodeToString(entry), "messageId": "1"},
		"subscription": "projects/acme-security/subscriptions/warden-events"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParse_malformed: each body warden cannot read is ErrMalformed naming the field at
// fault, and maps to no change.
func TestParse_malformed(t *testing.T) {
	const (
		key   = "testdata/aws/iam-create-access-key.json"
		rule  = "testdata/aws/ec2-authorize-ingress.json"
		pol   = "testdata/aws/iam-attach-user-policy.json"
		acm   = "testdata/aws/acm-delete-certificate.json"
		files = "testdata/aws/cloudtrail-log-file.json"
		sa    = "testdata/gcp/service-account-key-create.logentry.json"
		fw    = "testdata/gcp/firewall-patch.logentry.json"
		crm   = "testdata/gcp/project-set-iam-policy.logentry.json"
	)
	for _, tc := range []struct {
		name, field string
		body        []byte
	}{
		// The body itself.
		{"not JSON", "body", []byte(`{"detail-type": `)},
		{"JSON with trailing data", "body", []byte(`{"message": {"data": "e30="}} {}`)},
		{"a string", "body", []byte(`"AWS API Call via CloudTrail"`)},
		{"an empty array", "body", []byte(`[]`)},
		{"no shape", "body", []byte(`{"hello": "world"}`)},
		{"an array element", "[0]", []byte(`[42]`)},
		{"a log file in an array", "[0].Records", []byte(`[{"Records": []}]`)},
		// EventBridge and CloudTrail.
		{"detail-type mistyped", "detail-type", edit(t, key, "detail-type", 7)},
		{"no detail", "detail", edit(t, key, "detail", del)},
		{"detail not an object", "detail", edit(t, key, "detail", "{}")},
		{"no eventName", "detail.eventName", edit(t, key, "detail.eventName", del)},
		{"no eventSource", "detail.eventSource", edit(t, key, "detail.eventSource", "")},
		{"no eventID", "detail.eventID", edit(t, key, "detail.eventID", del)},
		{"eventTime not RFC 3339", "detail.eventTime", edit(t, key, "detail.eventTime", "Sep 14, 2026, 10:21:07 AM")},
		{"no awsRegion", "detail.awsRegion", edit(t, key, "detail.awsRegion", del)},
		{"awsRegion not a region", "detail.awsRegion", edit(t, key, "detail.awsRegion", "moon-base-1/x")},
		{"recipientAccountId not an account", "detail.recipientAccountId", edit(t, key, "detail.recipientAccountId", "1111")},
		{"userIdentity not an object", "detail.userIdentity", edit(t, key, "detail.userIdentity", []any{})},
		{"requestParameters not an object", "detail.requestParameters", edit(t, key, "detail.requestParameters", "bob")},
		{"userName mistyped", "detail.requestParameters.userName", edit(t, key, "detail.requestParameters.userName", 42)},
		{"userName a path into another uid", "detail.requestParameters.userName",
			edit(t, key, "detail.requestParameters.userName", "bob/accesskey/AKIA5YQPKMTVBOBKEY01")},
		{"accessKeyId not a key id", "detail.responseElements.accessKey.accessKeyId",
			edit(t, key, "detail.responseElements.accessKey.accessKeyId", "AKIA/../x")},
		{"accessKey not an object", "detail.responseElements.accessKey", edit(t, key, "detail.responseElements.accessKey", "AKIA")},
		{"groupId not a group id", "detail.requestParameters.groupId", edit(t, rule, "detail.requestParameters.groupId", "sg-0a1b/../x")},
		{"a rule set item without groupId", "detail.responseElements.securityGroupRuleSet.items[0].groupId",
			edit(t, "testdata/aws/ec2-authorize-ingress-by-name.json", "detail.responseElements.securityGroupRuleSet",
				map[string]any{"items": []any{map[string]any{"securityGroupRuleId": "sgr-1"}}})},
		{"policyArn not an IAM policy", "detail.requestParameters.policyArn", edit(t, pol, "detail.requestParameters.policyArn", "arn:aws:s3:::acme-public")},
		{"policyArn in another account", "detail.requestParameters.policyArn",
			edit(t, pol, "detail.requestParameters.policyArn", "arn:aws:iam::999999999999:policy/admin")},
		{"policyArn in another partition", "detail.requestParameters.policyArn",
			edit(t, pol, "detail.requestParameters.policyArn", "arn:aws-cn:iam::aws:policy/AdministratorAccess")},
		{"a created user's ARN of another kind", "detail.responseElements.user.arn",
			edit(t, "testdata/aws/iam-create-user.json", "detail.responseElements.user.arn", "arn:aws:iam::"+acct+":role/deploy-bot")},
		{"a path that is none", "detail.requestParameters.path", editJSON(t,
			edit(t, "testdata/aws/iam-create-group.json", "detail.responseElements", del), "detail.requestParameters.path", "ops")},
		{"certificateArn in another region", "detail.requestParameters.certificateArn",
			edit(t, acm, "detail.requestParameters.certificateArn", strings.Replace(certARN, "eu-west-1", "us-east-1", 1))},
		{"an ACM event without its certificate", "resources", edit(t, "testdata/aws/acm-certificate-expired.json", "resources", []any{})},
		{"Records not an array", "Records", edit(t, files, "Records", map[string]any{})},
		{"a record not an object", "Records[1]", edit(t, files, "Records.1", "x")},
		{"a record without eventTime", "Records[0].eventTime", edit(t, files, "Records.0.eventTime", del)},
		// Pub/Sub.
		{"message not an object", "message", []byte(`{"message": "hi", "subscription": "s"}`)},
		{"no data", "message.data", []byte(`{"message": {"messageId": "1", "attributes": {"a": "b"}}, "subscription": "s"}`)},
		{"data not base64", "message.data", []byte(`{"message": {"data": "not*base64!", "messageId": "1"}, "subscription": "s"}`)},
		{"data not JSON", "message.data", pushed(t, []byte("level=info msg=hello"))},
		{"data not an object", "message.data", pushed(t, []byte(`[1, 2]`))},
		{"data without protoPayload", "message.data.protoPayload", pushed(t, []byte(`{"logName": "projects/p/logs/x", "timestamp": "2026-09-14T10:21:07Z"}`))},
		// Audit log entries, pushed and bare.
		{"no methodName", "message.data.protoPayload.methodName", pushed(t, edit(t, sa, "protoPayload.methodName", del))},
		{"no serviceName", "protoPayload.serviceName", edit(t, sa, "protoPayload.serviceName", del)},
		{"timestamp not RFC 3339", "timestamp", edit(t, sa, "timestamp", "2026-09-14 10:21:07")},
		{"no insertId", "insertId", edit(t, sa, "insertId", del)},
		{"status.code mistyped", "protoPayload.status.code", edit(t, sa, "protoPayload.status", map[string]any{"code": "7"})},
		{"project_id not a project id", "resource.labels.project_id", edit(t, sa, "resource.labels.project_id", "Acme_Prod/../x")},
		{"email_id not an email", "resource.labels.email_id", edit(t, sa, "resource.labels.email_id", "deployer/keys/x")},
		{"a key id that is none", "protoPayload.response.name",
			edit(t, sa, "protoPayload.response.name", "projects/acme-prod/serviceAccounts/"+saEmail+"/keys/a b")},
		{"a firewall name that is none", "protoPayload.resourceName", edit(t, fw, "protoPayload.resourceName", "projects/acme-prod/global/firewalls/Allow_Web")},
		{"a firewall resourceName of another kind", "protoPayload.resourceName",
			edit(t, fw, "protoPayload.resourceName", "projects/acme-prod/global/networks/default")},
		{"no project id anywhere", "resource.labels.project_id", editJSON(t,
			edit(t, "testdata/gcp/project-set-iam-policy-v3.logentry.json", "resource.labels", map[string]any{}),
			"protoPayload.resourceName", "projects/222222222222")},
		{"a folder name that is none", "protoPayload.resourceName", edit(t, crm, "protoPayload.resourceName", "folders/engineering")},
		{"a policy call naming nothing", "protoPayload.request.resource",
			editJSON(t, edit(t, crm, "protoPayload.resourceName", del), "protoPayload.request.resource", del)},
		{"request not an object", "protoPayload.request", edit(t, sa, "protoPayload.request", "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := events.Parse(tc.body)
			var e *events.Error
			if !errors.Is(err, events.ErrMalformed) || !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want ErrMalformed", cs, err)
			}
			if len(cs) != 0 {
				t.Errorf("changes %+v beside the error", cs)
			}
			if e.Field != tc.field {
				t.Errorf("Field = %q, want %q (%v)", e.Field, tc.field, err)
			}
			if e.Reason == "" || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not say what is wrong with %s", err, tc.field)
			}
		})
	}
}

// TestParse_absentIsNotMalformed: a mapped call whose identifying fields are absent (as
// CloudTrail writes them when request parameters are too large, or a call names a group
// by groupName) reads its scope, never fails.
func TestParse_absentIsNotMalformed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  []byte
		scope string
		refs  int
	}{
		{"request parameters omitted", edit(t, "testdata/aws/iam-put-user-policy.json", "detail.requestParameters", del), iamScope, 0},
		{"a created key's id omitted", edit(t, "testdata/aws/iam-create-access-key.json", "detail.responseElements", del), iamScope, 1},
		{"a policy ARN omitted", edit(t, "testdata/aws/iam-attach-user-policy.json", "detail.requestParameters.policyArn", del), iamScope, 1},
		{"a modified group's id omitted", edit(t, "testdata/aws/ec2-modify-security-group-rules.json",
			"detail.requestParameters.ModifySecurityGroupRulesRequest.GroupId", del), ec2Scope, 0},
		{"a deleted group named by name", edit(t, "testdata/aws/ec2-delete-security-group.json", "detail.requestParameters",
			map[string]any{"groupName": "web-public"}), ec2Scope, 0},
		{"a certificate ARN omitted", edit(t, "testdata/aws/acm-import-certificate.json", "detail.responseElements", del), acmScope, 0},
		{"a key named by nothing", editJSON(t, edit(t, "testdata/gcp/service-account-key-delete.logentry.json", "protoPayload.resourceName",
			"projects/-/serviceAccounts/100000000000000000001"), "protoPayload.request", del), "gcp/acme-prod/iam", 0},
		{"a firewall resourceName omitted", edit(t, "testdata/gcp/firewall-patch.logentry.json", "protoPayload.resourceName", del),
			"gcp/acme-prod/compute", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := events.Parse(tc.body)
			if err != nil || len(cs) != 1 {
				t.Fatalf("Parse = %+v, %v; want one change", cs, err)
			}
			c := cs[0]
			if !c.WholeScope || c.Why == "" || c.Scope != tc.scope || len(c.Resources) != tc.refs {
				t.Errorf("WholeScope %v Why %q Scope %q Resources %+v; want the scope %s read whole, %d resources named",
					c.WholeScope, c.Why, c.Scope, c.Resources, tc.scope, tc.refs)
			}
		})
	}
}

// TestParse_v1PolicyNamedByItsRequest: Resource Manager v1 names a project in its
// request by its bare id; without resourceName that still names the project's policy.
func TestParse_v1PolicyNamedByItsRequest(t *testing.T) {
	c := parseOne(t, edit(t, "testdata/gcp/project-set-iam-policy.logentry.json", "protoPayload.resourceName", del))
	if c.WholeScope || !slices.Equal(c.UIDs, []string{"//cloudresourcemanager.googleapis.com/projects/acme-prod"}) {
		t.Errorf("WholeScope %v UIDs %q, want the project's policy", c.WholeScope, c.UIDs)
	}
}
