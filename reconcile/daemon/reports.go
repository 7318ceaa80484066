package daemon

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/export"
	"github.com/warden-sec/warden/store"
)

// ReportsWaitForEvidence is how long scheduled reports wait, when nothing has been read
// yet, before they look again.
const ReportsWaitForEvidence = 15 * time.Second

// ReportsTask is the reports: section of warden serve as a task: every interval, each
// framework of o gathered once from the history and written in every format to o's
// destination, the oldest beyond o.Keep deleted. evidenceOf gives o.Evidence at each run,
// since what the evidence is judged with changes (the waivers file). The destination and
// formats are checked at once; a run with nothing read yet to report on waits
// ReportsWaitForEvidence (Later) instead of failing.
func ReportsTask(ctx context.Context, o export.Options, interval time.Duration, evidenceOf func() (evidence.Options, error), log *slog.Logger) (Task, error) {
	if _, err := export.New(ctx, o); err != nil {
		return Task{}, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A run reports the posture as it stands when it runs: a run that waited for the
	// first evidence reports what it found, not the empty posture of when it was due.
	return Task{Name: "reports", Every: interval, Run: func(ctx context.Context, _ time.Time) error {
		ro := o
		var err error
		if ro.Evidence, err = evidenceOf(); err != nil {
			return err
		}
		ex, err := export.New(ctx, ro)
		if err != nil {
			return err
		}
		res, err := ex.Run(ctx, time.Now())
		if err != nil && allNoEvidence(res) {
			// Nothing read yet (the first sweep is still running): not a failure.
			return Later(ReportsWaitForEvidence, "no scan or daemon read yet to report on")
		}
		log.Info("scheduled reports written", "destination", ex.Destination().String(), "reports", len(res.Reports), "failed", len(res.Failed()))
		return err
	}}, nil
}

// allNoEvidence reports whether every report of res failed for want of any evidence.
func allNoEvidence(res export.Result) bool {
	failed := res.Failed()
	if len(failed) == 0 || len(failed) != len(res.Reports) {
		return false
	}
	for _, r := range failed {
		if !errors.Is(r.Err, store.ErrNoScans) {
			return false
		}
	}
	return true
}
