package gates

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

// State is where an approval request stands. pending → approved | denied | expired |
// voided; the last four are final.
type State string

// Request states.
const (
	StatePending  State = "pending"
	StateApproved State = "approved"
	StateDenied   State = "denied"
	StateExpired  State = "expired"
	StateVoided   State = "voided"
)

// States lists every state, pending first.
var States = []State{StatePending, StateApproved, StateDenied, StateExpired, StateVoided}

// Channel is how a decision reached the gates. Every channel calls the same Decide; the
// channel is recorded with the decision and in its audit entry.
type Channel string

// Channels.
const (
	ChannelCLI   Channel = "cli"
	ChannelSlack Channel = "slack"
	ChannelWeb   Channel = "web"
)

var channels = []Channel{ChannelCLI, ChannelSlack, ChannelWeb}

// Vote is one approver's decision.
type Vote string

// Votes.
const (
	VoteApprove Vote = "approve"
	VoteDeny    Vote = "deny"
)

// Request is the approval request of one action, bound to its content hash.
type Request struct {
	// ID names the request ("apr-…"); the same action and content hash give the same id.
	ID          string `json:"id"`
	ActionID    string `json:"action"`
	ContentHash string `json:"content_hash"`
	// Remediator, Target and Part say what the action changes, as planned.
	Remediator string        `json:"remediator"`
	Target     string        `json:"target"`
	Part       string        `json:"part"`
	Risk       findings.Risk `json:"risk"`
	// Requester asked for the fix; they never decide it.
	Requester string `json:"requester"`
	// Quorum is the number of distinct approvers needed, fixed when the request was made.
	Quorum    int       `json:"quorum"`
	State     State     `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// DecidedAt is when the request left pending (zero while pending).
	DecidedAt time.Time `json:"decided_at,omitzero"`
	// Reason says why it left pending: the deciding approver's reason, the void's, the
	// expiry's.
	Reason string `json:"reason,omitempty"`
	// Decisions are the approvers' decisions so far, oldest first.
	Decisions []Decision `json:"decisions"`
}

// Decision is one approver's decision on a request.
type Decision struct {
	Actor   string    `json:"actor"`
	Channel Channel   `json:"channel"`
	Vote    Vote      `json:"decision"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
	// Signature is the armored SSH signature of the decision (gates/sign), "" if unsigned;
	// Signer the SHA256 fingerprint of the key that made it.
	Signature string `json:"signature,omitempty"`
	Signer    string `json:"signer,omitempty"`
}

// Approvals are the approve decisions so far.
func (r Request) Approvals() []Decision {
	var out []Decision
	for _, d := range r.Decisions {
		if d.Vote == VoteApprove {
			out = append(out, d)
		}
	}
	return out
}

// DecisionBy returns actor's decision, if they made one.
func (r Request) DecisionBy(actor string) (Decision, bool) {
	i := slices.IndexFunc(r.Decisions, func(d Decision) bool { return d.Actor == actor })
	if i < 0 {
		return Decision{}, false
	}
	return r.Decisions[i], true
}

// Final reports whether the request has left pending for good.
func (s State) Final() bool { return s != StatePending }

// Querier runs read queries: a *store.Tx or a *store.Reader.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Filter selects requests for List. The zero Filter selects every request.
type Filter struct {
	// States keeps requests in one of these states (empty: any).
	States []State
	// ActionID keeps the requests of one action (empty: any).
	ActionID string
	// DueBy keeps requests whose expiry is in DueBy's second or before it (zero: any):
	// the store's times are RFC 3339 text with as many fraction digits as they need, so
	// only the whole seconds compare as text; the caller compares the rest.
	DueBy time.Time
}

const requestColumns = `id, action_id, content_hash, remediator, target, part, risk, requester, quorum, state, created_at, expires_at, decided_at, reason`

// List returns the requests the filter selects, oldest first, with their decisions.
func (g *Gate) List(ctx context.Context, f Filter) ([]Request, error) {
	var out []Request
	err := g.st.Read(ctx, func(r *store.Reader) error {
		var err error
		out, err = list(ctx, r, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list approval requests: %w", err)
	}
	return out, nil
}

// CountPending returns how many requests wait for a decision, through q (a store.Tx or a
// store.Reader): those still pending, including any past their expiry that no decision
// or ExpireDue has marked yet.
func CountPending(ctx context.Context, q Querier) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM approval_requests WHERE state = ?`, string(StatePending)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the pending approval requests: %w", err)
	}
	return n, nil
}

// Get returns one request with its decisions so far; ErrNotFound if there is none.
func (g *Gate) Get(ctx context.Context, id string) (Request, error) {
	var out Request
	err := g.st.Read(ctx, func(r *store.Reader) error {
		var err error
		out, err = get(ctx, r, id)
		return err
	})
	if err != nil {
		return Request{}, fmt.Errorf("read approval request %s: %w", id, err)
	}
	return out, nil
}

// Approved reports whether the action's request for this content hash is approved: the
// one check apply makes before running an action that needs approval. q is the caller's
// transaction or a reader. An approval of a risk the gates refuse now does not count:
// refusing a risk takes effect on requests already approved.
func (g *Gate) Approved(ctx context.Context, q Querier, actionID, contentHash string) (bool, error) {
	var state, risk string
	err := q.QueryRowContext(ctx, `SELECT state, risk FROM approval_requests WHERE action_id = ? AND content_hash = ?`, actionID, contentHash).Scan(&state, &risk)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check approval of action %s: %w", actionID, err)
	}
	r, err := findings.ParseRisk(risk)
	if err != nil {
		return false, fmt.Errorf("check approval of action %s: %w", actionID, err)
	}
	return State(state) == StateApproved && !g.cfg.Verdict(r).Refused, nil
}

func list(ctx context.Context, q Querier, f Filter) ([]Request, error) {
	where, args := f.sql()
	rows, err := q.QueryContext(ctx, `SELECT `+requestColumns+` FROM approval_requests`+where, args...)
	if err != nil {
		return nil, err
	}
	var out []Request
	byID := map[string]int{}
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		byID[r.ID] = len(out)
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	rows, err = q.QueryContext(ctx, `SELECT d.request_id, d.actor, d.channel, d.decision, d.reason, d.at, d.signature, d.signer
		FROM approval_decisions d JOIN approval_requests ON approval_requests.id = d.request_id`+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		id, d, err := scanDecision(rows)
		if err != nil {
			return nil, err
		}
		if i, ok := byID[id]; ok {
			out[i].Decisions = append(out[i].Decisions, d)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Times are stored as RFC 3339 text, whose order is not the text's: sort here.
	for i := range out {
		sortDecisions(out[i].Decisions)
	}
	slices.SortFunc(out, func(a, b Request) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func (f Filter) sql() (string, []any) {
	var conds []string
	var args []any
	if len(f.States) > 0 {
		marks := make([]string, len(f.States))
		for i, s := range f.States {
			marks[i] = "?"
			args = append(args, string(s))
		}
		conds = append(conds, "approval_requests.state IN ("+strings.Join(marks, ", ")+")")
	}
	if f.ActionID != "" {
		conds = append(conds, "approval_requests.action_id = ?")
		args = append(args, f.ActionID)
	}
	if !f.DueBy.IsZero() {
		// "…:05Z" is after "…:05.999Z" as text ('Z' > '.'), and before "…:06": every
		// time in the second or before it.
		conds = append(conds, "approval_requests.expires_at <= ?")
		args = append(args, f.DueBy.UTC().Format("2006-01-02T15:04:05")+"Z")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func get(ctx context.Context, q Querier, id string) (Request, error) {
	r, err := scanRequest(q.QueryRowContext(ctx, `SELECT `+requestColumns+` FROM approval_requests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Request{}, ErrNotFound
	}
	if err != nil {
		return Request{}, err
	}
	if r.Decisions, err = decisions(ctx, q, id); err != nil {
		return Request{}, err
	}
	return r, nil
}

// byContent returns the request of the action for this content hash, if there is one.
func byContent(ctx context.Context, q Querier, actionID, hash string) (Request, bool, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT id FROM approval_requests WHERE action_id = ? AND content_hash = ?`, actionID, hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Request{}, false, nil
	}
	if err != nil {
		return Request{}, false, err
	}
	r, err := get(ctx, q, id)
	return r, err == nil, err
}

func decisions(ctx context.Context, q Querier, id string) ([]Decision, error) {
	rows, err := q.QueryContext(ctx, `SELECT request_id, actor, channel, decision, reason, at, signature, signer FROM approval_decisions WHERE request_id = ?`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Decision
	for rows.Next() {
		_, d, err := scanDecision(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sortDecisions(out)
	return out, nil
}

func sortDecisions(ds []Decision) {
	slices.SortFunc(ds, func(a, b Decision) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Actor, b.Actor)
	})
}

type scanner interface{ Scan(dest ...any) error }

func scanRequest(s scanner) (Request, error) {
	var r Request
	var risk, state, created, expires, decided string
	if err := s.Scan(&r.ID, &r.ActionID, &r.ContentHash, &r.Remediator, &r.Target, &r.Part, &risk, &r.Requester, &r.Quorum,
		&state, &created, &expires, &decided, &r.Reason); err != nil {
		return Request{}, err
	}
	var err error
	if r.Risk, err = findings.ParseRisk(risk); err != nil {
		return Request{}, fmt.Errorf("request %s: risk: %w", r.ID, err)
	}
	r.State = State(state)
	if !slices.Contains(States, r.State) {
		return Request{}, fmt.Errorf("request %s: unknown state %q", r.ID, state)
	}
	for _, t := range []struct {
		name string
		text string
		to   *time.Time
	}{{"created_at", created, &r.CreatedAt}, {"expires_at", expires, &r.ExpiresAt}, {"decided_at", decided, &r.DecidedAt}} {
		if *t.to, err = store.ParseTime(t.text); err != nil {
			return Request{}, fmt.Errorf("request %s: %s: %w", r.ID, t.name, err)
		}
	}
	if r.ExpiresAt.IsZero() {
		// An empty expiry would read as "never": refuse it rather than keep a request open.
		return Request{}, fmt.Errorf("request %s: expires_at is empty", r.ID)
	}
	return r, nil
}

func scanDecision(s scanner) (string, Decision, error) {
	var id, ch, vote, at string
	var d Decision
	if err := s.Scan(&id, &d.Actor, &ch, &vote, &d.Reason, &at, &d.Signature, &d.Signer); err != nil {
		return "", Decision{}, err
	}
	d.Channel, d.Vote = Channel(ch), Vote(vote)
	t, err := store.ParseTime(at)
	if err != nil {
		return "", Decision{}, fmt.Errorf("decision of %s on request %s: at: %w", d.Actor, id, err)
	}
	d.At = t
	return id, d, nil
}

// RequestIDs returns the ids of every request made for the action, oldest first, in any
// state: what a report needs to find their decisions in the audit log.
func RequestIDs(ctx context.Context, st *store.Store, actionID string) ([]string, error) {
	var out []string
	err := st.Read(ctx, func(r *store.Reader) error {
		var err error
		out, err = store.QueryAll(ctx, r, store.ScanString, `SELECT id FROM approval_requests WHERE action_id = ? ORDER BY created_at, id`, actionID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list the approval requests of action %s: %w", actionID, err)
	}
	return out, nil
}
