package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/warden-sec/warden/store"
)

// Listing is what one sweep's listing of its target's scopes found, kept for the
// collections the sweep started before the listing ended (migration 0020).
type Listing struct {
	// ID is the sweep's own name for its listing, which its collections carry.
	ID string
	// AccountsRef names the organisation's accounts as listed (PutAccountList): those
	// the policies treat as known.
	AccountsRef string
	// Departed are the scopes the sweep started before it listed that the listing no
	// longer names (their account left the organisation, their region was disabled):
	// nothing is judged or planned for them.
	Departed []string
}

// listingsKept is how long a listing is kept for collections that wait for it: a
// collection waits for its sweep's listing far less (daemon.listingWait).
const listingsKept = 24 * time.Hour

// ListedScopes is the scopes target's last listing named (PutListing), sorted.
func ListedScopes(ctx context.Context, q store.Querier, target string) ([]string, error) {
	out, err := store.QueryAll(ctx, q, store.ScanString, `SELECT scope FROM listed_scopes WHERE target = ? ORDER BY scope`, target)
	if err != nil {
		return nil, fmt.Errorf("read the scopes %s last listed: %w", target, err)
	}
	return out, nil
}

// PutListing records a listing of target's scopes at `at`: scopes become the target's
// listed scopes (only what changed is written: a listing of an unchanged organisation
// writes none of its thousands of rows), and l is kept under its id (ListingOf) unless
// a listing is kept under it already: a sweep that lists again (its job retried) leaves
// the collections it started waiting on its first listing, so that a scope it found
// departed stays so. Listings older than a day are dropped.
func PutListing(ctx context.Context, tx *store.Tx, target string, scopes []string, l Listing, at time.Time) error {
	old, err := ListedScopes(ctx, tx, target)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, sc := range scopes {
		listed[sc] = true
	}
	for _, sc := range old {
		if listed[sc] {
			delete(listed, sc)
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM listed_scopes WHERE target = ? AND scope = ?`, target, sc); err != nil {
			return fmt.Errorf("record the scopes %s listed: %w", target, err)
		}
	}
	for _, sc := range slices.Sorted(maps.Keys(listed)) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO listed_scopes (target, scope) VALUES (?, ?)`, target, sc); err != nil {
			return fmt.Errorf("record the scopes %s listed: %w", target, err)
		}
	}
	departed, err := json.Marshal(slices.Sorted(slices.Values(l.Departed)))
	if err != nil {
		return fmt.Errorf("record listing %s: %w", l.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO scope_listings (id, accounts_ref, departed, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`,
		l.ID, l.AccountsRef, string(departed), store.FormatTime(at)); err != nil {
		return fmt.Errorf("record listing %s: %w", l.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM scope_listings WHERE created_at < ?`, store.FormatTime(at.Add(-listingsKept))); err != nil {
		return fmt.Errorf("drop the listings older than %s: %w", listingsKept, err)
	}
	return nil
}

// ListingOf is the listing kept under id (PutListing), and whether there is one.
func ListingOf(ctx context.Context, q store.Querier, id string) (Listing, bool, error) {
	l := Listing{ID: id}
	var departed string
	err := q.QueryRowContext(ctx, `SELECT accounts_ref, departed FROM scope_listings WHERE id = ?`, id).Scan(&l.AccountsRef, &departed)
	if errors.Is(err, sql.ErrNoRows) {
		return Listing{}, false, nil
	}
	if err != nil {
		return Listing{}, false, fmt.Errorf("read listing %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(departed), &l.Departed); err != nil {
		return Listing{}, false, fmt.Errorf("read listing %s: its departed scopes: %w", id, err)
	}
	return l, true, nil
}
