package aws_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// simCalls is every call the simulator answered so far.
func simCalls(sim *cloudsim.Sim) int {
	n := 0
	for _, st := range sim.Calls() {
		n += st.Calls
	}
	return n
}

// TestCollectScopeAgain_unchangedCostsItsReadsAndAChangeIsReadOnce: for each kind of
// scope (IAM, a region's EC2 and ACM, in the caller's account and a member's), a read
// again with the last read's tape reports nothing and makes the read's number of calls
// while the world is unchanged; once the world changed, it reports what a plain read
// reports, resource by resource, with a plain read's number of calls (the replay's
// answers are taken, not asked again), and its new tape then proves the new world
// unchanged while the old tape no longer does.
func TestCollectScopeAgain_unchangedCostsItsReadsAndAChangeIsReadOnce(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	sim, url := simtest.Start(t, world(), cloudsim.Options{Now: func() time.Time { return now }})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := scopedCollector(url, awscollector.Config{Org: true}, nil)
	if _, err := c.Scopes(ctx); err != nil {
		t.Fatal(err)
	}
	change := map[string]func(w *cloudsim.World){
		"iam": func(w *cloudsim.World) {
			acct(w, "222222222222").Users[1].AccessKeys[1].Status = "Active"
		},
		"ec2": func(w *cloudsim.World) {
			sg := acct(w, "222222222222").SecurityGroups[1]
			sg.Ingress = append(sg.Ingress, cloudsim.Rule{Protocol: "tcp", FromPort: 3389, ToPort: 3389, CIDR: "0.0.0.0/0"})
		},
		"acm": func(w *cloudsim.World) {
			acct(w, "222222222222").Certificates[0].InUseBy = nil
		},
	}
	for _, tc := range []struct{ scope, service string }{
		{"aws/111111111111/iam", ""},
		{"aws/111111111111/ec2/eu-west-1", ""},
		{"aws/111111111111/acm/eu-west-1", ""},
		{"aws/222222222222/iam", "iam"},
		{"aws/222222222222/ec2/eu-west-1", "ec2"},
		{"aws/222222222222/acm/eu-west-1", "acm"},
	} {
		t.Run(tc.scope, func(t *testing.T) {
			plain := func() (map[string][]string, int) {
				t.Helper()
				before := simCalls(sim)
				var sink collectors.MemorySink
				if err := c.CollectScope(ctx, tc.scope, &sink); err != nil {
					t.Fatal(err)
				}
				return resourcesByScope(t, sink.Resources), simCalls(sim) - before
			}
			again := func(tape []byte) (collectors.Reread, *collectors.MemorySink, int) {
				t.Helper()
				before := simCalls(sim)
				var sink collectors.MemorySink
				fulls, releases := 0, 0
				r, err := c.CollectScopeAgain(ctx, tc.scope, collectors.Again{Tape: tape, Full: func(context.Context) (func(), error) {
					fulls++
					return func() { releases++ }, nil
				}}, &sink)
				if err != nil {
					t.Fatal(err)
				}
				// A full read, and only a full read, asks its turn, and gives it back.
				if want := map[bool]int{true: 0, false: 1}[r.Unchanged]; fulls != want || releases != want {
					t.Fatalf("unchanged %v: Full called %d times, released %d; want %d", r.Unchanged, fulls, releases, want)
				}
				return r, &sink, simCalls(sim) - before
			}
			want, wantCalls := plain()
			first, sink, calls := again(nil)
			if first.Unchanged || len(first.Tape) == 0 || calls != wantCalls {
				t.Fatalf("a first read: unchanged %v, tape of %d bytes (%s), %d calls; want a read with a tape and %d calls",
					first.Unchanged, len(first.Tape), first.Why, calls, wantCalls)
			}
			if got := resourcesByScope(t, sink.Resources); !equalResources(got, want) {
				t.Fatalf("a first read reports other resources than CollectScope:\n%v\nwant\n%v", got, want)
			}

			same, sink, calls := again(first.Tape)
			if !same.Unchanged || len(sink.Resources) > 0 || len(sink.Scopes) > 0 || calls != wantCalls || same.Calls != calls {
				t.Fatalf("unchanged world: unchanged %v (%s), %d resources and %d scopes reported, %d calls (%d counted); want unchanged, nothing reported, %d calls",
					same.Unchanged, same.Why, len(sink.Resources), len(sink.Scopes), calls, same.Calls, wantCalls)
			}
			if tc.service == "" {
				return
			}

			sim.Do(change[tc.service])
			want, wantCalls = plain()
			changed, sink, calls := again(first.Tape)
			if changed.Unchanged || len(changed.Tape) == 0 {
				t.Fatalf("changed world: unchanged %v, tape of %d bytes; want a read with a new tape", changed.Unchanged, len(changed.Tape))
			}
			if got := resourcesByScope(t, sink.Resources); !equalResources(got, want) {
				t.Fatalf("changed world: the read reports other resources than CollectScope:\n%v\nwant\n%v", got, want)
			}
			if calls != wantCalls || len(sink.Scopes) != 1 || sink.Scopes[0].Calls != wantCalls {
				t.Fatalf("changed world: %d calls (the scope counts %+v); a plain read makes %d: a request was asked twice or not counted", calls, sink.Scopes, wantCalls)
			}
			if r, _, _ := again(changed.Tape); !r.Unchanged {
				t.Fatalf("the new tape does not prove the changed world unchanged: %s", r.Why)
			}
			if r, _, _ := again(first.Tape); r.Unchanged {
				t.Fatal("the first tape still proves the changed world unchanged")
			}
		})
	}
}

func acct(w *cloudsim.World, id string) *cloudsim.Account {
	for _, a := range w.AWS.Accounts {
		if a.ID == id {
			return a
		}
	}
	panic("no account " + id)
}

func equalResources(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestCollectScopeAgain_noTapeForUsage: an IAM scope that collects usage is read in
// full each time and keeps no tape; its other scopes keep theirs.
func TestCollectScopeAgain_noTapeForUsage(t *testing.T) {
	_, url := simtest.Start(t, world(), cloudsim.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := scopedCollector(url, awscollector.Config{Org: true, Usage: awscollector.UsageConfig{Enabled: true}}, nil)
	if _, err := c.Scopes(ctx); err != nil {
		t.Fatal(err)
	}
	var sink collectors.MemorySink
	r, err := c.CollectScopeAgain(ctx, "aws/111111111111/iam", collectors.Again{}, &sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tape) > 0 || r.Why == "" || len(sink.Scopes) != 1 {
		t.Fatalf("usage: tape of %d bytes, why %q, %d scopes reported; want no tape, a reason, the scope read", len(r.Tape), r.Why, len(sink.Scopes))
	}
	if r, err := c.CollectScopeAgain(ctx, "aws/111111111111/ec2/us-east-1", collectors.Again{}, &sink); err != nil || len(r.Tape) == 0 {
		t.Fatalf("ec2 with usage on: %v, tape of %d bytes (%s)", err, len(r.Tape), r.Why)
	}
}

// TestCollectScopeAgain_answersNotKeptAreAskedAgainAndCounted: when the replays keep no
// answers (their budget spent), the read after a change asks again for what the replay
// got, and the scope counts every call AWS answered: the replay's and the read's.
func TestCollectScopeAgain_answersNotKeptAreAskedAgainAndCounted(t *testing.T) {
	sim, url := simtest.Start(t, world(), cloudsim.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sdk := simtest.AWSConfig(url)
	s, err := awsapi.NewSessions(ctx, awsapi.Options{Endpoint: url, AWS: &sdk, ReplayKeeps: -1,
		RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0}})
	if err != nil {
		t.Fatal(err)
	}
	c := awscollector.New(awscollector.Config{Org: true, Sessions: s})
	if _, err := c.Scopes(ctx); err != nil {
		t.Fatal(err)
	}
	const scope = "aws/222222222222/ec2/eu-west-1"
	var sink collectors.MemorySink
	first, err := c.CollectScopeAgain(ctx, scope, collectors.Again{}, &sink)
	if err != nil || len(first.Tape) == 0 || len(sink.Scopes) != 1 {
		t.Fatalf("first read: %v, tape of %d bytes, scopes %+v", err, len(first.Tape), sink.Scopes)
	}
	readCalls := sink.Scopes[0].Calls
	sim.Do(func(w *cloudsim.World) {
		sg := acct(w, "222222222222").SecurityGroups[1]
		sg.Ingress = append(sg.Ingress, cloudsim.Rule{Protocol: "tcp", FromPort: 3389, ToPort: 3389, CIDR: "0.0.0.0/0"})
	})
	before := simCalls(sim)
	sink = collectors.MemorySink{}
	r, err := c.CollectScopeAgain(ctx, scope, collectors.Again{Tape: first.Tape}, &sink)
	if err != nil || r.Unchanged {
		t.Fatalf("changed world: %v, unchanged %v", err, r.Unchanged)
	}
	calls := simCalls(sim) - before
	if len(sink.Scopes) != 1 || sink.Scopes[0].Calls != calls || calls <= readCalls {
		t.Fatalf("the simulator answered %d calls, the scope counts %+v; want them equal, the replay's among them", calls, sink.Scopes)
	}
}

// TestCollectScopeAgain_throttledReplayAsksAgain: AWS refusing some of a replay's calls
// for their rate says nothing of the scope. Each is asked again after a backoff, the
// scope is still found unchanged (not read in full), and the scope counts the throttled
// calls among its calls, as the simulator served them.
func TestCollectScopeAgain_throttledReplayAsksAgain(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	sim, url := simtest.Start(t, world(), cloudsim.Options{Now: func() time.Time { return now }})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := scopedCollector(url, awscollector.Config{Org: true}, nil)
	if _, err := c.Scopes(ctx); err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{"aws/222222222222/iam", "aws/222222222222/ec2/eu-west-1"} {
		t.Run(scope, func(t *testing.T) {
			full := collectors.Again{Full: func(context.Context) (func(), error) { return func() {}, nil }}
			var sink collectors.MemorySink
			first, err := c.CollectScopeAgain(ctx, scope, full, &sink)
			if err != nil || len(first.Tape) == 0 {
				t.Fatalf("a first read: %v, tape of %d bytes (%s)", err, len(first.Tape), first.Why)
			}
			// Every other call of the replay is throttled (the simulator's throttling
			// is drawn per call; half of them on average).
			service := strings.Split(scope, "/")[2]
			if err := sim.SetFaults([]cloudsim.Fault{{Service: service, ThrottleRate: 0.5}}, nil); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sim.SetFaults(nil, nil) }()
			// The throttling is drawn per call: the replay runs until one of its calls
			// was throttled (half of them are, on average), and each run must hold.
			for run := 1; ; run++ {
				before := sim.Calls()
				fulls := 0
				again := collectors.Again{Tape: first.Tape, Full: func(context.Context) (func(), error) { fulls++; return func() {}, nil }}
				var sink2 collectors.MemorySink
				r, err := c.CollectScopeAgain(ctx, scope, again, &sink2)
				if err != nil {
					t.Fatal(err)
				}
				served, throttled := 0, 0
				for op, st := range sim.Calls() {
					served += st.Calls - before[op].Calls
					throttled += st.Throttled - before[op].Throttled
				}
				if !r.Unchanged || fulls != 0 || len(sink2.Resources) > 0 {
					t.Fatalf("a throttled replay: unchanged %v (%s), %d full reads, %d resources; want unchanged, no read", r.Unchanged, r.Why, fulls, len(sink2.Resources))
				}
				if r.Calls != served || r.Throttled != throttled {
					t.Fatalf("the replay counts %d calls, %d throttled; the simulator served %d, %d throttled", r.Calls, r.Throttled, served, throttled)
				}
				if throttled > 0 {
					break
				}
				if run == 20 {
					t.Fatal("no call of 20 replays was throttled")
				}
			}
		})
	}
}
