package compliance_test

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// pack loads the built-in policy pack, as warden does.
func pack(t testing.TB, settings map[string]any) *engine.Engine {
	t.Helper()
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func load(t testing.TB) []*compliance.Framework {
	t.Helper()
	fws, err := compliance.Load()
	if err != nil {
		t.Fatal(err)
	}
	return fws
}

// TestFrameworks_oneFilePerFrameworkPoliciesMayName: the embedded files are exactly the
// frameworks the engine lets policies map controls of.
func TestFrameworks_oneFilePerFrameworkPoliciesMayName(t *testing.T) {
	var ids []string
	for _, f := range load(t) {
		ids = append(ids, f.ID)
	}
	want := slices.Sorted(slices.Values(engine.Frameworks))
	if !slices.Equal(ids, want) {
		t.Errorf("embedded frameworks %v, want %v", ids, want)
	}
}

// TestFrameworks_countsMatchThePublications: a control dropped or duplicated while
// editing a file shows here.
func TestFrameworks_countsMatchThePublications(t *testing.T) {
	want := map[string]struct{ controls, families int }{
		"cis-aws-3.0":    {62, 9},    // 5 sections, 4 subsections of storage
		"cis-gcp-2.0":    {84, 10},   // 7 sections, 3 subsections of Cloud SQL
		"nist-800-53-r5": {1007, 20}, // 1,189 less the 182 withdrawn; 20 families
		"pci-dss-4.0":    {280, 86},  // 12 requirements and 3 appendices, 71 sections
		"soc2":           {61, 21},   // CC1-CC9, A1, C1, PI1, P and its P1-P8
		"iso-27001-2022": {93, 4},    // themes A.5-A.8
	}
	for _, f := range load(t) {
		w := want[f.ID]
		if len(f.Controls) != w.controls || len(f.Families) != w.families {
			t.Errorf("%s: %d controls in %d families, want %d in %d", f.ID, len(f.Controls), len(f.Families), w.controls, w.families)
		}
		for _, c := range f.Controls {
			if c.Assessment == compliance.Manual && len(c.Policies) > 0 && c.Note == "" {
				t.Errorf("%s %s: a manual control with policies says, in a note, what the policies leave to a person", f.ID, c.ID)
			}
		}
	}
}

// TestFrameworks_validateAgainstThePack: every policy a framework names is a policy of
// the built-in pack.
func TestFrameworks_validateAgainstThePack(t *testing.T) {
	e := pack(t, nil)
	known := map[string]bool{}
	for _, p := range e.Policies() {
		known[p.ID] = true
	}
	for _, f := range load(t) {
		if err := f.Validate(func(id string) bool { return known[id] }); err != nil {
			t.Errorf("%s: %v", f.ID, err)
		}
	}
}

// TestFrameworks_mappingsAreThePoliciesTags: a control lists a policy exactly when the
// policy's custom.frameworks metadata names the control, so that the tags a finding
// carries and the report built from the mappings can never disagree.
func TestFrameworks_mappingsAreThePoliciesTags(t *testing.T) {
	e := pack(t, nil)
	byID := map[string]*compliance.Framework{}
	for _, f := range load(t) {
		byID[f.ID] = f
	}
	type pair struct{ framework, control, policy string }
	tagged := map[pair]bool{}
	for _, p := range e.Policies() {
		for fw, controls := range p.Frameworks {
			f := byID[fw]
			if f == nil {
				t.Errorf("%s tags framework %s, which has no file", p.ID, fw)
				continue
			}
			for _, id := range controls {
				tagged[pair{fw, id, p.ID}] = true
				c := f.Control(id)
				switch {
				case c == nil:
					t.Errorf("%s (%s) tags %s control %q, which %s does not have", p.ID, p.File, fw, id, f.File)
				case !slices.Contains(c.Policies, p.ID):
					t.Errorf("%s (%s) tags %s %s, but the control does not list it in %s", p.ID, p.File, fw, id, f.File)
				}
			}
		}
	}
	for _, f := range byID {
		for _, c := range f.Controls {
			for _, id := range c.Policies {
				if !tagged[pair{f.ID, c.ID, id}] {
					t.Errorf("%s %s lists %s, but the policy's custom.frameworks does not name the control: tag it there or drop it here", f.ID, c.ID, id)
				}
			}
		}
	}
}

// TestFrameworks_requiredSettingsAreReadByTheirPolicies: a requires_config names a
// setting one of the control's policies reads, so that the threshold it bounds is the one
// that decided the findings.
func TestFrameworks_requiredSettingsAreReadByTheirPolicies(t *testing.T) {
	e := pack(t, nil)
	files := map[string]string{}
	for _, p := range e.Policies() {
		files[p.ID] = p.File
	}
	readers := map[string][]string{}
	for _, s := range e.SettingsSchema() {
		readers[s.Name] = s.Where
	}
	n := 0
	for _, f := range load(t) {
		for _, c := range f.Controls {
			for _, r := range c.RequiresConfig {
				n++
				where, ok := readers[r.Setting]
				if !ok {
					t.Errorf("%s %s requires setting %q, which no policy reads", f.ID, c.ID, r.Setting)
					continue
				}
				if !slices.ContainsFunc(c.Policies, func(id string) bool {
					return slices.ContainsFunc(where, func(w string) bool { return strings.HasPrefix(w, files[id]+":") })
				}) {
					t.Errorf("%s %s requires setting %q, read only by %v: none of its policies %v", f.ID, c.ID, r.Setting, where, c.Policies)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no control requires a setting: the thresholds of CIS 1.12, 1.14 and the like are missing")
	}
}

// posture scans a snapshot with the pack and gives what Evaluate needs, as the report
// command does from a scan: each policy's resources (by its types), its evaluation
// errors, the failed scopes of its provider and service, and the settings in effect
// with the pack's defaults.
func posture(t testing.TB, path string, settings map[string]any) compliance.Input {
	t.Helper()
	e := pack(t, settings)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := e.Scan(context.Background(), snapshot.NewReader(f, path), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := compliance.Input{At: res.Now, Findings: res.Findings, Policies: map[string]compliance.PolicyRun{}, Settings: map[string]any{}}
	for _, s := range e.SettingsSchema() {
		in.Settings[s.Name] = s.Default
	}
	maps.Copy(in.Settings, settings)
	for _, p := range e.Policies() {
		var run compliance.PolicyRun
		for _, typ := range p.ResourceTypes {
			run.Resources += res.ByType[typ]
			provider, rest, _ := strings.Cut(typ, ".")
			service, _, _ := strings.Cut(rest, ".")
			for _, s := range res.Header.Scopes {
				if !s.Complete() && s.Provider == provider && (s.Service == "" || s.Service == service) && !slices.Contains(run.FailedScopes, s.ID) {
					run.FailedScopes = append(run.FailedScopes, s.ID)
				}
			}
		}
		for _, ee := range res.EvalErrors {
			if ee.Policy == p.ID || ee.Policy == "" {
				run.Errors++
			}
		}
		in.Policies[p.ID] = run
	}
	return in
}

func statuses(rep *compliance.Report) map[string]compliance.ControlResult {
	out := map[string]compliance.ControlResult{}
	for _, c := range rep.Controls {
		out[c.ID] = c
	}
	return out
}

// TestEvaluate_cleanAccount runs the real pack over a tidy account whose one flaw is SSH
// open to ::/0, and judges CIS AWS 3.0 on it.
func TestEvaluate_cleanAccount(t *testing.T) {
	fw, err := compliance.Lookup("cis-aws-3.0")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]compliance.Status{
		"1.4": compliance.StatusPass, "1.5": compliance.StatusPass, "1.8": compliance.StatusPass, "1.9": compliance.StatusPass,
		"1.10": compliance.StatusPass, "1.13": compliance.StatusPass, "1.14": compliance.StatusPass, "1.15": compliance.StatusPass,
		"1.16": compliance.StatusPass, "5.2": compliance.StatusPass, "5.4": compliance.StatusPass,
		// With the pack's default of 90 days for unused keys, a clean result is no CIS pass.
		"1.12": compliance.StatusNotCovered,
		// No server certificate in the posture: nothing checked, nothing to claim.
		"1.19": compliance.StatusNotCovered,
		// The IPv6 rule fails 5.3 and only 5.3.
		"5.3": compliance.StatusFail,
		// CIS automates it, warden has no policy: a gap, not a pass.
		"1.17": compliance.StatusNotCovered,
		"1.1":  compliance.StatusManual,
	}
	got := statuses(compliance.Evaluate(fw, posture(t, "testdata/clean-aws.json", nil)))
	for id, s := range want {
		if got[id].Status != s {
			t.Errorf("CIS AWS %s = %s (%s), want %s", id, got[id].Status, got[id].Reason, s)
		}
	}
	if r := got["1.12"].Reason; !strings.Contains(r, "setting access_key_unused_days is 90; a pass relies on it being at most 45") {
		t.Errorf("1.12 reason = %q", r)
	}
	if f := got["5.3"].Failing; len(f) != 1 || !strings.HasSuffix(f[0].Key, "/::/0") || f[0].Policy != "WARDEN-AWS-NET-001" {
		t.Errorf("5.3 failing = %+v, want the SSH rule open to ::/0", f)
	}

	// Set the pack's threshold to CIS's, and 1.12 passes on the same account.
	strict := map[string]any{"access_key_unused_days": 45, "password_unused_days": 45}
	got = statuses(compliance.Evaluate(fw, posture(t, "testdata/clean-aws.json", strict)))
	if got["1.12"].Status != compliance.StatusPass {
		t.Errorf("CIS AWS 1.12 with 45-day thresholds = %s (%s), want pass", got["1.12"].Status, got["1.12"].Reason)
	}

	// The same AWS account says nothing about GCP: no CIS GCP control passes.
	gcp, err := compliance.Lookup("cis-gcp-2.0")
	if err != nil {
		t.Fatal(err)
	}
	rep := compliance.Evaluate(gcp, posture(t, "testdata/clean-aws.json", nil))
	if rep.Score.Pass != 0 || rep.Score.Fail != 0 || rep.Score.Percent != nil || rep.Score.NotCovered == 0 {
		t.Errorf("CIS GCP over an AWS account scores %+v: want no pass, no fail, no percent", rep.Score)
	}
}

// TestEvaluate_acme judges every framework on the example organisation, whose
// eu-central-1 security groups in account 333333333333 could not be read.
func TestEvaluate_acme(t *testing.T) {
	in := posture(t, "../fixtures/acme/snapshot.json", nil)
	if len(in.Policies["WARDEN-AWS-NET-001"].FailedScopes) == 0 {
		t.Fatal("the acme snapshot's failed ec2 scope does not reach the security-group policies")
	}
	for _, fw := range load(t) {
		rep := compliance.Evaluate(fw, in)
		s := rep.Score
		if s.Controls != len(fw.Controls) || s.Pass+s.Fail+s.Unknown+s.NotCovered+s.Manual != s.Controls {
			t.Errorf("%s: score %+v does not add up to its %d controls", fw.ID, s, len(fw.Controls))
		}
		if s.Automated == 0 || s.Fail == 0 {
			t.Errorf("%s: score %+v; acme has a finding of every policy, so some control fails", fw.ID, s)
		}
		t.Logf("%s: %d/%d controls automated; pass %d, fail %d, unknown %d, not covered %d, manual %d",
			fw.ID, s.Automated, s.Controls, s.Pass, s.Fail, s.Unknown, s.NotCovered, s.Manual)
		for _, c := range rep.Controls {
			for _, f := range c.Failing {
				if !slices.Contains(c.Policies, f.Policy) || f.Status != findings.StatusOpen {
					t.Errorf("%s %s fails on %s (%s), not one of its policies' open findings", fw.ID, c.ID, f.Fingerprint, f.Policy)
				}
			}
		}
	}
	cis := statuses(compliance.Evaluate(mustLookup(t, "cis-aws-3.0"), in))
	for id, suffix := range map[string]string{"5.2": "/0.0.0.0/0", "5.3": "/::/0"} {
		c := cis[id]
		if c.Status != compliance.StatusFail || len(c.Failing) == 0 {
			t.Errorf("CIS AWS %s = %s, want fail", id, c.Status)
		}
		for _, f := range c.Failing {
			if !strings.HasSuffix(f.Key, suffix) {
				t.Errorf("CIS AWS %s fails on rule %s, which is not open to %s", id, f.Key, suffix[1:])
			}
		}
	}
	// CIS GCP 3.1 is automated (the policy finds any default network, its default rules
	// gone or not), and acme's default networks fail it.
	if c := statuses(compliance.Evaluate(mustLookup(t, "cis-gcp-2.0"), in))["3.1"]; c.Status != compliance.StatusFail || c.Assessment != compliance.Automated || len(c.Failing) != 2 {
		t.Errorf("CIS GCP 3.1 = %s (%s)", c.Status, c.Assessment)
	}
}

func mustLookup(t testing.TB, id string) *compliance.Framework {
	t.Helper()
	f, err := compliance.Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestLookup_suggestsTheFrameworkMeant(t *testing.T) {
	_, err := compliance.Lookup("cis-aws-3")
	if err == nil || !strings.Contains(err.Error(), `unknown framework "cis-aws-3" (did you mean "cis-aws-3.0"?)`) || !strings.Contains(err.Error(), "nist-800-53-r5") {
		t.Errorf("error = %v", err)
	}
}
