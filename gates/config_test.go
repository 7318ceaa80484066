package gates_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/yamlerr"
)

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		cfg  gates.Config
		want map[findings.Risk]string
	}{
		{"defaults", gates.Config{}, map[findings.Risk]string{
			findings.RiskNone: "auto", findings.RiskLow: "auto", findings.RiskMedium: "approval 1",
			findings.RiskHigh: "approval 1", findings.RiskCritical: "approval 2"}},
		{"nothing automatic but none", gates.Config{Auto: []findings.Risk{}}, map[findings.Risk]string{
			findings.RiskNone: "auto", findings.RiskLow: "approval 1"}},
		{"auto is taken literally", gates.Config{Auto: []findings.Risk{findings.RiskMedium}}, map[findings.Risk]string{
			findings.RiskLow: "approval 1", findings.RiskMedium: "auto"}},
		{"refused even none", gates.Config{Refuse: []findings.Risk{findings.RiskNone, findings.RiskCritical}}, map[findings.Risk]string{
			findings.RiskNone: "refused", findings.RiskCritical: "refused", findings.RiskHigh: "approval 1"}},
		{"quorum per risk", gates.Config{Approvers: []string{"a", "b", "c"}, Quorum: map[findings.Risk]int{findings.RiskHigh: 3, findings.RiskCritical: 1}, UncheckedNames: true},
			map[findings.Risk]string{findings.RiskHigh: "approval 3", findings.RiskCritical: "approval 1", findings.RiskMedium: "approval 1"}},
		{"unknown risk fails closed", gates.Config{}, map[findings.Risk]string{findings.Risk(9): "refused", findings.Risk(-1): "refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for r, want := range tt.want {
				v := tt.cfg.Verdict(r)
				got := v.Kind.String()
				if v.NeedsApproval() {
					got += " " + strconv.Itoa(v.Quorum)
				}
				if got != want || v.Auto != (v.Kind == gates.Auto) || v.Refused != (v.Kind == gates.Refused) {
					t.Errorf("Verdict(%s) = %+v (%s), want %s", r, v, got, want)
				}
				if v.Refused && v.Reason == "" {
					t.Errorf("Verdict(%s) refuses without a reason", r)
				}
			}
		})
	}
}

func TestConfig_expiryDefault(t *testing.T) {
	if got := (gates.Config{}).ExpiryOrDefault(); got != 24*time.Hour {
		t.Errorf("default expiry %v, want 24h", got)
	}
	if got := (gates.Config{Expiry: time.Hour}).ExpiryOrDefault(); got != time.Hour {
		t.Errorf("expiry %v, want 1h", got)
	}
}

func decodeGates(in string) (gates.Config, error) {
	var doc struct {
		Gates gates.Config `yaml:"gates"`
	}
	err := yaml.Unmarshal([]byte(in), &doc)
	return doc.Gates, err
}

func TestUnmarshalYAML_readsTheIssueExample(t *testing.T) {
	c, err := decodeGates(`
gates:
  auto: [low]                 # risks applied without approval (default: low)
  approvers: [bob, carol]     # identities allowed to approve
  quorum: {critical: 2}       # approvals needed per risk
  expiry: 24h
  refuse: []
  unchecked_names: true       # names nobody checks: a trial's, until signers are listed
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Auto) != 1 || c.Auto[0] != findings.RiskLow || len(c.Approvers) != 2 || c.Quorum[findings.RiskCritical] != 2 ||
		c.Expiry != 24*time.Hour || c.Refuse == nil || len(c.Refuse) != 0 {
		t.Errorf("config = %+v", c)
	}
	if v := c.Verdict(findings.RiskCritical); v.Quorum != 2 {
		t.Errorf("critical verdict %+v", v)
	}
}

func TestUnmarshalYAML_emptySectionIsTheDefault(t *testing.T) {
	for _, in := range []string{"gates:\n", "other: 1\n", "gates: {}\n"} {
		c, err := decodeGates(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if v := c.Verdict(findings.RiskLow); !v.Auto {
			t.Errorf("%q: low is %s, want auto", in, v.Kind)
		}
	}
}

func TestUnmarshalYAML_errorsNameTheirLine(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"unknown key", "gates:\n  auto: [low]\n  aprovers: [bob]\n", 3, `gates.aprovers: unknown key (did you mean "approvers"?)`},
		{"unknown risk in auto", "gates:\n  auto:\n    - low\n    - meduim\n", 4, `gates.auto[1]: unknown risk "meduim" (want none, low, medium, high or critical) (did you mean "medium"?)`},
		{"unknown risk in refuse", "gates:\n  refuse: [severe]\n", 2, `gates.refuse[0]: unknown risk "severe"`},
		{"unknown risk in quorum", "gates:\n  approvers: [a, b]\n  quorum:\n    critcal: 2\n  unchecked_names: true\n", 4, `gates.quorum.critcal: unknown risk "critcal"`},
		{"zero quorum", "gates:\n  approvers: [a, b]\n  quorum:\n    high: 0\n  unchecked_names: true\n", 4, "gates.quorum.high: quorum 0: a request needs at least 1 approval"},
		{"negative quorum", "gates:\n  approvers: [a, b]\n  quorum: {high: -1}\n  unchecked_names: true\n", 3, "gates.quorum.high: quorum -1"},
		{"quorum not a number", "gates:\n  quorum: {high: two}\n", 2, `gates.quorum.high: "two": want a whole number`},
		{"quorum above the approvers", "gates:\n  approvers: [bob, carol]\n  quorum:\n    high: 3\n  unchecked_names: true\n", 4,
			"gates.quorum.high: high-risk actions need 3 distinct approvals (gates.quorum) but gates.approvers lists 2"},
		{"default critical quorum above one approver", "gates:\n  approvers: [bob]\n  unchecked_names: true\n", 2,
			"gates.approvers: critical-risk actions need 2 distinct approvals (the default quorum) but gates.approvers lists 1: list more approvers, lower quorum.critical, or refuse critical"},
		{"quorum of an automatic risk", "gates:\n  approvers: [a, b]\n  quorum: {low: 1}\n  unchecked_names: true\n", 3, "gates.quorum.low: low-risk actions never wait for approval (auto)"},
		{"auto and refuse overlap", "gates:\n  auto: [low, medium]\n  refuse:\n    - medium\n", 4,
			"gates.refuse[0]: medium is also in gates.auto (line 2): a risk is either applied automatically or refused"},
		{"risk listed twice", "gates:\n  auto: [low, LOW]\n", 2, "gates.auto[1]: low is listed twice (also auto[0])"},
		{"approver listed twice", "gates:\n  approvers:\n    - bob\n    - bob\n  unchecked_names: true\n", 4, `gates.approvers[1]: "bob" is listed twice`},
		{"empty approver", "gates:\n  approvers: [bob, \"\"]\n  unchecked_names: true\n", 2, "gates.approvers[1]: empty approver name"},
		{"bad expiry", "gates:\n  expiry: 1 day\n", 2, `gates.expiry: "1 day": want a duration such as 24h`},
		{"zero expiry", "gates:\n  expiry: 0s\n", 2, "gates.expiry: 0s: want a positive duration"},
		{"negative expiry", "gates:\n  expiry: -1h\n", 2, "gates.expiry: -1h: want a positive duration"},
		{"auto not a list", "gates:\n  auto: low\n", 2, "gates.auto: want a list, such as auto: [low]"},
		{"not a mapping", "gates: [low]\n", 1, "gates: want a mapping"},
		{"key twice", "gates:\n  auto: [low]\n  auto: [none]\n", 3, "gates.auto: given twice (also line 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := decodeGates(tt.in)
			if err == nil {
				// The quorum is judged once every channel's approvers are known: with
				// none but gates.approvers, as a config without slack: does.
				err = c.CheckQuorum(0, false)
			}
			ce, ok := errors.AsType[*gates.ConfigError](err)
			if !ok {
				t.Fatalf("error = %v (%T), want a *gates.ConfigError", err, err)
			}
			if ce.Line != tt.line || !strings.Contains(ce.Detail(), tt.msg) {
				t.Errorf("error = line %d: %s\nwant    line %d: %s", ce.Line, ce.Detail(), tt.line, tt.msg)
			}
		})
	}
}

// Approvers of another channel count towards the quorum; a channel's group, whose size
// only that channel knows, makes any quorum reachable.
func TestCheckQuorum_otherChannels(t *testing.T) {
	c := gates.Config{Approvers: []string{"bob"}, UncheckedNames: true}
	if err := c.CheckQuorum(0, false); err == nil || !strings.Contains(err.Error(), "critical-risk actions need 2") {
		t.Errorf("one approver for a critical quorum of 2: %v", err)
	}
	if err := c.CheckQuorum(1, false); err != nil {
		t.Errorf("bob and one Slack approver: %v", err)
	}
	if err := (gates.Config{}).CheckQuorum(0, true); err != nil {
		t.Errorf("an approver group: %v", err)
	}
}

func TestValidate_configBuiltInGo(t *testing.T) {
	tests := []struct {
		name string
		cfg  gates.Config
		msg  string
	}{
		{"unknown risk", gates.Config{Auto: []findings.Risk{7}}, "gates.auto[0]: unknown risk risk(7)"},
		{"negative expiry", gates.Config{Expiry: -time.Second}, "gates.expiry"},
		{"overlap", gates.Config{Auto: []findings.Risk{findings.RiskHigh}, Refuse: []findings.Risk{findings.RiskHigh}}, "gates.refuse[0]: high is also in gates.auto"},
		{"zero quorum", gates.Config{Quorum: map[findings.Risk]int{findings.RiskMedium: 0}}, "gates.quorum.medium: quorum 0"},
		{"unreachable quorum", gates.Config{Approvers: []string{"bob"}, Refuse: []findings.Risk{findings.RiskCritical}, Quorum: map[findings.Risk]int{findings.RiskHigh: 2}, UncheckedNames: true}, "gates.quorum.high: high-risk actions need 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Validate = %v, want %q", err, tt.msg)
			}
		})
	}
	ok := []gates.Config{
		{},
		{Approvers: []string{"bob"}, Refuse: []findings.Risk{findings.RiskCritical}, UncheckedNames: true},
		{Approvers: []string{"bob"}, Quorum: map[findings.Risk]int{findings.RiskCritical: 1}, UncheckedNames: true},
		{Approvers: []string{"bob", "carol"}, Expiry: time.Hour, Auto: []findings.Risk{}, UncheckedNames: true},
	}
	for _, c := range ok {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", c, err)
		}
	}
}

func FuzzUnmarshalYAML(f *testing.F) {
	f.Add("gates:\n  auto: [low]\n  approvers: [bob, carol]\n  quorum: {critical: 2}\n  expiry: 24h\n  refuse: []\n  unchecked_names: true\n")
	f.Add("gates:\n  quorum: {high: 0}\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := decodeGates(in)
		if err != nil {
			return
		}
		// Whatever decodes passes every check but the quorum's, which the config makes
		// once the other channels' approvers are known (CheckQuorum); and every risk gets
		// a verdict that can be acted on.
		if err := c.Validate(); err != nil {
			if q := c.CheckQuorum(0, false); q == nil || q.Error() != err.Error() {
				t.Fatalf("decoded config does not validate: %v", err)
			}
			if err := c.CheckQuorum(0, true); err != nil {
				t.Fatalf("with approvers of unknown number, the quorum is refused: %v", err)
			}
		}
		for _, r := range findings.Risks {
			if v := c.Verdict(r); v.NeedsApproval() && v.Quorum < 1 {
				t.Fatalf("Verdict(%s) needs %d approvals", r, v.Quorum)
			}
		}
	})
}

// A section with several problems, in one key or in several, reports every one, each
// with its field and line; one problem is the *ConfigError itself, as it always was.
func TestUnmarshalYAML_reportsEveryProblem(t *testing.T) {
	type problem struct {
		line   int
		detail string
	}
	tests := []struct {
		name string
		in   string
		want []problem
	}{
		{"two unknown risks in auto", "gates:\n  auto: [lo, hi]\n", []problem{
			{2, `gates.auto[0]: unknown risk "lo"`}, {2, `gates.auto[1]: unknown risk "hi"`}}},
		{"three bad items in refuse, a known one twice", "gates:\n  refuse:\n    - severe\n    - high\n    - [x]\n    - high\n", []problem{
			{3, `gates.refuse[0]: unknown risk "severe"`}, {5, "gates.refuse[2]: want a risk name"},
			{6, "gates.refuse[3]: high is listed twice (also refuse[1])"}}},
		{"two bad quorums", "gates:\n  approvers: [a, b]\n  quorum:\n    high: 0\n    critical: -1\n  unchecked_names: true\n", []problem{
			{4, "gates.quorum.high: quorum 0"}, {5, "gates.quorum.critical: quorum -1"}}},
		{"quorum: an unknown risk, not a number, given twice", "gates:\n  quorum:\n    critcal: 2\n    high: two\n    medium: 1\n    Medium: 1\n", []problem{
			{3, `gates.quorum.critcal: unknown risk "critcal"`}, {4, `gates.quorum.high: "two": want a whole number`},
			{6, "gates.quorum.Medium: given twice"}}},
		{"problems in several keys", "gates:\n  auto: [lo]\n  aprovers: [bob]\n  approvers: [bob, bob, \"\"]\n  expiry: soon\n  unchecked_names: true\n", []problem{
			{2, `gates.auto[0]: unknown risk "lo"`}, {3, `gates.aprovers: unknown key`}, {5, `gates.expiry: "soon": want a duration`},
			{4, `gates.approvers[1]: "bob" is listed twice`}, {4, "gates.approvers[2]: empty approver name"}}},
		// What cannot be read is not judged again: the unread auto[0] is neither
		// "listed twice" nor "also in gates.refuse", and an unread auto list does not
		// make low automatic, which would make quorum.low wrong.
		{"an unread value is not judged", "gates:\n  auto: low\n  refuse: [lo, lo]\n  quorum: {low: 2}\n", []problem{
			{2, "gates.auto: want a list"}, {3, `gates.refuse[0]: unknown risk "lo"`}, {3, `gates.refuse[1]: unknown risk "lo"`}}},
		{"one problem", "gates:\n  auto: [lo]\n", []problem{{2, `gates.auto[0]: unknown risk "lo"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeGates(tt.in)
			got := yamlerr.Errors(err)
			if len(got) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if got[i].Line != w.line || !strings.HasPrefix(got[i].Detail(), w.detail) {
					t.Errorf("problem %d = line %d: %s\nwant line %d: %s…", i, got[i].Line, got[i].Detail(), w.line, w.detail)
				}
			}
			if _, ok := err.(*gates.ConfigError); (len(tt.want) == 1) != ok {
				t.Errorf("error is %T, want a *gates.ConfigError for one problem, a join for more", err)
			}
		})
	}
}
