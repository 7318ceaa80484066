package permissions

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/warden-sec/warden/internal/cloudsim"
)

// simCall is one call the simulator served, as its debug line names it: the service and
// operation its counters key by, and the account (AWS account id, GCP project, or
// "folders/N" and "organizations/N" for Resource Manager), which Calls does not keep
// but a GCP permission depends on (getIamPolicy of a project, folder or organisation).
type simCall struct{ Service, Action, Account string }

func (c simCall) key() string { return c.Service + ":" + c.Action }

// action is the IAM action an AWS call needs: its key, but for the operations AWS
// authorizes under another action's name.
func (c simCall) action() string {
	if a, ok := renamedActions[c.key()]; ok {
		return a
	}
	return c.key()
}

// renamedActions are the AWS operations whose IAM action has another name: Access
// Analyzer's V2 finding calls use the actions of the first version (its API reference:
// "ListFindings and ListFindingsV2 both use access-analyzer:ListFindings").
var renamedActions = map[string]string{
	"access-analyzer:ListFindingsV2": "access-analyzer:ListFindings",
	"access-analyzer:GetFindingV2":   "access-analyzer:GetFinding",
}

// callRecorder is the simulator's logger: it keeps the line the simulator writes for
// every call it serves.
type callRecorder struct {
	mu    sync.Mutex
	calls []simCall
}

func (r *callRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *callRecorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "call" {
		return nil
	}
	var c simCall
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "service":
			c.Service = a.Value.String()
		case "action":
			c.Action = a.Value.String()
		case "account":
			c.Account = a.Value.String()
		}
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	return nil
}

func (r *callRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *callRecorder) WithGroup(string) slog.Handler      { return r }

// take returns the calls recorded since the last take and forgets them.
func (r *callRecorder) take() []simCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// sameOperations checks that the recorded lines name the operations the simulator's own
// counters do (a call refused before it is served, for bad credentials, is counted but
// writes no line: it would go unchecked).
func sameOperations(recorded []simCall, counted map[string]cloudsim.CallStats) error {
	var a, b []string
	for _, c := range recorded {
		a = append(a, c.key())
	}
	for k := range counted {
		b = append(b, k)
	}
	a, b = sortedSet(a), sortedSet(b)
	if !slices.Equal(a, b) {
		return fmt.Errorf("the recorded calls %v are not the counted ones %v", a, b)
	}
	return nil
}

// awsServices are the simulator's AWS services; their operations are IAM actions of the
// same name ("iam:ListUsers" is the action iam:ListUsers).
var awsServices = map[string]bool{"iam": true, "sts": true, "ec2": true, "acm": true, "organizations": true, "secretsmanager": true, "s3": true,
	"access-analyzer": true, "securityhub": true}

// gcpCallPermissions are the permissions Google checks for one call, as the simulator
// enforces them (cloudsim.GCPCallPermissions); ok is false for an operation it does not
// know. Two calls differ from the simulator's view: it counts the Policy Analyzer's two
// activity types as one operation, which the collector always asks both of (so the call
// stands for both permissions), and it never refuses a search of projects, for which
// Google checks resourcemanager.projects.get project by project.
func gcpCallPermissions(c simCall) (perms []string, ok bool) {
	switch c.key() {
	case "policyanalyzer:QueryActivity":
		return []string{"policyanalyzer.serviceAccountLastAuthenticationActivities.query",
			"policyanalyzer.serviceAccountKeyLastAuthenticationActivities.query"}, true
	case "cloudresourcemanager:SearchProjects":
		return []string{"resourcemanager.projects.get"}, true
	}
	perms = cloudsim.GCPCallPermissions(c.Service, c.Action, c.Account, "")
	return perms, perms != nil
}
