package evidence_test

import (
	"strings"
	"testing"

	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/snapshot"
)

func TestScopeHolds(t *testing.T) {
	for _, c := range []struct {
		scope, typ string
		want       bool
	}{
		// AWS: by service, whatever the account or region.
		{"aws/111111111111/iam", "aws.iam.user", true},
		{"aws/111111111111/iam", "aws.iam.password_policy", true},
		{"aws/111111111111/iam", "aws.iam.root_user", true},
		{"aws/111111111111/iam", "aws.iam.server_certificate", true},
		{"aws/111111111111/iam", "aws.ec2.security_group", false},
		{"aws/111111111111/iam", "aws.acm.certificate", false},
		{"aws/111111111111/ec2/eu-west-1", "aws.ec2.security_group", true},
		{"aws/111111111111/ec2/eu-west-1", "aws.iam.user", false},
		{"aws/111111111111/acm/us-east-1", "aws.acm.certificate", true},
		{"aws/111111111111/acm/us-east-1", "aws.ec2.security_group", false},
		// The regions could not be listed: the service in every region.
		{"aws/111111111111/ec2", "aws.ec2.security_group", true},
		{"aws/111111111111/acm", "aws.acm.certificate", true},
		{"aws/111111111111/acm", "aws.iam.user", false},
		// A future service is placed by the same rule.
		{"aws/111111111111/s3/eu-west-1", "aws.s3.bucket", true},
		{"aws/111111111111/s3/eu-west-1", "aws.iam.user", false},
		// GCP projects: IAM holds service accounts, keys and the project's policy.
		{"gcp/acme-prod-4821/iam", "gcp.iam.service_account", true},
		{"gcp/acme-prod-4821/iam", "gcp.iam.service_account_key", true},
		{"gcp/acme-prod-4821/iam", "gcp.project.iam_policy", true},
		{"gcp/acme-prod-4821/iam", "gcp.compute.firewall", false},
		{"gcp/acme-prod-4821/iam", "gcp.folder.iam_policy", false},
		{"gcp/acme-prod-4821/iam", "gcp.organization.iam_policy", false},
		{"gcp/acme-prod-4821/compute", "gcp.compute.firewall", true},
		{"gcp/acme-prod-4821/compute", "gcp.compute.network", true},
		{"gcp/acme-prod-4821/compute", "gcp.compute.ssl_certificate", true},
		{"gcp/acme-prod-4821/compute", "gcp.project.iam_policy", false},
		{"gcp/acme-prod-4821/compute", "gcp.iam.service_account", false},
		// GCP ancestors hold their own policy only.
		{"gcp/folders/123/iam", "gcp.folder.iam_policy", true},
		{"gcp/folders/123/iam", "gcp.project.iam_policy", false},
		{"gcp/folders/123/iam", "gcp.organization.iam_policy", false},
		{"gcp/folders/123/iam", "gcp.iam.service_account", false},
		{"gcp/organizations/456/iam", "gcp.organization.iam_policy", true},
		{"gcp/organizations/456/iam", "gcp.folder.iam_policy", false},
		{"gcp/organizations/456/iam", "gcp.project.iam_policy", false},
		// TLS: the endpoint.
		{"tls/api.acme.example:443", "tls.endpoint", true},
		{"tls/api.acme.example:443", "aws.acm.certificate", false},
		// Never another provider's types.
		{"aws/111111111111/iam", "gcp.iam.service_account", false},
		{"gcp/acme-prod-4821/compute", "aws.ec2.security_group", false},
		{"gcp/acme-prod-4821/compute", "tls.endpoint", false},
		// A scope the mapping cannot place holds all of its provider's types: unknown
		// rather than passing.
		{"aws/111111111111", "aws.iam.user", true},
		{"aws//iam", "aws.iam.user", true},
		{"gcp/folders/123/compute", "gcp.compute.firewall", true},
		{"gcp/acme-prod-4821", "gcp.iam.service_account", true},
		{"azure/sub-1/network", "azure.network.nsg", true},
		{"azure/sub-1/network", "aws.ec2.security_group", false},
	} {
		if got := evidence.ScopeHolds(c.scope, c.typ); got != c.want {
			t.Errorf("ScopeHolds(%q, %q) = %v, want %v", c.scope, c.typ, got, c.want)
		}
	}
}

// shape is a scope id without its account and region: where the collectors put a type.
func shape(id string) string {
	f := strings.Split(id, "/")
	switch {
	case f[0] == "aws" && len(f) >= 3:
		return "aws/" + f[2]
	case f[0] == "gcp" && len(f) == 4:
		return "gcp/" + f[1] + "/" + f[3]
	case f[0] == "gcp" && len(f) == 3:
		return "gcp/project/" + f[2]
	}
	return f[0]
}

// Every resource of the acme organisation, as the collectors place it, lies in a scope
// that holds its type; and no scope of another shape holds that type.
func TestScopeHolds_agreesWithTheAcmeSnapshot(t *testing.T) {
	h, resources, err := snapshot.ReadFile(acmeSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	if len(resources) < 200 || len(h.Scopes) < 20 {
		t.Fatalf("read %d resources and %d scopes from %s: want the whole organisation", len(resources), len(h.Scopes), acmeSnapshot)
	}
	shapes := map[string]map[string]bool{} // type → the shapes of the scopes holding it
	for _, r := range resources {
		if !evidence.ScopeHolds(r.Scope, r.Type) {
			t.Errorf("resource %s of type %s lies in scope %s, which ScopeHolds says cannot hold it", r.UID, r.Type, r.Scope)
		}
		if shapes[r.Type] == nil {
			shapes[r.Type] = map[string]bool{}
		}
		shapes[r.Type][shape(r.Scope)] = true
	}
	for typ, where := range shapes {
		for _, s := range h.Scopes {
			if want := where[shape(s.ID)]; evidence.ScopeHolds(s.ID, typ) != want {
				t.Errorf("ScopeHolds(%s, %s) = %v, but the collectors put %s in %v", s.ID, typ, !want, typ, where)
			}
		}
	}
}
