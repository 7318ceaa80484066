package deploy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	chartDir = "helm/warden"
	// releaseName is the release the tests install: named as the chart, the objects get
	// the kustomize base's names.
	releaseName      = "warden"
	releaseNamespace = "security"
	// chartAlerts is the chart's copy of docs/alerts.yml (go generate ./deploy).
	chartAlerts = chartDir + "/files/alerts.yml"
	docsAlerts  = "../docs/alerts.yml"
	notesSuffix = "/NOTES.txt"
)

// serviceMonitor is what the chart sets of Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1): decoding strictly, a field the operator does not have (or
// this test does not know) fails.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		JobLabel          string               `json:"jobLabel"`
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// prometheusRule is Prometheus Operator's PrometheusRule: its spec is a Prometheus rule
// file.
type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ruleFile `json:"spec"`
}

// ruleFile is a Prometheus rule file (docs/alerts.yml), with the fields Prometheus reads.
type ruleFile struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Limit    int    `json:"limit,omitempty"`
		Rules    []struct {
			Alert         string            `json:"alert,omitempty"`
			Record        string            `json:"record,omitempty"`
			Expr          string            `json:"expr"`
			For           string            `json:"for,omitempty"`
			KeepFiringFor string            `json:"keep_firing_for,omitempty"`
			Labels        map[string]string `json:"labels,omitempty"`
			Annotations   map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

// loadChart loads the chart with Helm's loader, as `helm install deploy/helm/warden` does.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatalf("load chart %s: %v", chartDir, err)
	}
	return ch
}

// readValues reads a values file as `helm install -f` does; "" is the chart's defaults.
func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vals, err := loader.LoadValues(f)
	if err != nil {
		t.Fatalf("read values %s: %v", file, err)
	}
	return vals
}

// renderValues renders the chart with vals as `helm install --dry-run` does: Helm's
// coalescing of the chart's values, its check against values.schema.json, and its
// template engine, strict about missing values. It returns each template's output.
func renderValues(ch *chart.Chart, vals map[string]any) (map[string]string, error) {
	top, err := util.ToRenderValues(ch, vals, common.ReleaseOptions{
		Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true,
	}, common.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.RenderWithContext(context.Background(), ch, top)
}

// renderChart renders the chart with the values file (""; the defaults) and decodes
// every object strictly into its API type. It returns the objects and NOTES.txt.
func renderChart(t *testing.T, file string) (*rendered, string) {
	t.Helper()
	out, err := renderValues(loadChart(t), readValues(t, file))
	if err != nil {
		t.Fatalf("render %s with %q: %v", chartDir, file, err)
	}
	r := &rendered{}
	var notes string
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if strings.HasSuffix(name, notesSuffix) {
			notes = out[name]
			continue
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out[name])))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var head struct {
				metav1.TypeMeta   `json:",inline"`
				metav1.ObjectMeta `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s is not YAML: %v\n%s", name, err, doc)
			}
			if head.Kind == "" && len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue // a template that made nothing (a disabled object)
			}
			if head.Namespace != "" {
				t.Errorf("%s: %s sets its namespace: the release's is Helm's to give", name, head.Kind)
			}
			r.decode(t, name, head.APIVersion+"/"+head.Kind, head.Name, doc)
		}
	}
	for _, key := range []string{deploymentKind, serviceKind, serviceAccountKind, configMapKind} {
		if !r.kinds[key] {
			t.Fatalf("the chart makes no %s with %q", key, file)
		}
	}
	return r, notes
}

// chartCase is one values file of the chart's ci/ (the files chart-testing installs)
// and what it must change in what the chart makes.
type chartCase struct {
	file string
	// kinds are the objects it makes besides the Deployment, Service, ServiceAccount
	// and ConfigMap.
	kinds []string
	check func(t *testing.T, r *rendered)
}

func chartCases() map[string]chartCase {
	ci := func(name string) string { return filepath.Join(chartDir, "ci", name+"-values.yaml") }
	return map[string]chartCase{
		"default": {"", []string{networkPolicyKind}, func(t *testing.T, r *rendered) {
			if got := *r.deployment.Spec.Replicas; got != 2 {
				t.Errorf("replicas %d, want values.yaml's 2", got)
			}
			if img := r.container(t).Image; img != "ghcr.io/warden-sec/warden:dev" {
				t.Errorf("image %s, want the repository at the chart's appVersion", img)
			}
			if a := r.serviceAccount.Annotations; len(a) != 0 {
				t.Errorf("service account annotations %v, want none", a)
			}
		}},
		"sqlite": {ci("sqlite"), []string{networkPolicyKind, pvcKind}, func(t *testing.T, r *rendered) {
			// checkDeployment holds it to one replica and Recreate, whatever replicaCount says.
			pod := r.deployment.Spec.Template.Spec
			_, v := mountFor(r.container(t), pod, path.Dir(r.wardenConfig(t).DB))
			if v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != r.pvc.Name {
				t.Fatalf("the database's volume %+v is not the chart's claim %s", v, r.pvc.Name)
			}
			if size := r.pvc.Spec.Resources.Requests.Storage().String(); size != "5Gi" {
				t.Errorf("the claim requests %s, want 5Gi", size)
			}
			if sc := r.pvc.Spec.StorageClassName; sc == nil || *sc != "standard" {
				t.Errorf("storage class %v, want standard", sc)
			}
			if r.pvc.Annotations["helm.sh/resource-policy"] != "keep" {
				t.Error("the claim is deleted with the release, and the database with it")
			}
			if g := pod.SecurityContext.FSGroup; g == nil || *g != *pod.SecurityContext.RunAsGroup {
				t.Errorf("fsGroup %v: the nonroot user cannot write the volume", g)
			}
		}},
		"replicas": {ci("replicas"), []string{networkPolicyKind}, func(t *testing.T, r *rendered) {
			if got := *r.deployment.Spec.Replicas; got != 3 {
				t.Errorf("replicas %d, want 3", got)
			}
			if img := r.container(t).Image; !strings.HasPrefix(img, "ghcr.io/warden-sec/warden@sha256:") {
				t.Errorf("image %s, want pinned by the digest", img)
			}
			// checkNetworkPolicy wants the egress on postgres.url's port, 6432; here, to the pooler alone.
			for _, rule := range r.networkPolicy.Spec.Egress {
				if rule.Ports[0].Port.IntValue() == 6432 && (len(rule.To) != 1 || rule.To[0].PodSelector == nil) {
					t.Errorf("egress to the database %+v, want networkPolicy.postgresTo's peer", rule.To)
				}
			}
		}},
		"monitoring": {ci("monitoring"), []string{networkPolicyKind, serviceMonitorKind, prometheusRuleKind}, func(t *testing.T, r *rendered) {
			sm := r.serviceMonitor
			sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
			if err != nil || sel.Empty() || !sel.Matches(labels.Set(r.service.Labels)) {
				t.Errorf("the ServiceMonitor's selector %v does not select the Service's labels %v", sm.Spec.Selector, r.service.Labels)
			}
			if !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{releaseNamespace}) {
				t.Errorf("namespaceSelector %v, want the release's namespace", sm.Spec.NamespaceSelector.MatchNames)
			}
			// docs/alerts.yml's rules ask for job="warden": the operator names the job
			// after the Service's jobLabel label.
			if job := r.service.Labels[sm.Spec.JobLabel]; job != "warden" {
				t.Errorf("jobLabel %q gives job=%q, docs/alerts.yml's rules select job=\"warden\"", sm.Spec.JobLabel, job)
			}
			if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != r.service.Spec.Ports[0].Name ||
				sm.Spec.Endpoints[0].Path != "/metrics" || sm.Spec.Endpoints[0].Interval != "15s" {
				t.Errorf("endpoints %+v, want the Service's port %s, /metrics, every 15s", sm.Spec.Endpoints, r.service.Spec.Ports[0].Name)
			}
			for kind, l := range map[string]map[string]string{"ServiceMonitor": sm.Labels, "PrometheusRule": r.prometheusRule.Labels} {
				if l["release"] != "prometheus" {
					t.Errorf("the %s's labels %v lack release: prometheus, which Prometheus selects it by", kind, l)
				}
			}
			if want := readRuleFile(t, docsAlerts); !reflect.DeepEqual(r.prometheusRule.Spec, want) {
				t.Errorf("the PrometheusRule's rules differ from docs/alerts.yml's:\n%s", diffYAML(t, r.prometheusRule.Spec, want))
			}
		}},
		"workload-identity": {ci("workload-identity"), []string{networkPolicyKind}, func(t *testing.T, r *rendered) {
			want := map[string]string{
				"eks.amazonaws.com/role-arn":     "arn:aws:iam::111122223333:role/warden-scanner",
				"iam.gke.io/gcp-service-account": "warden-scanner@acme-security.iam.gserviceaccount.com",
				"example.com/owner":              "platform",
			}
			if got := r.serviceAccount.Annotations; !maps.Equal(got, want) {
				t.Errorf("service account annotations %v, want %v", got, want)
			}
			var metadata []string
			for _, rule := range r.networkPolicy.Spec.Egress {
				for _, to := range rule.To {
					if to.IPBlock != nil {
						metadata = append(metadata, to.IPBlock.CIDR+":"+rule.Ports[0].Port.String())
					}
				}
			}
			if want := []string{"169.254.169.252/32:988", "169.254.169.254/32:80"}; !slices.Equal(slices.Sorted(slices.Values(metadata)), want) {
				t.Errorf("egress to %v, want GKE's metadata server %v", metadata, want)
			}
		}},
		"no-networkpolicy": {ci("no-networkpolicy"), nil, func(t *testing.T, r *rendered) {}},
	}
}

// TestChart_rendersUnderEachValuesFile renders the chart with Helm's library under each
// values file of ci/, decodes every object strictly, holds the pod to what the
// kustomize base's tests hold it to, and checks what each file is for.
func TestChart_rendersUnderEachValuesFile(t *testing.T) {
	cases := chartCases()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !slices.ContainsFunc(slices.Collect(maps.Values(cases)), func(c chartCase) bool { return c.file == f }) {
			t.Errorf("%s has no case here: what is it for?", f)
		}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, notes := renderChart(t, tc.file)
			want := append([]string{deploymentKind, serviceKind, serviceAccountKind, configMapKind}, tc.kinds...)
			if got := slices.Sorted(maps.Keys(r.kinds)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
				t.Errorf("the chart makes %v, want %v", got, slices.Sorted(slices.Values(want)))
			}
			checkConfig(t, r)
			checkDeployment(t, r)
			checkSecrets(t, r, secretName)
			checkService(t, r)
			if r.kinds[networkPolicyKind] {
				var gke []string
				if r.serviceAccount.Annotations["iam.gke.io/gcp-service-account"] != "" {
					gke = []string{"80/TCP", "988/TCP"}
				}
				checkNetworkPolicy(t, r, gke...)
			}
			for _, want := range []string{secretName, "kubectl -n " + releaseNamespace} {
				if !strings.Contains(notes, want) {
					t.Errorf("NOTES.txt does not say %q:\n%s", want, notes)
				}
			}
			tc.check(t, r)
		})
	}
}

// TestChart_defaultEqualsTheKustomizeBase renders the chart's defaults as release
// "warden" and compares what it shares with the kustomize base: the pod's containers
// (image, args, env, probes, ports, resources, security context, mounts), its security
// context and volumes, the Service's ports, the NetworkPolicy's rules, warden.yaml.
func TestChart_defaultEqualsTheKustomizeBase(t *testing.T) {
	base := buildBase(t)
	r, _ := renderChart(t, "")
	same := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs from the kustomize base's:\n%s", what, diffYAML(t, got, want))
		}
	}
	bd, d := base.deployment, r.deployment
	same("the Deployment's name", d.Name, bd.Name)
	same("replicas", d.Spec.Replicas, bd.Spec.Replicas)
	same("the revision history", d.Spec.RevisionHistoryLimit, bd.Spec.RevisionHistoryLimit)
	same("the update strategy", d.Spec.Strategy, bd.Spec.Strategy)
	bp, p := bd.Spec.Template.Spec, d.Spec.Template.Spec
	same("the containers", p.Containers, bp.Containers)
	same("the pod's security context", p.SecurityContext, bp.SecurityContext)
	same("the volumes", p.Volumes, bp.Volumes)
	same("the service account", []any{p.ServiceAccountName, p.AutomountServiceAccountToken, r.serviceAccount.Name, r.serviceAccount.AutomountServiceAccountToken},
		[]any{bp.ServiceAccountName, bp.AutomountServiceAccountToken, base.serviceAccount.Name, base.serviceAccount.AutomountServiceAccountToken})
	same("the grace period", p.TerminationGracePeriodSeconds, bp.TerminationGracePeriodSeconds)
	same("the Service", []any{r.service.Name, r.service.Spec.Type, r.service.Spec.Ports}, []any{base.service.Name, base.service.Spec.Type, base.service.Spec.Ports})
	bn, n := base.networkPolicy.Spec, r.networkPolicy.Spec
	same("the NetworkPolicy's rules", []any{n.PolicyTypes, n.Ingress, n.Egress}, []any{bn.PolicyTypes, bn.Ingress, bn.Egress})
	same("the ConfigMap's name", r.configMap.Name, base.configMap.Name)
	same("warden.yaml", parseYAML(t, r.configMap.Data[configKey]), parseYAML(t, base.configMap.Data[configKey]))
	// The selectors add the release's label to the base's: they still pick the pods.
	spread := func(tscs []corev1.TopologySpreadConstraint) []corev1.TopologySpreadConstraint {
		out := slices.Clone(tscs)
		for i := range out {
			sel, err := metav1.LabelSelectorAsSelector(out[i].LabelSelector)
			if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Errorf("topology spread selector %v does not select the pods", out[i].LabelSelector)
			}
			out[i].LabelSelector = nil
		}
		return out
	}
	same("the topology spread", spread(p.TopologySpreadConstraints), spread(bp.TopologySpreadConstraints))
	for k, v := range bd.Spec.Selector.MatchLabels {
		if d.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("the selector %v lacks the base's %s=%s", d.Spec.Selector.MatchLabels, k, v)
		}
	}
}

// TestChart_alertsAreDocsAlerts: the PrometheusRule's rules are docs/alerts.yml's, the
// one file the docs tests check against the metrics warden exports.
func TestChart_alertsAreDocsAlerts(t *testing.T) {
	docs, err := os.ReadFile(docsAlerts)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(chartAlerts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs, copied) {
		t.Fatalf("%s differs from docs/alerts.yml: run go generate ./deploy", chartAlerts)
	}
	if len(readRuleFile(t, docsAlerts).Groups) == 0 {
		t.Fatal("docs/alerts.yml has no rule group")
	}
	// The rendering itself: TestChart_rendersUnderEachValuesFile/monitoring.
}

// TestChart_lints runs Helm's linter (helm lint) under each values file: the chart's
// metadata, values against values.schema.json, every template's output, deprecated APIs.
func TestChart_lints(t *testing.T) {
	for name, tc := range chartCases() {
		t.Run(name, func(t *testing.T) {
			res := lint.RunAll(chartDir, readValues(t, tc.file), releaseNamespace)
			for _, m := range res.Messages {
				if m.Severity >= support.WarningSev {
					t.Error(m.Error())
				} else {
					t.Log(m.Error())
				}
			}
		})
	}
}

// TestChart_refusesWhatWouldNotRun: values warden could not run with fail at install,
// saying which value and why, rather than making a pod that crashes.
func TestChart_refusesWhatWouldNotRun(t *testing.T) {
	ch := loadChart(t)
	tests := []struct {
		name string
		vals string
		want string
	}{
		{"an unknown mode", "mode: mysql", "'/mode': value must be one of"},
		{"a password in the database URL", "postgres: {url: 'postgres://warden:hunter2@db:5432/warden'}", "postgres.url holds a password"},
		{"a password as a URL parameter", "postgres: {url: 'postgres://warden@db/warden?password=hunter2'}", "postgres.url holds a password"},
		{"db: in the config", "config: 'db: /tmp/x.db'", "config has a db: section"},
		{"serve: in the config", "config: 'serve: {listen: 127.0.0.1:9090}'", "config has a serve: section"},
		{"a config that is not a mapping", "config: '[a, b'", "config is not a YAML mapping"},
		{"no Secret", "secret: {name: ''}", "'/secret/name'"},
		{"a misspelt value", "replicas: 3", "'replicas' not allowed"},
		{"a service account that is no role ARN", "serviceAccount: {aws: {roleArn: warden-role}}", "'/serviceAccount/aws/roleArn'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals, err := loader.LoadValues(strings.NewReader(tt.vals))
			if err != nil {
				t.Fatal(err)
			}
			_, err = renderValues(ch, vals)
			if err == nil {
				t.Fatalf("%s renders", tt.vals)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// readRuleFile reads a Prometheus rule file strictly.
func readRuleFile(t *testing.T, file string) ruleFile {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(b, &rf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return rf
}

func parseYAML(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return v
}

// diffYAML shows how two values differ, as the lines of their YAML: "-" got, "+" want.
func diffYAML(t *testing.T, got, want any) string {
	t.Helper()
	g, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	return lineDiff(strings.Split(string(g), "\n"), strings.Split(string(w), "\n"))
}

// lineDiff is the lines of a and b outside their longest common subsequence, with
// the line of b before which each stands.
func lineDiff(a, b []string) string {
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&out, "line %d: + %s\n", j+1, b[j])
			j++
		default:
			fmt.Fprintf(&out, "line %d: - %s\n", j+1, a[i])
			i++
		}
	}
	return out.String()
}

// stripComments drops a YAML document's comment lines.
func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// TestChart_valuesAreDocumented: every value in values.yaml has a comment, above it or
// on its line, so that values.yaml is the chart's reference (docs/deploy.md points to it).
func TestChart_valuesAreDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var undocumented []string
	var walk func(prefix string, n *yamlv3.Node)
	walk = func(prefix string, n *yamlv3.Node) {
		switch {
		case n.Kind == yamlv3.DocumentNode || n.Kind == yamlv3.SequenceNode:
			for i, c := range n.Content {
				walk(strings.TrimSuffix(prefix, ".")+"["+strconv.Itoa(i)+"].", c)
			}
		case n.Kind == yamlv3.MappingNode && n.Style&yamlv3.FlowStyle == 0:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.HeadComment == "" && k.LineComment == "" && v.LineComment == "" {
					undocumented = append(undocumented, prefix+k.Value)
				}
				walk(prefix+k.Value+".", v)
			}
		}
	}
	walk("", doc.Content[0])
	if len(undocumented) > 0 {
		t.Errorf("values.yaml: no comment on %s", strings.Join(undocumented, ", "))
	}
	// The walk saw the values: a file of one undocumented value would say so above.
	if !bytes.Contains(b, []byte("\n# mode is")) {
		t.Error("values.yaml does not document mode first")
	}
}

// TestChart_servesAsDeployed runs the built warden serve as the chart's SQLite pod
// would: its args, its warden.yaml, its environment from the Secret (no
// postgres-password), as TestServe_asDeployed does for the kustomize base.
func TestChart_servesAsDeployed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs warden serve")
	}
	r, _ := renderChart(t, chartCases()["sqlite"].file)
	serveAsDeployed(t, r)
}
