package slackgate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/slack-go/slack"

	"github.com/warden-sec/warden/gates"
)

// maxBody bounds an interaction request's body (Slack's carry the whole message).
const maxBody = 1 << 20

// Handler is Slack's interaction endpoint (POST /slack/interactions). It verifies
// Slack's v0 signature over the raw body before reading anything in it (401 for a
// missing, bad or stale signature, counted), acknowledges at once (200, empty body:
// Slack wants an answer within 3 s), and then, on its own goroutine with its own
// timeout, decides through the gate, tells the clicker the outcome or why they were
// refused (an ephemeral message), calls OnDecision, and updates the message.
//
// Deny asks for a reason through an input block in the message itself: the reason typed
// there arrives with the click (the payload's state); a Deny without one is refused with
// an ephemeral message saying so. Both buttons ask for confirmation first.
type Handler struct {
	n      *Notifier
	secret Secret

	wg sync.WaitGroup

	unsigned, stale, forged, malformed, ignored, decisions, refusals, failures atomic.Int64
}

// HandlerStats count the interactions the handler answered.
type HandlerStats struct {
	// Unsigned, Stale and Forged requests were answered 401: no signature or
	// timestamp, a timestamp more than 5 minutes away, a signature that does not match.
	Unsigned, Stale, Forged int64
	// Malformed requests were signed but unreadable (400); Ignored were not a decision.
	Malformed, Ignored int64
	// Decisions were recorded; Refusals were refused by the gate (or for want of a
	// reason), the clicker told why; Failures could not be decided (the store failed).
	Decisions, Refusals, Failures int64
}

// Rejected is the number of requests answered 401.
func (s HandlerStats) Rejected() int64 { return s.Unsigned + s.Stale + s.Forged }

// NewHandler returns the interaction endpoint of the notifier's channel.
func NewHandler(n *Notifier) *Handler {
	return &Handler{n: n, secret: n.o.Secrets.SigningSecret}
}

// Stats returns the handler's counters.
func (h *Handler) Stats() HandlerStats {
	return HandlerStats{Unsigned: h.unsigned.Load(), Stale: h.stale.Load(), Forged: h.forged.Load(),
		Malformed: h.malformed.Load(), Ignored: h.ignored.Load(), Decisions: h.decisions.Load(),
		Refusals: h.refusals.Load(), Failures: h.failures.Load()}
}

// Wait waits until the work of every interaction acknowledged so far is done: serve
// calls it when draining, tests before they look.
func (h *Handler) Wait() { h.wg.Wait() }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		h.malformed.Add(1)
		http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	if err := h.verify(r.Header, body); err != nil {
		http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
		return
	}
	in, err := parseInteraction(body)
	switch {
	case errors.Is(err, errIgnored):
		h.ignored.Add(1)
		w.WriteHeader(http.StatusOK)
		return
	case err != nil:
		h.malformed.Add(1)
		http.Error(w, "bad interaction: "+err.Error(), http.StatusBadRequest)
		return
	}
	// Acknowledge first; the decision, the replies and the update follow.
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), h.n.o.WorkTimeout)
		defer cancel()
		h.work(ctx, in)
	}()
	w.WriteHeader(http.StatusOK)
}

// verify checks Slack's v0 signature (HMAC-SHA256 of "v0:timestamp:body", compared in
// constant time, the timestamp within 5 minutes) and counts a failure by kind.
func (h *Handler) verify(header http.Header, body []byte) error {
	sv, err := slack.NewSecretsVerifier(header, h.secret.Reveal())
	switch {
	case errors.Is(err, slack.ErrMissingHeaders):
		h.unsigned.Add(1)
		return errors.New("no Slack signature")
	case errors.Is(err, slack.ErrExpiredTimestamp):
		h.stale.Add(1)
		return errors.New("the request's timestamp is more than 5 minutes away")
	case err != nil:
		h.forged.Add(1)
		return errors.New("bad Slack signature")
	}
	if _, err := sv.Write(body); err != nil {
		h.forged.Add(1)
		return errors.New("bad Slack signature")
	}
	if err := sv.Ensure(); err != nil {
		h.forged.Add(1)
		return errors.New("bad Slack signature")
	}
	return nil
}

// work decides one click and tells the clicker.
func (h *Handler) work(ctx context.Context, in interaction) {
	n := h.n
	identity := n.o.Identities.ForSlack(in.User)
	verb := "approve"
	if !in.Approve {
		verb = "deny"
	}
	tell := func(text string) {
		if err := n.ephemeral(ctx, in.Channel, in.User, text); err != nil {
			n.log.Warn("slack: tell the clicker", "request", in.RequestID, "user", in.User, "err", err)
		}
	}
	if !in.Approve && in.Reason == "" {
		h.refusals.Add(1)
		tell(fmt.Sprintf("Not denied: a deny needs a reason. Type it in the Reason box of request %s, then press Deny again.", in.RequestID))
		return
	}
	vouched, via := n.o.Config.IsApprover(in.User), "slack.approvers"
	var groupErr error
	if !vouched {
		vouched, groupErr = n.inGroup(ctx, in.User)
		via = "slack.approver_group"
	}
	var req gates.Request
	var err error
	if vouched {
		req, err = n.o.Gate.DecideAuthorized(ctx, in.RequestID, identity, string(gates.ChannelSlack), in.Approve, in.Reason)
	} else {
		req, err = n.o.Gate.Decide(ctx, in.RequestID, identity, string(gates.ChannelSlack), in.Approve, in.Reason)
	}
	if err != nil {
		if !refusal(err) {
			h.failures.Add(1)
			n.log.Error("slack: record a decision", "request", in.RequestID, "actor", identity, "err", err)
			tell(fmt.Sprintf("Your %s of request %s could not be recorded (warden could not reach its store); nothing was decided. Try again in a moment.", verb, in.RequestID))
			return
		}
		h.refusals.Add(1)
		msg := fmt.Sprintf("Refused: you (%s) cannot %s request %s: %s.", identity, verb, in.RequestID, gates.Reason(err))
		if errors.Is(err, gates.ErrNotApprover) {
			msg += " From Slack, approvers are the users in slack.approvers"
			if n.o.Config.ApproverGroup != "" {
				msg += ", the members of the approver group"
			}
			msg += ", and the users whose identity (identities:) is in gates.approvers."
			if groupErr != nil {
				msg += " (The approver group could not be read just now.)"
			}
		}
		tell(msg)
		// An expiry found by the decision is recorded: show it.
		if err := n.Refresh(ctx, in.RequestID); err != nil {
			n.log.Warn("slack: update the message", "request", in.RequestID, "err", err)
		}
		return
	}
	h.decisions.Add(1)
	n.log.Info("slack: decision recorded", "request", in.RequestID, "actor", identity, "decision", verb, "vouched_by", via, "vouched", vouched)
	if n.o.OnDecision != nil {
		n.o.OnDecision(in.RequestID)
	}
	switch req.State {
	case gates.StateApproved:
		tell(fmt.Sprintf("Recorded: you approved request %s; it has the approvals it needs (%d of %d) and will be applied.", in.RequestID, len(req.Approvals()), req.Quorum))
	case gates.StateDenied:
		tell(fmt.Sprintf("Recorded: you denied request %s.", in.RequestID))
	default:
		more := req.Quorum - len(req.Approvals())
		tell(fmt.Sprintf("Recorded: you approved request %s (%d of %d); %d more needed.", in.RequestID, len(req.Approvals()), req.Quorum, more))
	}
	if err := n.Refresh(ctx, in.RequestID); err != nil {
		n.log.Warn("slack: update the message", "request", in.RequestID, "err", err)
	}
}

// refusal reports whether the gate refused the decision (as opposed to failing to
// record it).
func refusal(err error) bool {
	for _, e := range []error{gates.ErrSelfApproval, gates.ErrNotApprover, gates.ErrAlreadyDecided, gates.ErrExpired,
		gates.ErrVoided, gates.ErrDenyNeedsReason, gates.ErrRefused, gates.ErrNotFound} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
