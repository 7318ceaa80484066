package daemon

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/internal/secret"
	"github.com/warden-sec/warden/reconcile/events"
)

// EnvEventsToken is the environment variable the bearer token of /v1/events and
// /v1/reconcile comes from first (else daemon.events_token_file).
const EnvEventsToken = "WARDEN_EVENTS_TOKEN"

// LoadToken reads the bearer token the event and reconcile endpoints require. It must be
// at least 32 characters: it is all that stands between the internet and a re-read.
func LoadToken(getenv func(string) string, file string) (secret.Value, error) {
	return secret.Load(getenv, TokenSource(file))
}

// TokenSource is where LoadToken takes the token from, with the check of its form: for
// a config check that says where it would come from without showing it.
func TokenSource(file string) secret.Source {
	return secret.Source{Env: EnvEventsToken, Field: "daemon.events_token_file", Path: file,
		What: "events token", Check: func(v string) error {
			switch {
			case len(v) < 32:
				return errors.New("shorter than 32 characters: generate one with `openssl rand -hex 32`")
			case strings.ContainsAny(v, " \t\r\n"):
				return errors.New("holds white space")
			}
			return nil
		}}
}

// EventResult counts what one body of events did, for the HTTP answer and the metrics.
type EventResult struct {
	Changes  int `json:"changes"`
	Enqueued int `json:"enqueued"`
	// Queued counts re-reads already waiting (a repeated delivery, a burst on one
	// resource): nothing more was enqueued for them.
	Queued int `json:"already_queued"`
	// Denials counts the access-denied events read, Matched those newly blamed on a
	// right-sizing fix (reconcile/watch).
	Denials int    `json:"denials,omitempty"`
	Matched int    `json:"matched,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Hooks for the endpoints, for metrics: each may be nil.
type EndpointHooks struct {
	// Event hears each body: its source ("aws", "gcp" or "" when unknown) and result
	// (accepted, unknown, malformed, unauthorized, too_large).
	Event func(source, result string)
}

// EventsHandler serves POST /v1/events: AWS CloudTrail events as EventBridge delivers
// them and GCP audit log entries as Pub/Sub push delivers them (package events). Each
// resource an event names is read again alone (a refresh job); an event that names none
// well enough reads its scope. An access-denied event is compared with the right-sizing
// fixes that stand applied (denied.go). The bearer token is checked before the body is
// read; malformed and unhandled events are answered 400, counted, and change nothing.
func (d *Daemon) EventsHandler(token secret.Value, hooks EndpointHooks) http.Handler {
	parser := events.New(events.Options{})
	const maxBody = 1 << 20
	hear := func(source, result string) {
		if hooks.Event != nil {
			hooks.Event(source, result)
		}
	}
	return d.traceHTTP("/v1/events", token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authorized(r, token) {
			hear("", "unauthorized")
			writeJSON(w, http.StatusUnauthorized, EventResult{Error: "a bearer token is required (Authorization: Bearer …)"})
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			hear("", "malformed")
			writeJSON(w, http.StatusBadRequest, EventResult{Error: "read the body: " + err.Error()})
			return
		}
		ev, perr := parser.Read(body)
		changes := ev.Changes
		res := EventResult{Changes: len(changes), Denials: len(ev.Denials)}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		// Turning changes into re-reads is an event's work, and the first of it: the
		// sweep's work yields to it as to the re-reads themselves.
		ctx, leave := d.urgentWork(ctx, len(ev.Changes) > 0)
		defer leave()
		// A denial is read, not refused: answered 202 like a change (whether or not it
		// matches a fix), since a sender configured for denials (events.DenialPattern,
		// events.DenialLogFilter) would have Pub/Sub redeliver each one answered 400.
		for _, den := range ev.Denials {
			n, err := d.denied(ctx, den)
			if err != nil {
				d.jobLog(ctx).Error("compare an access denial with the right-sizing fixes", "event", den.Event, "source", den.Source, "err", err)
				writeJSON(w, http.StatusServiceUnavailable, EventResult{Error: "the denial could not be recorded: try again"})
				return
			}
			res.Matched += n
			hear(den.Provider, "accepted")
		}
		// The event stage is turning a body's changes into re-reads; a body refused
		// as malformed or unknown is counted by the events metric, not as a step.
		began := time.Now()
		for _, c := range changes {
			n, q, err := d.enqueueChange(ctx, c)
			if err != nil {
				d.staged(stageEvent, began, err)
				d.jobLog(ctx).Error("enqueue the re-read of an event", "event", c.Event, "source", c.Source, "err", err)
				writeJSON(w, http.StatusServiceUnavailable, EventResult{Error: "the queue refused the re-read: try again"})
				return
			}
			res.Enqueued += n
			res.Queued += q
			hear(c.Provider, "accepted")
		}
		if len(changes) > 0 {
			d.staged(stageEvent, began, nil)
		}
		status := events.Status(perr)
		if perr != nil {
			res.Error = perr.Error()
			result := "malformed"
			switch {
			case errors.Is(perr, events.ErrTooLarge):
				result = "too_large"
			case errors.Is(perr, events.ErrUnknown) && !errors.Is(perr, events.ErrMalformed):
				result = "unknown"
			}
			hear("", result)
			d.jobLog(ctx).Info("event refused", "status", status, "err", perr)
		}
		writeJSON(w, status, res)
	}))
}

// enqueueChange queues the re-reads one change asks for, and returns how many were
// queued and how many were waiting already.
func (d *Daemon) enqueueChange(ctx context.Context, c events.Change) (enqueued, queued int, err error) {
	if _, ok := d.targets[c.Provider]; !ok {
		d.log.Info("event for a target this daemon does not read", "provider", c.Provider, "event", c.Event)
		return 0, 0, nil
	}
	accounts, err := d.o.Reconciler.Accounts(ctx)
	if err != nil {
		return 0, 0, err
	}
	correlation := "event-" + c.Source
	if c.Source == "" {
		correlation = "event-" + newID()
	}
	var params []river.InsertManyParams
	if c.WholeScope && c.Scope != "" {
		params = append(params, river.InsertManyParams{Args: CollectArgs{Target: c.Provider, Scope: c.Scope, Accounts: accounts,
			Reason: "event", Correlation: correlation}})
	}
	seen := map[string]bool{}
	for _, uid := range c.UIDs {
		if seen[uid] {
			continue
		}
		seen[uid] = true
		var at int64
		if !c.At.IsZero() {
			at = c.At.UnixNano()
		}
		params = append(params, river.InsertManyParams{Args: RefreshArgs{Target: c.Provider, UID: uid, Source: correlation, Scope: c.Scope, Accounts: accounts,
			Event: c.Event, Correlation: correlation, AnnouncedAt: at}})
	}
	if len(params) == 0 {
		return 0, 0, nil
	}
	return d.insert(ctx, params)
}

// ReconcileRequest is the body of POST /v1/reconcile: a target to sweep now, or a
// resource to read again now.
type ReconcileRequest struct {
	Target string `json:"target,omitempty"`
	UID    string `json:"uid,omitempty"`
}

// ReconcileHandler serves POST /v1/reconcile: {"target": "aws"} sweeps a target now,
// {"uid": "arn:…"} reads one resource again now. It answers 202 with whether a job was
// queued (false: one was waiting already).
func (d *Daemon) ReconcileHandler(token secret.Value) http.Handler {
	return d.traceHTTP("/v1/reconcile", token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authorized(r, token) {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "a bearer token is required (Authorization: Bearer …)"})
			return
		}
		var req ReconcileRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || (req.Target == "") == (req.UID == "") {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want {"target": "aws"} or {"uid": "arn:…"}`})
			return
		}
		correlation := "reconcile-" + newID()
		var queued bool
		var err error
		if req.Target != "" {
			queued, err = d.Sweep(r.Context(), req.Target, correlation)
		} else {
			queued, err = d.Refresh(r.Context(), req.UID, correlation)
		}
		switch {
		case errors.Is(err, ErrUnknownTarget):
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		case err != nil:
			d.jobLog(r.Context(), "correlation", correlation).Error("reconcile on request", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the queue refused the job: try again"})
		default:
			writeJSON(w, http.StatusAccepted, map[string]any{"queued": queued, "correlation": correlation})
		}
	}))
}

// Refresh enqueues a re-read of one resource now; its target comes from its uid.
func (d *Daemon) Refresh(ctx context.Context, uid, correlation string) (bool, error) {
	target := targetOf(uid)
	if _, ok := d.targets[target]; !ok {
		return false, fmt.Errorf("%w for resource %s (known: %v)", ErrUnknownTarget, uid, d.targetNames())
	}
	accounts, err := d.o.Reconciler.Accounts(ctx)
	if err != nil {
		return false, err
	}
	scope, err := d.o.Reconciler.ScopeOf(ctx, uid)
	if err != nil {
		return false, err
	}
	queued, err := d.insertOne(ctx, RefreshArgs{Target: target, UID: uid, Source: correlation, Scope: scope, Accounts: accounts, Correlation: correlation})
	if err != nil {
		return false, fmt.Errorf("enqueue a refresh of %s: %w", uid, err)
	}
	return queued, nil
}

// targetOf names the kind of target a uid belongs to.
func targetOf(uid string) string {
	switch {
	case strings.HasPrefix(uid, "arn:"):
		return "aws"
	case strings.HasPrefix(uid, "//"):
		return "gcp"
	case strings.HasPrefix(uid, "tls://"):
		return "tls"
	}
	return ""
}

// authorized checks the bearer token in constant time.
func authorized(r *http.Request, token secret.Value) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token.Empty() {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token.Reveal())) == 1
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
