package export_test

import (
	"context"
	"log"
	"log/slog"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/export"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/store"
)

// The daemon's schedule: one exporter from the reports: section, run every reports.every.
// A run that fails for some reports has written the others; it is logged and the next
// run tries again.
func ExampleExporter_Run() {
	ctx := context.Background()
	var (
		st  *store.Store   // the history warden serve keeps
		lg  *audit.Log     // its audit log
		eng *engine.Engine // the policies the scans ran
	)
	ex, err := export.New(ctx, export.Options{
		Frameworks:  []string{"cis-aws-3.0", "soc2"},
		Formats:     []string{"html", "json", "ocsf"},
		Destination: "s3://acme-audit/warden",
		Region:      "eu-west-1",
		Keep:        30,
		Store:       st,
		Log:         lg,
		Evidence:    evidence.Options{Policies: eng.Policies(), Settings: evidence.SettingsInEffect(eng.SettingsSchema(), nil), Tool: "warden"},
		Logger:      slog.Default(),
	})
	if err != nil {
		log.Fatal(err)
	}
	tick := time.NewTicker(24 * time.Hour)
	defer tick.Stop()
	for {
		if _, err := ex.Run(ctx, time.Now()); err != nil {
			slog.Error("scheduled reports", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
