package cloudsim

import (
	"strings"
	"testing"
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

func FuzzParseWorld(f *testing.F) {
	f.Add([]byte("aws:\n  accounts:\n    - id: '111111111111'\n      users: [{name: a}]\n"))
	f.Add([]byte("gcp:\n  projects:\n    - {id: p, number: '1'}\nfaults: [{service: iam, throttle_rate: 0.5}]\n"))
	f.Add([]byte("latency: 20ms\nrate_limits: {iam: 20}\n"))
	f.Add([]byte("aws:\n  accounts:\n    - id: '111111111111'\n      users: [~]\n"))
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
