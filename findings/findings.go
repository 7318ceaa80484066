// Package findings defines what an evaluation produces: findings with stable fingerprints,
// their severities, and the summary of a scan. The engine makes them, the store keeps
// them, reports print them.
package findings

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Severity ranks how bad a finding is.
type Severity int

// Severities, from least to most severe.
const (
	Info Severity = iota
	Low
	Medium
	High
	Critical
)

var severityNames = [...]string{"info", "low", "medium", "high", "critical"}

// Severities lists every severity, most severe first.
var Severities = []Severity{Critical, High, Medium, Low, Info}

func (s Severity) String() string {
	if s < Info || s > Critical {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity reads a severity name (case-insensitive).
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if strings.EqualFold(name, n) {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want critical, high, medium, low or info)", name)
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Remediation is the fix a policy proposes and how risky applying it is.
type Remediation struct {
	Action string `json:"action"`
	Risk   Risk   `json:"risk"`
	// Params are the values, taken from the violation, of the params the policy declares
	// for its action (custom.remediation.params): the planner hands them to the fix.
	Params map[string]any `json:"params,omitempty"`
}

// Status of a finding: its life, from open to resolved.
const (
	StatusOpen   = "open"
	StatusWaived = "waived"
	// StatusUnknown marks a finding carried over from an earlier scan because its scope
	// could not be read this time: neither confirmed nor resolved.
	StatusUnknown = "unknown"
	// StatusResolved marks a finding no longer seen on a resource read again, or whose
	// resource a full read of its scope no longer lists. The daemon keeps resolved
	// findings, so that one seen again reopens; a scan's result lists none.
	StatusResolved = "resolved"
)

// Finding is one violation of one policy by one resource.
type Finding struct {
	Policy       string              `json:"policy"`
	Title        string              `json:"title"`
	Severity     Severity            `json:"severity"`
	Resource     string              `json:"resource"`
	ResourceType string              `json:"resource_type"`
	Account      string              `json:"account"`
	Region       string              `json:"region"`
	Scope        string              `json:"scope,omitempty"`
	Message      string              `json:"message"`
	Fingerprint  string              `json:"fingerprint"`
	Key          string              `json:"key,omitempty"`
	Target       string              `json:"target,omitempty"`
	Remediation  Remediation         `json:"remediation"`
	Frameworks   map[string][]string `json:"frameworks,omitempty"`
	Details      map[string]any      `json:"details,omitempty"`
	Status       string              `json:"status"`
	Waiver       *WaiverRef          `json:"waiver,omitempty"`
	// FirstSeen is when the scan history first saw this fingerprint; zero outside it.
	FirstSeen time.Time `json:"first_seen,omitzero"`
}

// WaiverRef records the waiver that suppressed a finding.
type WaiverRef struct {
	Owner   string    `json:"owner"`
	Reason  string    `json:"reason"`
	Expires time.Time `json:"expires"`
}

// Fingerprint identifies a finding across scans: the same policy, resource and cause
// (the violation's key) give the same fingerprint, whatever the message says. The account
// is part of it because a few uids are global (AWS-managed policies are one ARN in every
// account).
func Fingerprint(policy, account, resource, key string) string {
	h := sha256.New()
	h.Write([]byte(policy))
	h.Write([]byte{0})
	h.Write([]byte(account))
	h.Write([]byte{0})
	h.Write([]byte(resource))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Less orders findings deterministically: most severe first, then by policy, resource
// and fingerprint.
func Less(a, b *Finding) bool {
	if a.Severity != b.Severity {
		return a.Severity > b.Severity
	}
	if a.Policy != b.Policy {
		return a.Policy < b.Policy
	}
	if a.Resource != b.Resource {
		return a.Resource < b.Resource
	}
	return a.Fingerprint < b.Fingerprint
}

// Sort puts findings in report order (see Less).
func Sort(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		switch {
		case Less(&a, &b):
			return -1
		case Less(&b, &a):
			return 1
		}
		return 0
	})
}

// EvalError is a policy that failed at run time on one resource. It is counted and
// reported; the other policies' results for the resource still count.
type EvalError struct {
	Policy   string `json:"policy,omitempty"`
	Resource string `json:"resource"`
	Error    string `json:"error"`
}

// ValidText returns s as every database and JSON consumer takes text: each byte that is
// not part of valid UTF-8, and each NUL (which PostgreSQL refuses in text), becomes
// U+FFFD, one per byte as encoding/json does, so that text cleaned here and text
// decoded from JSON agree. Valid text is returned unchanged.
func ValidText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == 0 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
