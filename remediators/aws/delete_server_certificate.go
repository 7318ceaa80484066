package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// DeleteServerCertificate deletes an IAM server certificate
// (aws.iam.delete_server_certificate). It cannot be rolled back: IAM never returns the
// private key, so the certificate cannot be uploaded again.
type DeleteServerCertificate struct{ c clients }

// NewDeleteServerCertificate returns the fix; s may be nil for planning only.
func NewDeleteServerCertificate(s *awsapi.Sessions) *DeleteServerCertificate {
	return &DeleteServerCertificate{clients{s}}
}

// serverCertBefore is the part: the certificate by name and id (a new certificate
// uploaded under the same name is another one, and is not deleted).
type serverCertBefore struct {
	Name     string `json:"name"`
	ID       string `json:"server_certificate_id"`
	NotAfter any    `json:"not_after"`
}

// Spec implements remediators.Remediator.
func (*DeleteServerCertificate) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "aws.iam.delete_server_certificate",
		ResourceTypes: []string{"aws.iam.server_certificate"},
		Rollback:      remediators.Rollback{Reason: "IAM never returns a server certificate's private key: a deleted certificate cannot be uploaded again"},
		Permissions:   remediators.Permissions{AWS: []string{"iam:DeleteServerCertificate", "iam:GetServerCertificate"}},
	}
}

// Targets is the certificate itself.
func (*DeleteServerCertificate) Targets(res snapshot.Resource, _ map[string]any) ([]remediators.Target, error) {
	b := serverCertBefore{Name: principalName(res), ID: attr.String(res.Attributes, "server_certificate_id"),
		NotAfter: attr.Map(res.Attributes, "certificate")["not_after"]}
	if b.ID == "" {
		return nil, fmt.Errorf("server certificate %s: no server_certificate_id", res.UID)
	}
	before, err := attr.Canonical(b)
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: b.Name, Before: before}}, nil
}

// Apply deletes the certificate; ErrConverged when it is gone. A certificate of the same
// name but another id was uploaded since the plan: it is refused, not deleted.
func (r *DeleteServerCertificate) Apply(ctx context.Context, a remediators.Action) error {
	var b serverCertBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return err
	}
	if b.Name == "" || b.ID == "" {
		return fmt.Errorf("action %s: before-state names no certificate", a.ID)
	}
	cl, err := r.c.iam(ctx, a)
	if err != nil {
		return err
	}
	out, err := cl.GetServerCertificate(ctx, &iam.GetServerCertificateInput{ServerCertificateName: aws.String(b.Name)})
	if awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	if err != nil {
		return callErr("read server certificate "+b.Name, err)
	}
	if id := aws.ToString(out.ServerCertificate.ServerCertificateMetadata.ServerCertificateId); id != b.ID {
		return fmt.Errorf("delete server certificate %s: it is now %s, not the planned %s: a fresh plan is needed", b.Name, id, b.ID)
	}
	_, err = cl.DeleteServerCertificate(ctx, &iam.DeleteServerCertificateInput{ServerCertificateName: aws.String(b.Name)})
	if awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	if err != nil {
		return callErr("delete server certificate "+b.Name, err)
	}
	return nil
}

// Rollback is impossible (CanRollback says why).
func (*DeleteServerCertificate) Rollback(context.Context, remediators.Action) error {
	return remediators.ErrNoRollback
}
