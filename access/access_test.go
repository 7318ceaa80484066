package access_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/access"
	"github.com/warden-sec/warden/internal/usage/usagetest"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/snapshot"
)

var asOf = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// snap writes resources into a snapshot and returns its reader.
func snap(t *testing.T, rs ...snapshot.Resource) *snapshot.Reader {
	t.Helper()
	var buf bytes.Buffer
	w, err := snapshot.NewWriter(&buf, snapshot.Header{Version: snapshot.Version, CollectedAt: asOf})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return snapshot.NewReader(&buf, "s.json")
}

func role(name string, usage map[string]any, inline string) snapshot.Resource {
	attrs := map[string]any{"path": "/", "created": "2024-01-01T00:00:00Z", "attached_policies": []any{}, "inline_policies": []any{},
		"assume_role_policy": map[string]any{"Version": "2012-10-17", "Statement": []any{}}}
	if inline != "" {
		var doc any
		if err := json.Unmarshal([]byte(inline), &doc); err != nil {
			panic(err)
		}
		attrs["inline_policies"] = []any{map[string]any{"name": "app", "document": doc}}
	}
	if usage != nil {
		attrs["usage"] = usage
	}
	return snapshot.Resource{UID: "arn:aws:iam::111111111111:role/" + name, Type: "aws.iam.role", Name: name, Account: "111111111111",
		Region: "global", Scope: "aws/111111111111/iam", Attributes: attrs}
}

func TestRead_grantedAgainstUsed(t *testing.T) {
	reg, err := remediators.NewRegistry(awsfix.NewRightsizeInlinePolicy(nil))
	if err != nil {
		t.Fatal(err)
	}
	young := usagetest.Attr(asOf, "kms=")
	young["tracked_since"] = "2026-11-01T00:00:00Z"
	failed := map[string]any{"source": "aws.access_advisor", "complete": false, "error": "iam:GetServiceLastAccessedDetails: AccessDenied"}
	rd := snap(t,
		role("deploy", usagetest.Attr(asOf, "s3=2026-11-24", "s3:PutBucketPolicy=", "kms="),
			`{"Statement":[{"Effect":"Allow","Action":["s3:*","s3:PutBucketPolicy","kms:Decrypt"],"Resource":"*"}]}`),
		role("quiet", nil, ""), role("new", young, ""), role("denied", failed, ""),
		snapshot.Resource{UID: "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1", Type: "aws.ec2.security_group", Region: "eu-west-1",
			Scope: "aws/111111111111/ec2/eu-west-1", Account: "111111111111", Attributes: map[string]any{}},
	)
	ps, err := access.Read(context.Background(), rd, access.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]access.Principal{}
	for _, p := range ps {
		by[p.Name] = p
	}
	if len(ps) != 4 {
		t.Fatalf("%d principals, want the 4 roles: %+v", len(ps), ps)
	}
	d := by["deploy"]
	if d.Data != "complete" || d.Granted != 2 || strings.Join(d.Used, ",") != "s3" || len(d.Unused) != 2 ||
		d.Unused[0].Permission != "kms" || d.Unused[1].Permission != "s3:putbucketpolicy" {
		t.Errorf("deploy: %+v", d)
	}
	if len(d.Fixes) != 1 || d.Fixes[0].Part != "inline/app" || strings.Join(d.Fixes[0].Removes, ",") != "s3:PutBucketPolicy,kms:Decrypt" {
		t.Errorf("deploy's fixes: %+v", d.Fixes)
	}
	for name, want := range map[string]string{"quiet": "none", "new": "too young", "denied": "incomplete: the usage data is incomplete: iam:GetServiceLastAccessedDetails: AccessDenied"} {
		if p := by[name]; !strings.HasPrefix(p.Data, want) || len(p.Unused) != 0 || len(p.Fixes) != 0 {
			t.Errorf("%s: %+v, want data %q and nothing unused", name, p, want)
		}
	}
	var out strings.Builder
	if err := access.WriteText(&out, ps, asOf.Add(5*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"role arn:aws:iam::111111111111:role/deploy: uses 1 of 2 services granted (data as of 2026-12-01, 5 days old)",
		"unused  kms: never used since tracking began on 2025-10-27",
		"fix     aws.iam.rightsize_inline_policy on inline/app removes s3:PutBucketPolicy, kms:Decrypt",
		"role/new: too young", "role/denied: incomplete", "(counted as used)", "4 principals, 1 with unused grants, 1 without usage data",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
}

// With IAM Access Analyzer's findings the services granted and used are unknown: not
// counted, and "*" not narrowed; an analyzer younger than the window speaks for nothing.
func TestRead_analyzer(t *testing.T) {
	reg, err := remediators.NewRegistry(awsfix.NewRightsizeInlinePolicy(nil))
	if err != nil {
		t.Fatal(err)
	}
	rd := snap(t,
		role("star", usagetest.Analyzer(asOf, 90, "kms="), `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`),
		role("named", usagetest.Analyzer(asOf, 90, "kms="), `{"Statement":[{"Effect":"Allow","Action":["s3:*","kms:Decrypt"],"Resource":"*"}]}`),
		role("short", usagetest.Analyzer(asOf, 30, "kms="), `{"Statement":[{"Effect":"Allow","Action":["kms:Decrypt"],"Resource":"*"}]}`),
	)
	ps, err := access.Read(context.Background(), rd, access.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]access.Principal{}
	for _, p := range ps {
		by[p.Name] = p
	}
	if s := by["star"]; !s.UnusedOnly || s.Granted != 0 || len(s.Used) != 0 || len(s.Unused) != 1 || len(s.Fixes) != 0 {
		t.Errorf("star: %+v, want kms unused and no fix (\"*\" stays)", s)
	}
	if n := by["named"]; len(n.Fixes) != 1 || strings.Join(n.Fixes[0].Removes, ",") != "kms:Decrypt" {
		t.Errorf("named: %+v, want kms:Decrypt removed", n)
	}
	if s := by["short"]; !strings.HasPrefix(s.Data, "too young: IAM Access Analyzer's findings cover 30 days") || len(s.Unused) != 0 {
		t.Errorf("short: %+v", s)
	}
	var out strings.Builder
	if err := access.WriteText(&out, ps, asOf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "role/star: IAM Access Analyzer's findings, which list only what is unused (data as of 2026-12-01)") {
		t.Errorf("text:\n%s", out.String())
	}
}

func TestRead_onePrincipal(t *testing.T) {
	rd := snap(t, role("a", nil, ""), role("b", nil, ""))
	ps, err := access.Read(context.Background(), rd, access.Options{Principals: []string{"arn:aws:iam::111111111111:role/b"}})
	if err != nil || len(ps) != 1 || ps[0].Name != "b" {
		t.Fatalf("%+v %v", ps, err)
	}
	_, err = access.Read(context.Background(), snap(t, role("a", nil, "")), access.Options{Principals: []string{"arn:aws:iam::111111111111:role/zz"}})
	if err == nil || !strings.Contains(err.Error(), "role/zz: no such user, group or role in s.json") {
		t.Errorf("an unknown principal: %v", err)
	}
}
