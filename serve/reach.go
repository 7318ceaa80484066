package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/remediate"
)

// Reach says why a serve over targets t cannot reach the cloud of the resource uid — no
// target for it, naming the flag and the config key that would give one — or "" when
// it can (remediate.Options.Reach).
func Reach(t collect.Targets) func(uid string) string {
	return func(uid string) string {
		switch {
		case strings.HasPrefix(uid, "arn:") && t.AWS == nil:
			return "no AWS target: start warden serve with --aws (or --aws-org, --sim WORLD), or set targets.aws in the config"
		case strings.HasPrefix(uid, "//") && t.GCP == nil:
			return "no GCP target: start warden serve with --gcp-project P, or set targets.gcp in the config"
		case strings.HasPrefix(uid, "tls://") && len(t.TLS) == 0:
			return "no TLS target: start warden serve with --tls HOST:PORT, or set targets.tls in the config"
		}
		return ""
	}
}

// warnUnreachable warns, as serve starts, of what it will not apply: without any live
// target, approvals it records are never applied here; and the actions waiting (for an
// approval, approved, in progress) whose cloud it has no target for, counted by the
// reason and named by the flag that is missing.
func warnUnreachable(ctx context.Context, m *remediate.Machine, t collect.Targets, dryRun bool, log *slog.Logger) error {
	if dryRun {
		return nil
	}
	if t.Empty() {
		log.Warn("warden serve has no live target: it records decisions but applies no fix; start it with --aws, --aws-org, --gcp-project P, --tls HOST:PORT or --sim WORLD, or set targets: in the config")
	}
	all, err := m.Actions(ctx)
	if err != nil {
		return fmt.Errorf("read the actions waiting: %w", err)
	}
	reach := Reach(t)
	byWhy := map[string][]string{}
	for _, r := range all {
		switch r.State {
		case remediate.StatePending, remediate.StateApproved, remediate.StateInProgress, remediate.StateApplying:
		default:
			continue
		}
		if why := reach(r.Target); why != "" {
			byWhy[why] = append(byWhy[why], r.ID)
		}
	}
	for _, why := range slices.Sorted(maps.Keys(byWhy)) {
		ids := byWhy[why]
		log.Warn("warden serve cannot apply actions that wait: "+why, "actions", len(ids), "first", ids[0])
	}
	return nil
}

// Logger is warden serve's logger when --log-level is not given: text on w, at info, so
// that the fixes it takes up and how they end are seen.
func Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
