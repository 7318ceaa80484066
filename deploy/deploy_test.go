package deploy

import (
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/slackgate"
	"github.com/warden-sec/warden/store"
)

const (
	baseDir    = "kubernetes/base"
	secretName = "warden-secrets"
	// configKey is the ConfigMap's key holding warden.yaml.
	configKey = "warden.yaml"
	// The paths warden serve answers (serve.Server.Handler); TestServe_asDeployed GETs
	// the probes' paths on the real server.
	healthPath = "/healthz"
	readyPath  = "/readyz"
)

// secretEnv are the variables warden reads its credentials from, each with where it is
// read: the Deployment must take every one from the Secret, none as a literal value.
func secretEnv() []string {
	return []string{
		slackgate.EnvBotToken,      // slackgate.LoadSecrets, by warden serve with a slack: section
		slackgate.EnvSigningSecret, // the same
		daemon.EnvEventsToken,      // daemon.LoadToken, by warden serve's openDaemon (cmd/warden/daemon.go)
		"WARDEN_AUDIT_KEY",         // cmd/warden/audit.go's auditKeyEnv (package main: not importable)
		sign.ReplicaKeyEnv,         // serve's replica signing key (serve/signed.go)
		"PGPASSWORD",               // pgx (pgconn.ParseConfig) as libpq: db: holds no password
	}
}

// rendered is the kustomize base, or the Helm chart under one values file, as the API
// server would receive it, each object decoded strictly into its API type.
type rendered struct {
	deployment     appsv1.Deployment
	service        corev1.Service
	serviceAccount corev1.ServiceAccount
	configMap      corev1.ConfigMap
	networkPolicy  networkingv1.NetworkPolicy
	// The chart's objects the base does not make (helm_test.go).
	pvc            corev1.PersistentVolumeClaim
	serviceMonitor serviceMonitor
	prometheusRule prometheusRule
	// kinds are the objects made, by group/version/kind (at most one of each).
	kinds map[string]bool
	// yaml is every object as kustomize or Helm wrote it.
	yaml [][]byte
}

// The keys (group/version/kind) of the objects the base or the chart may make.
const (
	deploymentKind     = "apps/v1/Deployment"
	serviceKind        = "v1/Service"
	serviceAccountKind = "v1/ServiceAccount"
	configMapKind      = "v1/ConfigMap"
	networkPolicyKind  = "networking.k8s.io/v1/NetworkPolicy"
	pvcKind            = "v1/PersistentVolumeClaim"
	serviceMonitorKind = "monitoring.coreos.com/v1/ServiceMonitor"
	prometheusRuleKind = "monitoring.coreos.com/v1/PrometheusRule"
)

// decode decodes one object (key is its group/version/kind) strictly into its API
// type: an object of a kind this package does not know (a Secret, in particular), two
// of one kind, or a field the type does not have fail the test.
func (r *rendered) decode(t *testing.T, source, key, name string, y []byte) {
	t.Helper()
	targets := map[string]any{
		deploymentKind:     &r.deployment,
		serviceKind:        &r.service,
		serviceAccountKind: &r.serviceAccount,
		configMapKind:      &r.configMap,
		networkPolicyKind:  &r.networkPolicy,
		pvcKind:            &r.pvc,
		serviceMonitorKind: &r.serviceMonitor,
		prometheusRuleKind: &r.prometheusRule,
	}
	dst, ok := targets[key]
	if !ok {
		t.Fatalf("%s makes a %s (%s): not one of the objects this test knows; a Secret, in particular, is never made", source, key, name)
	}
	if r.kinds == nil {
		r.kinds = map[string]bool{}
	}
	if r.kinds[key] {
		t.Fatalf("%s makes two %s", source, key)
	}
	r.kinds[key] = true
	if err := yaml.UnmarshalStrict(y, dst); err != nil {
		t.Fatalf("%s: %s %s does not decode strictly into its API type: %v\n%s", source, key, name, err, y)
	}
	r.yaml = append(r.yaml, y)
}

// buildBase runs kustomize on the base, as `kubectl kustomize` would, and decodes every
// object it makes: an object of another kind, two of one kind, or a field the API type
// does not have fail the test.
func buildBase(t *testing.T) *rendered {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), baseDir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", baseDir, err)
	}
	// The objects the base makes, each once.
	baseKinds := []string{deploymentKind, serviceKind, serviceAccountKind, configMapKind, networkPolicyKind}
	r := &rendered{}
	for _, res := range m.Resources() {
		gvk := res.GetGvk()
		key := gvk.Version + "/" + gvk.Kind
		if gvk.Group != "" {
			key = gvk.Group + "/" + key
		}
		y, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		r.decode(t, "the base", key, res.GetName(), y)
	}
	for key := range r.kinds {
		if !slices.Contains(baseKinds, key) {
			t.Fatalf("the base makes a %s: the chart's alone", key)
		}
	}
	for _, key := range baseKinds {
		if !r.kinds[key] {
			t.Fatalf("the base makes no %s", key)
		}
	}
	return r
}

// container is the Deployment's one container.
func (r *rendered) container(t *testing.T) corev1.Container {
	t.Helper()
	cs := r.deployment.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(cs))
	}
	return cs[0]
}

// wardenConfig reads the ConfigMap's warden.yaml as warden serve --config reads it.
func (r *rendered) wardenConfig(t *testing.T) *config.Config {
	t.Helper()
	data, ok := r.configMap.Data[configKey]
	if !ok {
		t.Fatalf("ConfigMap %s has no %s", r.configMap.Name, configKey)
	}
	cfg, err := config.Parse([]byte(data), "ConfigMap "+r.configMap.Name+"/"+configKey)
	if err != nil {
		t.Fatalf("warden refuses the example config: %v", err)
	}
	return cfg
}

// servePort is the port warden serve listens on with the example config.
func (r *rendered) servePort(t *testing.T) int32 {
	t.Helper()
	listen := r.wardenConfig(t).Serve.Listen
	_, p, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("serve.listen %q: %v", listen, err)
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		t.Fatalf("serve.listen %q: %v", listen, err)
	}
	return int32(n)
}

// resolvePort is the container port a probe's, a Service's or a NetworkPolicy's port
// names, by name or number; 0 when the container has none such.
func resolvePort(c corev1.Container, p intstr.IntOrString) int32 {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort
		}
	}
	return 0
}

func TestBase_builds(t *testing.T) {
	r := buildBase(t)
	if len(r.yaml) != 5 {
		t.Errorf("%d objects, want 5", len(r.yaml))
	}
}

func TestConfigMap_isAConfigWardenAccepts(t *testing.T) {
	r := buildBase(t)
	if !store.IsPostgres(r.wardenConfig(t).DB) {
		t.Fatalf("db: %q is not a PostgreSQL URL: replicas share one PostgreSQL database", r.wardenConfig(t).DB)
	}
	checkConfig(t, r)
}

// checkConfig checks what the config must say for warden serve in a pod: on PostgreSQL
// no password in db:, on SQLite a file on the pod's writable claim; a serve address
// the Service reaches; secrets from the environment.
func checkConfig(t *testing.T, r *rendered) {
	t.Helper()
	cfg := r.wardenConfig(t)
	if store.IsPostgres(cfg.DB) {
		u, err := url.Parse(cfg.DB)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			t.Fatalf("db: %q is not a PostgreSQL URL (%v)", cfg.DB, err)
		}
		if _, ok := u.User.Password(); ok || u.Query().Has("password") {
			t.Errorf("db: holds a password: it comes from $PGPASSWORD (the Secret)")
		}
	} else {
		// SQLite writes the file and its journal beside it: a writable claim's directory.
		pod := r.deployment.Spec.Template.Spec
		m, v := mountFor(r.container(t), pod, path.Dir(cfg.DB))
		if v == nil || v.PersistentVolumeClaim == nil || m.ReadOnly {
			t.Errorf("db: %q is not on a writable PersistentVolumeClaim's mount: the database would not outlive the pod", cfg.DB)
		}
	}
	host, _, err := net.SplitHostPort(cfg.Serve.Listen)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip == nil || ip.IsLoopback() || !cfg.Serve.AllowRemote {
		t.Errorf("serve: listen %q, allow_remote %v: the kubelet's probes and the Service reach the pod's address, not loopback", cfg.Serve.Listen, cfg.Serve.AllowRemote)
	}
	if cfg.Slack == nil {
		t.Fatal("no slack: section: the Slack secrets and deploy/slack/manifest.yaml would serve nothing")
	}
	// Secret files must be readable by their owner only, which a Secret volume mounted
	// for a non-root user is not: the secrets come from the environment.
	if cfg.Slack.BotTokenFile != "" || cfg.Slack.SigningSecretFile != "" || cfg.Daemon.EventsTokenFile != "" {
		t.Errorf("the config names secret files (%q, %q, %q): the Deployment gives them as environment variables",
			cfg.Slack.BotTokenFile, cfg.Slack.SigningSecretFile, cfg.Daemon.EventsTokenFile)
	}
	if cfg.Daemon.RescueAfter <= cfg.Daemon.JobTimeout {
		t.Errorf("daemon.rescue_after %v must exceed job_timeout %v", cfg.Daemon.RescueAfter, cfg.Daemon.JobTimeout)
	}
}

func TestDeployment(t *testing.T) {
	checkDeployment(t, buildBase(t))
}

// checkDeployment checks the Deployment runs warden serve as a pod must: replicas for
// its database, the config mounted, the serve port probed, least privilege.
func checkDeployment(t *testing.T, r *rendered) {
	t.Helper()
	d := r.deployment
	pod := d.Spec.Template.Spec
	c := r.container(t)
	port := r.servePort(t)
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"replicas for the database", func(t *testing.T) {
			if store.IsPostgres(r.wardenConfig(t).DB) {
				if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
					t.Errorf("replicas %v on PostgreSQL, want at least 2", d.Spec.Replicas)
				}
				return
			}
			// SQLite has one writer: one pod, and the old one gone before the new starts.
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("replicas %v, strategy %q on SQLite: want 1, Recreate", d.Spec.Replicas, d.Spec.Strategy.Type)
			}
		}},
		{"the selector selects the pods", func(t *testing.T) {
			sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
			if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Errorf("selector %v does not select the template's labels %v (%v)", d.Spec.Selector, d.Spec.Template.Labels, err)
			}
		}},
		{"the image's entrypoint runs warden serve", func(t *testing.T) {
			if len(c.Command) != 0 {
				t.Errorf("command %q overrides the image's ENTRYPOINT (the warden binary)", c.Command)
			}
			if len(c.Args) == 0 || c.Args[0] != "serve" {
				t.Errorf("args %q, want serve first", c.Args)
			}
		}},
		{"--config is the ConfigMap's warden.yaml", func(t *testing.T) {
			path := flagValue(c.Args, "--config")
			mount, vol := mountFor(c, pod, path)
			if vol == nil || vol.ConfigMap == nil || vol.ConfigMap.Name != r.configMap.Name {
				t.Fatalf("--config %q is not under a mount of ConfigMap %s", path, r.configMap.Name)
			}
			if !mount.ReadOnly {
				t.Errorf("the config is mounted writable")
			}
			if key := strings.TrimPrefix(path, strings.TrimSuffix(mount.MountPath, "/")+"/"); key != configKey {
				t.Errorf("--config %q names key %q of the ConfigMap, which holds %s", path, key, configKey)
			}
		}},
		{"the container port is serve.listen's", func(t *testing.T) {
			if got := resolvePort(c, intstr.FromString("http")); got != port {
				t.Errorf("container port http = %d, serve.listen's port is %d", got, port)
			}
		}},
		{"probes on /healthz and /readyz at the serve port", func(t *testing.T) {
			for _, p := range []struct {
				name  string
				probe *corev1.Probe
				path  string
			}{{"startup", c.StartupProbe, healthPath}, {"liveness", c.LivenessProbe, healthPath}, {"readiness", c.ReadinessProbe, readyPath}} {
				if p.probe == nil || p.probe.HTTPGet == nil {
					t.Errorf("%s probe: none, or not an HTTP GET", p.name)
					continue
				}
				if p.probe.HTTPGet.Path != p.path {
					t.Errorf("%s probe on %s, want %s", p.name, p.probe.HTTPGet.Path, p.path)
				}
				if got := resolvePort(c, p.probe.HTTPGet.Port); got != port {
					t.Errorf("%s probe on port %v (container port %d), want %d", p.name, p.probe.HTTPGet.Port.String(), got, port)
				}
			}
		}},
		{"requests and limits", func(t *testing.T) {
			req, lim := c.Resources.Requests, c.Resources.Limits
			for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				rq, ok := req[res]
				if !ok || rq.IsZero() {
					t.Errorf("no %s request", res)
				}
				if l, ok := lim[res]; !ok || l.Cmp(rq) < 0 {
					t.Errorf("%s limit %v, request %v: want a limit at or above the request", res, l.String(), rq.String())
				}
			}
			// Go's collector must work harder before the kernel kills the container.
			mem := lim[corev1.ResourceMemory]
			goLimit := envValue(c, "GOMEMLIMIT")
			q, err := resource.ParseQuantity(strings.TrimSuffix(goLimit, "B"))
			if err != nil || q.Cmp(mem) >= 0 {
				t.Errorf("GOMEMLIMIT %q: want a size below limits.memory %s (%v)", goLimit, mem.String(), err)
			}
		}},
		{"non-root, read-only, unprivileged, no capabilities, RuntimeDefault seccomp", func(t *testing.T) {
			sc, psc := c.SecurityContext, pod.SecurityContext
			if sc == nil || psc == nil {
				t.Fatal("no security context")
			}
			if !isTrue(sc.RunAsNonRoot) && !isTrue(psc.RunAsNonRoot) {
				t.Error("runAsNonRoot is not set")
			}
			uid := psc.RunAsUser
			if sc.RunAsUser != nil {
				uid = sc.RunAsUser
			}
			if uid == nil || *uid == 0 {
				t.Errorf("runAsUser %v: want distroless's nonroot, 65532", uid)
			}
			if !isTrue(sc.ReadOnlyRootFilesystem) {
				t.Error("the root filesystem is writable")
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Error("privilege escalation is not refused")
			}
			if isTrue(sc.Privileged) {
				t.Error("privileged")
			}
			if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
				t.Errorf("capabilities %+v, want drop ALL and nothing added", sc.Capabilities)
			}
			seccomp := psc.SeccompProfile
			if sc.SeccompProfile != nil {
				seccomp = sc.SeccompProfile
			}
			if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("seccomp %+v, want RuntimeDefault", seccomp)
			}
		}},
		{"no writable volume but an emptyDir or SQLite's claim, none from the host", func(t *testing.T) {
			db := r.wardenConfig(t).DB
			for _, m := range c.VolumeMounts {
				_, v := mountFor(c, pod, m.MountPath)
				switch {
				case v == nil:
					t.Errorf("mount %s: no volume %s", m.MountPath, m.Name)
				case v.HostPath != nil:
					t.Errorf("volume %s is a hostPath", v.Name)
				case !m.ReadOnly && v.PersistentVolumeClaim != nil && !store.IsPostgres(db) && path.Dir(db) == path.Clean(m.MountPath):
					// the SQLite database's directory
				case !m.ReadOnly && v.EmptyDir == nil:
					t.Errorf("mount %s is writable and not an emptyDir", m.MountPath)
				case v.EmptyDir != nil && v.EmptyDir.SizeLimit == nil:
					t.Errorf("emptyDir %s has no sizeLimit", v.Name)
				}
			}
		}},
		{"the service account, without a token", func(t *testing.T) {
			if pod.ServiceAccountName != r.serviceAccount.Name {
				t.Errorf("serviceAccountName %q, the base's account is %q", pod.ServiceAccountName, r.serviceAccount.Name)
			}
			if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken ||
				r.serviceAccount.AutomountServiceAccountToken == nil || *r.serviceAccount.AutomountServiceAccountToken {
				t.Error("a Kubernetes API token is mounted: warden never calls the API")
			}
		}},
		{"room to drain on SIGTERM", func(t *testing.T) {
			if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 30 {
				t.Errorf("terminationGracePeriodSeconds %v: the action in flight must finish and be recorded", g)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestDeployment_secretsComeFromTheSecret(t *testing.T) {
	checkSecrets(t, buildBase(t), secretName)
}

// checkSecrets checks every credential warden reads comes from a required key of the
// Secret named secret ($PGPASSWORD on PostgreSQL only), and no literal one is anywhere.
func checkSecrets(t *testing.T, r *rendered, secret string) {
	t.Helper()
	c := r.container(t)
	if len(c.EnvFrom) > 0 {
		t.Errorf("envFrom %+v: every variable is named, so that nothing unexpected reaches warden", c.EnvFrom)
	}
	onPostgres := store.IsPostgres(r.wardenConfig(t).DB)
	for _, name := range secretEnv() {
		if name == "PGPASSWORD" && !onPostgres {
			if slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
				t.Errorf("$%s is set on SQLite: the Secret would need a key nothing reads", name)
			}
			continue
		}
		t.Run(name, func(t *testing.T) {
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
			if i < 0 {
				t.Fatalf("$%s is not set", name)
			}
			e := c.Env[i]
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Fatalf("$%s is not taken from a Secret", name)
			}
			if ref := e.ValueFrom.SecretKeyRef; ref.Name != secret || ref.Key == "" || isTrue(ref.Optional) {
				t.Errorf("$%s from Secret %q key %q (optional %v), want a required key of %s", name, ref.Name, ref.Key, isTrue(ref.Optional), secret)
			}
		})
	}
	// No literal credential anywhere: not as a variable, not in the objects' text.
	credentialName := regexp.MustCompile(`(?i)token|secret|password|passwd|key`)
	for _, e := range c.Env {
		if e.Value != "" && credentialName.MatchString(e.Name) {
			t.Errorf("$%s has a literal value", e.Name)
		}
	}
	literal := regexp.MustCompile(`xox[abposr]-|PRIVATE\+KEY|-----BEGIN|://[^/\s:@]+:[^/\s@]+@|password=`)
	for _, y := range r.yaml {
		if m := literal.Find(y); m != nil {
			t.Errorf("a literal credential (%q) in:\n%s", m, y)
		}
	}
}

func TestService_reachesTheServePort(t *testing.T) {
	checkService(t, buildBase(t))
}

// checkService checks the Service selects the pods and reaches the serve port alone.
func checkService(t *testing.T, r *rendered) {
	t.Helper()
	c := r.container(t)
	sel := labels.SelectorFromSet(r.service.Spec.Selector)
	if len(r.service.Spec.Selector) == 0 || !sel.Matches(labels.Set(r.deployment.Spec.Template.Labels)) {
		t.Errorf("the Service's selector %v does not select the Deployment's pods", r.service.Spec.Selector)
	}
	if len(r.service.Spec.Ports) != 1 {
		t.Fatalf("%d ports, want the serve port alone", len(r.service.Spec.Ports))
	}
	if got, want := resolvePort(c, r.service.Spec.Ports[0].TargetPort), r.servePort(t); got != want {
		t.Errorf("the Service targets container port %d, warden serves on %d", got, want)
	}
}

func TestNetworkPolicy(t *testing.T) {
	checkNetworkPolicy(t, buildBase(t))
}

// checkNetworkPolicy checks the NetworkPolicy selects the pods, lets in the serve port
// alone, and out DNS, the database's port on PostgreSQL, HTTPS, and the extra
// port/protocols given (GKE's metadata server).
func checkNetworkPolicy(t *testing.T, r *rendered, extraEgress ...string) {
	t.Helper()
	np := r.networkPolicy.Spec
	c := r.container(t)
	sel, err := metav1.LabelSelectorAsSelector(&np.PodSelector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(r.deployment.Spec.Template.Labels)) {
		t.Fatalf("podSelector %v does not select the Deployment's pods (%v)", np.PodSelector, err)
	}
	if !slices.Contains(np.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(np.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Errorf("policyTypes %v, want Ingress and Egress", np.PolicyTypes)
	}
	port := r.servePort(t)
	if len(np.Ingress) == 0 {
		t.Error("no ingress rule: nothing reaches the serve port")
	}
	for i, rule := range np.Ingress {
		if len(rule.Ports) == 0 {
			t.Errorf("ingress[%d] allows every port", i)
		}
		for _, p := range rule.Ports {
			if p.Port == nil || resolvePort(c, *p.Port) != port || p.EndPort != nil || protocol(p.Protocol) != corev1.ProtocolTCP {
				t.Errorf("ingress[%d] allows %v/%v: want the serve port %d/TCP only", i, p.Port, protocol(p.Protocol), port)
			}
		}
	}
	// Out: DNS, the database's port (from db:), HTTPS; nothing else.
	want := append([]string{"53/TCP", "53/UDP", "443/TCP"}, extraEgress...)
	if db := r.wardenConfig(t).DB; store.IsPostgres(db) {
		pgPort := 5432
		if u, err := url.Parse(db); err == nil && u.Port() != "" {
			pgPort, _ = strconv.Atoi(u.Port())
		}
		want = append(want, strconv.Itoa(pgPort)+"/TCP")
	}
	var got []string
	for i, rule := range np.Egress {
		if len(rule.Ports) == 0 {
			t.Errorf("egress[%d] allows every port", i)
		}
		for _, p := range rule.Ports {
			if p.Port == nil || p.Port.Type != intstr.Int || p.EndPort != nil {
				t.Errorf("egress[%d]: port %v: want one numbered port", i, p.Port)
				continue
			}
			got = append(got, p.Port.String()+"/"+string(protocol(p.Protocol)))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("egress to %v, want %v", got, want)
	}
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// mountFor is the container's mount holding path, and its volume.
func mountFor(c corev1.Container, pod corev1.PodSpec, path string) (corev1.VolumeMount, *corev1.Volume) {
	for _, m := range c.VolumeMounts {
		if path == m.MountPath || strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			for i := range pod.Volumes {
				if pod.Volumes[i].Name == m.Name {
					return m, &pod.Volumes[i]
				}
			}
			return m, nil
		}
	}
	return corev1.VolumeMount{}, nil
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func protocol(p *corev1.Protocol) corev1.Protocol {
	if p == nil {
		return corev1.ProtocolTCP // the API's default
	}
	return *p
}

func isTrue(b *bool) bool { return b != nil && *b }
