package cloudsim

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseWorldErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown field", "aws:\n  acounts: []\n", "line 2: field acounts not found"},
		{"bad account id", "aws:\n  accounts:\n    - id: '12'\n", `aws.accounts[0].id: "12" is not a 12-digit account id`},
		{"duplicate account", "aws:\n  accounts:\n    - id: '111111111111'\n    - id: '111111111111'\n", "appears twice"},
		{"management not an account", "aws:\n  organization: {id: o-1, management: '222222222222'}\n  accounts:\n    - id: '111111111111'\n", "aws.organization.management"},
		{"document not JSON", "aws:\n  accounts:\n    - id: '111111111111'\n      roles:\n        - name: r\n          assume_role_policy: '{not json'\n", "line 6: document is not JSON"},
		{"sg without region", "aws:\n  accounts:\n    - id: '111111111111'\n      security_groups:\n        - {id: sg-1, name: a}\n", "region is required"},
		{"fault rate", "faults:\n  - {throttle_rate: 2}\n", "faults[0]: throttle_rate and error_rate"},
		{"bad latency", "latency: soon\n", "line 1"},
		{"project without number", "gcp:\n  projects:\n    - id: p\n", "gcp.projects[0]: id and number are required"},
		{"access without time", "aws:\n  accounts:\n    - id: '111111111111'\n      users:\n        - name: u\n          last_accessed: [{service: s3}]\n", "aws.accounts[0].users[0] (u).last_accessed[0].at: the time of the use is required"},
		{"access bad service", "aws:\n  accounts:\n    - id: '111111111111'\n      roles:\n        - name: r\n          last_accessed: [{service: 'S3 bucket', at: 2026-01-01T00:00:00Z}]\n", "aws.accounts[0].roles[0] (r).last_accessed[0].service: \"S3 bucket\" is not a service namespace"},
		{"access action of another service", "aws:\n  accounts:\n    - id: '111111111111'\n      groups:\n        - name: g\n          last_accessed: [{service: s3, action: 'ec2:DescribeInstances', at: 2026-01-01T00:00:00Z}]\n", "aws.accounts[0].groups[0] (g).last_accessed[0].action: \"ec2:DescribeInstances\" is not an action of s3"},
		{"access action wildcard", "aws:\n  accounts:\n    - id: '111111111111'\n      users:\n        - name: u\n          last_accessed: [{service: s3, at: 2026-01-01T00:00:00Z}, {service: s3, action: 's3:Get*', at: 2026-01-01T00:00:00Z}]\n", "last_accessed[1].action"},
		{"access bad region", "aws:\n  accounts:\n    - id: '111111111111'\n      users:\n        - name: u\n          last_accessed: [{service: s3, at: 2026-01-01T00:00:00Z, region: EU West}]\n", "last_accessed[0].region: \"EU West\" is not a region"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWorld([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestWorldRoundTrip(t *testing.T) {
	src := `aws:
  accounts:
    - id: "111111111111"
      roles:
        - name: web
          assume_role_policy:
            Version: "2012-10-17"
            Statement:
              - {Effect: Allow, Principal: {Service: ec2.amazonaws.com}, Action: "sts:AssumeRole"}
latency: 20ms
`
	w, err := ParseWorld([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(w.AWS.Accounts[0].Roles[0].AssumeRolePolicy)
	if !strings.Contains(doc, `"Principal":{"Service":"ec2.amazonaws.com"}`) {
		t.Errorf("document = %s", doc)
	}
	out, err := w.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	w2, err := ParseWorld(out)
	if err != nil {
		t.Fatalf("re-read: %v\n%s", err, out)
	}
	if string(w2.AWS.Accounts[0].Roles[0].AssumeRolePolicy) != doc || w2.Latency != w.Latency {
		t.Errorf("round trip changed the world:\n%s", out)
	}
}

// TestWorldAccessRoundTrip reads declared use back as written: a world the simulator
// saves keeps the use its clients added.
func TestWorldAccessRoundTrip(t *testing.T) {
	src := "aws:\n  accounts:\n    - id: '111111111111'\n      users:\n        - name: u\n          last_accessed:\n" +
		"            - {service: s3, action: 's3:GetObject', at: 2026-11-30T08:00:00Z, region: eu-west-1}\n" +
		"            - {service: aws-marketplace, at: 2026-01-02T03:04:05Z}\n"
	w, err := ParseWorld([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []AccessRecord{{Service: "s3", Action: "s3:GetObject", At: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), Region: "eu-west-1"},
		{Service: "aws-marketplace", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	if got := w.AWS.Accounts[0].Users[0].LastAccessed; !slices.EqualFunc(got, want, func(a, b AccessRecord) bool {
		return a.Service == b.Service && a.Action == b.Action && a.At.Equal(b.At) && a.Region == b.Region
	}) {
		t.Fatalf("records %+v", got)
	}
	out, err := w.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	w2, err := ParseWorld(out)
	if err != nil {
		t.Fatalf("re-read: %v\n%s", err, out)
	}
	if got := w2.AWS.Accounts[0].Users[0].LastAccessed; len(got) != 2 || !got[0].At.Equal(want[0].At) || got[1].Service != "aws-marketplace" {
		t.Errorf("round trip: %+v\n%s", got, out)
	}
}

func FuzzParseWorld(f *testing.F) {
	f.Add([]byte("aws:\n  accounts:\n    - id: '111111111111'\n      users: [{name: a}]\n"))
	f.Add([]byte("gcp:\n  projects:\n    - {id: p, number: '1'}\nfaults: [{service: iam, throttle_rate: 0.5}]\n"))
	f.Add([]byte("latency: 20ms\nrate_limits: {iam: 20}\n"))
	f.Add([]byte("aws:\n  accounts:\n    - id: '111111111111'\n      users: [~]\n"))
	f.Add([]byte("aws:\n  accounts:\n    - id: '111111111111'\n      roles:\n        - name: r\n          last_accessed: [{service: s3, action: 's3:GetObject', at: 2026-11-30T08:00:00Z, region: eu-west-1}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseWorld(b)
		if err != nil {
			return
		}
		out, err := w.Marshal()
		if err != nil {
			t.Fatalf("a world that parsed does not marshal: %v", err)
		}
		// What the simulator saves (warden demo, serve --sim) it reads back.
		if _, err := ParseWorld(out); err != nil {
			t.Fatalf("a world that parsed, written out, does not parse again: %v\n%s", err, out)
		}
	})
}
