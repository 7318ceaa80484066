package gates

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/store"
)

// ErrUnsigned: in checked mode (gates.signers listed), a decision without a signature by
// a key gates.signers lists for its actor (for web and Slack decisions, for @replicas).
var ErrUnsigned = errors.New("the decision is not signed by a key gates.signers lists")

// WithSigner returns a gate that signs the decisions it makes with s: an approver's key
// (warden approve's --sign-key or ssh-agent) or the replica's key (web and Slack, whose
// channel verified the identity). The gate g is not changed.
func (g *Gate) WithSigner(s ssh.Signer) *Gate {
	c := *g
	c.signer = s
	return &c
}

// signerName is whose keys verify a decision coming in through ch: the actor's own on
// the CLI, the replicas' for the channels a replica verified (web, Slack).
func signerName(actor string, ch Channel) string {
	if ch == ChannelCLI {
		return actor
	}
	return sign.Replicas
}

// message is what the signature of d on r binds.
func message(r Request, d Decision) sign.Decision {
	return sign.Decision{Request: r.ID, Content: r.ContentHash, Actor: d.Actor, Channel: string(d.Channel),
		Vote: string(d.Vote), Reason: d.Reason}
}

// verify checks d's signature on r against gates.signers and returns the signer's
// fingerprint; in unchecked mode it returns the signer recorded, unverified.
func (g *Gate) verify(r Request, d Decision) (string, error) {
	if !g.cfg.Checked() {
		return d.Signer, nil
	}
	name := signerName(d.Actor, d.Channel)
	fp, err := sign.Verify(message(r, d), d.Signature, g.cfg.SignerKeys(name))
	if err != nil {
		return "", fmt.Errorf("%w (for %s): %w", ErrUnsigned, name, err)
	}
	return fp, nil
}

// signDecision signs d on r with the gate's signer and checks the signature as the
// machine will; in checked mode a decision without a signer, or signed by a key not
// listed for it, is refused (ErrUnsigned).
func (g *Gate) signDecision(r Request, d *Decision) error {
	if g.signer == nil {
		if g.cfg.Checked() {
			how := "sign it with --sign-key FILE or a key in ssh-agent that gates.signers lists for " + d.Actor
			if d.Channel != ChannelCLI {
				how = "this replica has no signing key"
			}
			return fmt.Errorf("%w: %s", ErrUnsigned, how)
		}
		return nil
	}
	sig, err := sign.Sign(message(r, *d), g.signer)
	if err != nil {
		return err
	}
	d.Signature = sig
	d.Signer = sign.Fingerprint(g.signer.PublicKey())
	fp, err := g.verify(r, *d)
	if err != nil {
		return err
	}
	d.Signer = fp
	return nil
}

// Forgery is a decision found without a valid signature in checked mode: it counts as
// no decision.
type Forgery struct {
	Request string
	Actor   string
	Channel Channel
	Vote    Vote
	// Why says what is wrong with its signature.
	Why string
}

// Check verifies, in checked mode, every decision on r against gates.signers over r's
// content hash, in the caller's transaction. A decision whose signature does not verify
// (a row written into the database by hand, a name claimed without its key, a signature
// of another content hash) counts as no decision: it is recorded in the audit log as
// approval.forged, with everything it said, and removed, so that it is reported once and
// never counted; a request it approved or denied is pending again unless its valid
// decisions still decide it. It returns the request as it stands and the forgeries
// found. In unchecked mode it returns r as it is.
func (g *Gate) Check(ctx context.Context, tx *store.Tx, r Request) (Request, []Forgery, error) {
	if !g.cfg.Checked() || len(r.Decisions) == 0 {
		return r, nil, nil
	}
	var forged []Forgery
	valid := r
	valid.Decisions = nil
	for _, d := range r.Decisions {
		if _, err := g.verify(r, d); err == nil {
			valid.Decisions = append(valid.Decisions, d)
			continue
		} else {
			forged = append(forged, Forgery{Request: r.ID, Actor: d.Actor, Channel: d.Channel, Vote: d.Vote, Why: Reason(err)})
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM approval_decisions WHERE request_id = ? AND actor = ?`, r.ID, d.Actor); err != nil {
			return r, nil, fmt.Errorf("request %s: drop the forged decision of %s: %w", r.ID, d.Actor, err)
		}
		f := forged[len(forged)-1]
		if err := g.audit(ctx, tx, SystemActor, audit.KindApprovalForged, r, map[string]any{"actor": d.Actor,
			"channel": string(d.Channel), "decision": string(d.Vote), "reason": d.Reason, "signer": d.Signer,
			"signed": d.Signature != "", "why": f.Why}); err != nil {
			return r, nil, err
		}
	}
	if len(forged) == 0 {
		return r, nil, nil
	}
	stands := true
	switch r.State {
	case StateApproved:
		stands = len(valid.Approvals()) >= r.Quorum
	case StateDenied:
		stands = len(valid.Approvals()) < len(valid.Decisions)
	}
	if !stands {
		if _, err := tx.ExecContext(ctx, `UPDATE approval_requests SET state = ?, decided_at = '', reason = ''
			WHERE id = ? AND state = ? AND content_hash = ?`, string(StatePending), r.ID, string(r.State), r.ContentHash); err != nil {
			return r, nil, fmt.Errorf("request %s: back to pending after forged decisions: %w", r.ID, err)
		}
	}
	out, err := get(ctx, tx, r.ID)
	return out, forged, err
}

// DecideCLI is a decision of warden approve and deny: Decide through the CLI channel,
// signed with the private key in keyFile (--sign-key) when given, else, in checked mode,
// with a key gates.signers lists for actor that the ssh-agent at $SSH_AUTH_SOCK holds. In unchecked mode it writes UncheckedWarning to warn first. A
// decision that cannot be signed in checked mode is refused with ErrUnsigned.
func (g *Gate) DecideCLI(ctx context.Context, id, actor string, approve bool, reason, keyFile string, warn io.Writer) (Request, error) {
	if w := g.cfg.UncheckedWarning(); w != "" {
		fmt.Fprintln(warn, w)
	}
	verb := "approve"
	if !approve {
		verb = "deny"
	}
	var s ssh.Signer
	switch {
	case keyFile != "":
		var err error
		if s, err = sign.LoadKeyFile(keyFile); err != nil {
			return Request{}, &DecisionError{Verb: verb, ID: id, Err: fmt.Errorf("%w: %w", ErrUnsigned, err)}
		}
	case g.cfg.Checked():
		keys := g.cfg.SignerKeys(actor)
		if len(keys) == 0 {
			return Request{}, &DecisionError{Verb: verb, ID: id, Err: fmt.Errorf("%w: gates.signers lists no key for %s", ErrUnsigned, actor)}
		}
		as, done, err := sign.AgentSigner(os.Getenv("SSH_AUTH_SOCK"), keys)
		if err != nil {
			return Request{}, &DecisionError{Verb: verb, ID: id, Err: fmt.Errorf("%w: %w", ErrUnsigned, err)}
		}
		defer done()
		s = as
	}
	if s != nil {
		g = g.WithSigner(s)
	}
	return g.Decide(ctx, id, actor, string(ChannelCLI), approve, reason)
}
