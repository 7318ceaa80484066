// Package remediators holds the fixes warden can apply: the Remediator interface each
// fix implements, the Action a plan hands it, and the registry that finds a fix by the
// action name policies give in custom.remediation.action. The cloud-specific fixes live
// in aws/ and gcp/, one file each; a new fix is one file plus its registration.
//
// A remediator only speaks to its cloud. Intent records, gates, drift re-checks,
// verification and audit belong to the caller (package remediate).
package remediators

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
)

// ErrNoRollback is returned by Rollback when the cloud keeps no way back (a deleted login
// profile cannot be restored with its password).
var ErrNoRollback = errors.New("this fix cannot be rolled back")

// ErrConverged is returned by Apply when the target was already in the fixed state: the
// call made no change, and the action is a success without a write.
var ErrConverged = errors.New("already converged")

// ErrNotApplicable is returned (wrapped, with the reason) by Targets when the fix cannot
// act on this resource at all (a certificate ACM issued and renews itself, an endpoint
// warden has no delivery for): the plan turns the finding into a notice saying why,
// rather than pretending the resource looks fixed.
var ErrNotApplicable = errors.New("this fix does not apply here")

// Param is one parameter an action needs from the violation that asks for it.
type Param struct {
	// Name is the violation field carrying the value ("member", "role", "target").
	Name string
	// Required params must be declared by every policy naming the action and present in
	// each of its violations; optional ones are passed on when present.
	Required bool
	// Doc says what the value is, for errors and --help.
	Doc string
}

// Target is one part of an observed resource that a fix touches, as Targets finds it.
type Target struct {
	// Part names the smallest piece that carries the problem, stable across reads: the
	// rule uid, "roles/editor/user:bob@example.com", the attachment "user/alice", the key id.
	Part string
	// Before is the part's observed state, enough to recognise drift (compared byte for
	// byte with the planned one) and to roll back. Canonical JSON.
	Before json.RawMessage
	// Rollback, when set, is what the plan shows for undoing this target's fix instead of
	// the remediator's Spec().Rollback: some targets can be undone and others of the same
	// fix cannot.
	Rollback *Rollback
}

// Rollback says whether an applied fix can be undone, and if not, why not.
type Rollback struct {
	Possible bool   `json:"possible"`
	Reason   string `json:"reason,omitempty"`
}

// Action is one planned fix of one part of one resource. Plans carry it, approvals bind
// to its content hash, apply hands it to the remediator.
type Action struct {
	// ID is stable for the same fix of the same part of the same finding.
	ID string `json:"id"`
	// Remediator is the action name, e.g. "aws.iam.deactivate_access_key".
	Remediator string `json:"remediator"`
	// Target is the uid of the resource; ResourceType, Account and Region locate it.
	Target       string `json:"target"`
	ResourceType string `json:"resource_type"`
	Account      string `json:"account"`
	Region       string `json:"region,omitempty"`
	// Part is Target.Part of the piece the fix touches.
	Part string `json:"part"`
	// Params are the violation's values of the remediator's declared params.
	Params map[string]any `json:"params,omitempty"`
	Risk   findings.Risk  `json:"risk"`
	// Policy and Finding (the fingerprint) say why.
	Policy  string `json:"policy"`
	Finding string `json:"finding"`
	Message string `json:"message,omitempty"`
	// Before is Target.Before as planned.
	Before   json.RawMessage `json:"before"`
	Rollback Rollback        `json:"rollback"`
	// Key is the idempotency key: the same fix of the same before-state has the same key.
	Key string `json:"key"`
}

// Spec is what a remediator declares about itself: how policies name it, what it needs
// and fixes, whether it can be undone, what it makes moot, and the cloud permissions of
// its calls. The registry checks it at registration; plans, the gates' messages and
// warden's least-privilege documents are made from it.
type Spec struct {
	// Action is the name policies give in custom.remediation.action, e.g.
	// "aws.ec2.revoke_ingress": the registry finds the fix by it.
	Action string
	// Params declares what the action needs from a violation; the engine checks the
	// policies naming the action against it at load.
	Params []Param
	// ResourceTypes are the resource types the fix applies to (at least one).
	ResourceTypes []string
	// Rollback says whether Rollback can undo Apply, and if not, why not (a reason is
	// required then). A plan shows it for each action unless the target says otherwise
	// (Target.Rollback).
	Rollback Rollback
	// Supersedes names the actions this fix makes moot on the same part: deactivating an
	// unused key leaves nothing to rotate. A plan that finds both on one part keeps this
	// one and turns the others into notices, so that two fixes of one part never race.
	Supersedes []string
	// Permissions are the cloud permissions of every call the fix makes: its writes, the
	// reads that find its target's current state before writing, and those of its
	// rollback. warden's least-privilege documents (package permissions) are generated
	// from them. The re-read of the target before and after a fix goes through the
	// collectors, whose reads are the scanner's.
	Permissions Permissions
}

// Remediator converges one kind of drift on one kind of resource. Apply and Rollback are
// called again after a crash or retry: both must be safe to repeat.
type Remediator interface {
	// Spec declares the fix: its action name, parameters, resource types, rollback,
	// what it supersedes and its permissions. It is the same on every call.
	Spec() Spec
	// Targets finds in an observed resource the parts a violation with these params asks
	// to fix, each with its before-state. No target means the resource is converged.
	Targets(res snapshot.Resource, params map[string]any) ([]Target, error)
	// Apply makes the one change of a, and nothing else. It returns ErrConverged when
	// the part was already fixed (gone, disabled, detached) so no write was needed.
	Apply(ctx context.Context, a Action) error
	// Rollback restores a.Before; ErrNoRollback when impossible.
	Rollback(ctx context.Context, a Action) error
}

// Permissions are the cloud permissions some part of warden needs for the calls it makes.
// warden's least-privilege policies (package permissions, `warden permissions`) are
// generated from them, and a test checks them against the calls recorded by the
// simulator, so that a new call without its permission fails there and not in a
// customer's account.
type Permissions struct {
	// AWS are IAM actions, "iam:UpdateAccessKey".
	AWS []string
	// GCP are IAM permissions, "compute.firewalls.update".
	GCP []string
}
