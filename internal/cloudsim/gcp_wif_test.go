package cloudsim

import (
	"context"
	"strings"
	"testing"

	compute "cloud.google.com/go/compute/apiv1"
	computepb "cloud.google.com/go/compute/apiv1/computepb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

func wifWorld() *World {
	w := gcpTestWorld()
	p := w.GCP.Projects[0]
	p.IAMPolicy.AuditConfigs = []AuditConfig{{Service: "allServices", LogConfigs: []AuditLogConfig{{LogType: "DATA_READ", ExemptedMembers: []string{"user:bot@acme.example"}}}}}
	p.Networks = append(p.Networks, &Network{Name: "old", Legacy: true, IPv4Range: "10.10.0.0/16"})
	p.WorkloadIdentityPools = []*WorkloadIdentityPool{
		{ID: "ci", Providers: []*WorkloadIdentityProvider{
			{ID: "gh", AttributeCondition: "assertion.repository_owner == 'acme'", OIDC: &OIDCProvider{IssuerURI: "https://token.actions.githubusercontent.com"}},
			{ID: "a", AWS: &AWSProvider{AccountID: "123456789012"}},
			{ID: "gone", State: "DELETED"},
		}},
		{ID: "x", State: "DELETED"},
	}
	return w
}

// TestGCPAuditConfigs: getIamPolicy shows auditConfigs; setIamPolicy keeps them unless
// its updateMask names auditConfigs, as GCP does.
func TestGCPAuditConfigs(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, wifWorld())
	pc, err := resourcemanager.NewProjectsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	pol, err := pc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/acme-prod"})
	if err != nil || len(pol.GetAuditConfigs()) != 1 || pol.GetAuditConfigs()[0].GetAuditLogConfigs()[0].GetLogType() != iampb.AuditLogConfig_DATA_READ ||
		pol.GetAuditConfigs()[0].GetAuditLogConfigs()[0].GetExemptedMembers()[0] != "user:bot@acme.example" {
		t.Fatalf("getIamPolicy: %v %v", pol, err)
	}
	pol.AuditConfigs = nil // a writer that does not know auditConfigs
	got, err := pc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod", Policy: pol})
	if err != nil || len(got.GetAuditConfigs()) != 1 {
		t.Fatalf("setIamPolicy without a mask dropped auditConfigs: %v %v", got, err)
	}
	got.AuditConfigs = nil
	got, err = pc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod", Policy: got,
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"bindings", "etag", "audit_configs"}}})
	if err != nil || len(got.GetAuditConfigs()) != 0 {
		t.Fatalf("setIamPolicy with auditConfigs in the mask kept them: %v %v", got, err)
	}
}

// TestGCPLegacyNetwork: a legacy network has no autoCreateSubnetworks field.
func TestGCPLegacyNetwork(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, wifWorld())
	nc, err := compute.NewNetworksRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	n, err := nc.Get(ctx, &computepb.GetNetworkRequest{Project: "acme-prod", Network: "old"})
	if err != nil || n.AutoCreateSubnetworks != nil || n.GetIPv4Range() != "10.10.0.0/16" || n.GetGatewayIPv4() != "10.10.0.1" {
		t.Fatalf("legacy network: %v %v", n, err)
	}
}

// TestGCPWorkloadIdentity lists pools and providers with the official IAM v1 client:
// paging, showDeleted, and the errors of an unknown project or pool.
func TestGCPWorkloadIdentity(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, wifWorld())
	svc, err := iamv1.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	pools := svc.Projects.Locations.WorkloadIdentityPools
	resp, err := pools.List("projects/acme-prod/locations/global").Do()
	if err != nil || len(resp.WorkloadIdentityPools) != 1 || resp.WorkloadIdentityPools[0].Name != "projects/111111111111/locations/global/workloadIdentityPools/ci" {
		t.Fatalf("pools: %+v %v", resp, err)
	}
	resp, err = pools.List("projects/acme-prod/locations/global").ShowDeleted(true).PageSize(1).Do()
	if err != nil || len(resp.WorkloadIdentityPools) != 1 || resp.NextPageToken == "" {
		t.Fatalf("first page: %+v %v", resp, err)
	}
	resp, err = pools.List("projects/acme-prod/locations/global").ShowDeleted(true).PageSize(1).PageToken(resp.NextPageToken).Do()
	if err != nil || len(resp.WorkloadIdentityPools) != 1 || resp.WorkloadIdentityPools[0].State != "DELETED" || resp.NextPageToken != "" {
		t.Fatalf("second page: %+v %v", resp, err)
	}
	prov, err := pools.Providers.List("projects/111111111111/locations/global/workloadIdentityPools/ci").Do()
	if err != nil || len(prov.WorkloadIdentityPoolProviders) != 2 {
		t.Fatalf("providers: %+v %v", prov, err)
	}
	gh, a := prov.WorkloadIdentityPoolProviders[0], prov.WorkloadIdentityPoolProviders[1]
	if gh.Oidc == nil || gh.Oidc.IssuerUri != "https://token.actions.githubusercontent.com" || gh.AttributeCondition == "" || a.Aws == nil || a.Aws.AccountId != "123456789012" {
		t.Errorf("providers: %+v %+v", gh, a)
	}
	if _, err := pools.Providers.List("projects/acme-prod/locations/global/workloadIdentityPools/nope").Do(); httpCode(err) != 404 && !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown pool: %v, want 404", err)
	}
	if _, err := pools.List("projects/nope/locations/global").Do(); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("unknown project: %v, want 403", err)
	}
}

func TestWorldWorkloadIdentityValidation(t *testing.T) {
	_, err := ParseWorld([]byte("gcp:\n  projects:\n  - id: p\n    number: \"1\"\n    iam_policy: {}\n    workload_identity_pools:\n    - id: a\n      providers:\n      - id: x\n        oidc: {issuer_uri: https://i}\n        aws: {account_id: \"1\"}\n"))
	if err == nil || !strings.Contains(err.Error(), "set only one of") {
		t.Errorf("two kinds: %v", err)
	}
	w, err := ParseWorld([]byte("gcp:\n  projects:\n  - id: p\n    number: \"1\"\n    iam_policy:\n      audit_configs:\n      - service: allServices\n        audit_log_configs:\n        - log_type: DATA_WRITE\n    networks:\n    - name: old\n      legacy: true\n"))
	if err != nil || w.GCP.Projects[0].IAMPolicy.AuditConfigs[0].LogConfigs[0].LogType != "DATA_WRITE" || !w.GCP.Projects[0].Networks[0].Legacy {
		t.Errorf("parse: %v", err)
	}
}
