package gcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	compute "cloud.google.com/go/compute/apiv1"
	computepb "cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/protobuf/proto"

	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// DisableFirewall disables one VPC firewall rule (gcp.compute.disable_firewall): the
// rule stops applying but is kept as it is, so that Rollback can enable it again.
type DisableFirewall struct{ c *gcpapi.Clients }

// NewDisableFirewall returns the fix; c may be nil for planning only.
func NewDisableFirewall(c *gcpapi.Clients) *DisableFirewall { return &DisableFirewall{c} }

// firewallBefore is the part: the rule by project and name, and everything it allows
// (a rule changed since the plan is drift).
type firewallBefore struct {
	Project string         `json:"project"`
	Name    string         `json:"name"`
	Rule    map[string]any `json:"rule"`
}

// Spec implements remediators.Remediator.
func (*DisableFirewall) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "gcp.compute.disable_firewall",
		ResourceTypes: []string{"gcp.compute.firewall"},
		Rollback:      remediators.Rollback{Possible: true},
		// Google asks for the network's compute.networks.updatePolicy as well as
		// compute.firewalls.update to patch a rule, and the patch is an operation that is
		// waited for.
		Permissions: remediators.Permissions{GCP: []string{"compute.firewalls.get", "compute.firewalls.update",
			"compute.globalOperations.get", "compute.networks.updatePolicy"}},
	}
}

// Targets is the rule while it is enabled.
func (*DisableFirewall) Targets(res snapshot.Resource, _ map[string]any) ([]remediators.Target, error) {
	if off, _ := attr.Bool(res.Attributes, "disabled"); off {
		return nil, nil
	}
	project, name, err := firewallName(res.UID)
	if err != nil {
		return nil, err
	}
	before, err := attr.Canonical(firewallBefore{Project: project, Name: name, Rule: res.Attributes})
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: name, Before: before}}, nil
}

// firewallName reads project and rule name out of
// //compute.googleapis.com/projects/P/global/firewalls/NAME.
func firewallName(uid string) (project, name string, err error) {
	path, err := resourceName(uid, "compute.googleapis.com")
	if err != nil {
		return "", "", err
	}
	parts := strings.Split(path, "/")
	if len(parts) != 5 || parts[0] != "projects" || parts[2] != "global" || parts[3] != "firewalls" || parts[1] == "" || parts[4] == "" {
		return "", "", fmt.Errorf("%s is not a firewall rule (//compute.googleapis.com/projects/P/global/firewalls/NAME)", uid)
	}
	return parts[1], parts[4], nil
}

// Apply disables the rule; ErrConverged when it is disabled already or gone.
func (r *DisableFirewall) Apply(ctx context.Context, a remediators.Action) error {
	err := r.set(ctx, a, true)
	if gcpapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	return err
}

// Rollback enables the rule again. A rule deleted since cannot be brought back.
func (r *DisableFirewall) Rollback(ctx context.Context, a remediators.Action) error {
	err := r.set(ctx, a, false)
	if errors.Is(err, remediators.ErrConverged) {
		return nil
	}
	return err
}

// set patches the rule's disabled flag, after reading it: ErrConverged when it is set.
func (r *DisableFirewall) set(ctx context.Context, a remediators.Action, disabled bool) error {
	var b firewallBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return err
	}
	if b.Project == "" || b.Name == "" {
		return fmt.Errorf("action %s: before-state names no firewall rule", a.ID)
	}
	var fw *computepb.Firewall
	err := call(ctx, r.c, b.Project, "compute.GetFirewall", func(ctx context.Context) (err error) {
		fw, err = r.c.Firewalls.Get(ctx, &computepb.GetFirewallRequest{Project: b.Project, Firewall: b.Name}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return fmt.Errorf("read firewall rule %s of %s: %w", b.Name, b.Project, err)
	}
	if fw.GetDisabled() == disabled {
		return remediators.ErrConverged
	}
	verb := map[bool]string{true: "disable", false: "enable"}[disabled]
	var op *compute.Operation
	// Only the flag is sent: PATCH leaves every other field of the rule as it is.
	err = call(ctx, r.c, b.Project, "compute.PatchFirewall", func(ctx context.Context) (err error) {
		op, err = r.c.Firewalls.Patch(ctx, &computepb.PatchFirewallRequest{Project: b.Project, Firewall: b.Name,
			FirewallResource: &computepb.Firewall{Disabled: proto.Bool(disabled)}}, gcpapi.NoRetry())
		return err
	})
	if err == nil && !op.Done() {
		err = call(ctx, r.c, b.Project, "compute.GetGlobalOperation", func(ctx context.Context) error { return op.Wait(ctx) })
	}
	if err == nil {
		err = operationError(op.Proto())
	}
	if err != nil {
		return fmt.Errorf("%s firewall rule %s of %s: %w", verb, b.Name, b.Project, err)
	}
	return nil
}

// OperationError is a Compute operation that finished in error. Its HTTP status is the
// one Google gives the operation (503 for a backend that was unavailable, 429 for a
// quota), so that remediate.Transient can tell a failure worth retrying soon from one
// that is not, as it does for a call answered with an error.
type OperationError struct {
	Operation string
	Status    int    // the operation's http_error_status_code, 0 when it gives none
	Code      string // the first error's code (QUOTA_EXCEEDED, …)
	Message   string
}

func (e *OperationError) Error() string {
	msg := e.Message
	if e.Code != "" {
		msg = e.Code + ": " + msg
	}
	return fmt.Sprintf("operation %s: %s", e.Operation, msg)
}

// HTTPStatusCode is the operation's HTTP status.
func (e *OperationError) HTTPStatusCode() int { return e.Status }

// operationError returns the error a finished operation carries, or nil.
func operationError(op *computepb.Operation) error {
	e := op.GetError()
	if e == nil || len(e.GetErrors()) == 0 {
		return nil
	}
	first := e.GetErrors()[0]
	return &OperationError{Operation: op.GetName(), Status: int(op.GetHttpErrorStatusCode()), Code: first.GetCode(), Message: first.GetMessage()}
}
