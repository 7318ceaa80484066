// Package deploy holds what runs warden elsewhere than a terminal, and the tests that
// keep it true to the code: kubernetes/base is a kustomize base for warden serve
// (replicas on PostgreSQL), helm/warden a Helm chart of the same pod (replicas on
// PostgreSQL or one on SQLite with a volume, IRSA and Workload Identity annotations, an
// optional ServiceMonitor, and docs/alerts.yml as a PrometheusRule), slack/manifest.yaml
// the Slack app the approval channel needs. The repository's Dockerfile, which builds
// the image they run, is checked here too. The package has no code of its own: its
// tests build the base and render the chart with Helm's own library under each values
// file of helm/warden/ci, decode every object strictly into the Kubernetes API types,
// hold the chart's defaults equal to the base where they overlap, read the config with
// warden's config package, and run the built warden serve as the Deployment would.
package deploy

// The chart reads its alerts from inside itself (Helm's .Files); docs/alerts.yml is the
// one source, and TestChart_alertsAreDocsAlerts fails until the copy is refreshed.
//go:generate cp ../docs/alerts.yml helm/warden/files/alerts.yml
