package slackgate

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/warden-sec/warden/gates"
)

// maxReason bounds a deny's reason, in characters: the gate's own limit, which the
// dialog's field says and the payload is checked against before the gate is asked.
const maxReason = gates.MaxReason

// errIgnored marks a valid interaction that is not a decision (another app's button,
// a view closed): acknowledged, and nothing else.
var errIgnored = errors.New("not a warden decision")

var requestIDPattern = regexp.MustCompile(`^apr-[0-9a-f]{12}$`)

// interaction is a click on Approve or Deny, as the payload says it.
type interaction struct {
	User      string // Slack user id of the clicker
	Team      string
	Channel   string // where the message is ('' if the payload does not say)
	MessageTS string
	RequestID string
	Approve   bool
	Reason    string // typed in the reason box (deny)
}

// parseInteraction reads an interaction request's body: form-encoded, its payload field
// the JSON of a block_actions interaction. Only the body's signature makes it
// trustworthy; it is checked before this runs. Anything but a click on one of warden's
// buttons is errIgnored.
func parseInteraction(body []byte) (interaction, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return interaction{}, fmt.Errorf("the body is not form-encoded: %w", err)
	}
	payload := form.Get("payload")
	if payload == "" {
		return interaction{}, errors.New("no payload field")
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(payload), &cb); err != nil {
		return interaction{}, fmt.Errorf("the payload is not an interaction: %w", err)
	}
	if cb.Type != slack.InteractionTypeBlockActions {
		return interaction{}, fmt.Errorf("%w: interaction type %q", errIgnored, cb.Type)
	}
	var act *slack.BlockAction
	for _, a := range cb.ActionCallback.BlockActions {
		if a != nil && (a.ActionID == ActionApprove || a.ActionID == ActionDeny) {
			if act != nil {
				return interaction{}, errors.New("two decisions in one interaction")
			}
			act = a
		}
	}
	if act == nil {
		return interaction{}, fmt.Errorf("%w: no Approve or Deny action", errIgnored)
	}
	if !requestIDPattern.MatchString(act.Value) {
		return interaction{}, errors.New("the button's value is not an approval request id")
	}
	if !userID.MatchString(cb.User.ID) {
		return interaction{}, errors.New("the interaction names no Slack user")
	}
	in := interaction{User: cb.User.ID, Team: cb.Team.ID, Channel: cb.Channel.ID, MessageTS: cb.Container.MessageTs,
		RequestID: act.Value, Approve: act.ActionID == ActionApprove}
	if in.Channel == "" {
		in.Channel = cb.Container.ChannelID
	}
	if in.Channel != "" && !channelID.MatchString(in.Channel) {
		return interaction{}, errors.New("the interaction's channel is not a channel id")
	}
	if cb.BlockActionState != nil {
		if v, ok := cb.BlockActionState.Values[BlockReason][ActionReason]; ok {
			in.Reason = strings.TrimSpace(v.Value)
		}
	}
	if !utf8.ValidString(in.Reason) {
		return interaction{}, errors.New("the reason is not UTF-8 text")
	}
	if utf8.RuneCountInString(in.Reason) > maxReason {
		return interaction{}, fmt.Errorf("the reason is longer than %d characters", maxReason)
	}
	return in, nil
}
