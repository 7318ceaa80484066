// Package compliance judges the controls of compliance frameworks — CIS AWS and GCP,
// NIST SP 800-53, PCI DSS, SOC 2, ISO/IEC 27001 — from the findings of a posture.
//
// A framework is data: one YAML file under frameworks/, embedded in the binary, that lists
// its families and controls and, for each control, the warden policies that check it
// (Load, Parse). Evaluate is pure: given the findings of a posture, how each policy ran,
// the settings in effect and the waivers, it returns the status of every control with its
// evidence, and a score per family and overall. Where the posture comes from — a scan
// just run, or the history as it was at some time — is the caller's business.
package compliance

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/warden-sec/warden/internal/suggest"
)

// Assessment says who decides whether a control is met.
type Assessment string

const (
	// Automated controls are decided by checks: warden's policies when the control lists
	// some, and otherwise the framework itself says the control is automatable (CIS's
	// "Automated"), so that warden's lack of a policy is a gap in coverage.
	Automated Assessment = "automated"
	// Manual controls are decided by a person. Policies listed on a manual control are
	// evidence: a finding of theirs fails the control, but their silence does not pass it.
	Manual Assessment = "manual"
)

// Framework is one compliance framework: its families, its controls, and which warden
// policies check which control. Get one from Load, Lookup or Parse: they compile its
// key_match expressions, which a Framework built field by field would lack.
type Framework struct {
	// ID names the framework in policies' custom.frameworks metadata and on the command
	// line ("cis-aws-3.0").
	ID        string `json:"id"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	Publisher string `json:"publisher"`
	// Source says where the control list comes from, and under which licence.
	Source   string    `json:"source"`
	Families []Family  `json:"families"`
	Controls []Control `json:"controls"`
	// File is the name the framework was parsed from, for errors.
	File string `json:"-"`
}

// Family groups controls: a CIS section, a NIST family, a PCI DSS requirement, a SOC 2
// category, an ISO 27001 theme. A family with a Parent is a part of that family (CIS
// "2.1" of "2", PCI "1.2" of "1"), and its controls count towards the parent's score too.
type Family struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Parent string `json:"parent,omitempty"`
	line   int
}

// Control is one control, requirement or criterion of a framework.
type Control struct {
	ID         string     `json:"id"`
	Title      string     `json:"title"`
	Family     string     `json:"family"`
	Assessment Assessment `json:"assessment"`
	// Level is the CIS profile level (1 or 2); 0 elsewhere.
	Level int `json:"level,omitempty"`
	// Baselines are the NIST SP 800-53B baselines selecting the control (low, moderate,
	// high, privacy); empty elsewhere.
	Baselines []string `json:"baselines,omitempty"`
	// Policies are the ids of the warden policies that check what the control asks for.
	Policies []string `json:"policies,omitempty"`
	// KeyMatch narrows a policy's findings to those whose key matches a regular
	// expression, for a policy that checks more than the control is about: CIS AWS 5.2
	// is about rules open to 0.0.0.0/0, 5.3 about ::/0, and the same SSH policy reports
	// both.
	KeyMatch map[string]string `json:"key_match,omitempty"`
	// RequiresConfig are the settings a pass relies on: with a looser threshold than the
	// framework's, no finding does not mean the control is met.
	RequiresConfig []Requirement `json:"requires_config,omitempty"`
	// Note explains a mapping an auditor may question.
	Note string `json:"note,omitempty"`

	keyRe map[string]*regexp.Regexp
	line  int
}

// Requirement bounds the value of one setting (data.warden.config) that a control's pass
// relies on. A bound that is nil does not apply.
type Requirement struct {
	Setting string   `json:"setting"`
	AtLeast *float64 `json:"at_least,omitempty"`
	AtMost  *float64 `json:"at_most,omitempty"`
	line    int
}

// check says whether value satisfies the requirement, and if not, why.
func (r Requirement) check(value any, known bool) (bool, string) {
	if !known {
		return false, fmt.Sprintf("setting %s is not known, and a pass relies on it being %s", r.Setting, r.bounds())
	}
	v, ok := number(value)
	if !ok {
		return false, fmt.Sprintf("setting %s is %v, not a number; a pass relies on it being %s", r.Setting, value, r.bounds())
	}
	if (r.AtLeast != nil && v < *r.AtLeast) || (r.AtMost != nil && v > *r.AtMost) {
		return false, fmt.Sprintf("setting %s is %s; a pass relies on it being %s", r.Setting, formatNumber(v), r.bounds())
	}
	return true, ""
}

func (r Requirement) bounds() string {
	var parts []string
	if r.AtLeast != nil {
		parts = append(parts, "at least "+formatNumber(*r.AtLeast))
	}
	if r.AtMost != nil {
		parts = append(parts, "at most "+formatNumber(*r.AtMost))
	}
	return strings.Join(parts, " and ")
}

// matches reports whether a finding of policy with key counts against the control.
func (c *Control) matches(policy, key string) bool {
	re, ok := c.keyRe[policy]
	return !ok || re.MatchString(key)
}

// Control returns the control with the given id, or nil.
func (f *Framework) Control(id string) *Control {
	for i := range f.Controls {
		if f.Controls[i].ID == id {
			return &f.Controls[i]
		}
	}
	return nil
}

//go:embed frameworks/*.yaml
var embedded embed.FS

// Load parses and validates every embedded framework, in the order of their ids. Policy
// ids are checked only for their form here: check them against the loaded policies with
// Framework.Validate.
func Load() ([]*Framework, error) {
	names, err := fs.Glob(embedded, "frameworks/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list embedded frameworks: %w", err)
	}
	slices.Sort(names)
	out := make([]*Framework, 0, len(names))
	for _, name := range names {
		data, err := embedded.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read embedded framework %s: %w", name, err)
		}
		f, err := Parse(name, data)
		if err != nil {
			return nil, err
		}
		// The file's name is the framework's id, so that a reader finds one from the other.
		if want := strings.TrimSuffix(path.Base(name), ".yaml"); f.ID != want {
			return nil, fmt.Errorf("parse framework %s: id %q differs from the file's name (want %q)", name, f.ID, want)
		}
		out = append(out, f)
	}
	return out, nil
}

// Lookup returns the embedded framework with the given id; an unknown id is an error that
// lists the known ones and suggests the closest.
func Lookup(id string) (*Framework, error) {
	fws, err := Load()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(fws))
	for i, f := range fws {
		if f.ID == id {
			return f, nil
		}
		ids[i] = f.ID
	}
	msg := fmt.Sprintf("unknown framework %q", id)
	if s := suggest.Closest(id, ids); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return nil, fmt.Errorf("%s; known: %s", msg, strings.Join(ids, ", "))
}
