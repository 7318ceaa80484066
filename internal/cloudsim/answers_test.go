package cloudsim

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// answerStats are the answer cache's counters and account a's version.
func answerStats(sim *Sim, a string) (hits, misses int, version, global uint64) {
	sim.Do(func(*World) {
		hits, misses, version, global = sim.answers.hits, sim.answers.misses, sim.answers.versions[a], sim.answers.global
	})
	return
}

// A generated account's reads answer from the cache while nothing changed them, and as
// a simulator without the cache answers: after a write to the account, an AssumeRole
// into it, a move of the clock and a drift, they are encoded anew; a write to another account and a reset of the call counters leave them.
// The credential report, generated again and read, is the one a simulator without the
// cache makes, to its time.
func TestAnswerCache(t *testing.T) {
	ctx := context.Background()
	w := genTestWorld(3, 400, 3, 7)
	w.AWS.Organization.Generated.DriftRate = 0.05
	w.AWS.Organization.Generated.AnswerCacheMiB = 64
	sim, cfg := sdkSim(t, w, Options{Now: fixedClock})
	plain := genTestWorld(3, 400, 3, 7)
	plain.AWS.Organization.Generated.DriftRate = 0.05
	simPlain, cfgPlain := sdkSim(t, plain, Options{Now: fixedClock})
	if simPlain.answers != nil {
		t.Fatal("a world without answer_cache_mib keeps answers")
	}
	a, b := "200000000001", "200000000002"
	ca, cb, caPlain := assumeInto(t, cfg, a), assumeInto(t, cfg, b), assumeInto(t, cfgPlain, a)

	first := readAccount(t, ca)
	h0, m0, _, _ := answerStats(sim, a)
	if m0 == 0 {
		t.Fatalf("first read: %d hits, no miss; want its calls encoded", h0)
	}
	again := readAccount(t, ca)
	h1, m1, _, _ := answerStats(sim, a)
	// Every cacheable call of the read hits: its pages of authorization details and of
	// security groups. (A call the SDK repeats within the first read may hit there.)
	if m1 != m0 || h1-h0 < m0 {
		t.Errorf("second read: %d hits, %d misses; want every call to hit, at least the first read's %d misses", h1-h0, m1-m0, m0)
	}
	if d := changed(first, again); d != 0 || len(again) != len(first) {
		t.Errorf("the cached read differs from the first: %d resources", d)
	}
	if d := changed(first, readAccount(t, caPlain)); d != 0 {
		t.Errorf("a simulator without the cache answers otherwise: %d resources differ", d)
	}

	steps := []struct {
		name     string
		do       func(t *testing.T)
		reencode bool // account a's answers are encoded anew
	}{
		{"a write to another account", func(t *testing.T) {
			if _, err := iam.NewFromConfig(cb).CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("bob")}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a reset of the call counters", func(t *testing.T) {
			resp, err := http.Post(aws.ToString(cfg.BaseEndpoint)+"/_sim/calls/reset", "text/plain", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}, false},
		{"a write to the account", func(t *testing.T) {
			// An hour on, so that the report generated after the write is stamped anew.
			postBoth(t, "/_sim/clock", "1h", cfg, cfgPlain)
			if _, err := iam.NewFromConfig(ca).CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("alice")}); err != nil {
				t.Fatal(err)
			}
			if _, err := iam.NewFromConfig(caPlain).CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("alice")}); err != nil {
				t.Fatal(err)
			}
			// The report, read before a new one is generated: the new one must not be
			// answered as it was.
			for _, c := range []aws.Config{ca, caPlain} {
				if _, err := iam.NewFromConfig(c).GetCredentialReport(ctx, &iam.GetCredentialReportInput{}); err != nil {
					t.Fatal(err)
				}
			}
		}, true},
		{"an AssumeRole into the account", func(t *testing.T) {
			ca = assumeInto(t, cfg, a)
		}, true},
		{"a move of the clock", func(t *testing.T) {
			postBoth(t, "/_sim/clock", "1h", cfg, cfgPlain)
		}, true},
		{"a drift", func(t *testing.T) {
			postBoth(t, "/_sim/drift", "", cfg, cfgPlain)
		}, true},
	}
	prev := again
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			hb, mb, _, _ := answerStats(sim, a)
			st.do(t)
			got := readAccount(t, ca)
			ha, ma, _, _ := answerStats(sim, a)
			if st.reencode && ma == mb {
				t.Errorf("%d hits, no miss: the answers outlived %s", ha-hb, st.name)
			}
			if !st.reencode && ma != mb {
				t.Errorf("%d misses after %s, want none", ma-mb, st.name)
			}
			if d := changed(got, readAccount(t, caPlain)); d != 0 {
				t.Errorf("after %s, %d resources differ from a simulator without the cache", st.name, d)
			}
			if r, want := report(t, ca), report(t, caPlain); r != want {
				t.Errorf("after %s, the credential report is\n%s\nwant, as a simulator without the cache makes it,\n%s", st.name, r, want)
			}
			if st.name == "a write to the account" {
				if _, ok := got["user/alice"]; !ok || changed(prev, got) != 1 {
					t.Errorf("after the write: alice present %v, %d resources changed; want alice, 1", ok, changed(prev, got))
				}
			}
			prev = got
		})
	}
	_, _, va, global := answerStats(sim, a)
	if va < 2 || global < 1 {
		t.Errorf("account %s at version %d, all at %d; want at least 2 and 1", a, va, global)
	}
}

// report generates the credential report of cfg's account and returns its time and
// content.
func report(t *testing.T, cfg aws.Config) string {
	t.Helper()
	ic := iam.NewFromConfig(cfg)
	if _, err := ic.GenerateCredentialReport(context.Background(), &iam.GenerateCredentialReportInput{}); err != nil {
		t.Fatal(err)
	}
	r, err := ic.GetCredentialReport(context.Background(), &iam.GetCredentialReportInput{})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToTime(r.GeneratedTime).String() + "\n" + string(r.Content)
}

// postBoth posts body to path on each simulator of cfgs, which must answer 200.
func postBoth(t *testing.T, path, body string, cfgs ...aws.Config) {
	t.Helper()
	for _, c := range cfgs {
		resp, err := http.Post(aws.ToString(c.BaseEndpoint)+path, "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
	}
}
