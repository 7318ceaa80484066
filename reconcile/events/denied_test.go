package events_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/reconcile/events"
)

// TestRead_denials: CloudTrail records refused for want of a permission and audit log
// entries with PERMISSION_DENIED are denials of the principal whose policies were
// asked (a role for its sessions), of the action as IAM names it; Parse still answers
// them ErrUnknown (400) as before, Read answers no error for them.
func TestRead_denials(t *testing.T) {
	sa := "//iam.googleapis.com/projects/acme-prod/serviceAccounts/ci@acme-prod.iam.gserviceaccount.com"
	const role = "arn:aws:iam::111111111111:role/app"
	for _, tc := range []struct {
		file      string
		principal []string
		actions   [][]string
		account   string
		source    string
		unknown   int // the records that stay ErrUnknown
	}{
		{"denied/aws-user-kms-decrypt.json", []string{"arn:aws:iam::111111111111:user/ci/deployer"}, [][]string{{"kms:Decrypt"}},
			"111111111111", "b0a4c6e2-1d3f-4a5b-8c7d-9e0f1a2b3c4d", 0},
		{"denied/aws-role-secrets-list.json", []string{role}, [][]string{{"secretsmanager:ListSecrets"}}, "111111111111", "c1b5d7f3-2e4a-4b6c-9d8e-0f1a2b3c4d5e", 0},
		// monitoring.amazonaws.com is CloudWatch, email.amazonaws.com SES, to IAM.
		{"denied/aws-role-cloudwatch-put-metric.json", []string{role}, [][]string{{"cloudwatch:PutMetricData"}}, "111111111111", "d2c6e8a4-3f5b-4c7d-8e9f-1a2b3c4d5e6f", 0},
		{"denied/aws-role-ses-send.json", []string{role}, [][]string{{"ses:SendEmail"}}, "111111111111", "e3d7f9b5-4a6c-4d8e-9f0a-2b3c4d5e6f7a", 0},
		// Lambda's event names carry the API version; EC2 says Client.UnauthorizedOperation.
		{"denied/aws-log-file.json", []string{role, "arn:aws:iam::111111111111:user/ci/deployer"},
			[][]string{{"lambda:UpdateFunctionCode"}, {"ec2:RunInstances"}}, "111111111111", "f4e8a0c6-5b7d-4e9f-8a1b-3c4d5e6f7a8b", 0},
		// An SSO session: the permission set's role, with its path.
		{"unknown/ec2-authorize-ingress-denied.json",
			[]string{"arn:aws:iam::111111111111:role/aws-reserved/sso.amazonaws.com/eu-west-1/AWSReservedSSO_AdministratorAccess_5c2e1b6e0f3b2a71"},
			[][]string{{"ec2:AuthorizeSecurityGroupIngress"}}, "111111111111", "9177bb4c-1883-583c-7713-9ba02b415b6a", 0},
		// A service's call warden cannot attribute to a principal of its own: unknown.
		{"denied/aws-service-denied.json", nil, nil, "", "", 1},
		{"denied/gcp-sa-buckets-list.logentry.json", []string{sa}, [][]string{{"storage.buckets.list"}}, "acme-prod", "-x8k2nfe1b3c", 0},
		// Only what was not granted.
		{"denied/gcp-sa-two-permissions.logentry.json", []string{sa}, [][]string{{"compute.instances.setMetadata"}}, "acme-prod", "-q1w2e3r4t5y6", 0},
		// No authorizationInfo: the method; a person is user:EMAIL.
		{"denied/gcp-user-no-authorization-info.push.json", []string{"user:eve@acme.example"},
			[][]string{{"google.iam.admin.v1.ListServiceAccounts"}}, "acme-prod", "-p9o8i7u6y5t4", 0},
		{"unknown/gcp-create-key-denied.logentry.json", []string{"user:eve@acme.example"}, [][]string{{"iam.serviceAccountKeys.create"}},
			"acme-prod", "7eda652b7ddd", 0},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			body := read(t, filepath.Join("testdata", tc.file))
			cs, perr := events.Parse(body)
			if len(cs) != 0 || !errors.Is(perr, events.ErrUnknown) || events.Status(perr) != http.StatusBadRequest {
				t.Errorf("Parse = %+v, %v: want ErrUnknown as before", cs, perr)
			}
			ev, err := events.Read(body)
			if len(ev.Changes) != 0 {
				t.Errorf("changes %+v", ev.Changes)
			}
			if (tc.unknown > 0) != errors.Is(err, events.ErrUnknown) || errors.Is(err, events.ErrMalformed) {
				t.Errorf("Read error %v, want %d unknown", err, tc.unknown)
			}
			if tc.unknown == 0 && events.Status(err) != http.StatusAccepted {
				t.Errorf("Status = %d, want 202 for denials", events.Status(err))
			}
			if len(ev.Denials) != len(tc.principal) {
				t.Fatalf("%d denials, want %d: %+v", len(ev.Denials), len(tc.principal), ev.Denials)
			}
			for i, d := range ev.Denials {
				if d.Principal != tc.principal[i] || !slices.Equal(d.Actions, tc.actions[i]) || d.Account != tc.account {
					t.Errorf("denial %d = %q %q in %q, want %q %q in %q", i, d.Principal, d.Actions, d.Account, tc.principal[i], tc.actions[i], tc.account)
				}
				if d.At.IsZero() || d.Event == "" || d.Code == "" || (d.Provider != "aws" && d.Provider != "gcp") {
					t.Errorf("denial %d incomplete: %+v", i, d)
				}
			}
			if len(ev.Denials) > 0 && ev.Denials[0].Source != tc.source {
				t.Errorf("Source = %q, want %q", ev.Denials[0].Source, tc.source)
			}
		})
	}
}

// TestRead_denialMixed: a body of a change and a denial reads both; the time is the
// call's.
func TestRead_denialMixed(t *testing.T) {
	body := []byte("[" + string(read(t, "testdata/aws/iam-create-user.json")) + "," + string(read(t, "testdata/denied/aws-user-kms-decrypt.json")) + "]")
	ev, err := events.Read(body)
	if err != nil || len(ev.Changes) != 1 || len(ev.Denials) != 1 {
		t.Fatalf("Read = %+v, %v", ev, err)
	}
	if want := time.Date(2026, 12, 6, 11, 4, 31, 0, time.UTC); !ev.Denials[0].At.Equal(want) {
		t.Errorf("At = %v, want %v", ev.Denials[0].At, want)
	}
}

// TestRead_denialMalformed: a denial naming its principal by what is no user's or
// role's ARN, or by no email, is malformed, naming the field.
func TestRead_denialMalformed(t *testing.T) {
	for _, tc := range []struct {
		file, path string
		v          any
		field      string
	}{
		{"denied/aws-user-kms-decrypt.json", "detail.userIdentity.arn", "arn:aws:s3:::bucket", "detail.userIdentity.arn"},
		{"denied/aws-role-secrets-list.json", "detail.userIdentity.sessionContext.sessionIssuer.arn", 7, "detail.userIdentity.sessionContext.sessionIssuer.arn"},
		{"denied/aws-role-secrets-list.json", "detail.userIdentity.sessionContext", "x", "detail.userIdentity.sessionContext"},
		{"denied/gcp-sa-buckets-list.logentry.json", "protoPayload.authenticationInfo.principalEmail", "not an email", "protoPayload.authenticationInfo.principalEmail"},
		{"denied/gcp-sa-buckets-list.logentry.json", "protoPayload.authorizationInfo", []any{"x"}, "protoPayload.authorizationInfo[0]"},
		{"denied/gcp-sa-buckets-list.logentry.json", "protoPayload.authorizationInfo", []any{map[string]any{"granted": "no"}}, "protoPayload.authorizationInfo[0].granted"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			ev, err := events.Read(edit(t, filepath.Join("testdata", tc.file), tc.path, tc.v))
			var e *events.Error
			if !errors.Is(err, events.ErrMalformed) || !errors.As(err, &e) || e.Field != tc.field || len(ev.Denials) != 0 {
				t.Fatalf("Read = %+v, %v; want ErrMalformed at %s", ev, err, tc.field)
			}
		})
	}
}

// TestDenialSenders: the denial rule sends every denial sample (the services' sources
// by prefix) and no successful call; the sink filter keeps to PERMISSION_DENIED.
func TestDenialSenders(t *testing.T) {
	var p struct {
		Source []struct {
			Prefix string `json:"prefix"`
		} `json:"source"`
		DetailType []string `json:"detail-type"`
		Detail     struct {
			ErrorCode []string `json:"errorCode"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(events.DenialPattern()), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Source) != 1 || p.Source[0].Prefix != "aws." || !slices.Equal(p.DetailType, []string{"AWS API Call via CloudTrail"}) {
		t.Fatalf("pattern %s", events.DenialPattern())
	}
	sends := func(e map[string]any) bool {
		src, _ := e["source"].(string)
		detail, _ := e["detail"].(map[string]any)
		code, _ := detail["errorCode"].(string)
		return strings.HasPrefix(src, "aws.") && e["detail-type"] == "AWS API Call via CloudTrail" && slices.Contains(p.Detail.ErrorCode, code)
	}
	files, _ := filepath.Glob("testdata/denied/aws-*.json")
	files = append(files, "testdata/unknown/ec2-authorize-ingress-denied.json")
	for _, f := range files {
		e := jsonMap(t, read(t, f))
		if _, isEvent := e["detail-type"]; isEvent && !sends(e) {
			t.Errorf("%s is a denial the rule would not send", f)
		}
	}
	for _, f := range []string{"testdata/aws/iam-create-user.json", "testdata/unknown/iam-create-access-key-failed.json"} {
		if sends(jsonMap(t, read(t, f))) {
			t.Errorf("%s is no denial but the rule would send it", f)
		}
	}
	if f := events.DenialLogFilter(); !strings.Contains(f, "protoPayload.status.code=7") {
		t.Errorf("filter %s", f)
	}
}
