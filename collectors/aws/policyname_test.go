package aws

import "testing"

// TestPolicyName: a policy answered without its name (moto's
// GetAccountAuthorizationDetails) is named from its ARN, as AWS names it.
func TestPolicyName(t *testing.T) {
	for _, c := range []struct{ name, arn, want string }{
		{"ops", "arn:aws:iam::123456789012:policy/ops", "ops"},
		{"", "arn:aws:iam::123456789012:policy/everything", "everything"},
		{"", "arn:aws:iam::123456789012:policy/team/a/everything", "everything"},
		{"", "arn:aws:iam::aws:policy/AdministratorAccess", "AdministratorAccess"},
		{"", "arn:aws:iam::aws:policy/service-role/AWSConfigRole", "AWSConfigRole"},
		{"", "not an arn", ""},
	} {
		if got := policyName(c.name, c.arn); got != c.want {
			t.Errorf("policyName(%q, %q) = %q, want %q", c.name, c.arn, got, c.want)
		}
	}
}
