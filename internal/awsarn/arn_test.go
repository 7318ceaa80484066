package awsarn

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want ARN
		ok   bool
	}{
		{"arn:aws:iam::111111111111:user/automation/ci-bot", ARN{"aws", "iam", "", "111111111111", "user/automation/ci-bot"}, true},
		{"arn:aws-cn:ec2:cn-north-1:111111111111:security-group/sg-1", ARN{"aws-cn", "ec2", "cn-north-1", "111111111111", "security-group/sg-1"}, true},
		{"arn:aws:acm:eu-west-1:111111111111:certificate/a:b", ARN{"aws", "acm", "eu-west-1", "111111111111", "certificate/a:b"}, true},
		{"arn:aws:iam::aws:policy/AdministratorAccess", ARN{"aws", "iam", "", "aws", "policy/AdministratorAccess"}, true},
		{"arn:aws:iam:::user/x", ARN{}, false},          // no account
		{"arn::iam::111111111111:user/x", ARN{}, false}, // no partition
		{"arn:aws::us-east-1:111111111111:x", ARN{}, false},
		{"arn:aws:iam::111111111111:", ARN{}, false}, // no resource
		{"urn:aws:iam::111111111111:user/x", ARN{}, false},
		{"arn:aws:iam", ARN{}, false},
		{"", ARN{}, false},
	}
	for _, tt := range tests {
		got, ok := Parse(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if ok && got.String() != tt.in {
			t.Errorf("Parse(%q).String() = %q", tt.in, got.String())
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("arn:aws:iam::111111111111:user/automation/ci-bot")
	f.Add("arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1#ingress/tcp/22-22/0.0.0.0/0")
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := Parse(s)
		if !ok {
			return
		}
		if a.String() != s {
			t.Fatalf("Parse(%q).String() = %q: not the same ARN", s, a.String())
		}
		if a.Partition == "" || a.Service == "" || a.Account == "" || a.Resource == "" {
			t.Fatalf("Parse(%q) = %+v: a required field is empty", s, a)
		}
	})
}
