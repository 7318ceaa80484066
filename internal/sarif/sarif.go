// Package sarif is the part of SARIF 2.1.0 that warden writes, shared by the scan report
// (report.SARIF) and the compliance export (compliance/render.SARIF): the types, the
// mapping of a finding's severity, rule and location onto them, and a writer that streams
// a log of one run. Both outputs then name the same policy with the same ruleId, level and
// fingerprint, so that a code-scanning tool holding both sees one alert.
package sarif

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"iter"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/termesc"
)

// Schema is the JSON schema a SARIF 2.1.0 log names.
const Schema = "https://json.schemastore.org/sarif-2.1.0.json"

// Run is one run of warden: the log Write writes holds exactly one. Fields are written in
// their declared order; the ones marked omitempty only when set.
type Run struct {
	Tool Tool `json:"tool"`
	// AutomationDetails tells runs of different kinds apart (compliance: one category
	// per framework).
	AutomationDetails *AutomationDetails `json:"automationDetails,omitempty"`
	// Results are written one at a time, so that a run of a million results is never held
	// in memory as one document.
	Results     iter.Seq[Result] `json:"-"`
	Invocations []Invocation     `json:"invocations"`
	Properties  map[string]any   `json:"properties,omitempty"`
}

// Tool names the tool of a run and the rules its results refer to.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver is the tool itself.
type Driver struct {
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	InformationURI string `json:"informationUri"`
	Rules          []Rule `json:"rules"`
}

// Warden is the tool warden at version, with rules: the driver of every run it writes.
func Warden(version string, rules []Rule) Tool {
	if rules == nil {
		rules = []Rule{}
	}
	return Tool{Driver: Driver{Name: "warden", Version: version, InformationURI: "https://github.com/warden-sec/warden", Rules: rules}}
}

// AutomationDetails identifies a run among runs of the same kind; the part of ID before
// its last / is the category GitHub keeps results apart by.
type AutomationDetails struct {
	ID string `json:"id"`
}

// Text is a plain-text message.
type Text struct {
	Text string `json:"text"`
}

// Rule is a policy as a reportingDescriptor.
type Rule struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	ShortDescription Text   `json:"shortDescription"`
	// FullDescription is the policy's description, when the run knows it.
	FullDescription      *Text          `json:"fullDescription,omitempty"`
	DefaultConfiguration Configuration  `json:"defaultConfiguration"`
	Properties           RuleProperties `json:"properties"`
}

// Configuration is a rule's default reporting configuration.
type Configuration struct {
	Level string `json:"level"`
}

// RuleProperties are the properties GitHub code scanning reads from a rule.
type RuleProperties struct {
	// SecuritySeverity is GitHub's numeric severity, as SecuritySeverity gives it.
	SecuritySeverity string   `json:"security-severity"`
	Tags             []string `json:"tags"`
}

// PolicyRule is the rule of a policy: named by its id, described by its title, at the
// level and security severity of its severity, with tags.
func PolicyRule(id, title string, sev findings.Severity, tags []string) Rule {
	return Rule{ID: id, Name: id, ShortDescription: Text{title}, DefaultConfiguration: Configuration{Level(sev)},
		Properties: RuleProperties{SecuritySeverity: SecuritySeverity(sev), Tags: tags}}
}

// Result is one finding.
type Result struct {
	RuleID    string `json:"ruleId"`
	RuleIndex int    `json:"ruleIndex"`
	// Kind is "fail" or "open" (not judged); empty means SARIF's default, "fail".
	Kind                string            `json:"kind,omitempty"`
	Level               string            `json:"level"`
	Message             Text              `json:"message"`
	Locations           []Location        `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Suppressions        []Suppression     `json:"suppressions,omitempty"`
	Properties          map[string]any    `json:"properties"`
}

// Location is where a result is. Cloud resources have no file: a location names its
// resource as a logical location.
type Location struct {
	LogicalLocations []LogicalLocation `json:"logicalLocations"`
}

// LogicalLocation is a resource by its uid.
type LogicalLocation struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// ResourceLocation is the location of the resource with uid.
func ResourceLocation(uid string) []Location {
	return []Location{{LogicalLocations: []LogicalLocation{{FullyQualifiedName: uid, Kind: "resource"}}}}
}

// Fingerprints are a finding's partial fingerprints: its fingerprint under warden's key.
func Fingerprints(fingerprint string) map[string]string {
	return map[string]string{"warden/v1": fingerprint}
}

// Suppression is why a result does not count: a waiver. Its fields are in alphabetical
// order, as they were written when they were a map.
type Suppression struct {
	Justification string `json:"justification"`
	Kind          string `json:"kind"`
	Status        string `json:"status"`
}

// Invocation says whether a run judged everything it was asked to: a failed policy
// evaluation makes it unsuccessful, so that a dashboard does not read silence as clean.
type Invocation struct {
	ExecutionSuccessful        bool           `json:"executionSuccessful"`
	EndTimeUTC                 string         `json:"endTimeUtc,omitempty"`
	ToolExecutionNotifications []Notification `json:"toolExecutionNotifications"`
}

// Notification is something the run could not do: a failed evaluation, an unread scope.
type Notification struct {
	Level          string     `json:"level"`
	Message        Text       `json:"message"`
	AssociatedRule *RuleRef   `json:"associatedRule,omitempty"`
	Locations      []Location `json:"locations,omitempty"`
}

// RuleRef points at a rule by id, and by its index in the driver's rules when it has one.
type RuleRef struct {
	ID    string `json:"id"`
	Index *int   `json:"index,omitempty"`
}

// Level is the SARIF level of a severity.
func Level(s findings.Severity) string {
	switch s {
	case findings.Critical, findings.High:
		return "error"
	case findings.Medium:
		return "warning"
	}
	return "note"
}

// securitySeverity is GitHub's numeric scale for security results.
var securitySeverity = map[findings.Severity]string{
	findings.Critical: "9.5", findings.High: "8.0", findings.Medium: "5.5", findings.Low: "3.0", findings.Info: "0.0",
}

// SecuritySeverity is a severity on GitHub's numeric scale.
func SecuritySeverity(s findings.Severity) string { return securitySeverity[s] }

// Write writes a SARIF 2.1.0 log of run, indented as encoding/json.MarshalIndent would
// indent it with two spaces, byte for byte, and with a final newline. Results are encoded
// one at a time as run.Results yields them. Runes a terminal could act on are escaped
// (termesc.EscapeJSON), so that a log piped to one cannot drive it.
func Write(w io.Writer, run *Run) error {
	bw := bufio.NewWriter(w)
	// Every piece is encoded with the indentation of its depth in the document.
	const runIndent, resultIndent = "      ", "        "
	piece := func(v any, indent string) error {
		b, err := json.MarshalIndent(v, indent, "  ")
		if err != nil {
			return err
		}
		_, err = bw.Write(termesc.EscapeJSON(b))
		return err
	}
	fmt.Fprintf(bw, "{\n  \"$schema\": %q,\n  \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n      \"tool\": ", Schema)
	if err := piece(run.Tool, runIndent); err != nil {
		return fmt.Errorf("tool: %w", err)
	}
	if run.AutomationDetails != nil {
		bw.WriteString(",\n      \"automationDetails\": ")
		if err := piece(run.AutomationDetails, runIndent); err != nil {
			return fmt.Errorf("automation details: %w", err)
		}
	}
	bw.WriteString(",\n      \"results\": [")
	n := 0
	if run.Results != nil {
		for res := range run.Results {
			if n > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n" + resultIndent)
			if err := piece(res, resultIndent); err != nil {
				return fmt.Errorf("result %d (%s): %w", n, res.RuleID, err)
			}
			n++
		}
	}
	if n > 0 {
		bw.WriteString("\n" + runIndent)
	}
	bw.WriteString("],\n      \"invocations\": ")
	invocations := run.Invocations
	if invocations == nil {
		invocations = []Invocation{}
	}
	if err := piece(invocations, runIndent); err != nil {
		return fmt.Errorf("invocations: %w", err)
	}
	if len(run.Properties) > 0 {
		bw.WriteString(",\n      \"properties\": ")
		if err := piece(run.Properties, runIndent); err != nil {
			return fmt.Errorf("run properties: %w", err)
		}
	}
	bw.WriteString("\n    }\n  ]\n}\n")
	return bw.Flush()
}
