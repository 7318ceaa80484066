package aws

import (
	"context"
	"fmt"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// RevokeDefaultSGRules revokes one rule, ingress or egress, of a VPC's default security
// group (aws.ec2.revoke_default_sg_rules, parameter target: the rule's uid): one action
// per rule, so that each is approved, applied and rolled back on its own. It refuses a
// group that is not a default one.
type RevokeDefaultSGRules struct{ c clients }

// NewRevokeDefaultSGRules returns the fix; s may be nil for planning only.
func NewRevokeDefaultSGRules(s *awsapi.Sessions) *RevokeDefaultSGRules {
	return &RevokeDefaultSGRules{clients{s}}
}

// Spec implements remediators.Remediator.
func (*RevokeDefaultSGRules) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "aws.ec2.revoke_default_sg_rules",
		Params:        []remediators.Param{{Name: "target", Required: true, Doc: "the uid of the default group's rule to revoke (<sg-arn>#<ingress|egress>/<proto>/<from>-<to>/<peer>)"}},
		ResourceTypes: []string{"aws.ec2.security_group"},
		Rollback:      remediators.Rollback{Possible: true},
		// Ingress and egress rules alike.
		Permissions: remediators.Permissions{AWS: []string{"ec2:AuthorizeSecurityGroupEgress", "ec2:AuthorizeSecurityGroupIngress",
			"ec2:DescribeSecurityGroupRules", "ec2:RevokeSecurityGroupEgress", "ec2:RevokeSecurityGroupIngress"}},
	}
}

// Targets is the rule named by target, while the default group has it.
func (*RevokeDefaultSGRules) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	if def, _ := attr.Bool(res.Attributes, "is_default"); !def {
		return nil, fmt.Errorf("security group %s is not a VPC's default group: revoke_default_sg_rules leaves it alone", res.UID)
	}
	return ruleTargets(res, params, true)
}

// Apply revokes the rule; ErrConverged when it is gone.
func (r *RevokeDefaultSGRules) Apply(ctx context.Context, a remediators.Action) error {
	return revokeRule(ctx, r.c, a)
}

// Rollback authorizes the rule again, with its description.
func (r *RevokeDefaultSGRules) Rollback(ctx context.Context, a remediators.Action) error {
	return authorizeRule(ctx, r.c, a)
}
