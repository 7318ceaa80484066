package slackgate

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseInteraction: the parser of interaction bodies never panics, and what it
// accepts is a click of a known button on a request id by a Slack user.
func FuzzParseInteraction(f *testing.F) {
	click := `{"type":"block_actions","user":{"id":"U0BBBBBBB"},"team":{"id":"T0TEAM001"},"channel":{"id":"C0123456789"},` +
		`"container":{"type":"message","message_ts":"1700000000.000001","channel_id":"C0123456789"},` +
		`"state":{"values":{"warden_reason":{"reason":{"type":"plain_text_input","value":"not now"}}}},` +
		`"actions":[{"type":"button","block_id":"warden_decide","action_id":"warden_deny","value":"apr-0123456789ab"}]}`
	for _, p := range []string{click, strings.Replace(click, "warden_deny", "warden_approve", 1), `{"type":"view_submission"}`,
		`{"type":"block_actions","actions":[{"block_id":"b","action_id":"warden_approve","value":"apr-"}]}`, `{"type":"block_actions","state":[]}`, `{`} {
		f.Add(url.Values{"payload": {p}}.Encode())
	}
	f.Add("payload=%zz")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		in, err := parseInteraction([]byte(body))
		if err != nil {
			return
		}
		if !requestIDPattern.MatchString(in.RequestID) || !userID.MatchString(in.User) {
			t.Fatalf("accepted %+v", in)
		}
		if !utf8.ValidString(in.Reason) || utf8.RuneCountInString(in.Reason) > maxReason {
			t.Fatalf("accepted a reason of %d characters", utf8.RuneCountInString(in.Reason))
		}
	})
}

func TestParseInteraction(t *testing.T) {
	base := `{"type":"block_actions","user":{"id":"U0BBBBBBB"},"channel":{"id":"C0123456789"},` +
		`"state":{"values":{"warden_reason":{"reason":{"type":"plain_text_input","value":"  no: change freeze  "}}}},` +
		`"actions":[{"type":"button","block_id":"warden_decide","action_id":"ACTION","value":"VALUE"}]}`
	body := func(action, value string) []byte {
		p := strings.NewReplacer("ACTION", action, "VALUE", value).Replace(base)
		return []byte(url.Values{"payload": {p}}.Encode())
	}
	tests := []struct {
		name    string
		body    []byte
		want    interaction
		wantErr string
	}{
		{name: "deny with its reason", body: body(ActionDeny, "apr-0123456789ab"),
			want: interaction{User: "U0BBBBBBB", Channel: "C0123456789", RequestID: "apr-0123456789ab", Reason: "no: change freeze"}},
		{name: "approve", body: body(ActionApprove, "apr-0123456789ab"),
			want: interaction{User: "U0BBBBBBB", Channel: "C0123456789", RequestID: "apr-0123456789ab", Approve: true, Reason: "no: change freeze"}},
		{name: "not a request id", body: body(ActionApprove, "apr-../../x"), wantErr: "not an approval request id"},
		{name: "another app's button", body: body("other", "apr-0123456789ab"), wantErr: "not a warden decision"},
		{name: "no payload", body: []byte("x=1"), wantErr: "no payload"},
		{name: "not JSON", body: []byte("payload=%7B"), wantErr: "not an interaction"},
		{name: "a modal closed", body: []byte(url.Values{"payload": {`{"type":"view_closed"}`}}.Encode()), wantErr: "not a warden decision"},
		{name: "no user", body: []byte(url.Values{"payload": {strings.Replace(strings.NewReplacer("ACTION", ActionApprove, "VALUE", "apr-0123456789ab").Replace(base), `"U0BBBBBBB"`, `""`, 1)}}.Encode()), wantErr: "names no Slack user"},
		{name: "a reason too long", body: []byte(url.Values{"payload": {strings.Replace(strings.NewReplacer("ACTION", ActionDeny, "VALUE", "apr-0123456789ab").Replace(base), "no: change freeze", strings.Repeat("é", maxReason+1), 1)}}.Encode()), wantErr: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseInteraction(tt.body)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
