package aws

import (
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/usage/usagetest"
	"github.com/warden-sec/warden/snapshot"
)

// An analyzer's finding may predate a fix that took a service away: a service none of
// the principal's policies (its groups' too) grants any more is not reported unused; with
// a document unknown, nothing is dropped.
func TestAnalyzerUsage_narrowedToWhatIsStillGranted(t *testing.T) {
	doc := func(actions ...any) map[string]any {
		return map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": actions, "Resource": "*"}}}
	}
	managed := "arn:aws:iam::111111111111:policy/read"
	rs := []snapshot.Resource{
		{UID: managed, Type: "aws.iam.policy", Attributes: map[string]any{"document": doc("s3:GetObject")}},
		{Type: "aws.iam.group", Name: "ops", Attributes: map[string]any{"inline_policies": []any{map[string]any{"name": "q", "document": doc("sqs:*")}}}},
	}
	user := snapshot.Resource{Type: "aws.iam.user", Attributes: map[string]any{
		"attached_policies": []any{map[string]any{"arn": managed}}, "groups": []any{"ops"},
		"inline_policies": []any{map[string]any{"name": "k", "document": doc("kms:Decrypt")}}}}
	u := usagetest.Analyzer(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 90, "kms=", "lambda=", "s3=", "sqs=")
	names := func(u map[string]any) (out []string) {
		for _, s := range u["services"].([]any) {
			out = append(out, s.(map[string]any)["service"].(string))
		}
		return out
	}
	got := names(newGrantsNow(rs).narrow(user, u))
	if len(got) != 3 || got[0] != "kms" || got[1] != "s3" || got[2] != "sqs" {
		t.Errorf("narrowed to %v, want kms, s3, sqs (lambda no longer granted)", got)
	}
	if len(names(u)) != 4 {
		t.Error("the analyzer's usage was changed in place")
	}
	unknown := user
	unknown.Attributes = map[string]any{"attached_policies": []any{map[string]any{"arn": "arn:aws:iam::aws:policy/Other"}}}
	if got := names(newGrantsNow(rs).narrow(unknown, u)); len(got) != 4 {
		t.Errorf("with a document unknown: %v, want all four kept", got)
	}
}
