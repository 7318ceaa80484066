package daemon_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/store/storetest"
)

// Scheduled tasks run when the leader starts and then once per interval; a failed run
// is retried with the time it was due.
func TestDaemon_tasksRunOnScheduleAndRetry(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var steady []time.Time
			var flaky []time.Time
			opts := daemon.Options{Tasks: []daemon.Task{
				{Name: "steady", Every: 2 * time.Second, Run: func(_ context.Context, at time.Time) error {
					mu.Lock()
					defer mu.Unlock()
					steady = append(steady, at)
					return nil
				}},
				{Name: "flaky", Every: time.Hour, Run: func(_ context.Context, at time.Time) error {
					mu.Lock()
					defer mu.Unlock()
					flaky = append(flaky, at)
					if len(flaky) == 1 {
						return errors.New("the bucket is unreachable")
					}
					return nil
				}},
			}}
			h := start(t, dsn(t), 1, opts)
			deadline := time.Now().Add(60 * time.Second)
			for {
				mu.Lock()
				ns, nf := len(steady), len(flaky)
				mu.Unlock()
				if ns >= 3 && nf >= 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 60s: steady ran %d times (want 3: at start, then every 2s), flaky %d (want 2: failed, retried)", ns, nf)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err := h.stop(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(flaky) != 2 || !flaky[0].Equal(flaky[1]) || flaky[0].IsZero() {
				t.Errorf("flaky ran at %v: want twice, the retry with the first run's due time", flaky)
			}
			for i := 1; i < len(steady); i++ {
				if !steady[i].After(steady[i-1]) {
					t.Errorf("steady's runs were due at %v: each after the one before", steady)
				}
			}
			if n := h.count(daemon.KindTask + "/completed"); n < 4 {
				t.Errorf("%d task jobs completed, want at least 4", n)
			}
		})
	}
}

// A task needs a name, an interval and a function, and a name once.
func TestNew_refusesBadTasks(t *testing.T) {
	run := func(context.Context, time.Time) error { return nil }
	for _, tasks := range [][]daemon.Task{
		{{Every: time.Hour, Run: run}},
		{{Name: "r", Run: run}},
		{{Name: "r", Every: time.Hour}},
		{{Name: "r", Every: time.Hour, Run: run}, {Name: "r", Every: time.Minute, Run: run}},
	} {
		_, err := daemon.New(context.Background(), daemon.Options{Tasks: tasks})
		if err == nil || !strings.Contains(err.Error(), "task") {
			t.Errorf("New with tasks %+v: %v, want the tasks refused", tasks, err)
		}
	}
}
