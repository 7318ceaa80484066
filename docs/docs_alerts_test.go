package docs

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/metrics"
)

// alertRules is docs/alerts.yml, as Prometheus reads a rule file.
type alertRules struct {
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

// exportedMetrics is every series name warden's metrics registry exposes, histograms as
// their _bucket, _sum and _count series, with the store gauges fed a state that has every
// one of them (a gauge with nothing to report, such as a checkpoint never signed, is
// absent from a scrape).
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg,
		metrics.WithQueueDepth(func(context.Context) (map[[2]string]int, error) {
			return map[[2]string]int{{"warden.collect", "available"}: 1}, nil
		}),
		metrics.WithState(func(context.Context) (metrics.State, error) {
			now := time.Now()
			return metrics.State{FindingsOpen: map[findings.Severity]int{findings.High: 1}, ApprovalsPending: 1,
				AuditEntries: 1, AuditLastCheckpoint: now,
				Scopes: []metrics.ScopeGroup{{Provider: metrics.ProviderAWS, Service: "iam", OK: 1, OldestComplete: now}}}, nil
		}))
	// The counters with free-form labels appear once something is counted.
	m.CloudCalls(metrics.ProviderAWS, "iam", 1, 1, 1)
	m.Job("warden.collect", metrics.JobDiscarded)
	m.RemediationPartial()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		if f.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+s] = true
			}
		}
	}
	return names
}

// The alert rules are read strictly, each is explained in docs/alerts.md, and each
// queries only metrics warden exports (docs/alerts.md's own blocks check the same on a
// running warden serve's /metrics).
func TestDocs_alertRulesQueryExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules alertRules
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		t.Fatalf("docs/alerts.yml: %v", err)
	}
	page, err := os.ReadFile("alerts.md")
	if err != nil {
		t.Fatal(err)
	}
	explained := regexp.MustCompile(`(?m)^### (\w+)$`).FindAllStringSubmatch(string(page), -1)
	exported := exportedMetrics(t)
	name := regexp.MustCompile(`\b(warden|go|process)_[a-z_]+\b`)
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" {
				t.Errorf("group %s: a rule without alert or expr: %+v", g.Name, r)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for: %v", r.Alert, err)
				}
			}
			if s := r.Labels["severity"]; s != "page" && s != "ticket" {
				t.Errorf("%s: severity %q, want page or ticket", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: wants a summary and a description", r.Alert)
			}
			if strings.Count(r.Expr, "(") != strings.Count(r.Expr, ")") {
				t.Errorf("%s: unbalanced parentheses in %s", r.Alert, r.Expr)
			}
			for _, m := range name.FindAllString(r.Expr, -1) {
				if strings.HasPrefix(m, "warden_") && !exported[m] {
					t.Errorf("%s queries %s, which warden does not export", r.Alert, m)
				}
			}
		}
	}
	if len(rules.Groups) != 1 || rules.Groups[0].Name != "warden.rules" {
		t.Errorf("docs/alerts.yml: want one group warden.rules, have %d groups", len(rules.Groups))
	}
	if len(alerts) < 10 {
		t.Fatalf("docs/alerts.yml has %d alerts: %v", len(alerts), alerts)
	}
	for _, want := range []string{"WardenDown", "WardenDriftFixSLOBreach", "WardenReconcileErrorRatioHigh",
		"WardenQueueBacklogGrowing", "WardenApprovalsPendingTooLong", "WardenAuditCheckpointStale",
		"WardenAccessDeniedRising", "WardenThrottledSustained"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("docs/alerts.yml has no %s", want)
		}
	}
	var headings []string
	for _, m := range explained {
		headings = append(headings, m[1])
	}
	for _, a := range alerts {
		if !slices.Contains(headings, a) {
			t.Errorf("docs/alerts.md does not explain %s (a ### %s section)", a, a)
		}
	}
	for _, h := range headings {
		if !slices.Contains(alerts, h) {
			t.Errorf("docs/alerts.md explains %s, which docs/alerts.yml does not define", h)
		}
	}
}
