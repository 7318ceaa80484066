package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
)

// refusal reports whether the gate refused a decision (as opposed to failing to record
// it), as the Slack channel tells them apart.
func refusal(err error) bool {
	for _, e := range []error{gates.ErrSelfApproval, gates.ErrNotApprover, gates.ErrAlreadyDecided, gates.ErrExpired,
		gates.ErrVoided, gates.ErrDenyNeedsReason, gates.ErrReasonTooLong, gates.ErrRefused, gates.ErrNotFound} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// decide records the principal's approval or denial through the web channel. A user
// whose role allows deciding is vouched for by the dashboard (DecideAuthorized), as
// Slack vouches for slack.approvers; the local operator of an unauthenticated
// dashboard decides as the CLI's user does (Decide: gates.approvers). Every other rule
// is the gate's own: never the requester, once per approver, nothing on an expired,
// voided or decided request, the quorum, the audit entry in the same transaction.
func (d *Dashboard) decide(approve bool) handler {
	return func(w http.ResponseWriter, r *http.Request, p *Principal) {
		id := r.PathValue("id")
		reason := strings.TrimSpace(r.PostFormValue("reason"))
		word := verb(approve)
		req, err := d.decideOne(r.Context(), p, id, approve, reason)
		if err != nil {
			if !refusal(err) {
				d.setFlash(w, true, "Your %s of request %s could not be recorded (warden could not reach its store); nothing was decided. Try again in a moment.", word, id)
			} else {
				d.setFlash(w, true, "Refused: you (%s) cannot %s request %s: %s.", p.Name, word, id, gates.Reason(err))
			}
			back(w, r, "/approvals")
			return
		}
		switch req.State {
		case gates.StateApproved:
			d.setFlash(w, false, "Recorded: you approved request %s; it has the approvals it needs (%d of %d), and warden serve applies it next.", id, len(req.Approvals()), req.Quorum)
		case gates.StateDenied:
			d.setFlash(w, false, "Recorded: you denied request %s: %s on %s will not run.", id, req.Remediator, req.Target)
		default:
			n := len(req.Approvals())
			d.setFlash(w, false, "Recorded: you approved request %s (%d of %d); %d more needed.", id, n, req.Quorum, req.Quorum-n)
		}
		back(w, r, "/approvals")
	}
}

// decideOne records p's decision on one request through the web channel: the one gate
// call of every decision from the pages, single or bulk.
func (d *Dashboard) decideOne(ctx context.Context, p *Principal, id string, approve bool, reason string) (gates.Request, error) {
	var req gates.Request
	var err error
	if p.Vouched() {
		req, err = d.o.Gate.DecideAuthorized(ctx, id, p.Name, string(gates.ChannelWeb), approve, reason)
	} else {
		req, err = d.o.Gate.Decide(ctx, id, p.Name, string(gates.ChannelWeb), approve, reason)
	}
	switch {
	case err == nil:
		d.log.Info("dashboard: decision recorded", "request", id, "actor", p.Name, "decision", verb(approve), "via", p.Via)
		if d.o.OnDecision != nil {
			d.o.OnDecision(id)
		}
	case refusal(err):
		d.log.Info("dashboard: decision refused", "request", id, "actor", p.Name, "decision", verb(approve), "err", err)
	default:
		d.log.Error("dashboard: record a decision", "request", id, "actor", p.Name, "err", err)
	}
	return req, err
}

// rollback undoes an applied fix through warden's one rollback path, as the principal.
func (d *Dashboard) rollback(w http.ResponseWriter, r *http.Request, p *Principal) {
	id := r.PathValue("id")
	if d.o.Rollback == nil {
		d.setFlash(w, true, "Not rolled back: this warden serve has no live targets to call.")
		back(w, r, "/actions")
		return
	}
	it, err := d.o.Rollback(r.Context(), p.Name, id)
	switch {
	case errors.Is(err, remediators.ErrNoRollback), errors.Is(err, remediate.ErrNoSuchAction), errors.Is(err, remediate.ErrPaused):
		d.setFlash(w, true, "Not rolled back: %s.", err)
	case err != nil:
		d.log.Error("dashboard: rollback", "action", id, "actor", p.Name, "err", err)
		d.setFlash(w, true, "Rollback of %s failed: %s.", id, err)
	default:
		d.log.Info("dashboard: rolled back", "action", id, "actor", p.Name, "outcome", it.Outcome)
		d.setFlash(w, false, "%s: %s.", id, it.Outcome)
	}
	back(w, r, "/actions")
}

func (d *Dashboard) revokeToken(w http.ResponseWriter, r *http.Request, p *Principal) {
	t, err := d.tokens.Revoke(r.Context(), r.PathValue("id"), p.Name)
	if err != nil {
		d.setFlash(w, true, "Not revoked: %s.", err)
	} else {
		d.setFlash(w, false, "Token %s (%s, %s) is revoked; its sessions have ended.", t.ID, t.Name, t.RoleName)
	}
	back(w, r, "/tokens")
}

// login exchanges a token typed into the login form for a session cookie. The form is
// protected against forgery like any other (its CSRF token is bound to the browser's
// binding cookie), so that no other site can log a browser in as someone else.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if !d.authOn {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if code, why := readForm(r); code != 0 {
		d.log.Warn("dashboard: login refused", "remote", r.RemoteAddr, "status", code, "reason", why)
		d.fail(w, r, nil, code, why)
		return
	}
	if err := d.checkForgery(r, nil); err != nil {
		d.log.Warn("dashboard: login refused", "remote", r.RemoteAddr, "reason", err)
		d.fail(w, r, nil, http.StatusForbidden, "Refused: "+err.Error()+".")
		return
	}
	t, secret, err := d.tokens.StartSession(r.Context(), strings.TrimSpace(r.PostFormValue("token")), d.o.Config.TTL())
	if err != nil {
		if !errors.Is(err, ErrBadToken) {
			d.log.Error("dashboard: start a session", "err", err)
		}
		d.log.Info("dashboard: login failed", "remote", r.RemoteAddr)
		d.render(w, r, nil, http.StatusUnauthorized, "login", "Log in", "That token is unknown or revoked.")
		return
	}
	d.log.Info("dashboard: logged in", "token", t.ID, "name", t.Name, "role", t.RoleName, "remote", r.RemoteAddr)
	http.SetCookie(w, d.cookie(sessionCookie, secret, int(d.o.Config.TTL().Seconds())))
	d.setFlash(w, false, "Logged in as %s (%s).", t.Name, t.RoleName)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, p *Principal) {
	if p.session != "" {
		if err := d.tokens.EndSession(r.Context(), p.session); err != nil {
			d.log.Error("dashboard: logout", "err", err)
		}
	}
	http.SetCookie(w, d.cookie(sessionCookie, "", -1))
	to := "/login"
	if !d.authOn {
		to = "/"
	}
	if p.Via == "proxy" {
		d.setFlash(w, false, "%s", fmt.Sprintf("You are signed in through the proxy as %s: sign out there.", p.Name))
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}
