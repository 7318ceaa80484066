package slackgate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// ActionReader reads an action as the store records it: *remediate.Machine.
type ActionReader interface {
	Action(ctx context.Context, id string) (*remediate.Record, error)
}

// Defaults of Options.
const (
	// DefaultGroupCacheTTL is how long the approver group's members are remembered.
	DefaultGroupCacheTTL = time.Minute
	// DefaultWorkTimeout bounds the work on one interaction after it was acknowledged.
	DefaultWorkTimeout = 30 * time.Second
	// DefaultWatch is how long a message whose fix was applied (or failed) is still
	// watched for a rollback after its last change.
	DefaultWatch = 7 * 24 * time.Hour
	// claimTTL is how long a claim to post a message holds before another process (or
	// this one after a restart) may take it over.
	claimTTL = time.Minute
)

// Options wire the Slack channel.
type Options struct {
	Config     Config
	Identities Identities
	Secrets    Secrets
	// Store holds the messages posted (table slack_messages); Gate decides; Actions
	// (a *remediate.Machine) tells what became of an approved fix.
	Store   *store.Store
	Gate    *gates.Gate
	Actions ActionReader
	// OnDecision is called after each decision recorded from Slack (serve wakes its
	// worker with it). Optional; it must not block.
	OnDecision func(requestID string)
	// HTTPClient calls Slack's Web API (nil: a client with a 10 s timeout).
	HTTPClient *http.Client
	// Now is the clock (nil: time.Now); signatures are judged on the real clock.
	Now    func() time.Time
	Logger *slog.Logger
	// GroupCacheTTL, WorkTimeout and Watch default to DefaultGroupCacheTTL,
	// DefaultWorkTimeout and DefaultWatch.
	GroupCacheTTL time.Duration
	WorkTimeout   time.Duration
	Watch         time.Duration
}

// Notifier posts a message for each approval request and keeps it up to date. It is
// safe for concurrent use; several processes may share one store (a claim in the store
// makes one of them post each message).
type Notifier struct {
	o   Options
	api *slack.Client
	log *slog.Logger

	mu      sync.Mutex // one Sync or Refresh at a time
	retryAt time.Time  // Slack said 429: nothing is sent before then

	groupMu  sync.Mutex
	groupAt  time.Time
	groupSet map[string]bool

	posted, updated, apiErrors, rateLimited, deferred atomic.Int64
}

// NotifierStats count what the notifier did since it started.
type NotifierStats struct {
	// Posted and Updated count chat.postMessage and chat.update calls that succeeded.
	Posted, Updated int64
	// APIErrors counts failed Slack calls (rate-limited ones included); RateLimited the
	// 429 answers; Deferred the syncs skipped while waiting out a 429.
	APIErrors, RateLimited, Deferred int64
}

// NewNotifier returns the notifier of o. The config and identities must be valid, and
// both secrets present.
func NewNotifier(o Options) (*Notifier, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	if err := o.Identities.Validate(); err != nil {
		return nil, err
	}
	switch {
	case o.Secrets.BotToken.Empty():
		return nil, fmt.Errorf("slack: no bot token (set %s or slack.bot_token_file)", EnvBotToken)
	case o.Secrets.SigningSecret.Empty():
		return nil, fmt.Errorf("slack: no signing secret (set %s or slack.signing_secret_file)", EnvSigningSecret)
	case o.Store == nil || o.Gate == nil || o.Actions == nil:
		return nil, errors.New("slack: the notifier needs the store, the gate and the actions")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.GroupCacheTTL <= 0 {
		o.GroupCacheTTL = DefaultGroupCacheTTL
	}
	if o.WorkTimeout <= 0 {
		o.WorkTimeout = DefaultWorkTimeout
	}
	if o.Watch <= 0 {
		o.Watch = DefaultWatch
	}
	api := slack.New(o.Secrets.BotToken.Reveal(), slack.OptionAPIURL(o.Config.APIURLOrDefault()), slack.OptionHTTPClient(o.HTTPClient))
	return &Notifier{o: o, api: api, log: o.Logger}, nil
}

// Stats returns the notifier's counters.
func (n *Notifier) Stats() NotifierStats {
	return NotifierStats{Posted: n.posted.Load(), Updated: n.updated.Load(), APIErrors: n.apiErrors.Load(),
		RateLimited: n.rateLimited.Load(), Deferred: n.deferred.Load()}
}

// row is a message as slack_messages keeps it.
type row struct {
	requestID, channel, ts, rendered string
	settled                          bool
	claimedAt, updatedAt             time.Time
}

// Sync posts a message for each pending request not posted yet and updates each posted
// message whose rendering changed (a decision, an expiry, a void, the fix applied,
// failed or rolled back). It is idempotent and cheap when nothing changed: call it as
// often as every second. Slack's errors are returned (joined) and counted; after a 429
// nothing is sent until Slack's Retry-After has passed (Sync returns nil meanwhile).
//
// Only requests still pending when first seen get a message: one approved or ended
// before (from the CLI, say) is not posted afterwards.
func (n *Notifier) Sync(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.waiting() {
		return nil
	}
	rows, err := n.unsettled(ctx)
	if err != nil {
		return fmt.Errorf("slack sync: %w", err)
	}
	var errs []error
	known := map[string]bool{}
	for _, r := range rows {
		known[r.requestID] = true
		if r.ts == "" {
			continue // being posted, or a stale claim: handled with the new ones
		}
		if err := n.refresh(ctx, r); err != nil {
			if isRateLimited(err) {
				return fmt.Errorf("slack sync: %w", err)
			}
			errs = append(errs, err)
		}
	}
	pending, err := n.o.Gate.List(ctx, gates.Filter{States: []gates.State{gates.StatePending}})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("slack sync: %w", err))...)
	}
	for _, req := range pending {
		if known[req.ID] && !n.stale(rows, req.ID) {
			continue
		}
		if err := n.post(ctx, req); err != nil {
			if isRateLimited(err) {
				return errors.Join(append(errs, fmt.Errorf("slack sync: %w", err))...)
			}
			errs = append(errs, err)
		}
	}
	// A claim left by a crash for a request that is no longer pending: nothing to post.
	live := map[string]bool{}
	for _, req := range pending {
		live[req.ID] = true
	}
	for _, r := range rows {
		if r.ts == "" && !live[r.requestID] && n.stale(rows, r.requestID) {
			n.unclaim(ctx, r.requestID)
		}
	}
	return errors.Join(errs...)
}

// Refresh brings the message of one request up to date now (posting it if it is
// pending and has none): the interaction handler calls it after a decision.
func (n *Notifier) Refresh(ctx context.Context, requestID string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.waiting() {
		return nil
	}
	r, ok, err := n.messageOf(ctx, requestID)
	if err != nil {
		return fmt.Errorf("slack refresh %s: %w", requestID, err)
	}
	if ok && r.ts != "" {
		if r.settled {
			return nil
		}
		return n.refresh(ctx, r)
	}
	req, err := n.o.Gate.Get(ctx, requestID)
	if err != nil {
		return fmt.Errorf("slack refresh %s: %w", requestID, err)
	}
	if req.State != gates.StatePending {
		return nil
	}
	return n.post(ctx, req)
}

// waiting reports whether a 429 is being waited out.
func (n *Notifier) waiting() bool {
	if n.o.Now().Before(n.retryAt) {
		n.deferred.Add(1)
		return true
	}
	return false
}

func (n *Notifier) stale(rows []row, id string) bool {
	for _, r := range rows {
		if r.requestID == id {
			return r.ts == "" && n.o.Now().Sub(r.claimedAt) >= claimTTL
		}
	}
	return false
}

// view renders the message of request id as it stands.
func (n *Notifier) view(ctx context.Context, req gates.Request) (message, error) {
	rec, err := n.o.Actions.Action(ctx, req.ActionID)
	if err != nil {
		return message{}, fmt.Errorf("read action %s: %w", req.ActionID, err)
	}
	return render(req, rec, n.o.Identities, n.o.Now()), nil
}

// post claims request req and posts its message.
func (n *Notifier) post(ctx context.Context, req gates.Request) error {
	claimed, err := n.claim(ctx, req.ID)
	if err != nil || !claimed {
		return err
	}
	m, err := n.view(ctx, req)
	if err != nil {
		n.unclaim(ctx, req.ID)
		return fmt.Errorf("slack: post request %s: %w", req.ID, err)
	}
	ch, ts, err := n.api.PostMessageContext(ctx, n.o.Config.Channel, slack.MsgOptionText(m.text, false), slack.MsgOptionBlocks(m.blocks...))
	if err != nil {
		n.unclaim(ctx, req.ID)
		return n.apiError("chat.postMessage", req.ID, err)
	}
	n.posted.Add(1)
	if ch == "" {
		ch = n.o.Config.Channel
	}
	now := store.FormatTime(n.o.Now())
	return n.o.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE slack_messages SET channel = ?, ts = ?, rendered = ?, settled = ?, updated_at = ? WHERE request_id = ?`,
			ch, ts, m.hash(), btoi(m.settled), now, req.ID); err != nil {
			return fmt.Errorf("slack: record the message of request %s: %w", req.ID, err)
		}
		return nil
	})
}

// refresh updates a posted message if its rendering changed.
func (n *Notifier) refresh(ctx context.Context, r row) error {
	req, err := n.o.Gate.Get(ctx, r.requestID)
	if err != nil {
		return fmt.Errorf("slack: update the message of request %s: %w", r.requestID, err)
	}
	m, err := n.view(ctx, req)
	if err != nil {
		return fmt.Errorf("slack: update the message of request %s: %w", r.requestID, err)
	}
	now := n.o.Now()
	settled := m.settled || (req.State.Final() && !m.live && now.Sub(r.updatedAt) >= n.o.Watch)
	h := m.hash()
	if h == r.rendered {
		if settled {
			return n.record(ctx, r.requestID, r.ts, h, true, r.updatedAt)
		}
		return nil
	}
	if _, _, _, err := n.api.UpdateMessageContext(ctx, r.channel, r.ts, slack.MsgOptionText(m.text, false), slack.MsgOptionBlocks(m.blocks...)); err != nil {
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && (se.Err == "message_not_found" || se.Err == "channel_not_found" || se.Err == "cant_update_message") {
			// Deleted in Slack, or no longer ours: stop trying, keep the record.
			n.log.Warn("slack: the message of an approval request cannot be updated any more", "request", r.requestID, "err", se.Err)
			_ = n.record(ctx, r.requestID, r.ts, r.rendered, true, now)
		}
		return n.apiError("chat.update", r.requestID, err)
	}
	n.updated.Add(1)
	return n.record(ctx, r.requestID, r.ts, h, settled, now)
}

// record stores what was last sent for a request, if its message is still at ts.
func (n *Notifier) record(ctx context.Context, id, ts, rendered string, settled bool, at time.Time) error {
	return n.o.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE slack_messages SET rendered = ?, settled = ?, updated_at = ? WHERE request_id = ? AND ts = ?`,
			rendered, btoi(settled), store.FormatTime(at), id, ts); err != nil {
			return fmt.Errorf("slack: record the message of request %s: %w", id, err)
		}
		return nil
	})
}

// claim takes the right to post request id's message: a new row, or a claim left
// unfinished for claimTTL.
func (n *Notifier) claim(ctx context.Context, id string) (bool, error) {
	now := n.o.Now()
	claimed := false
	err := n.o.Store.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO slack_messages (request_id, channel, ts, rendered, settled, claimed_at, updated_at)
			VALUES (?, ?, '', '', 0, ?, ?) ON CONFLICT (request_id) DO NOTHING`, id, n.o.Config.Channel, store.FormatTime(now), store.FormatTime(now))
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k == 1 {
			claimed = true
			return nil
		}
		r, ok, err := scanRow(tx.QueryRowContext(ctx, `SELECT `+rowColumns+` FROM slack_messages WHERE request_id = ?`, id))
		if err != nil || !ok || r.ts != "" || now.Sub(r.claimedAt) < claimTTL {
			return err
		}
		res, err = tx.ExecContext(ctx, `UPDATE slack_messages SET claimed_at = ? WHERE request_id = ? AND ts = '' AND claimed_at = ?`,
			store.FormatTime(now), id, store.FormatTime(r.claimedAt))
		if err != nil {
			return err
		}
		k, _ := res.RowsAffected()
		claimed = k == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("slack: claim the message of request %s: %w", id, err)
	}
	return claimed, nil
}

// unclaim gives up a claim whose post failed, so that the next sync tries again.
func (n *Notifier) unclaim(ctx context.Context, id string) {
	err := n.o.Store.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM slack_messages WHERE request_id = ? AND ts = ''`, id)
		return err
	})
	if err != nil {
		n.log.Warn("slack: release the claim on a message", "request", id, "err", err)
	}
}

const rowColumns = `request_id, channel, ts, rendered, settled, claimed_at, updated_at`

func scanRow(s interface{ Scan(...any) error }) (row, bool, error) {
	var r row
	var settled int
	var claimed, updated string
	err := s.Scan(&r.requestID, &r.channel, &r.ts, &r.rendered, &settled, &claimed, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, false, nil
	}
	if err != nil {
		return row{}, false, err
	}
	r.settled = settled != 0
	if r.claimedAt, err = store.ParseTime(claimed); err != nil {
		return row{}, false, fmt.Errorf("slack message of %s: claimed_at: %w", r.requestID, err)
	}
	if r.updatedAt, err = store.ParseTime(updated); err != nil {
		return row{}, false, fmt.Errorf("slack message of %s: updated_at: %w", r.requestID, err)
	}
	return r, true, nil
}

// unsettled returns the messages that may still change.
func (n *Notifier) unsettled(ctx context.Context) ([]row, error) {
	var out []row
	err := n.o.Store.Read(ctx, func(q *store.Reader) error {
		rows, err := q.QueryContext(ctx, `SELECT `+rowColumns+` FROM slack_messages WHERE settled = 0 ORDER BY claimed_at, request_id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, _, err := scanRow(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// messageOf returns the message recorded for a request.
func (n *Notifier) messageOf(ctx context.Context, id string) (row, bool, error) {
	var r row
	var ok bool
	err := n.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		r, ok, err = scanRow(q.QueryRowContext(ctx, `SELECT `+rowColumns+` FROM slack_messages WHERE request_id = ?`, id))
		return err
	})
	return r, ok, err
}

// Message is the Slack message recorded for an approval request.
type Message struct {
	RequestID, Channel, TS string
	// Settled: the message can change no more.
	Settled bool
}

// Message returns the message posted for a request, if there is one.
func (n *Notifier) Message(ctx context.Context, requestID string) (Message, bool, error) {
	r, ok, err := n.messageOf(ctx, requestID)
	if err != nil || !ok || r.ts == "" {
		return Message{}, false, err
	}
	return Message{RequestID: r.requestID, Channel: r.channel, TS: r.ts, Settled: r.settled}, true, nil
}

// apiError counts a failed Slack call; a 429 stops sending until Slack's Retry-After.
func (n *Notifier) apiError(method, id string, err error) error {
	n.apiErrors.Add(1)
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		n.rateLimited.Add(1)
		wait := max(rl.RetryAfter, time.Second)
		if at := n.o.Now().Add(wait); at.After(n.retryAt) {
			n.retryAt = at
		}
	}
	return fmt.Errorf("slack: %s for request %s: %w", method, id, err)
}

func isRateLimited(err error) bool {
	var rl *slack.RateLimitedError
	return errors.As(err, &rl)
}

// ephemeral tells one user something only they see, under the message.
func (n *Notifier) ephemeral(ctx context.Context, channel, user, text string) error {
	if channel == "" {
		channel = n.o.Config.Channel
	}
	if _, err := n.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false)); err != nil {
		n.apiErrors.Add(1)
		if isRateLimited(err) {
			n.rateLimited.Add(1)
		}
		return fmt.Errorf("slack: chat.postEphemeral: %w", err)
	}
	return nil
}

// inGroup reports whether user is a member of the approver group, from a list cached
// for GroupCacheTTL.
func (n *Notifier) inGroup(ctx context.Context, user string) (bool, error) {
	g := n.o.Config.ApproverGroup
	if g == "" {
		return false, nil
	}
	n.groupMu.Lock()
	defer n.groupMu.Unlock()
	now := n.o.Now()
	if n.groupSet == nil || now.Sub(n.groupAt) >= n.o.GroupCacheTTL || now.Before(n.groupAt) {
		members, err := n.api.GetUserGroupMembersContext(ctx, g)
		if err != nil {
			n.apiErrors.Add(1)
			if isRateLimited(err) {
				n.rateLimited.Add(1)
			}
			return false, fmt.Errorf("read the members of %s: %w", g, err)
		}
		n.groupSet = map[string]bool{}
		for _, m := range members {
			n.groupSet[m] = true
		}
		n.groupAt = now
	}
	return n.groupSet[user], nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
