package deploy

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// TestServe_asDeployed runs the built warden as the kubelet would run the Deployment's
// container: its args (so every flag must be one warden serve accepts), the ConfigMap's
// warden.yaml at the mounted path, and its environment with the Secret's keys resolved
// from a test Secret. Then it asks what the cluster asks: the probes' paths, Slack's
// request_url path from the app manifest, the events endpoint; and it stops the pod as
// Kubernetes does, with SIGTERM, wanting a clean drain within the grace period.
//
// Two things differ from a cluster, and only where the test machine needs it: --listen
// 127.0.0.1:0 (the port is checked against serve.listen by TestDeployment), and --db:
// a fresh schema of $WARDEN_TEST_POSTGRES when set (with its password moved to the
// Secret's postgres-password, so $PGPASSWORD is what authenticates), else a SQLite file.
// AWS is the project's simulator (an empty account), reached with AWS_ENDPOINT_URL.
func TestServe_asDeployed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs warden serve")
	}
	serveAsDeployed(t, buildBase(t))
}

// serveAsDeployed runs warden serve as r's Deployment would (TestServe_asDeployed), on
// PostgreSQL when $WARDEN_TEST_POSTGRES is set and the config's db: is PostgreSQL's.
func serveAsDeployed(t *testing.T, r *rendered) {
	t.Helper()
	c := r.container(t)
	pod := r.deployment.Spec.Template.Spec
	dir := t.TempDir()
	bin := buildWarden(t, dir)

	// The ConfigMap, mounted where the Deployment mounts it.
	root := filepath.Join(dir, "root")
	var mounts []string
	for _, m := range c.VolumeMounts {
		if _, v := mountFor(c, pod, m.MountPath); v != nil && v.ConfigMap != nil && v.ConfigMap.Name == r.configMap.Name {
			mounts = append(mounts, m.MountPath)
			for key, data := range r.configMap.Data {
				writeFile(t, filepath.Join(root, m.MountPath, key), data)
			}
		}
	}
	var args []string
	for _, a := range c.Args {
		for _, m := range mounts {
			if strings.HasPrefix(a, strings.TrimSuffix(m, "/")+"/") {
				a = filepath.Join(root, a)
			}
		}
		args = append(args, a)
	}

	// The Secret, as an operator creates it (deploy/kubernetes/README.md).
	keyFile := filepath.Join(dir, "audit.key")
	if _, _, err := audit.LoadOrCreateKey(keyFile); err != nil {
		t.Fatal(err)
	}
	auditKey, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	replicaFile := filepath.Join(dir, "replica.key") // ssh-keygen -t ed25519 -N '' -f replica.key
	if _, err := sign.LoadOrCreateKey(replicaFile); err != nil {
		t.Fatal(err)
	}
	replicaKey, err := os.ReadFile(replicaFile)
	if err != nil {
		t.Fatal(err)
	}
	secret := map[string]string{
		"replica-key":          string(replicaKey),
		"slack-bot-token":      "xoxb-1111111111-2222222222222-deploytestdeploytest",
		"slack-signing-secret": "8f14e45fceea167a5a36dedd4bea2543",
		"events-token":         "deploy-test-events-token-0123456789abcdef",
		"audit-key":            strings.TrimSpace(string(auditKey)),
		"postgres-password":    "unused-with-sqlite",
	}
	db := filepath.Join(dir, "warden.db")
	pgBase := os.Getenv("WARDEN_TEST_POSTGRES")
	if cfgDB := r.wardenConfig(t).DB; !store.IsPostgres(cfgDB) {
		// SQLite in the pod (the chart's mode sqlite): the file where the claim is mounted.
		db = filepath.Join(root, cfgDB)
		if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
			t.Fatal(err)
		}
		t.Logf("on SQLite, at the config's %s", cfgDB)
	} else if pgBase != "" {
		u, err := url.Parse(storetest.FreshSchema(t, pgBase))
		if err != nil {
			t.Fatal(err)
		}
		pw, _ := u.User.Password()
		secret["postgres-password"] = pw
		u.User = url.User(u.User.Username())
		db = u.String()
		t.Log("on PostgreSQL, the password from $PGPASSWORD")
	} else {
		t.Log("on SQLite: set WARDEN_TEST_POSTGRES to run the replicas' database")
	}
	_, simURL := simtest.Start(t, nil, cloudsim.Options{})
	env := []string{
		"HOME=" + filepath.Join(dir, "home"), "PATH=/usr/bin:/bin",
		// What IRSA's webhook would give, pointed at the simulator.
		"AWS_ENDPOINT_URL=" + simURL, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=secret",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + filepath.Join(dir, "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "no-aws-credentials"),
	}
	for _, e := range c.Env {
		env = append(env, e.Name+"="+resolveEnv(t, e, secret))
	}

	cmd := exec.Command(bin, append(args, "--db", db, "--listen", "127.0.0.1:0")...)
	cmd.Env = env
	stderr := startLogged(t, cmd)
	addr := stderr.waitFor(t, regexp.MustCompile(`listening on http://(\S+)`), 90*time.Second)
	base := "http://" + addr

	// The probes, at the paths and (through the port's name) the port the Deployment names.
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
	}{{"startup", c.StartupProbe}, {"liveness", c.LivenessProbe}, {"readiness", c.ReadinessProbe}} {
		status := eventually(t, func() int { return request(t, http.MethodGet, base+p.probe.HTTPGet.Path, "") }, http.StatusOK)
		if status != http.StatusOK {
			t.Errorf("%s probe GET %s: %d, want 200", p.name, p.probe.HTTPGet.Path, status)
		}
	}
	// Slack's clicks: the manifest's request_url reaches slackgate's handler, which
	// refuses an unsigned request (401), where a missing route would be 404 or 405.
	slackPath := requestURLPath(t, readSlackManifest(t).Settings.Interactivity.RequestURL)
	if status := request(t, http.MethodPost, base+slackPath, "payload=%7B%7D"); status != http.StatusUnauthorized {
		t.Errorf("POST %s unsigned: %d, want 401 from slackgate's signature check", slackPath, status)
	}
	// The events token from the Secret turned /v1/events on: without the bearer, 401.
	if status := request(t, http.MethodPost, base+"/v1/events", "{}"); status != http.StatusUnauthorized {
		t.Errorf("POST /v1/events without a token: %d, want 401 (the endpoint is on, and guarded)", status)
	}

	// SIGTERM, as the kubelet stops a pod: a clean drain, well within the grace period.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("warden serve after SIGTERM: %v\n%s", err, stderr.text())
		}
	case <-time.After(grace):
		t.Fatalf("warden serve still running %v after SIGTERM\n%s", grace, stderr.text())
	}
	log := stderr.text()
	for _, want := range []string{"reconciling as replica", "slack/interactions", "v1/events"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
	for _, unwanted := range []string{"no audit key", "no events token"} {
		if strings.Contains(log, unwanted) {
			t.Errorf("the log says %q: the Secret's key did not reach warden", unwanted)
		}
	}
	for k, v := range secret {
		if strings.Contains(log, v) {
			t.Errorf("the log shows the Secret's %s", k)
		}
	}
}

// buildWarden builds ./cmd/warden into dir, with the go command's defaults: what is
// tested here is the binary's behaviour, and those builds share the build cache of
// every other test (the image's static, -trimpath build is cmd/warden's
// TestBuild_reproducible).
func buildWarden(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "warden")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/warden")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/warden: %v\n%s", err, out)
	}
	return bin
}

// resolveEnv is a variable's value as the kubelet gives it: literal, or a key of the
// Secret the Deployment references.
func resolveEnv(t *testing.T, e corev1.EnvVar, secret map[string]string) string {
	t.Helper()
	switch {
	case e.ValueFrom == nil:
		return e.Value
	case e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secretName:
		v, ok := secret[e.ValueFrom.SecretKeyRef.Key]
		if !ok {
			t.Fatalf("$%s: the Secret has no key %q (the README lists its keys)", e.Name, e.ValueFrom.SecretKeyRef.Key)
		}
		return v
	}
	t.Fatalf("$%s: a source this test does not resolve", e.Name)
	return ""
}

// logBuffer collects a process's stderr.
type logBuffer struct {
	mu   sync.Mutex
	b    strings.Builder
	cond *sync.Cond
	eof  bool
}

func (l *logBuffer) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLogged starts cmd with its stderr collected; the process is killed when the test
// ends if it is still running.
func startLogged(t *testing.T, cmd *exec.Cmd) *logBuffer {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	l := &logBuffer{}
	l.cond = sync.NewCond(&l.mu)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			l.mu.Lock()
			l.b.WriteString(sc.Text() + "\n")
			l.cond.Broadcast()
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.eof = true
		l.cond.Broadcast()
		l.mu.Unlock()
	}()
	return l
}

// waitFor waits until the log matches re and returns its first group.
func (l *logBuffer) waitFor(t *testing.T, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	timer := time.AfterFunc(timeout, func() {
		l.mu.Lock()
		l.eof = true
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer timer.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if m := re.FindStringSubmatch(l.b.String()); m != nil {
			return m[1]
		}
		if l.eof {
			t.Fatalf("warden serve did not log %q (exited, or %v passed):\n%s", re, timeout, l.b.String())
		}
		l.cond.Wait()
	}
}

// request sends one request and returns its status.
func request(t *testing.T, method, u, body string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost && strings.HasPrefix(body, "payload=") {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// eventually calls f until it returns want, for up to 10 s (the readiness probe waits
// for the database), and returns its last answer.
func eventually(t *testing.T, f func() int, want int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := f()
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
