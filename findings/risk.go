package findings

import (
	"fmt"
	"strings"
)

// Risk ranks how dangerous applying a fix is, ordered like severities: the gates decide
// by it which fixes run unattended, which wait for approval and which never run.
type Risk int

// Risks, from harmless to most dangerous.
const (
	RiskNone Risk = iota
	RiskLow
	RiskMedium
	RiskHigh
	RiskCritical
)

var riskNames = [...]string{"none", "low", "medium", "high", "critical"}

// Risks lists every risk, most dangerous first.
var Risks = []Risk{RiskCritical, RiskHigh, RiskMedium, RiskLow, RiskNone}

func (r Risk) String() string {
	if r < RiskNone || r > RiskCritical {
		return fmt.Sprintf("risk(%d)", int(r))
	}
	return riskNames[r]
}

// ParseRisk reads a risk name (case-insensitive).
func ParseRisk(name string) (Risk, error) {
	for i, n := range riskNames {
		if strings.EqualFold(name, n) {
			return Risk(i), nil
		}
	}
	return 0, fmt.Errorf("unknown risk %q (want none, low, medium, high or critical)", name)
}

// MarshalText writes the risk's name.
func (r Risk) MarshalText() ([]byte, error) {
	if r < RiskNone || r > RiskCritical {
		return nil, fmt.Errorf("invalid risk %d", int(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads a risk's name.
func (r *Risk) UnmarshalText(b []byte) error {
	v, err := ParseRisk(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}
