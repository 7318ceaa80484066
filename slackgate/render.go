package slackgate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
)

// The ids of the message's interactive parts. The buttons carry the request id as their
// value; the reason box is read from the message's state when Deny is pressed.
const (
	ActionApprove = "warden_approve"
	ActionDeny    = "warden_deny"
	BlockDecide   = "warden_decide"
	BlockReason   = "warden_reason"
	ActionReason  = "reason"
)

// message is one rendering of a request's message.
type message struct {
	text   string // the notification's fallback text
	blocks []slack.Block
	// live: the request takes decisions (the buttons are shown).
	live bool
	// settled: nothing can change the message any more.
	settled bool
}

// hash identifies a rendering: a message is updated only when it changes.
func (m message) hash() string {
	b, err := json.Marshal(struct {
		Text   string        `json:"text"`
		Blocks []slack.Block `json:"blocks"`
	}{m.text, m.blocks})
	if err != nil {
		// Blocks are built here from strings: they always encode.
		panic(fmt.Sprintf("slackgate: encode message: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// render builds the message of request req. rec is its action as recorded, nil when
// unknown; it describes this request only when its binding is the request's (a later
// generation of the action is another request's business).
func render(req gates.Request, rec *remediate.Record, ids Identities, now time.Time) message {
	own := rec != nil && rec.Binding() == req.ContentHash
	status, live, settled := statusOf(req, rec, own, ids, now)
	title := "Approval needed"
	switch {
	case req.State == gates.StatePending && !live:
		title = "Approval expired"
	case req.State == gates.StateApproved && own:
		title = "Approved"
		switch rec.State {
		case remediate.StateVerified:
			title = "Fixed"
		case remediate.StateFailed:
			title = "Fix failed"
		case remediate.StateRolledBack:
			title = "Fix rolled back"
		case remediate.StateApplying, remediate.StateInProgress:
			title = "Fix under way"
		case remediate.StateVoided:
			title = "Fix voided"
		}
	case req.State == gates.StateApproved:
		title = "Approved"
	case req.State == gates.StateDenied:
		title = "Denied"
	case req.State == gates.StateExpired:
		title = "Approval expired"
	case req.State == gates.StateVoided:
		title = "Approval voided"
	}
	header := clip(fmt.Sprintf("%s: %s (%s risk)", title, req.Remediator, req.Risk), 150)

	var why, change, account, region, hash, msg string
	hash = shortHash(req.ContentHash)
	after := remediate.After(req.Remediator)
	if rec != nil {
		why = rec.Policy
		msg = rec.Message
		change = string(compactJSON(rec.Before))
		account, region = rec.Account, rec.Region
		if own {
			hash = shortHash(rec.Hash)
		}
	}
	if region == "" {
		region = "global"
	}
	if account == "" {
		account = "unknown"
	}

	var blocks []slack.Block
	blocks = append(blocks, slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, header, false, false)))
	finding := fmt.Sprintf("*Finding* %s", esc(orDash(why)))
	if msg != "" {
		finding += ": " + esc(msg)
	}
	if rec != nil && rec.Finding != "" {
		finding += fmt.Sprintf("\nfingerprint `%s`", esc(shortHash(rec.Finding)))
	}
	blocks = append(blocks, section(clip(finding, 3000)))
	changeText := fmt.Sprintf("*Change* of `%s`\nbefore:\n```%s```\nafter: *%s*", esc(clip(req.Part, 500)), esc(clip(orDash(change), 2000)), esc(after))
	blocks = append(blocks, section(clip(changeText, 3000)))
	fields := []*slack.TextBlockObject{
		mrkdwn(clip(fmt.Sprintf("*Target*\n`%s`", esc(req.Target)), 2000)),
		mrkdwn(fmt.Sprintf("*Account / region*\n%s / %s", esc(account), esc(region))),
		mrkdwn(fmt.Sprintf("*Risk*\n%s", req.Risk)),
		mrkdwn(fmt.Sprintf("*Quorum*\n%d distinct approvers, never the requester (%s)", req.Quorum, actorLabel(req.Requester, ids))),
		mrkdwn(fmt.Sprintf("*Expires*\n%s", req.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))),
		mrkdwn(fmt.Sprintf("*Action*\n`%s` hash `%s`", esc(req.ActionID), esc(hash))),
	}
	blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
	blocks = append(blocks, section(clip("*Status* "+status, 3000)))
	if live {
		reason := slack.NewPlainTextInputBlockElement(slack.NewTextBlockObject(slack.PlainTextType, "Why deny? (required to deny)", false, false), ActionReason)
		reason.MaxLength = maxReason
		in := slack.NewInputBlock(BlockReason, slack.NewTextBlockObject(slack.PlainTextType, "Reason", false, false),
			slack.NewTextBlockObject(slack.PlainTextType, "Required to deny; type it, then press Deny", false, false), reason)
		in.Optional = true
		approve := slack.NewButtonBlockElement(ActionApprove, req.ID, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false)).
			WithStyle(slack.StylePrimary).
			WithConfirm(slack.NewConfirmationBlockObject(
				slack.NewTextBlockObject(slack.PlainTextType, "Approve this fix?", false, false),
				mrkdwn(clip(fmt.Sprintf("%s on `%s` (%s risk). Your approval counts towards %d needed.", esc(req.Remediator), esc(req.Target), req.Risk, req.Quorum), 300)),
				slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false),
				slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false)).WithStyle(slack.StylePrimary))
		deny := slack.NewButtonBlockElement(ActionDeny, req.ID, slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false)).
			WithStyle(slack.StyleDanger).
			WithConfirm(slack.NewConfirmationBlockObject(
				slack.NewTextBlockObject(slack.PlainTextType, "Deny this fix?", false, false),
				mrkdwn("A deny ends the request for every approver. It needs the reason typed in the Reason box above."),
				slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false),
				slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false)).WithStyle(slack.StyleDanger))
		blocks = append(blocks, in, slack.NewActionBlock(BlockDecide, approve, deny))
	}
	blocks = append(blocks, slack.NewContextBlock("", mrkdwn(fmt.Sprintf("warden approval request `%s`", esc(req.ID)))))
	text := clip(fmt.Sprintf("%s: %s on %s (%s risk). %s", title, req.Remediator, req.Target, req.Risk, plain(status)), 3000)
	return message{text: text, blocks: blocks, live: live, settled: settled}
}

// statusOf says where the request and its fix stand, whether it takes decisions, and
// whether the message is final.
func statusOf(req gates.Request, rec *remediate.Record, own bool, ids Identities, now time.Time) (string, bool, bool) {
	approvals := req.Approvals()
	by := make([]string, len(approvals))
	for i, d := range approvals {
		by[i] = actorLabel(d.Actor, ids) + viaChannel(d.Channel)
	}
	approvedBy := ""
	if len(by) > 0 {
		approvedBy = "approved by " + strings.Join(by, ", ")
	}
	at := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 MST") }
	switch req.State {
	case gates.StatePending:
		if !now.Before(req.ExpiresAt) {
			return fmt.Sprintf(":hourglass: expired at %s with %d of %d approvals: no decision is taken any more; plan again to ask anew", at(req.ExpiresAt), len(approvals), req.Quorum), false, false
		}
		more := req.Quorum - len(approvals)
		s := fmt.Sprintf(":hourglass_flowing_sand: waiting for approval: %d of %d", len(approvals), req.Quorum)
		if approvedBy != "" {
			s += " (" + approvedBy + ")"
		}
		return s + fmt.Sprintf("; %d more needed", more), true, false
	case gates.StateDenied:
		who := "an approver"
		for _, d := range req.Decisions {
			if d.Vote == gates.VoteDeny {
				who = actorLabel(d.Actor, ids) + viaChannel(d.Channel)
			}
		}
		return fmt.Sprintf(":no_entry: denied by %s at %s: %s", who, at(req.DecidedAt), esc(req.Reason)), false, true
	case gates.StateExpired:
		return fmt.Sprintf(":hourglass: expired at %s: %s", at(req.DecidedAt), esc(req.Reason)), false, true
	case gates.StateVoided:
		return fmt.Sprintf(":wastebasket: voided at %s: %s. Its approvals no longer hold", at(req.DecidedAt), esc(req.Reason)), false, true
	case gates.StateApproved:
		s := fmt.Sprintf(":white_check_mark: %s (%d of %d)", approvedBy, len(approvals), req.Quorum)
		if !own {
			if rec != nil {
				return s + "; the action has since been planned again", false, true
			}
			return s, false, false
		}
		detail := ""
		if rec.Detail != "" {
			detail = ": " + esc(rec.Detail)
		}
		switch rec.State {
		case remediate.StateApplying:
			return s + "; applying now", false, false
		case remediate.StateInProgress:
			return s + "; in progress" + detail, false, false
		case remediate.StateVerified:
			return ":white_check_mark: applied and verified" + detail + ". " + capital(s[len(":white_check_mark: "):]), false, false
		case remediate.StateFailed:
			return ":x: failed" + detail + ". " + capital(s[len(":white_check_mark: "):]), false, false
		case remediate.StateRolledBack:
			return ":leftwards_arrow_with_hook: rolled back" + detail + ". " + capital(s[len(":white_check_mark: "):]), false, true
		case remediate.StateVoided:
			return ":wastebasket: voided" + detail + ". " + capital(s[len(":white_check_mark: "):]), false, true
		case remediate.StateDenied, remediate.StateRefused:
			return fmt.Sprintf(":no_entry: %s%s", rec.State, detail), false, true
		}
		return s + "; waiting to be applied", false, false
	}
	return string(req.State), false, false
}

// actorLabel shows an identity with its Slack user where it has one.
func actorLabel(actor string, ids Identities) string {
	if u, ok := ids.SlackUser(actor); ok {
		if strings.HasPrefix(actor, SlackPrefix) {
			return "<@" + u + ">"
		}
		return esc(actor) + " (<@" + u + ">)"
	}
	return esc(actor)
}

func viaChannel(ch gates.Channel) string {
	if ch == gates.ChannelSlack {
		return ""
	}
	return " via " + string(ch)
}

func section(text string) *slack.SectionBlock { return slack.NewSectionBlock(mrkdwn(text), nil, nil) }

func mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, false)
}

// esc escapes the three characters Slack's mrkdwn gives a meaning to (&, <, >): text
// from the cloud and the policies must not turn into links or mentions.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// plain undoes esc and drops the emoji codes, for the fallback text.
func plain(s string) string {
	for _, e := range []string{":hourglass_flowing_sand: ", ":hourglass: ", ":no_entry: ", ":wastebasket: ", ":white_check_mark: ", ":x: ", ":leftwards_arrow_with_hook: "} {
		s = strings.ReplaceAll(s, e, "")
	}
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(s)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func shortHash(h string) string {
	h, _, _ = strings.Cut(h, ":")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func compactJSON(b []byte) []byte {
	var out strings.Builder
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return b
	}
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b
	}
	return []byte(strings.TrimSpace(out.String()))
}
