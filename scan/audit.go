package scan

import (
	"context"
	"fmt"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

// Audit returns a Request.Recorded hook that records the scan in the audit log, in the
// transaction that saves it: first each version event whose subject changed since its
// kind was last recorded (the policy pack, the config; see audit.Log.AppendChanged),
// then scan.recorded, then one finding.opened per new finding and one finding.resolved
// per finding the scan no longer sees. Findings carried over as unknown are neither:
// a scope that could not be read resolves nothing.
func Audit(l *audit.Log, actor string, versions ...audit.Event) func(context.Context, *store.Tx, store.ScanRecord, findings.Diff) error {
	return func(ctx context.Context, tx *store.Tx, rec store.ScanRecord, diff findings.Diff) error {
		for _, v := range versions {
			v.Actor = actor
			if _, err := l.AppendChanged(ctx, tx, v); err != nil {
				return err
			}
		}
		subject := fmt.Sprintf("scan/%d", rec.ID)
		evs := make([]audit.Event, 0, 1+len(diff.New)+len(diff.Resolved))
		evs = append(evs, audit.Event{Actor: actor, Kind: audit.KindScanRecorded, Subject: subject, Data: map[string]any{
			"snapshot": rec.Snapshot, "source": rec.Source, "collected_at": store.FormatTime(rec.CollectedAt),
			"resources": rec.Resources, "policies": rec.Policies, "scopes": rec.Scopes,
			"findings": map[string]int{"new": len(diff.New), "open": len(diff.Open), "resolved": len(diff.Resolved), "unknown": len(diff.Unknown)},
		}})
		for _, f := range diff.New {
			evs = append(evs, findingEvent(actor, audit.KindFindingOpened, subject, f))
		}
		for _, f := range diff.Resolved {
			evs = append(evs, findingEvent(actor, audit.KindFindingResolved, subject, f))
		}
		if _, err := l.AppendAll(ctx, tx, evs); err != nil {
			return fmt.Errorf("audit %s: %w", subject, err)
		}
		return nil
	}
}

func findingEvent(actor, kind, scan string, f findings.Finding) audit.Event {
	return audit.Event{Actor: actor, Kind: kind, Subject: f.Fingerprint, Data: map[string]any{
		"scan": scan, "policy": f.Policy, "severity": f.Severity.String(), "resource": f.Resource,
		"account": f.Account, "region": f.Region, "message": f.Message,
	}}
}

// VersionEvents are the version events of a run, for Audit and the remediation
// machine: the policy pack eng runs (subject engine.Engine.Version) and, when a config
// file was read, the config (subject its config.Config.Version). Each is recorded when
// it changes, so the log shows which pack and which settings judged every later event.
func VersionEvents(eng *engine.Engine, configFile, configVersion string) []audit.Event {
	evs := []audit.Event{{Kind: audit.KindPolicyPack, Subject: eng.Version(), Data: map[string]any{"policies": len(eng.Policies())}}}
	if configVersion != "" {
		evs = append(evs, audit.Event{Kind: audit.KindConfig, Subject: configVersion, Data: map[string]any{"file": configFile}})
	}
	return evs
}
