package serve

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/publish"
	"github.com/warden-sec/warden/publish/sinks"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/reconcile/metrics"
)

// exportTasks are serve's export: section as one task: every export.every, what changed
// among the findings sent to Security Hub and Security Command Center (publish.Sweep),
// counted in met (warden_findings_exported_total); none without the section. A run with
// nothing read yet waits, as the reports do. closeAll closes the sinks' clients.
func (o RunOptions) exportTasks(ctx context.Context, met *metrics.Metrics) (tasks []daemon.Task, closeAll func() error, err error) {
	ex := o.Config.Export
	if ex == nil {
		return nil, func() error { return nil }, nil
	}
	s, err := sinks.Open(ctx, ex, "")
	if err != nil {
		return nil, nil, err
	}
	every := ex.Every
	if every <= 0 {
		every = config.DefaultExportEvery
	}
	log := o.Logger.With("task", "export")
	return []daemon.Task{{Name: "export", Every: every, Run: func(ctx context.Context, _ time.Time) error {
		res, _, err := s.Run(ctx, o.Store, time.Now(), log)
		for _, r := range res {
			kind, _, _ := strings.Cut(r.Sink, "/")
			met.FindingsExported(kind, r.Sent, len(r.Refused))
		}
		if errors.Is(err, publish.ErrNothingRead) {
			return daemon.Later(daemon.ReportsWaitForEvidence, "no scan or daemon read yet to export")
		}
		return err
	}}}, s.Close, nil
}
