package aws

import (
	"context"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
)

// RevokeIngress revokes one ingress rule of a security group (aws.ec2.revoke_ingress,
// parameter target: the rule's uid, <sg-arn>#ingress/<proto>/<from>-<to>/<peer>), and
// nothing else of the group. Rollback authorizes the same rule again with its
// description.
type RevokeIngress struct{ c clients }

// NewRevokeIngress returns the fix; s may be nil for planning only.
func NewRevokeIngress(s *awsapi.Sessions) *RevokeIngress { return &RevokeIngress{clients{s}} }

// Spec implements remediators.Remediator.
func (*RevokeIngress) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "aws.ec2.revoke_ingress",
		Params:        []remediators.Param{{Name: "target", Required: true, Doc: "the uid of the ingress rule to revoke (<sg-arn>#ingress/<proto>/<from>-<to>/<peer>)"}},
		ResourceTypes: []string{"aws.ec2.security_group"},
		Rollback:      remediators.Rollback{Possible: true},
		// The group's rules are read to find the one to revoke (or, for rollback, to see
		// it is back).
		Permissions: remediators.Permissions{AWS: []string{"ec2:AuthorizeSecurityGroupIngress", "ec2:DescribeSecurityGroupRules",
			"ec2:RevokeSecurityGroupIngress"}},
	}
}

// Targets is the ingress rule named by target, while the group has it.
func (*RevokeIngress) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	return ruleTargets(res, params, false)
}

// Apply revokes the rule; ErrConverged when it is gone.
func (r *RevokeIngress) Apply(ctx context.Context, a remediators.Action) error {
	return revokeRule(ctx, r.c, a)
}

// Rollback authorizes the rule again, with its description.
func (r *RevokeIngress) Rollback(ctx context.Context, a remediators.Action) error {
	return authorizeRule(ctx, r.c, a)
}
