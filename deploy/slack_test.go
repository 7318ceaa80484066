package deploy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const slackManifestPath = "slack/manifest.yaml"

// slackManifest is the part of Slack's app manifest schema warden's app uses; decoding
// is strict, so a misspelt or misplaced key fails instead of being dropped by Slack.
type slackManifest struct {
	DisplayInformation struct {
		Name            string `json:"name"`
		Description     string `json:"description"`
		BackgroundColor string `json:"background_color"`
	} `json:"display_information"`
	Features struct {
		BotUser struct {
			DisplayName  string `json:"display_name"`
			AlwaysOnline bool   `json:"always_online"`
		} `json:"bot_user"`
	} `json:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot  []string `json:"bot"`
			User []string `json:"user"`
		} `json:"scopes"`
	} `json:"oauth_config"`
	Settings struct {
		Interactivity struct {
			IsEnabled  bool   `json:"is_enabled"`
			RequestURL string `json:"request_url"`
		} `json:"interactivity"`
		OrgDeployEnabled     bool `json:"org_deploy_enabled"`
		SocketModeEnabled    bool `json:"socket_mode_enabled"`
		TokenRotationEnabled bool `json:"token_rotation_enabled"`
	} `json:"settings"`
}

func readSlackManifest(t *testing.T) slackManifest {
	t.Helper()
	b, err := os.ReadFile(slackManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var m slackManifest
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("%s: %v", slackManifestPath, err)
	}
	return m
}

// slackAPICalls lists the methods of slackgate's Web API client (its field api, a
// *slack.Client) that slackgate's code calls, each with the places it is called from.
func slackAPICalls(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("../slackgate/*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string][]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			// n.api.Method(…), or api.Method(…) on a local copy of the client.
			recv := sel.X
			if s, ok := recv.(*ast.SelectorExpr); ok && s.Sel.Name == "api" {
				recv = s.Sel
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == "api" {
				pos := fset.Position(call.Pos())
				calls[sel.Sel.Name] = append(calls[sel.Sel.Name], filepath.Base(pos.Filename)+":"+strconv.Itoa(pos.Line))
			}
			return true
		})
	}
	return calls
}

func TestSlackManifest(t *testing.T) {
	m := readSlackManifest(t)
	// The Web API method behind each slack-go call warden makes, and the bot scope the
	// method needs (api.slack.com/methods/<method>). Where each is called:
	methods := map[string]struct{ api, scope string }{
		// slackgate/notifier.go, Notifier.post: an approval request's message.
		"PostMessageContext": {"chat.postMessage", "chat:write"},
		// slackgate/notifier.go, Notifier.refresh: the message follows its request.
		"UpdateMessageContext": {"chat.update", "chat:write"},
		// slackgate/notifier.go, Notifier.ephemeral: why a click was refused, to the clicker.
		"PostEphemeralContext": {"chat.postEphemeral", "chat:write"},
		// slackgate/notifier.go, Notifier.inGroup: the members of slack.approver_group.
		"GetUserGroupMembersContext": {"usergroups.users.list", "usergroups:read"},
	}
	calls := slackAPICalls(t)
	var needed []string
	for method, where := range calls {
		mm, ok := methods[method]
		if !ok {
			t.Errorf("slackgate calls %s (%s): add its Web API method and scope here and to %s", method, strings.Join(where, ", "), slackManifestPath)
			continue
		}
		t.Logf("%s (%s, scope %s) at %s", method, mm.api, mm.scope, strings.Join(where, ", "))
		needed = append(needed, mm.scope)
	}
	for method := range methods {
		if _, ok := calls[method]; !ok {
			t.Errorf("slackgate no longer calls %s: drop it (and its scope, if nothing else needs it)", method)
		}
	}
	slices.Sort(needed)
	needed = slices.Compact(needed)
	got := slices.Clone(m.OAuthConfig.Scopes.Bot)
	slices.Sort(got)
	if !slices.Equal(got, needed) {
		t.Errorf("bot scopes %v, want exactly what warden calls: %v", m.OAuthConfig.Scopes.Bot, needed)
	}
	if len(m.OAuthConfig.Scopes.User) > 0 {
		t.Errorf("user scopes %v: warden acts as its bot only", m.OAuthConfig.Scopes.User)
	}
	if m.Features.BotUser.DisplayName == "" || m.DisplayInformation.Name == "" {
		t.Error("no bot user or no name: the app must have a bot to get a bot token (xoxb-)")
	}
	in := m.Settings.Interactivity
	if !in.IsEnabled {
		t.Error("interactivity is off: Slack would not send the buttons' clicks")
	}
	if got := requestURLPath(t, in.RequestURL); got != slackInteractionsPath {
		t.Errorf("request_url path %q, want %q", got, slackInteractionsPath)
	}
	if m.Settings.SocketModeEnabled {
		t.Error("socket mode is on: warden takes clicks over HTTP at request_url")
	}
}

// slackInteractionsPath is where warden serve takes Slack's clicks
// (cmd/warden/serve.go routes "POST /slack/interactions" to slackgate.Handler);
// TestServe_asDeployed posts to the manifest's path on the real server.
const slackInteractionsPath = "/slack/interactions"

// requestURLPath checks that Slack can call the URL (https, a host) and returns its path.
func requestURLPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" {
		t.Fatalf("request_url %q: want an https URL with a host and nothing else but the path (%v)", raw, err)
	}
	return u.Path
}
