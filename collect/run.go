package collect

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/snapshot"
)

// Options tune one collection.
type Options struct {
	// Source names what wrote the snapshot, for its header ("warden v1.2.0 collect").
	Source string
	// Now is the clock that stamps collected_at; nil means time.Now.
	Now func() time.Time
	// Progress, when set, is called as resources arrive, possibly from several
	// collectors at once, with the count so far and a function that describes the scopes
	// read so far ("12 scopes read, 40 API calls"); call it only when drawing.
	Progress func(resources int, scopes func() string)
	// Done, when set, is called once every collector has finished without error, with
	// what the collection read and cost, before the snapshot is completed.
	Done func(Summary)
}

// Summary is what a collection read and what it cost.
type Summary struct {
	CollectedAt time.Time     `json:"collected_at"`
	Resources   int           `json:"resources"`
	Scopes      int           `json:"scopes"`
	Calls       int           `json:"calls"`
	Throttled   int           `json:"throttled"`
	Denied      int           `json:"access_denied"`
	Incomplete  int           `json:"incomplete_scopes"` // scopes not read in full: their resources are unknown
	Elapsed     time.Duration `json:"elapsed_ns"`
}

// String is one line on what the collection cost and what it could not read.
func (s Summary) String() string {
	line := fmt.Sprintf("collected %d resources in %d scopes with %d API calls", s.Resources, s.Scopes, s.Calls)
	if s.Resources > 0 && s.Calls > 0 {
		line += fmt.Sprintf(" (%.2f per resource)", float64(s.Calls)/float64(s.Resources))
	}
	line += fmt.Sprintf(" in %s; %d throttled, %d denied", s.Elapsed.Round(time.Millisecond), s.Throttled, s.Denied)
	if s.Incomplete > 0 {
		scopes := "scopes"
		if s.Incomplete == 1 {
			scopes = "scope"
		}
		line += fmt.Sprintf("; %d %s incomplete (their resources are unknown)", s.Incomplete, scopes)
	}
	return line
}

// Run runs the collectors in parallel and streams one snapshot to w. Accounts are
// discovered first, so that the header lists them before any resource. A collector that
// cannot go on at all stops the run with an error naming it; a scope it could not read
// is a failed scope in the snapshot, not an error. On error, what was written to w is
// not a complete snapshot; the summary counts what was read until then.
func Run(ctx context.Context, w io.Writer, cs []collectors.Collector, opts Options) (Summary, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	h := snapshot.Header{CollectedAt: now().UTC(), Source: opts.Source}
	for _, c := range cs {
		d, ok := c.(collectors.Discoverer)
		if !ok {
			continue
		}
		ids, err := d.Discover(ctx)
		if err != nil {
			return Summary{CollectedAt: h.CollectedAt}, fmt.Errorf("collect %s: %w", c.Name(), err)
		}
		h.Accounts = append(h.Accounts, ids...)
	}
	sw, err := snapshot.NewWriter(w, h)
	if err != nil {
		return Summary{CollectedAt: h.CollectedAt}, err
	}
	sink := &countingSink{Sink: &collectors.WriterSink{W: sw}, progress: opts.Progress}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		g.Go(func() error {
			if err := c.Collect(gctx, sink); err != nil {
				return fmt.Errorf("collect %s: %w", c.Name(), err)
			}
			return nil
		})
	}
	err = g.Wait()
	sum := sink.summary(h.CollectedAt, time.Since(start))
	if err != nil {
		return sum, err
	}
	if opts.Done != nil {
		opts.Done(sum)
	}
	return sum, sw.Close()
}

// countingSink counts resources for the progress line, and scopes, calls and failures
// for the summary.
type countingSink struct {
	collectors.Sink
	n        atomic.Int64
	progress func(int, func() string)

	mu                                    sync.Mutex
	scopes, calls, throttled, denied, bad int
}

func (s *countingSink) Resource(r snapshot.Resource) error {
	n := int(s.n.Add(1))
	if s.progress != nil {
		s.progress(n, s.scopesRead)
	}
	return s.Sink.Resource(r)
}

// scopesRead says how far the collection is, for the progress line.
func (s *countingSink) scopesRead() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	more := fmt.Sprintf("%d scopes read, %d API calls", s.scopes, s.calls)
	if s.bad > 0 {
		more += fmt.Sprintf(", %d incomplete", s.bad)
	}
	if s.throttled > 0 {
		more += fmt.Sprintf(", %d throttled", s.throttled)
	}
	return more
}

func (s *countingSink) Scope(sc snapshot.Scope) {
	s.mu.Lock()
	s.scopes++
	s.calls += sc.Calls
	s.throttled += sc.Throttled
	s.denied += sc.AccessDenied
	if !sc.Complete() {
		s.bad++
	}
	s.mu.Unlock()
	s.Sink.Scope(sc)
}

func (s *countingSink) summary(at time.Time, elapsed time.Duration) Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Summary{CollectedAt: at, Resources: int(s.n.Load()), Scopes: s.scopes, Calls: s.calls, Throttled: s.throttled,
		Denied: s.denied, Incomplete: s.bad, Elapsed: elapsed}
}
