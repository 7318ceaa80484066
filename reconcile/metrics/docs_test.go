package metrics

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The docs are tested against the code so that a renamed metric cannot leave a table
// row on a name that no longer exists (docs/docs_alerts_test.go does the same for the
// alerts, against what warden exports). (promtool's own `check rules` and
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
