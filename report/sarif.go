package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/warden-sec/warden/findings"
)

// SARIF writes the report as SARIF 2.1.0, for code-scanning dashboards. Cloud resources
// have no file: each result names its resource as a logical location.
type SARIF struct{}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Suppressions        []map[string]any  `json:"suppressions,omitempty"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	LogicalLocations []map[string]string `json:"logicalLocations"`
}

// sarifInvocation says whether the run judged everything it was asked to: a failed policy
// evaluation makes it unsuccessful, so that a dashboard does not read silence as clean.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level          string          `json:"level"`
	Message        sarifText       `json:"message"`
	AssociatedRule *sarifRuleRef   `json:"associatedRule,omitempty"`
	Locations      []sarifLocation `json:"locations,omitempty"`
}

type sarifRuleRef struct {
	ID    string `json:"id"`
	Index *int   `json:"index,omitempty"`
}

// securitySeverity is GitHub's numeric severity scale for security results.
var securitySeverity = map[findings.Severity]string{
	findings.Critical: "9.5", findings.High: "8.0", findings.Medium: "5.5", findings.Low: "3.0", findings.Info: "0.0",
}

func sarifLevel(s findings.Severity) string {
	switch s {
	case findings.Critical, findings.High:
		return "error"
	case findings.Medium:
		return "warning"
	}
	return "note"
}

// Write implements Writer. Results are written one at a time, so that a scan with a
// million findings never holds its whole SARIF document in memory; the output is what
// encoding/json would indent, byte for byte.
func (SARIF) Write(w io.Writer, r *Report) error {
	driver := sarifDriver{Name: "warden", Version: r.Scan.Warden, InformationURI: "https://github.com/warden-sec/warden", Rules: []sarifRule{}}
	index := map[string]int{}
	for _, rule := range r.Rules {
		index[rule.ID] = len(driver.Rules)
		tags := []string{"security"}
		for _, fw := range sortedKeys(rule.Frameworks) {
			for _, c := range rule.Frameworks[fw] {
				tags = append(tags, fw+":"+c)
			}
		}
		driver.Rules = append(driver.Rules, sarifRule{
			ID: rule.ID, Name: rule.ID, ShortDescription: sarifText{rule.Title}, FullDescription: sarifText{rule.Description},
			DefaultConfiguration: map[string]any{"level": sarifLevel(rule.Severity)},
			Properties:           map[string]any{"security-severity": securitySeverity[rule.Severity], "tags": tags},
		})
	}
	// Rules come before results: a first pass adds the rules of findings whose policy
	// the report does not describe.
	for _, f := range r.Findings {
		if _, ok := index[f.Policy]; ok || f.Status == findings.StatusUnknown {
			continue
		}
		index[f.Policy] = len(driver.Rules)
		driver.Rules = append(driver.Rules, sarifRule{ID: f.Policy, Name: f.Policy, ShortDescription: sarifText{f.Title},
			FullDescription: sarifText{f.Title}, DefaultConfiguration: map[string]any{"level": sarifLevel(f.Severity)},
			Properties: map[string]any{"security-severity": securitySeverity[f.Severity], "tags": []string{"security"}}})
	}
	bw := bufio.NewWriter(w)
	tool, err := json.MarshalIndent(sarifTool{Driver: driver}, "      ", "  ")
	if err != nil {
		return fmt.Errorf("write SARIF: %w", err)
	}
	fmt.Fprintf(bw, "{\n  \"$schema\": %q,\n  \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n      \"tool\": ", "https://json.schemastore.org/sarif-2.1.0.json")
	bw.Write(EscapeJSON(tool))
	bw.WriteString(",\n      \"results\": [")
	n := 0
	for _, f := range r.Findings {
		if f.Status == findings.StatusUnknown {
			continue
		}
		res := sarifResult{
			RuleID: f.Policy, RuleIndex: index[f.Policy], Level: sarifLevel(f.Severity), Message: sarifText{f.Message},
			Locations:           []sarifLocation{{LogicalLocations: []map[string]string{{"fullyQualifiedName": f.Resource, "kind": "resource"}}}},
			PartialFingerprints: map[string]string{"warden/v1": f.Fingerprint},
			Properties:          map[string]any{"resource_type": f.ResourceType, "account": f.Account, "region": f.Region},
		}
		if f.Waiver != nil {
			res.Suppressions = []map[string]any{{"kind": "external", "status": "accepted",
				"justification": f.Waiver.Reason + " (owner " + f.Waiver.Owner + ")"}}
		}
		b, err := json.MarshalIndent(res, "        ", "  ")
		if err != nil {
			return fmt.Errorf("write SARIF result for %s: %w", f.Resource, err)
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n        ")
		bw.Write(EscapeJSON(b))
		n++
	}
	if n > 0 {
		bw.WriteString("\n      ")
	}
	inv, err := json.MarshalIndent([]sarifInvocation{invocation(r, index)}, "      ", "  ")
	if err != nil {
		return fmt.Errorf("write SARIF invocation: %w", err)
	}
	bw.WriteString("],\n      \"invocations\": ")
	bw.Write(EscapeJSON(inv))
	bw.WriteString("\n    }\n  ]\n}\n")
	return bw.Flush()
}

// invocation reports the policy evaluations that failed (errors: the run is not
// successful) and the scopes that could not be read (warnings: their resources are
// unknown).
func invocation(r *Report, index map[string]int) sarifInvocation {
	inv := sarifInvocation{ExecutionSuccessful: len(r.EvalErrors) == 0, ToolExecutionNotifications: []sarifNotification{}}
	for _, e := range r.EvalErrors {
		n := sarifNotification{Level: "error",
			Message:   sarifText{fmt.Sprintf("policy evaluation failed, so its result is missing: %s", e.Error)},
			Locations: []sarifLocation{{LogicalLocations: []map[string]string{{"fullyQualifiedName": e.Resource, "kind": "resource"}}}}}
		if e.Policy != "" {
			n.AssociatedRule = &sarifRuleRef{ID: e.Policy}
			if i, ok := index[e.Policy]; ok {
				n.AssociatedRule.Index = &i
			}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	for _, sc := range r.IncompleteScopes {
		msg := fmt.Sprintf("scope %s %s: its resources are unknown, not clean", sc.ID, sc.Status)
		if sc.Error != "" {
			msg += " (" + sc.Error + ")"
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "warning", Message: sarifText{msg}})
	}
	return inv
}
