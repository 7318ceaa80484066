package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/store"
)

// A sweep lists its target's scopes before it knows which to read, and listing an
// organisation takes time: 25 calls of organizations:ListAccounts at 500 accounts, five
// seconds at warden's pace, during which no collection ran (BENCHMARKS.md, "Reading
// while the organisation is listed"). So a sweep of a target whose collector replays
// tapes (collectors.Rereader) first starts the scopes its last listing named and that
// were read before, then lists. A collection so started replays its scope's tape, and
// an unchanged scope that needs no plan is done without the listing: it judges nothing.
// Anything else (a changed scope, a plan) waits for the sweep's listing
// (state.Listing), so that the policies never judge with a partial list of the
// organisation's accounts; and a scope the listing no longer names (its account left
// the organisation) is neither judged nor planned for: its collection is cancelled.

// listingWait bounds how long a collection started before its sweep's listing waits for
// it: a listing that does not come (the sweep failed) leaves the scope unjudged until the
// next sweep, never judged without it.
const listingWait = 5 * time.Minute

// listingPoll is how often a collection waiting for a listing another replica makes
// looks for it; this replica's own listings wake it at once (listingNews).
const listingPoll = 250 * time.Millisecond

// errListingLate is a collection's end when its sweep's listing did not come.
var errListingLate = errors.New("the sweep's listing of the organisation did not come")

// errDeparted is a collection's end when its sweep's listing no longer names its scope.
var errDeparted = errors.New("the sweep's listing no longer names the scope (its account left the organisation, or its region is no longer enabled): nothing is judged or planned for it")

// listingNews wakes the collections waiting for a listing when this replica keeps one.
type listingNews struct {
	mu sync.Mutex
	ch chan struct{}
}

// next is what the next listing closes; taken before looking for a listing, so that one
// kept between the look and the wait is not missed.
func (n *listingNews) next() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// announce wakes every collection waiting for a listing.
func (n *listingNews) announce() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
	}
	n.ch = make(chan struct{})
}

// listingID names a sweep's listing: its job's id (the same through its retries) and
// when the job was made, as two queues' ids may meet after River's table was emptied.
func listingID(target string, job *river.Job[SweepArgs]) string {
	return fmt.Sprintf("%s/%d/%d", target, job.ID, job.CreatedAt.UnixNano())
}

// sweepState is what a sweep reads of the store before it lists: each scope's calls at
// its last read (sortLongestFirst) and the scopes to start before listing.
type sweepState struct {
	calls map[string]int
	early []string
}

// sweepStateOf reads t's sweepState. Only a collector that replays tapes starts scopes
// before listing: another's collections read in full and would only wait for the
// listing, holding a reader and what they read.
func (d *Daemon) sweepStateOf(ctx context.Context, t Target) (sweepState, error) {
	var s sweepState
	_, replays := t.Collector.(collectors.Rereader)
	err := d.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		if s.calls, err = state.ScopeCalls(ctx, q); err != nil || !replays {
			return err
		}
		listed, err := state.ListedScopes(ctx, q, t.Name)
		if err != nil {
			return err
		}
		for _, sc := range listed {
			if _, read := s.calls[sc]; read {
				s.early = append(s.early, sc)
			}
		}
		return nil
	})
	return s, err
}

// keepListing records what the sweep listed (state.PutListing) and wakes the collections
// of this replica waiting for it. departed are the scopes it started before listing that
// are not in scopes.
func (d *Daemon) keepListing(ctx context.Context, t Target, id, ref string, scopes, early []string) (departed []string, err error) {
	// A set: a sweep of 500 accounts lists 4,500 scopes, and starts as many early.
	listed := make(map[string]bool, len(scopes))
	for _, sc := range scopes {
		listed[sc] = true
	}
	for _, sc := range early {
		if !listed[sc] {
			departed = append(departed, sc)
		}
	}
	err = d.o.Store.InTx(ctx, func(tx *store.Tx) error {
		return state.PutListing(ctx, tx, t.Name, scopes, state.Listing{ID: id, AccountsRef: ref, Departed: departed}, time.Now())
	})
	if err != nil {
		return nil, fmt.Errorf("keep the listing of %s: %w", t.Name, err)
	}
	d.listingNews.announce()
	return departed, nil
}

// awaitListing waits for the listing kept under id (at most listingWait).
func (d *Daemon) awaitListing(ctx context.Context, id string) (state.Listing, error) {
	late := time.NewTimer(listingWait)
	defer late.Stop()
	for {
		news := d.listingNews.next()
		var (
			l  state.Listing
			ok bool
		)
		err := d.o.Store.Read(ctx, func(q *store.Reader) error {
			var err error
			l, ok, err = state.ListingOf(ctx, q, id)
			return err
		})
		if err != nil || ok {
			return l, err
		}
		select {
		case <-news:
		case <-time.After(listingPoll):
		case <-late.C:
			return state.Listing{}, fmt.Errorf("%w within %s", errListingLate, listingWait)
		case <-ctx.Done():
			return state.Listing{}, ctx.Err()
		}
	}
}

// collectionAccounts are the accounts a collection judges and plans with: those its job
// names, or, for a collection started before its sweep's listing, the listing's, once it
// is kept. It is errDeparted when that listing no longer names the scope, and wraps
// errListingLate when the listing did not come.
func (d *Daemon) collectionAccounts(ctx context.Context, a CollectArgs) ([]string, error) {
	if a.Listing == "" || a.AccountsRef != "" || len(a.Accounts) > 0 {
		return d.accountsOf(ctx, a.Accounts, a.AccountsRef)
	}
	l, err := d.awaitListing(ctx, a.Listing)
	if err != nil {
		return nil, err
	}
	if slices.Contains(l.Departed, a.Scope) {
		return nil, errDeparted
	}
	return d.accountsOf(ctx, nil, l.AccountsRef)
}

// unjudged ends a collection that may not judge what it read (collectionAccounts' err):
// cancelled, with why, when its listing did not come or no longer names its scope; the
// error as it is otherwise (the store: tried again).
func (d *Daemon) unjudged(log *slog.Logger, scope string, err error) error {
	if !errors.Is(err, errDeparted) && !errors.Is(err, errListingLate) {
		return fmt.Errorf("collect %s: %w", scope, err)
	}
	log.Warn("collect: the scope is not judged", "why", err)
	d.done(KindCollect, "cancelled")
	return river.JobCancel(fmt.Errorf("collect %s: %w", scope, err))
}
