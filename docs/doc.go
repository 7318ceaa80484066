// Package docs is warden's documentation: the pages of this folder, and the tests that
// keep them true. TestDocs runs every shell block of every page against the simulator
// (the conventions are in docs_test.go and README.md); TestDocs_alertRules checks the
// Prometheus rules of alerts.yml against the metrics warden exports.
package docs
