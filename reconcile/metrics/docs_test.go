package metrics

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The docs are tested against the code so that a renamed metric cannot leave a table
// row or an alert on a name that no longer exists. (promtool's own `check rules` and
// `test rules` were run on alerts.yml by hand: the Prometheus module is too large a
// dependency to pull into warden's go.mod for a test.)

var metricName = regexp.MustCompile(`\bwarden_[a-z_]+\b`)

// allNames are the metrics the package defines, with their state gauges.
func allNames(t *testing.T) map[string]bool {
	t.Helper()
	return describedNames(t, New(nil, WithQueueDepth(fixedQueue), WithState(fixedState)))
}

// family is the metric a name in a query belongs to: a histogram's series carry
// _bucket, _sum and _count.
func family(name string, known map[string]bool) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && known[base] {
			return base
		}
	}
	return name
}

func TestDocs_metricsTableListsEveryMetric(t *testing.T) {
	b, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ := strings.Cut(rest, "`")
			rows[name] = true
		}
	}
	known := allNames(t)
	for name := range known {
		if !rows[name] {
			t.Errorf("docs/metrics.md has no row for %s", name)
		}
	}
	for _, name := range metricName.FindAllString(string(b), -1) {
		if !known[family(name, known)] {
			t.Errorf("docs/metrics.md names %s, which the package does not define", name)
		}
	}
}

func TestDocs_alertsUseOnlyDefinedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../docs/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("docs/alerts.yml: %v", err)
	}
	if len(file.Groups) != 1 || file.Groups[0].Name != "warden.rules" {
		t.Fatalf("docs/alerts.yml: want one group warden.rules, have %d groups", len(file.Groups))
	}
	known := allNames(t)
	var alerts []string
	for _, r := range file.Groups[0].Rules {
		alerts = append(alerts, r.Alert)
		if r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
			t.Errorf("alert %q lacks an expr, a severity or a summary", r.Alert)
		}
		for _, name := range metricName.FindAllString(r.Expr, -1) {
			if !known[family(name, known)] {
				t.Errorf("alert %s queries %s, which the package does not define", r.Alert, name)
			}
		}
	}
	for _, want := range []string{"WardenDown", "WardenDriftFixSLOBreach", "WardenReconcileErrorRatioHigh",
		"WardenQueueBacklogGrowing", "WardenApprovalsPendingTooLong", "WardenAuditCheckpointStale",
		"WardenAccessDeniedRising", "WardenThrottledSustained"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("docs/alerts.yml has no %s", want)
		}
	}
}
