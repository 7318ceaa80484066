package watch

import (
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
)

// The finding a match opens. No policy of the pack judges it: it lives in the scope
// Scope names, which no collector reads, so no observation of the principal's own scope
// resolves it; the daemon resolves it once the fix is no longer applied (rolled back by
// its rollback job or by hand).
const (
	PolicyID = "WARDEN-WATCH-001"
	Title    = "Right-sized principal denied a removed permission"
	// AuditKind is the audit entry of each match: subject the fix's action id.
	AuditKind = "rightsize.denied"
)

// Scope is the scope of the findings of provider's account: "aws/ACCT/watch",
// "gcp/PROJECT/watch".
func Scope(provider, account string) string { return provider + "/" + account + "/watch" }

// RollbackCommand is the command that undoes the fix.
func RollbackCommand(actionID string) string { return "warden rollback " + actionID }

// Fingerprint is the finding of one fix: one finding per fix, whatever was denied and
// however often, its message naming the latest denial.
func Fingerprint(m Match) string {
	return findings.Fingerprint(PolicyID, m.Denial.Account, m.Denial.Principal, m.Fix.ID)
}

// Finding is the critical finding of a match: on the principal, naming the denied
// action, the fix and the command that rolls it back.
func Finding(m Match) findings.Finding {
	d, r := m.Denial, m.Fix
	after := d.At.Sub(r.UpdatedAt).Round(time.Minute)
	if after < 0 {
		after = 0
	}
	msg := fmt.Sprintf("%s was denied %s (%s, event %s) %s after fix %s (%s) removed it (%s); restore it with `%s`",
		d.Principal, m.Denied, d.Code, d.Source, after, r.ID, r.Remediator, m.Removed, RollbackCommand(r.ID))
	return findings.Finding{
		Policy: PolicyID, Title: Title, Severity: findings.Critical,
		Resource: d.Principal, ResourceType: principalType(d.Principal), Account: d.Account, Region: "global",
		Scope: Scope(d.Provider, d.Account), Message: msg, Fingerprint: Fingerprint(m), Key: r.ID, Target: r.Target,
		Details: map[string]any{
			"action_id": r.ID, "remediator": r.Remediator, "fix_target": r.Target, "denied": m.Denied, "removed": m.Removed,
			"event": d.Event, "code": d.Code, "event_id": d.Source, "denied_at": d.At.UTC().Format(time.RFC3339),
			"rollback": RollbackCommand(r.ID),
		},
		Status: findings.StatusOpen,
	}
}

// principalType is the resource type of a denial's principal, "" for a GCP member that
// is no resource warden reads (a person).
func principalType(uid string) string {
	switch {
	case strings.Contains(uid, ":user/"):
		return "aws.iam.user"
	case strings.Contains(uid, ":role/"):
		return "aws.iam.role"
	case strings.HasPrefix(uid, "//iam.googleapis.com/"):
		return "gcp.iam.service_account"
	}
	return ""
}

// RollbackAction is the action a watch finding offers to roll back (its key), and
// whether f is one: what the dashboard's button posts.
func RollbackAction(f findings.Finding) (string, bool) {
	if f.Policy != PolicyID || f.Key == "" {
		return "", false
	}
	return f.Key, true
}
