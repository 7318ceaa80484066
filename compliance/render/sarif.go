package render

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/report"
)

// SARIF writes the document as one SARIF 2.1.0 run of the tool warden: a result for every
// finding that fails a control or could not be judged, each once, with the ids of the
// controls it counts against in its properties; the framework, the evidence's source, the
// score and the audit checkpoint in the run's properties; the scopes that could not be
// read as notifications of the invocation.
//
// The rules are the policies, not the controls. A finding is one policy's verdict on one
// resource and often counts against several controls (CIS AWS 5.2 and 5.3, NIST AC-6 and
// AC-6(1)): with a rule per control, a dashboard would show it as several alerts, fixed
// or dismissed one by one. Policy rules also give the same ruleId and fingerprint as the
// scan's SARIF (report.SARIF), so a code-scanning tool that holds both sees one alert.
// Each rule's tags name the framework's controls it checks ("cis-aws-3.0:5.2").
//
// A failing finding is a result of kind "fail" with the level of its severity; an
// unknown one (carried over from an earlier scan because its scope could not be read)
// is of kind "open": SARIF's word for "the tool could not decide", whose level must be
// "none".
type SARIF struct{}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool         `json:"tool"`
	AutomationDetails sarifAutomation   `json:"automationDetails"`
	Results           []sarifResult     `json:"results"`
	Invocations       []sarifInvocation `json:"invocations"`
	Properties        map[string]any    `json:"properties"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifAutomation struct {
	// ID's part before the last / is the category GitHub keeps results apart by: one per
	// framework, so that reports of two frameworks do not close each other's alerts.
	ID string `json:"id"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Kind                string            `json:"kind"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	EndTimeUTC                 string              `json:"endTimeUtc"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level          string        `json:"level"`
	Message        sarifText     `json:"message"`
	AssociatedRule *sarifRuleRef `json:"associatedRule,omitempty"`
}

type sarifRuleRef struct {
	ID string `json:"id"`
}

// securitySeverity is GitHub's numeric scale, as the scan's SARIF uses it.
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

// Write implements Writer.
func (SARIF) Write(w io.Writer, d *compliance.Document) error {
	if err := check(d); err != nil {
		return fmt.Errorf("write compliance SARIF: %w", err)
	}
	rep := d.Report
	fw := rep.Framework.ID
	// The controls each policy checks, for the rules' tags.
	checks := map[string][]string{}
	for _, c := range rep.Controls {
		for _, p := range c.Policies {
			checks[p] = append(checks[p], fw+":"+c.ID)
		}
	}
	against := controlsByFinding(rep)
	driver := sarifDriver{Name: "warden", Version: d.Tool, InformationURI: "https://github.com/warden-sec/warden", Rules: []sarifRule{}}
	index := map[string]int{}
	results := []sarifResult{}
	for _, f := range d.OpenFindings() {
		i, ok := index[f.Policy]
		if !ok {
			i = len(driver.Rules)
			index[f.Policy] = i
			driver.Rules = append(driver.Rules, sarifRule{
				ID: f.Policy, Name: f.Policy, ShortDescription: sarifText{f.Title},
				DefaultConfiguration: map[string]any{"level": sarifLevel(f.Severity)},
				Properties: map[string]any{"security-severity": securitySeverity[f.Severity],
					"tags": append([]string{"security", "compliance"}, checks[f.Policy]...)},
			})
		}
		res := sarifResult{RuleID: f.Policy, RuleIndex: i, Kind: "fail", Level: sarifLevel(f.Severity), Message: sarifText{f.Message},
			Locations:           []sarifLocation{{LogicalLocations: []sarifLogical{{FullyQualifiedName: f.Resource, Kind: "resource"}}}},
			PartialFingerprints: map[string]string{"warden/v1": f.Fingerprint},
			Properties: map[string]any{"framework": fw, "controls": against[f.Fingerprint], "status": f.Status,
				"severity": f.Severity.String(), "resource_type": f.ResourceType, "account": f.Account, "region": f.Region},
		}
		if f.Status == findings.StatusUnknown {
			res.Kind, res.Level = "open", "none"
			res.Message.Text = "not judged (its scope could not be read; carried over from an earlier scan): " + f.Message
		}
		if !f.FirstSeen.IsZero() {
			res.Properties["first_seen"] = f.FirstSeen.UTC().Format(time.RFC3339)
		}
		if f.Waiver != nil { // a failing finding keeps the waiver that expired
			res.Properties["expired_waiver"] = map[string]any{"owner": f.Waiver.Owner, "reason": f.Waiver.Reason,
				"expires": f.Waiver.Expires.UTC().Format(time.RFC3339)}
		}
		results = append(results, res)
	}
	run := sarifRun{
		Tool:              sarifTool{Driver: driver},
		AutomationDetails: sarifAutomation{ID: "warden-compliance/" + fw + "/" + rep.At.UTC().Format(time.RFC3339)},
		Results:           results,
		Invocations:       []sarifInvocation{invocation(d)},
		Properties:        runProperties(d),
	}
	b, err := json.MarshalIndent(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}, "", "  ")
	if err != nil {
		return fmt.Errorf("write compliance SARIF of %s: %w", fw, err)
	}
	bw := bufio.NewWriter(w)
	bw.Write(report.EscapeJSON(b))
	bw.WriteByte('\n')
	return bw.Flush()
}

// invocation says what the run could not judge: a policy whose evaluations failed makes
// it unsuccessful, a scope that could not be read is a warning. Silence about them would
// read as clean.
func invocation(d *compliance.Document) sarifInvocation {
	inv := sarifInvocation{ExecutionSuccessful: true, EndTimeUTC: d.Generated.UTC().Format(time.RFC3339),
		ToolExecutionNotifications: []sarifNotification{}}
	errs := map[string]int{}
	var order []string
	for _, c := range d.Report.Controls {
		for _, r := range c.Runs {
			if _, seen := errs[r.Policy]; !seen && r.Errors > 0 {
				errs[r.Policy] = r.Errors
				order = append(order, r.Policy)
			}
		}
	}
	slices.Sort(order)
	for _, p := range order {
		inv.ExecutionSuccessful = false
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "error",
			Message:        sarifText{fmt.Sprintf("%d evaluations of %s failed: those resources were not judged", errs[p], p)},
			AssociatedRule: &sarifRuleRef{ID: p}})
	}
	for _, s := range failedScopes(d) {
		msg := fmt.Sprintf("scope %s %s: warden could not see its resources, so they are unknown, not clean", s.ID, s.Status)
		if s.Error != "" {
			msg += " (" + s.Error + ")"
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "warning", Message: sarifText{msg}})
	}
	return inv
}

// runProperties carries what an auditor needs to place the run: the framework and its
// score, the time it describes, the evidence's source and the audit checkpoint to verify
// it against (`warden audit verify --checkpoint`).
func runProperties(d *compliance.Document) map[string]any {
	p := map[string]any{
		"framework": d.Report.Framework,
		"at":        d.Report.At.UTC().Format(time.RFC3339),
		"generated": d.Generated.UTC().Format(time.RFC3339),
		"score":     d.Report.Score,
		"source":    d.Source,
	}
	if d.Checkpoint != nil {
		p["checkpoint"] = d.Checkpoint
	}
	return p
}
