package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// userPolicy is a complete user policy on security groups whose deny rule has body; the
// body is line 11 of the file.
func userPolicy(id, pkg, body string) string {
	return fmt.Sprintf(`# METADATA
# title: User policy %[1]s
# custom:
#   id: %[1]s
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   remediation: {action: notify, risk: none}
package %[2]s

deny contains "violation" if {
	%[3]s
}
`, id, pkg, body)
}

// listener counts the requests that reach it; a sandboxed policy must never make one.
func listener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type": "object"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

func TestNew_refusesSideEffectingBuiltinsAtLoad(t *testing.T) {
	url, hits := listener(t)
	host := strings.TrimPrefix(url, "http://")
	tests := []struct{ name, body, builtin string }{
		{"network request", fmt.Sprintf(`http.send({"method": "GET", "url": %q}).status_code == 200`, url), "http.send"},
		{"DNS lookup", fmt.Sprintf(`count(net.lookup_ip_addr(%q)) >= 0`, strings.Split(host, ":")[0]), "net.lookup_ip_addr"},
		{"environment", `opa.runtime().env.HOME != ""`, "opa.runtime"},
		{"randomness", `rand.intn("seed", 10) >= 0`, "rand.intn"},
		{"random uuid", `uuid.rfc4122("k") != ""`, "uuid.rfc4122"},
		{"random signature", `io.jwt.encode_sign({"alg": "HS256"}, {}, {"kty": "oct", "k": "a2V5"}) != ""`, "io.jwt.encode_sign"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := policyFS(map[string]string{"ssh.rego": sshPolicy, "p.rego": userPolicy("ACME-1", "acme.p", tt.body)})
			e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{src}})
			if err == nil {
				// Today's engine: show what the policy could do before failing.
				res, _ := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), []snapshot.Resource{sg("sg-1", 22)})
				t.Fatalf("policy using %s loaded (findings %d, listener hits %d), want it refused", tt.builtin, len(res.Findings), hits.Load())
			}
			want := "testpolicies/p.rego:11:"
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.builtin) || !strings.Contains(err.Error(), "not allowed") {
				t.Errorf("error = %q\nwant it to name %s, %s and say it is not allowed", err, want, tt.builtin)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the listener received %d requests from policies", n)
	}
}

// json.match_schema may follow a schema's $ref: over the network only where the
// capabilities' allow_net says so, which for warden is nowhere.
func TestEvaluate_schemaRefsCannotReachTheNetwork(t *testing.T) {
	url, hits := listener(t)
	body := fmt.Sprintf(`[ok, _] := json.match_schema({}, {"$ref": %q})
	ok`, url+"/schema.json")
	src := policyFS(map[string]string{"ssh.rego": sshPolicy, "p.rego": userPolicy("ACME-1", "acme.p", body)})
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{src}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), []snapshot.Resource{sg("sg-1", 22)})
	if err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the listener received %d requests from json.match_schema", n)
	}
	if len(res.EvalErrors) != 1 || res.EvalErrors[0].Policy != "ACME-1" {
		t.Errorf("eval errors = %+v, want one for ACME-1 (the schema could not be read)", res.EvalErrors)
	}
}

// time.now_ns is allowed only because the engine fixes it at the scan's time.
func TestEvaluate_timeNowIsTheScanTime(t *testing.T) {
	src := policyFS(map[string]string{"p.rego": strings.Replace(userPolicy("ACME-1", "acme.p", "true"),
		`deny contains "violation"`, `deny contains sprintf("%d", [time.now_ns()])`, 1)})
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{src}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	res, err := e.Evaluate(context.Background(), snapshot.Header{}, now, []snapshot.Resource{sg("sg-1")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Message != fmt.Sprint(now.UnixNano()) {
		t.Errorf("findings = %+v, want one whose message is %d", res.Findings, now.UnixNano())
	}
}

func builtinAnd(files map[string]string) []engine.Source {
	return []engine.Source{{FS: policies.FS, Prefix: "policies"}, policyFS(files)}
}

func TestNew_refusesUserModulesInReservedNamespaces(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"engine namespace", "package warden_engine.t_aws_iam_root_user\n\nresults contains [0, \"x\"] if true\n",
			"testpolicies/x.rego:1:1: package warden_engine.t_aws_iam_root_user is reserved"},
		{"library package", "package warden.lib.net\n\nis_internet(_) := true\n",
			"testpolicies/x.rego:1:1: package warden.lib.net is reserved"},
		{"new library package", "package warden.lib.acme\n\nx := 1\n",
			"testpolicies/x.rego:1:1: package warden.lib.acme is reserved"},
		{"library through a rule ref", "package warden\n\nlib.net.is_internet(_) := true\n",
			"testpolicies/x.rego:3:1: rule warden.lib.net.is_internet is in warden.lib, reserved"},
		{"built-in policy package without METADATA", "package warden.aws.iam.root_mfa_disabled\n\ndeny contains \"x\" if false\n",
			"testpolicies/x.rego:1:1: package warden.aws.iam.root_mfa_disabled is reserved"},
		{"built-in policy package with METADATA", userPolicy("ACME-1", "warden.aws.iam.root_mfa_disabled", "false"),
			"testpolicies/x.rego:8:1: package warden.aws.iam.root_mfa_disabled is reserved"},
		{"built-in policy through a rule ref", "package warden.aws.iam\n\nroot_mfa_disabled.deny contains \"x\" if false\n",
			"testpolicies/x.rego:3:1: rule warden.aws.iam.root_mfa_disabled.deny is in warden.aws.iam.root_mfa_disabled, reserved"},
		{"settings package", "package warden.config\n\naccess_key_max_age_days := 100000\n",
			"testpolicies/x.rego:1:1: package warden.config is reserved"},
		{"settings through a rule", "package warden\n\nconfig := {\"access_key_max_age_days\": 100000}\n",
			"testpolicies/x.rego:3:1: rule warden.config is in warden.config, reserved"},
		{"dynamic rule over the namespace", "package warden\n\nx[k] := 1 if some k in [\"a\"]\n",
			""},
		{"dynamic rule over the whole namespace", "package warden_engine\n\nt_aws_iam_root_user[k] := 1 if some k in [\"a\"]\n",
			"testpolicies/x.rego:1:1: package warden_engine is reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(context.Background(), engine.Config{Sources: builtinAnd(map[string]string{"x.rego": tt.src})})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("error = %v, want none: the rule is outside every reserved namespace", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// A user policy may use the library: reserving it is about declaring, not reading.
func TestNew_userPolicyMayImportTheLibrary(t *testing.T) {
	src := `# METADATA
# title: Telnet open
# custom:
#   id: ACME-NET-1
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   remediation: {action: notify, risk: none}
package acme.telnet

import data.warden.lib.net

deny contains "telnet" if {
	some rule in input.resource.attributes.ingress
	net.covers_port(rule, 23)
}
`
	e, err := engine.New(context.Background(), engine.Config{Sources: builtinAnd(map[string]string{"telnet.rego": src})})
	if err != nil {
		t.Fatal(err)
	}
	telnet := snapshot.Resource{UID: "sg-1", Type: "aws.ec2.security_group", Account: "1", Region: "eu-west-1",
		Attributes: map[string]any{"ingress": []any{map[string]any{"id": "r", "protocol": "tcp", "cidr": "0.0.0.0/0", "from_port": 23, "to_port": 23}}}}
	res, err := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), []snapshot.Resource{telnet})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range res.Findings {
		found = found || f.Policy == "ACME-NET-1"
	}
	if !found || len(res.EvalErrors) > 0 {
		t.Errorf("findings %+v, eval errors %+v: want ACME-NET-1 and no error", res.Findings, res.EvalErrors)
	}
}

// --no-builtin leaves the pack's policies out but not the library: a user policy
// importing it must find what it finds with the whole pack, never silently nothing.
func TestNew_libraryStaysWithoutTheBuiltinPolicies(t *testing.T) {
	src := userPolicy("ACME-NET-1", "acme.telnet", `some rule in input.resource.attributes.ingress
	net.covers_port(rule, 23)`)
	src = strings.Replace(src, "package acme.telnet\n", "package acme.telnet\n\nimport data.warden.lib.net\n", 1)
	telnet := snapshot.Resource{UID: "sg-1", Type: "aws.ec2.security_group", Account: "1", Region: "eu-west-1",
		Attributes: map[string]any{"ingress": []any{map[string]any{"id": "r", "protocol": "tcp", "cidr": "0.0.0.0/0", "from_port": 23, "to_port": 23}}}}
	tests := []struct {
		name    string
		sources []engine.Source
		builtin bool // whether WARDEN- policies are loaded
	}{
		{"whole pack", []engine.Source{engine.Builtin(), policyFS(map[string]string{"telnet.rego": src})}, true},
		{"library only", []engine.Source{engine.BuiltinLibrary(), policyFS(map[string]string{"telnet.rego": src})}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := engine.New(context.Background(), engine.Config{Sources: tt.sources})
			if err != nil {
				t.Fatal(err)
			}
			builtin := 0
			for _, p := range e.Policies() {
				if strings.HasPrefix(p.ID, "WARDEN-") {
					builtin++
				}
			}
			if (builtin > 0) != tt.builtin {
				t.Fatalf("%d built-in policies loaded, want some: %v", builtin, tt.builtin)
			}
			res, err := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), []snapshot.Resource{telnet})
			if err != nil {
				t.Fatal(err)
			}
			var ours []string
			for _, f := range res.Findings {
				if f.Policy == "ACME-NET-1" {
					ours = append(ours, f.Resource)
				}
			}
			if len(ours) != 1 || ours[0] != "sg-1" || len(res.EvalErrors) > 0 {
				t.Errorf("ACME-NET-1 found %v (eval errors %+v), want sg-1 once", ours, res.EvalErrors)
			}
		})
	}
	// The library's own tests stay out with the policies.
	results, err := engine.Test(context.Background(), "", engine.BuiltinLibrary())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 0 {
		t.Errorf("the library alone ran %d tests, want none: its tests belong with the pack", len(results))
	}
}

func TestEvaluate_builtinErrorsAreRecordedAgainstTheirPolicy(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"division by zero", "x := 0\n\t1 / x > 0", "testpolicies/p.rego:12: eval_builtin_error: div: divide by zero"},
		{"not a number", `to_number("abc") > 0`, "testpolicies/p.rego:11: eval_builtin_error: to_number"},
		{"bad time", `time.parse_rfc3339_ns("last tuesday") > 0`, "testpolicies/p.rego:11: eval_builtin_error: time.parse_rfc3339_ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := policyFS(map[string]string{"ssh.rego": sshPolicy, "p.rego": userPolicy("ACME-1", "acme.p", tt.body)})
			e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{src}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), []snapshot.Resource{sg("sg-1", 22)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) != 1 || res.Findings[0].Policy != "TEST-NET-001" {
				t.Errorf("findings = %+v, want the healthy policy's one", res.Findings)
			}
			if len(res.EvalErrors) != 1 || res.EvalErrors[0].Policy != "ACME-1" || res.EvalErrors[0].Resource != "sg-1" ||
				!strings.Contains(res.EvalErrors[0].Error, tt.want) {
				t.Errorf("eval errors = %+v\nwant one for ACME-1 on sg-1 containing %q", res.EvalErrors, tt.want)
			}
		})
	}
}

// deny must be a set rule: any other shape would be iterated as nothing, silently.
func TestNew_refusesDenyThatIsNotASetRule(t *testing.T) {
	for _, rule := range []string{`deny := "violation"`, `deny[x] := 1 if some x in ["a"]`, `deny.sub contains "violation"`} {
		src := strings.Replace(userPolicy("ACME-1", "acme.p", "true"), "deny contains \"violation\" if {\n\ttrue\n}", rule, 1)
		_, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{policyFS(map[string]string{"p.rego": src})}})
		want := "testpolicies/p.rego:10:1: deny must be a set rule"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want it to contain %q", rule, err, want)
		}
	}
}

func TestScan_refusesResourcesOfAFailedScope(t *testing.T) {
	e := builtin(t, 2)
	tests := []struct{ name, in, want string }{
		{"failed scope declared first",
			"{\"version\":1,\"scopes\":[{\"id\":\"aws/1/iam\",\"status\":\"failed\",\"error\":\"AccessDenied\"}],\"resources\":[\n" +
				"{\"uid\":\"arn:aws:iam::1:root\",\"type\":\"aws.iam.root_user\",\"account\":\"1\",\"region\":\"global\",\"attributes\":{\"mfa_active\":false,\"access_keys_active\":0}}]}",
			`read snapshot s.json: line 2: resources[0].scope: scope "aws/1/iam" failed (scopes[0].status): its resources are unknown, a snapshot must not list any`},
		{"failed scope declared after the resources",
			"{\"version\":1,\"resources\":[\n{\"uid\":\"a\",\"type\":\"aws.iam.root_user\",\"account\":\"1\",\"region\":\"global\",\"attributes\":{\"mfa_active\":false,\"access_keys_active\":0}},\n" +
				"{\"uid\":\"b\",\"type\":\"aws.iam.root_user\",\"account\":\"2\",\"region\":\"global\",\"attributes\":{\"mfa_active\":false,\"access_keys_active\":0}}],\n" +
				"\"scopes\":[{\"id\":\"aws/1/iam\",\"status\":\"ok\"},{\"id\":\"aws/2/iam\",\"status\":\"failed\"}]}",
			`line 3: resources[1].scope: scope "aws/2/iam" failed (scopes[1].status)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Scan(context.Background(), snapshot.NewReader(strings.NewReader(tt.in), "s.json"), engine.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				n := 0
				if res != nil {
					n = len(res.Findings)
				}
				t.Errorf("error = %v (findings %d)\nwant it to contain %q", err, n, tt.want)
			}
		})
	}
	// A partial scope lists what it could read: that is allowed.
	ok := `{"version":1,"scopes":[{"id":"aws/1/iam","status":"partial"}],"resources":[{"uid":"a","type":"aws.iam.root_user","account":"1","region":"global","attributes":{"mfa_active":true,"access_keys_active":0}}]}`
	if _, err := e.Scan(context.Background(), snapshot.NewReader(strings.NewReader(ok), "s.json"), engine.Options{}); err != nil {
		t.Errorf("partial scope: %v", err)
	}
}

func TestNew_refusesSettingsNoPolicyDeclares(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]any
		want     string
	}{
		{"wrong type", map[string]any{"access_key_max_age_days": "ninety"},
			`settings.access_key_max_age_days: is a string ("ninety"), want an integer like its default 90 (policies/aws/iam/access_key_not_rotated.rego:`},
		{"negative prefix length", map[string]any{"internet_max_prefix_v4": -1},
			`settings.internet_max_prefix_v4: is an integer (-1), want a count of zero or more`},
		{"fraction for a count of days", map[string]any{"role_unused_days": 30.5},
			`settings.role_unused_days: is a number (30.5), want an integer like its default 90`},
		{"misspelt", map[string]any{"acces_key_max_age_days": 60},
			`settings.acces_key_max_age_days: unknown setting (did you mean "access_key_max_age_days"?)`},
		{"unknown", map[string]any{"frobnicate": true}, `settings.frobnicate: unknown setting: no policy reads it (known: `},
		{"wrong element type", map[string]any{"database_ports": []any{5432, "mysql"}},
			`settings.database_ports[1]: is a string ("mysql"), want an integer like its default`},
		{"boolean for a list", map[string]any{"allowed_domains": true}, `settings.allowed_domains: is a boolean (true), want an array`},
		{"null", map[string]any{"password_min_length": nil}, `settings.password_min_length: is null, want an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Settings: tt.settings})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestNew_acceptsSettingsOfTheDeclaredTypes(t *testing.T) {
	settings := map[string]any{
		"access_key_max_age_days": 60, "role_unused_days": 30.0, "known_accounts": []any{"444455556666", 777788889999},
		"database_ports": []any{5432}, "allowed_domains": []any{"acme.example"},
	}
	if _, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Settings: settings}); err != nil {
		t.Fatal(err)
	}
	// A user policy declares its own setting the same way; it then becomes known.
	own := strings.Replace(userPolicy("ACME-1", "acme.p", "count(input.resource.attributes.ingress) > limit"), "deny contains",
		"limit := n if {\n\tn := data.warden.config.acme_max_rules\n} else := 50\n\ndeny contains", 1)
	_, err := engine.New(context.Background(), engine.Config{Sources: builtinAnd(map[string]string{"p.rego": own}), Settings: map[string]any{"acme_max_rules": 10}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.New(context.Background(), engine.Config{Sources: builtinAnd(map[string]string{"p.rego": own}), Settings: map[string]any{"acme_max_rules": "ten"}})
	if err == nil || !strings.Contains(err.Error(), "settings.acme_max_rules: is a string") {
		t.Errorf("a user setting of the wrong type: %v", err)
	}
}

// warden policy test compiles in the same sandbox as scans.
func TestTest_refusesSideEffectingBuiltins(t *testing.T) {
	src := userPolicy("ACME-1", "acme.p", `rand.intn("seed", 10) >= 0`)
	test := "package acme.p_test\n\nimport data.acme.p\n\ntest_fires if count(p.deny) == 1\n"
	_, err := engine.Test(context.Background(), "", policyFS(map[string]string{"p.rego": src, "p_test.rego": test}))
	if err == nil || !strings.Contains(err.Error(), "testpolicies/p.rego:11:") || !strings.Contains(err.Error(), "rand.intn is not allowed") {
		t.Errorf("error = %v, want rand.intn refused at testpolicies/p.rego:11", err)
	}
}

func TestSettingsSchema_derivedFromThePoliciesDefaults(t *testing.T) {
	e := builtin(t, 1)
	got := map[string]string{}
	for _, s := range e.SettingsSchema() {
		got[s.Name] = strings.Join(s.Types, "|")
		if len(s.Where) == 0 {
			t.Errorf("%s: no file:line", s.Name)
		}
	}
	for name, want := range map[string]string{
		"access_key_max_age_days": "integer",          // n := data.warden.config.X … else := 90
		"known_accounts":          "array",            // config.setting("known_accounts", [])
		"database_ports":          "array of integer", // else := net.default_database_ports, a constant rule
		"allowed_domains":         "array",
	} {
		if got[name] != want {
			t.Errorf("%s: types %q, want %q", name, got[name], want)
		}
	}
}

// A user directory whose files have the built-in pack's names (--policies policies from
// the repository's root) would replace built-in policies file by file.
func TestNew_refusesAUserFileShadowingABuiltinOne(t *testing.T) {
	shadow := engine.Source{FS: fstest.MapFS{"certs/expired.rego": {Data: []byte("package acme.nothing\n\nx := 1\n")}}, Prefix: "policies"}
	_, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}, shadow}})
	if err == nil || !strings.Contains(err.Error(), "policies/certs/expired.rego") || !strings.Contains(err.Error(), "loaded twice") {
		t.Fatalf("error = %v, want the shadowing file refused", err)
	}
}

// Resources evaluated from memory (the daemon's changed subsets) are checked as a
// snapshot's would be: a flag written as a string would otherwise decide nothing.
func TestEvaluate_refusesResourcesOutsideTheirSchema(t *testing.T) {
	e := builtin(t, 1)
	root := snapshot.Resource{UID: "arn:aws:iam::1:root", Type: "aws.iam.root_user", Account: "1", Region: "global",
		Attributes: map[string]any{"mfa_active": "false", "access_keys_active": 0}}
	_, err := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), []snapshot.Resource{root})
	if err == nil || !strings.Contains(err.Error(), "attributes.mfa_active: expected true or false") {
		t.Fatalf("error = %v, want the string flag refused", err)
	}
}
