// Package audit is warden's tamper-evident audit trail: an append-only Merkle log (RFC
// 6962 hashing, golang.org/x/mod/sumdb/tlog) of every event — scans, findings, plans,
// approvals, actions, controls — written in the same transaction as the change it
// records, with signed checkpoints (C2SP tlog-checkpoint, ed25519 signed notes) and a
// verifier that names the first entry that was edited, deleted, reordered or truncated.
//
// # The leaf
//
// Entry seq (0-based, contiguous) is the tree's leaf seq. Its leaf hash is
// tlog.RecordHash(record), that is SHA-256(0x00 || record), where record is the entry's
// canonical JSON (see [CanonicalRecord]):
//
//	{"actor":"bob","data":{"id":"a1"},"kind":"plan.created","seq":0,"subject":"plan/9f…","time":"2025-01-02T03:04:05.123456789Z"}
//
// Keys appear in this order (sorted), with no insignificant whitespace; time is RFC 3339
// in UTC with up to nine fractional digits and trailing zeros dropped (Go's
// time.RFC3339Nano); strings are escaped as RFC 8785 does (only ", \ and control
// characters); data is the event's data as canonical JSON: object keys sorted by their
// UTF-8 bytes, no whitespace, numbers as encoding/json wrote them. An export carries
// each record's exact bytes, so a third party checks hashes without re-encoding
// anything.
package audit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

// The kinds of event warden records. A kind is dotted: the subject's type, then what
// happened to it.
const (
	KindScanRecorded      = "scan.recorded"
	KindFindingOpened     = "finding.opened"
	KindFindingResolved   = "finding.resolved"
	KindPlanCreated       = "plan.created"
	KindApprovalRequested = "approval.requested"
	KindApprovalApproved  = "approval.approved"
	KindApprovalDenied    = "approval.denied"
	KindApprovalExpired   = "approval.expired"
	KindApprovalVoided    = "approval.voided"
	// KindApprovalForged records a decision found without a valid signature while
	// gates.signers is listed (a row written by hand, a name claimed without its key): it
	// counted as no decision and was removed; data says what it claimed and why it failed.
	KindApprovalForged   = "approval.forged"
	KindActionIntent     = "action.intent"
	KindActionApplied    = "action.applied"
	KindActionFailed     = "action.failed"
	KindActionVerified   = "action.verified"
	KindActionVoided     = "action.voided"
	KindActionRolledBack = "action.rolled_back"
	// KindActionStep records one completed step of a multi-step fix (a key rotation).
	KindActionStep     = "action.step"
	KindControlPaused  = "control.paused"
	KindControlResumed = "control.resumed"
	// KindControlStopped records a run stopped by a safety control: the circuit breaker,
	// a canary wave or the blast-radius cap.
	KindControlStopped = "control.stopped"
	// KindPolicyPack records the policy pack in use when it changes: subject its version.
	KindPolicyPack = "policy.pack"
	// KindConfig records the config file in use when it changes: subject its version.
	KindConfig = "config.loaded"
	// KindJobDiscarded records a daemon job that kept failing and was given up: subject
	// the job's kind and id, data its last error.
	KindJobDiscarded = "job.discarded"
)

// Event is what a caller records.
type Event struct {
	// Actor is who caused the event: $WARDEN_ACTOR, the OS user, or a service name.
	Actor string
	// Kind is one of the Kind constants.
	Kind string
	// Subject names what the event is about: an action id, a plan hash, a finding's
	// fingerprint, "scan/42".
	Subject string
	// Data is any value encoding/json can encode; it is stored as canonical JSON.
	Data any
}

// Entry is one stored entry of the log.
type Entry struct {
	// Seq is the entry's 0-based leaf index.
	Seq     int64
	Time    time.Time
	Actor   string
	Kind    string
	Subject string
	// Data is the event's data as canonical JSON.
	Data json.RawMessage
}

// Record is the entry's canonical JSON, the bytes its leaf hash covers.
func (e Entry) Record() []byte {
	return appendRecord(nil, e.Seq, store.FormatTime(e.Time), e.Actor, e.Kind, e.Subject, e.Data)
}

// LeafHash is the entry's leaf hash in the tree: tlog.RecordHash(e.Record()).
func (e Entry) LeafHash() tlog.Hash { return tlog.RecordHash(e.Record()) }

// Options configure a Log.
type Options struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Origin is the checkpoint's origin line, the log's name. Default
	// "warden.audit/<log id>", where the log id is chosen at random once per database
	// and stored in it, so that checkpoints of two warden databases never pass for one
	// another.
	Origin string
	// Signer signs checkpoints; it may be nil when the log is only appended to.
	Signer note.Signer
}

// Log is the audit log kept in a store. It is safe for concurrent use; appends are
// serialized by the store's write transactions.
type Log struct {
	st     *store.Store
	now    func() time.Time
	origin string
	signer note.Signer
}

// New returns the audit log kept in st.
func New(st *store.Store, opts Options) *Log {
	l := &Log{st: st, now: opts.Now, origin: opts.Origin, signer: opts.Signer}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// Append adds one entry in the caller's transaction (the same tx as the change it
// records): the entry and the change commit together or not at all, and a rolled back
// transaction leaves neither an entry nor a gap in the sequence. It costs O(log n): one
// indexed read of the last seq, at most log₂ n stored hashes read, and two inserts.
func (l *Log) Append(ctx context.Context, tx *store.Tx, ev Event) (Entry, error) {
	if ev.Kind == "" {
		return Entry{}, errors.New("append audit entry: empty kind")
	}
	if strings.TrimSpace(ev.Actor) == "" {
		return Entry{}, fmt.Errorf("append audit entry %s: no actor: every event names who caused it", ev.Kind)
	}
	data, err := canonicalDataWith(ev.Data, Correlation(ctx))
	if err != nil {
		return Entry{}, fmt.Errorf("append audit entry %s %s: %w", ev.Kind, ev.Subject, err)
	}
	now := l.now()
	if now.IsZero() {
		return Entry{}, fmt.Errorf("append audit entry %s %s: the clock returned the zero time", ev.Kind, ev.Subject)
	}
	// PostgreSQL refuses invalid UTF-8 and NUL in text; a subject may be a resource uid
	// holding either.
	e := Entry{
		Time:    now.Round(0).UTC(),
		Actor:   findings.ValidText(ev.Actor),
		Kind:    findings.ValidText(ev.Kind),
		Subject: findings.ValidText(ev.Subject),
		Data:    data,
	}
	// Appends are serialized (InTx runs alone; an InTxOn transaction takes the log's
	// lock here), so the next seq read here is still free at insert.
	if err := tx.Serialize(ctx, "audit"); err != nil {
		return Entry{}, fmt.Errorf("append audit entry %s %s: %w", e.Kind, e.Subject, err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), -1) + 1 FROM audit_entries`).Scan(&e.Seq); err != nil {
		return Entry{}, fmt.Errorf("append audit entry %s %s: read the log's size: %w", e.Kind, e.Subject, err)
	}
	if e.Seq == 0 {
		// The log's id is chosen with its first entry, so that a log has its origin
		// before its first checkpoint: a checkpoint of another log never passes for one.
		if _, err := l.originTx(ctx, tx); err != nil {
			return Entry{}, fmt.Errorf("append audit entry 0: %w", err)
		}
	}
	at := store.FormatTime(e.Time)
	rec := appendRecord(nil, e.Seq, at, e.Actor, e.Kind, e.Subject, e.Data)
	hashes, err := tlog.StoredHashes(e.Seq, rec, hashReader(ctx, tx))
	if err != nil {
		return Entry{}, fmt.Errorf("append audit entry %d: compute the tree's hashes: %w", e.Seq, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_entries (seq, at, actor, kind, subject, data) VALUES (?, ?, ?, ?, ?, ?)`,
		e.Seq, at, e.Actor, e.Kind, e.Subject, string(e.Data)); err != nil {
		return Entry{}, fmt.Errorf("append audit entry %d: %w", e.Seq, err)
	}
	if err := insertHashes(ctx, tx, tlog.StoredHashIndex(0, e.Seq), hashes); err != nil {
		return Entry{}, fmt.Errorf("append audit entry %d: %w", e.Seq, err)
	}
	return e, nil
}

// insertHashes stores hashes at consecutive stored-hash indexes from first, in one
// statement.
func insertHashes(ctx context.Context, tx *store.Tx, first int64, hashes []tlog.Hash) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO audit_hashes (idx, hash) VALUES `)
	args := make([]any, 0, 2*len(hashes))
	for i, h := range hashes {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?)")
		args = append(args, first+int64(i), h[:])
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("store tree hashes %d-%d: %w", first, first+int64(len(hashes))-1, err)
	}
	return nil
}

// querier is what both a write transaction and a reader offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// hashReader reads stored hashes through q, for tlog's tree hashes and proofs.
func hashReader(ctx context.Context, q querier) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		return readHashes(ctx, q, indexes)
	})
}

// readHashes returns the stored hashes at indexes, in their order.
func readHashes(ctx context.Context, q querier, indexes []int64) ([]tlog.Hash, error) {
	if len(indexes) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(`SELECT idx, hash FROM audit_hashes WHERE idx IN (`)
	args := make([]any, len(indexes))
	for i, x := range indexes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('?')
		args[i] = x
	}
	b.WriteByte(')')
	rows, err := q.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("read stored hashes: %w", err)
	}
	defer rows.Close()
	found := make(map[int64]tlog.Hash, len(indexes))
	for rows.Next() {
		var idx int64
		var raw []byte
		if err := rows.Scan(&idx, &raw); err != nil {
			return nil, fmt.Errorf("read stored hashes: %w", err)
		}
		if len(raw) != tlog.HashSize {
			return nil, fmt.Errorf("stored hash %d is %d bytes, not %d", idx, len(raw), tlog.HashSize)
		}
		found[idx] = tlog.Hash(raw)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read stored hashes: %w", err)
	}
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		h, ok := found[x]
		if !ok {
			level, n := tlog.SplitStoredHashIndex(x)
			return nil, fmt.Errorf("stored hash %d (level %d, node %d) is missing", x, level, n)
		}
		out[i] = h
	}
	return out, nil
}
