package awsapi

import "testing"

func TestPartitionOf(t *testing.T) {
	tests := []struct{ arn, want string }{
		{"arn:aws:sts::111111111111:assumed-role/r/s", "aws"},
		{"arn:aws-cn:iam::111111111111:user/a", "aws-cn"},
		{"arn:aws-us-gov:iam::111111111111:root", "aws-us-gov"},
		{"", "aws"},
		{"not an arn", "aws"},
		{"arn::iam::1:root", "aws"},
	}
	for _, tc := range tests {
		if got := partitionOf(tc.arn); got != tc.want {
			t.Errorf("partitionOf(%q) = %q, want %q", tc.arn, got, tc.want)
		}
	}
}
