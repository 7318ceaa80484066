package config_test

import (
	"testing"
	"time"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/findings"
)

func TestParse_gates(t *testing.T) {
	c, err := config.Parse([]byte(`db: warden.db
gates:
  auto: [low]
  approvers: [bob, carol]
  quorum: {critical: 2}
  expiry: 12h
  refuse: [none]
  unchecked_names: true
`), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := c.Gates
	if len(g.Approvers) != 2 || g.Expiry != 12*time.Hour || g.Quorum[findings.RiskCritical] != 2 || !g.Verdict(findings.RiskNone).Refused {
		t.Errorf("gates = %+v", g)
	}
}

func TestParse_gatesErrorsNameFileAndLine(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"unknown risk", "db: x\ngates:\n  auto: [lo]\n",
			`read config c.yaml: line 3: gates.auto[0]: unknown risk "lo" (want none, low, medium, high or critical) (did you mean "low"?)`},
		{"unreachable quorum", "gates:\n  approvers: [bob, carol]\n  quorum:\n    critical: 3\n  unchecked_names: true\n",
			"read config c.yaml: line 4: gates.quorum.critical: critical-risk actions need 3 distinct approvals (gates.quorum) but gates.approvers lists 2: list more approvers, lower quorum.critical, or refuse critical"},
		{"overlap", "gates:\n  auto: [low]\n  refuse: [low]\n",
			"read config c.yaml: line 3: gates.refuse[0]: low is also in gates.auto (line 2): a risk is either applied automatically or refused"},
		{"zero quorum", "gates:\n  approvers: [bob, carol]\n  quorum: {high: 0}\n  unchecked_names: true\n",
			"read config c.yaml: line 3: gates.quorum.high: quorum 0: a request needs at least 1 approval (to apply without approval, add high to gates.auto)"},
		{"unknown key", "gates:\n  approver: [bob]\n", `read config c.yaml: line 2: gates.approver: unknown key (did you mean "approvers"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.in), "c.yaml")
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v\nwant    %s", err, tt.want)
			}
		})
	}
}
