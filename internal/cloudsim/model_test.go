package cloudsim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/fixtures/acme"
	"github.com/warden-sec/warden/internal/apimodel"
)

// modelExceptions are the departures from the providers' models that the model test
// accepts, each with why: the model is stricter than the service, or the SDKs ignore
// the difference. Keys are "service:Operation path-fragment".
var modelExceptions = map[string]string{
	// IAM answers the root user of a virtual MFA device with its Arn, UserId and
	// CreateDate only (the root has neither a path nor a name); the model's User shape
	// requires both, and the SDKs leave them nil.
	"iam:ListVirtualMFADevices required member Path of User":     "the root user has no path",
	"iam:ListVirtualMFADevices required member UserName of User": "the root user has no name",
	// IAM leaves JobCompletionDate out while a job is IN_PROGRESS (the model's own
	// documentation says it is null then), though the model requires it.
	"iam:GetServiceLastAccessedDetails required member JobCompletionDate": "absent while the job runs",
	// EC2 answers CreateTags and DeleteTags with <return>true</return>; the model
	// declares no output and the SDKs ignore the element.
	"ec2:CreateTags CreateTags/return: the operation has no output": "EC2 answers <return>true</return>",
	"ec2:DeleteTags DeleteTags/return: the operation has no output": "EC2 answers <return>true</return>",
}

// modelNotCovered are operations the simulator serves that the model test does not
// validate against a published model, with why.
var modelNotCovered = map[string]string{
	"iam-admin (gRPC)": "GCP IAM admin (service accounts, keys) is served over gRPC: its shapes are the compiled protobuf types of cloud.google.com/go/iam, which the client decodes itself; discovery documents describe the REST surface only",
}

// modelRESTServed are the operations of the simulator's REST routes (s3.go's s3Route,
// gcp_rest.go's gcpRoutes), by S3 action and by discovery method id.
var modelRESTServed = []string{
	"s3:ListBuckets", "s3:CreateBucket", "s3:HeadBucket", "s3:ListObjectsV2", "s3:PutObject", "s3:GetObject",
	"s3:HeadObject", "s3:DeleteObject",
	"cloudresourcemanager.projects.get", "cloudresourcemanager.projects.list", "cloudresourcemanager.projects.search",
	"cloudresourcemanager.projects.getIamPolicy", "cloudresourcemanager.projects.setIamPolicy",
	"cloudresourcemanager.organizations.get", "cloudresourcemanager.organizations.getIamPolicy",
	"cloudresourcemanager.organizations.setIamPolicy", "cloudresourcemanager.folders.get",
	"cloudresourcemanager.folders.getIamPolicy", "cloudresourcemanager.folders.setIamPolicy",
	"compute.firewalls.list", "compute.firewalls.insert", "compute.firewalls.get", "compute.firewalls.patch",
	"compute.firewalls.update", "compute.firewalls.delete", "compute.networks.list", "compute.networks.get",
	"compute.sslCertificates.list", "compute.sslCertificates.insert", "compute.sslCertificates.get",
	"compute.sslCertificates.delete", "compute.globalOperations.get",
	"compute.instances.aggregatedList", "compute.instances.list", "compute.projects.get",
	"iam.projects.locations.workloadIdentityPools.list", "iam.projects.locations.workloadIdentityPools.get",
	"iam.projects.locations.workloadIdentityPools.providers.list", "iam.projects.locations.workloadIdentityPools.providers.get",
	"policyanalyzer.projects.locations.activityTypes.activities.query",
}

// modelSuite calls the simulator's handler directly and checks each answer against the
// provider's model.
type modelSuite struct {
	t        *testing.T
	sim      *Sim
	h        http.Handler
	aws      map[string]*apimodel.AWSModel
	gcp      map[string]*apimodel.Discovery
	ok       map[string]int // "iam:GetUser": answers validated as successes
	failed   map[string]int // answers validated as errors
	problems []string
}

// requireModels loads the models, skipping the test where they are absent, except under
// CI where their absence fails it.
func requireModels(t *testing.T) (map[string]*apimodel.AWSModel, map[string]*apimodel.Discovery) {
	t.Helper()
	missing := func(err error) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("the providers' API models are needed under CI: %v", err)
		}
		t.Skipf("no API models here: %v", err)
	}
	data, version, err := apimodel.BotocoreDataDir()
	if err != nil {
		missing(err)
	}
	aws := map[string]*apimodel.AWSModel{}
	for _, svc := range []string{"iam", "sts", "ec2", "acm", "organizations", "secretsmanager", "s3", "securityhub"} {
		p, err := apimodel.BotocoreModelPath(data, svc)
		if err != nil {
			missing(err)
		}
		if aws[svc], err = apimodel.LoadAWS(p); err != nil {
			t.Fatal(err)
		}
	}
	// Models older than members the simulator answers would call them drift: Debian
	// bookworm's awscli (2.9, early 2023) knows neither Organizations' Account.State nor
	// EC2's securityGroupArn.
	if _, ok := aws["organizations"].Shapes["Account"].Members["State"]; !ok {
		missing(fmt.Errorf("botocore %s at %s predates members the simulator answers (Organizations' Account.State, 2025): pip install botocore", version, data))
	}
	dir, err := apimodel.GoogleAPIDir()
	if err != nil {
		missing(err)
	}
	gcp := map[string]*apimodel.Discovery{}
	for name, rel := range map[string]string{"cloudresourcemanager": "cloudresourcemanager/v3/cloudresourcemanager-api.json",
		"compute": "compute/v1/compute-api.json", "iam": "iam/v1/iam-api.json",
		"policyanalyzer": "policyanalyzer/v1/policyanalyzer-api.json", "securitycenter": "securitycenter/v1/securitycenter-api.json"} {
		d, err := apimodel.LoadDiscovery(filepath.Join(dir, rel))
		if err != nil {
			missing(err)
		}
		gcp[name] = d
	}
	return aws, gcp
}

func (m *modelSuite) problem(key string, p apimodel.Problem) {
	for k, why := range modelExceptions {
		svcOp, frag, _ := strings.Cut(k, " ")
		if svcOp == key && strings.Contains(p.String(), frag) && why != "" {
			return
		}
	}
	m.problems = append(m.problems, key+": "+p.String())
}

func (m *modelSuite) serve(r *http.Request) (int, []byte) {
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, r)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, b
}

func awsAuth(r *http.Request, service, region string) {
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDMODELTEST/20261201/"+region+"/"+service+"/aws4_request, SignedHeaders=host;x-amz-date, Signature=00")
	r.Header.Set("X-Amz-Date", "20261201T000000Z")
}

// query calls an AWS Query action (IAM, STS, EC2) with name=value pairs; wantErr names
// the error the call is made to provoke ("" for a success).
func (m *modelSuite) query(service, region, action, wantErr string, kv ...string) []byte {
	m.t.Helper()
	form := url.Values{"Action": {action}, "Version": {m.aws[service].Metadata.APIVersion}}
	for i := 0; i+1 < len(kv); i += 2 {
		form.Add(kv[i], kv[i+1])
	}
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	awsAuth(r, service, region)
	status, body := m.serve(r)
	key := service + ":" + action
	model := m.aws[service]
	if status >= 300 {
		code, ok := apimodel.XMLErrorCode(body)
		m.checkError(key, model, action, status, code, ok, wantErr, body)
		return body
	}
	if wantErr != "" {
		m.t.Errorf("%s succeeded, want %s", key, wantErr)
	}
	for _, p := range model.ValidateXML(action, body) {
		m.problem(key, p)
	}
	m.ok[key]++
	return body
}

func (m *modelSuite) checkError(key string, model *apimodel.AWSModel, op string, status int, code string, ok bool, wantErr string, body []byte) {
	m.t.Helper()
	if !ok {
		m.problems = append(m.problems, key+": error answer "+trimBody(body)+" has no code")
		return
	}
	if wantErr != "*" && code != wantErr { // "*": any error, checked against the model
		m.t.Errorf("%s: status %d %s (want %q): %s", key, status, code, wantErr, trimBody(body))
	}
	for _, p := range model.CheckError(op, code, status) {
		m.problem(key, p)
	}
	m.failed[key]++
}

// jsonCall calls an AWS JSON action (ACM, Organizations, Secrets Manager).
func (m *modelSuite) jsonCall(service, region, action, wantErr string, req any) map[string]any {
	m.t.Helper()
	b, _ := json.Marshal(req)
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(b)))
	r.Header.Set("Content-Type", "application/x-amz-json-1.1")
	r.Header.Set("X-Amz-Target", jsonTargets[service]+action)
	awsAuth(r, service, region)
	status, body := m.serve(r)
	key := service + ":" + action
	model := m.aws[service]
	if status >= 300 {
		code, ok := apimodel.JSONErrorCode(body)
		m.checkError(key, model, action, status, code, ok, wantErr, body)
		return nil
	}
	if wantErr != "" {
		m.t.Errorf("%s succeeded, want %s", key, wantErr)
	}
	for _, p := range model.ValidateJSON(action, body) {
		m.problem(key, p)
	}
	m.ok[key]++
	var out map[string]any
	_ = json.Unmarshal(body, &out)
	return out
}

// s3 calls an S3 operation, path-style.
func (m *modelSuite) s3(op, method, path, wantErr, body string, hdr ...string) []byte {
	m.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	awsAuth(r, "s3", "us-east-1")
	r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	status, out := m.serve(r)
	key := "s3:" + op
	if status >= 300 {
		if method == http.MethodHead { // HEAD answers carry no body: the status is the error
			if strconv.Itoa(status) != wantErr {
				m.t.Errorf("%s: status %d, want %s", key, status, wantErr)
			}
			m.failed[key]++
			return out
		}
		code, ok := apimodel.XMLErrorCode(out)
		m.checkError(key, m.aws["s3"], op, status, code, ok, wantErr, out)
		return out
	}
	if wantErr != "" {
		m.t.Errorf("%s succeeded, want %s", key, wantErr)
	}
	if len(out) > 0 && op != "GetObject" {
		for _, p := range m.aws["s3"].ValidateXML(op, out) {
			m.problem(key, p)
		}
	}
	m.ok[key]++
	return out
}

// rest calls a GCP REST method; method is the discovery id ("compute.firewalls.get").
func (m *modelSuite) rest(id, httpMethod, path string, wantStatus int, body any) map[string]any {
	m.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	r := httptest.NewRequest(httpMethod, path, rd)
	r.Header.Set("Authorization", "Bearer model-test")
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	status, out := m.serve(r)
	api, _, _ := strings.Cut(id, ".")
	d := m.gcp[api]
	if wantStatus == 0 { // 0: 200
		wantStatus = http.StatusOK
	}
	if (wantStatus > 0 && status != wantStatus) || (wantStatus < 0 && status < 400) { // -1: any error
		m.t.Errorf("%s %s: status %d, want %d: %s", httpMethod, path, status, wantStatus, trimBody(out))
	}
	if status >= 300 {
		for _, p := range apimodel.ValidateGCPError(status, out) {
			m.problem(id, p)
		}
		m.failed[id]++
		return nil
	}
	for _, p := range d.ValidateResponse(id, out) {
		m.problem(id, p)
	}
	m.ok[id]++
	var res map[string]any
	_ = json.Unmarshal(out, &res)
	return res
}

func trimBody(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

var xmlTextRE = map[string]*regexp.Regexp{}

// xmlText is the text of the first element named name in an XML body.
func xmlText(t *testing.T, body []byte, name string) string {
	t.Helper()
	re, ok := xmlTextRE[name]
	if !ok {
		re = regexp.MustCompile(`<` + name + `>([^<]*)</` + name + `>`)
		xmlTextRE[name] = re
	}
	mt := re.FindSubmatch(body)
	if mt == nil {
		t.Fatalf("no <%s> in %s", name, trimBody(body))
	}
	return string(mt[1])
}

// testCertPEM is a self-signed certificate and its key, PEM-encoded.
func testCertPEM(t *testing.T, cn string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(90 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

// TestSimulator_matchesProviderModels calls every operation the simulator serves, on the
// acme world, and validates each answer against the provider's own published model:
// botocore's service models for AWS, Google's discovery documents for GCP.
func TestSimulator_matchesProviderModels(t *testing.T) {
	awsModels, gcpModels := requireModels(t)
	w, err := ParseWorld(acme.World())
	if err != nil {
		t.Fatal(err)
	}
	w.Faults = nil // the acme world denies one scope; this test wants every answer
	org := w.GCP.Organizations[0].ID
	w.GCP.Folders = append(w.GCP.Folders, &GCPFolder{ID: "907531", DisplayName: "model-test", Parent: "organizations/" + org})
	sim, err := New(w, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := &modelSuite{t: t, sim: sim, h: sim.Handler(), aws: awsModels, gcp: gcpModels, ok: map[string]int{}, failed: map[string]int{}}

	m.catchesDrift()
	m.iam()
	m.sts()
	m.ec2()
	m.acm()
	m.organizations()
	m.secretsManager()
	m.s3Ops()
	m.securityHub()
	m.sccOps()
	m.gcpOps()
	m.pages()
	m.faults()

	// Every operation the simulator serves answered at least once with a success: those
	// of its Query and JSON routing tables, and its REST routes (S3, GCP), listed here.
	served := append(append(append([]string(nil), modelRESTServed...), modelSecurityHubServed...), modelSCCServed...)
	for svc, hs := range sim.query {
		for op := range hs {
			served = append(served, svc+":"+op)
		}
	}
	for svc, hs := range sim.jsonx {
		for op := range hs {
			served = append(served, svc+":"+op)
		}
	}
	var missed []string
	for _, op := range served {
		if m.ok[op] == 0 {
			missed = append(missed, op)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("operations the simulator serves that this test does not answer with a success: %s", strings.Join(missed, ", "))
	}
	for _, p := range m.problems {
		t.Error(p)
	}
	t.Logf("%d operations answered and validated as successes, %d error answers validated", len(m.ok), len(m.failed))
}

// catchesDrift proves the models are wired in: answers the simulator gives, altered the
// way a drifting simulator would alter them, fail validation.
func (m *modelSuite) catchesDrift() {
	t := m.t
	t.Helper()
	xmlBody := []byte(`<GetUserResponse><GetUserResult><User><Path>/</Path><UserName>u</UserName><UserId>AIDA1</UserId>` +
		`<Arn>arn:aws:iam::111111111111:user/u</Arn><CreateDate>2026-01-02T03:04:05Z</CreateDate></User></GetUserResult></GetUserResponse>`)
	if p := m.aws["iam"].ValidateXML("GetUser", xmlBody); len(p) != 0 {
		t.Fatalf("a valid GetUser answer fails: %v", p)
	}
	drifted := strings.Replace(string(xmlBody), "<UserId>AIDA1</UserId>", "<UserID>AIDA1</UserID>", 1)
	if p := m.aws["iam"].ValidateXML("GetUser", []byte(drifted)); len(p) != 2 {
		t.Errorf("a GetUser answer with UserID for UserId gives %v, want an unknown member and a missing one", p)
	}
	if p := m.aws["acm"].ValidateJSON("DescribeCertificate", []byte(`{"Certificate": {"Status": "VALID", "NotAfter": "soon"}}`)); len(p) != 2 {
		t.Errorf("a DescribeCertificate answer with a wrong status and time gives %v, want 2 problems", p)
	}
	if p := m.gcp["compute"].ValidateResponse("compute.firewalls.get", []byte(`{"name": "fw", "priority": "1000", "direction": "IN"}`)); len(p) != 2 {
		t.Errorf("a firewall with a string priority and an unknown direction gives %v, want 2 problems", p)
	}
}
