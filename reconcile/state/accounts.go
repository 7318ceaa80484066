package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/warden-sec/warden/store"
)

// PutAccountList keeps a list of accounts and projects, once, and returns its digest,
// which AccountList reads it back by. An empty list is not kept: its digest is "".
func PutAccountList(ctx context.Context, tx *store.Tx, accounts []string, at time.Time) (string, error) {
	if len(accounts) == 0 {
		return "", nil
	}
	digest, data, err := accountList(accounts)
	if err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO account_lists (digest, accounts, created_at) VALUES (?, ?, ?) ON CONFLICT (digest) DO NOTHING`,
		digest, string(data), store.FormatTime(at)); err != nil {
		return "", fmt.Errorf("keep a list of %d accounts: %w", len(accounts), err)
	}
	return digest, nil
}

// AccountList is the list kept under digest (PutAccountList), sorted. A digest no list
// has is an error: a job that names one cannot be judged with the accounts it was
// meant for.
func AccountList(ctx context.Context, q store.Querier, digest string) ([]string, error) {
	var data string
	err := q.QueryRowContext(ctx, `SELECT accounts FROM account_lists WHERE digest = ?`, digest).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read the account list %.12s: no such list", digest)
	}
	if err != nil {
		return nil, fmt.Errorf("read the account list %.12s: %w", digest, err)
	}
	var out []string
	if err := json.Unmarshal([]byte(data), &out); err != nil {
		return nil, fmt.Errorf("read the account list %.12s: %w", digest, err)
	}
	// The digest is over the list as stored: a row edited in place is refused.
	if d, _, err := accountList(out); err != nil || d != digest {
		return nil, fmt.Errorf("read the account list %.12s: its accounts do not match its digest", digest)
	}
	return out, nil
}

// AccountListDigest is the digest PutAccountList keeps accounts under ("" for none),
// without keeping them.
func AccountListDigest(accounts []string) string {
	if len(accounts) == 0 {
		return ""
	}
	d, _, _ := accountList(accounts)
	return d
}

// accountList is the digest and stored form of accounts: sorted, without repeats.
func accountList(accounts []string) (string, []byte, error) {
	sorted := slices.Compact(slices.Sorted(slices.Values(accounts)))
	data, err := json.Marshal(sorted)
	if err != nil {
		return "", nil, fmt.Errorf("encode a list of %d accounts: %w", len(accounts), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), data, nil
}
