package render

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/termesc"
)

// OCSFVersion is the version of the Open Cybersecurity Schema Framework the OCSF writer
// follows; it is each event's metadata.version.
const OCSFVersion = "1.8.0"

// OCSF writes the document as a JSON array of OCSF 1.8.0 Compliance Finding events
// (class_uid 2003), one per control of the framework, in its order: security lakes get
// the gaps (not covered, manual) as well as the verdicts, and a query over a control
// finds its latest event by finding_info.uid, which stays the same from one report to the
// next ("warden:cis-aws-3.0:5.2"); metadata.uid is the event's own.
//
// compliance.status_id is OCSF's Pass (1), Fail (3) or Unknown (0) for warden's pass,
// fail and unknown; manual and not covered are Other (99), with compliance.status
// "Manual" or "Not covered" as the class says to do for a value outside the enum.
// compliance.status_code is warden's own status word, status_details its reason.
//
// The events use no profile: a control's evidence spans accounts, projects and providers
// (NIST, PCI DSS, SOC 2 and ISO 27001 cover AWS and GCP at once), while the cloud
// profile's cloud object names one provider and account per event. Each resource carries
// its account, region and provider as tags instead.
type OCSF struct{}

type ocsfEvent struct {
	ActivityID   int             `json:"activity_id"`
	ActivityName string          `json:"activity_name"`
	CategoryUID  int             `json:"category_uid"`
	CategoryName string          `json:"category_name"`
	ClassUID     int             `json:"class_uid"`
	ClassName    string          `json:"class_name"`
	TypeUID      int             `json:"type_uid"`
	TypeName     string          `json:"type_name"`
	SeverityID   int             `json:"severity_id"`
	Severity     string          `json:"severity"`
	Time         int64           `json:"time"`
	Message      string          `json:"message"`
	Metadata     ocsfMetadata    `json:"metadata"`
	FindingInfo  ocsfFindingInfo `json:"finding_info"`
	Compliance   ocsfCompliance  `json:"compliance"`
	Resources    []ocsfResource  `json:"resources,omitempty"`
	Remediation  *ocsfText       `json:"remediation,omitempty"`
	Unmapped     map[string]any  `json:"unmapped"`
}

type ocsfMetadata struct {
	Version       string      `json:"version"`
	Product       ocsfProduct `json:"product"`
	UID           string      `json:"uid"`
	LogName       string      `json:"log_name"`
	ProcessedTime int64       `json:"processed_time"`
	Labels        []string    `json:"labels"`
}

type ocsfProduct struct {
	Name       string `json:"name"`
	VendorName string `json:"vendor_name"`
	Version    string `json:"version,omitempty"`
}

type ocsfFindingInfo struct {
	UID           string   `json:"uid"`
	Title         string   `json:"title"`
	Desc          string   `json:"desc,omitempty"`
	Types         []string `json:"types"`
	FirstSeenTime int64    `json:"first_seen_time,omitempty"`
	LastSeenTime  int64    `json:"last_seen_time"`
}

type ocsfCompliance struct {
	Standards         []string       `json:"standards"`
	Requirements      []string       `json:"requirements"`
	Control           string         `json:"control"`
	Category          string         `json:"category,omitempty"`
	Desc              string         `json:"desc,omitempty"`
	Status            string         `json:"status"`
	StatusID          int            `json:"status_id"`
	StatusCode        string         `json:"status_code"`
	StatusDetails     []string       `json:"status_details"`
	Checks            []ocsfCheck    `json:"checks,omitempty"`
	ControlParameters []ocsfKeyValue `json:"control_parameters,omitempty"`
}

type ocsfCheck struct {
	UID        string `json:"uid"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	StatusID   int    `json:"status_id"`
	Severity   string `json:"severity,omitempty"`
	SeverityID int    `json:"severity_id,omitempty"`
}

type ocsfResource struct {
	UID    string         `json:"uid"`
	Type   string         `json:"type,omitempty"`
	Labels []string       `json:"labels"`
	Tags   []ocsfKeyValue `json:"tags,omitempty"`
}

type ocsfKeyValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type ocsfText struct {
	Desc string `json:"desc"`
}

// OCSF's compliance status ids (object compliance, status_id).
const (
	ocsfUnknown = 0
	ocsfPass    = 1
	ocsfFail    = 3
	ocsfOther   = 99
)

func ocsfStatus(s compliance.Status) (int, string) {
	switch s {
	case compliance.StatusPass:
		return ocsfPass, "Pass"
	case compliance.StatusFail:
		return ocsfFail, "Fail"
	case compliance.StatusUnknown:
		return ocsfUnknown, "Unknown"
	}
	return ocsfOther, statusLabel(s)
}

// ocsfSeverity maps warden's severities onto OCSF's severity_id: Informational 1 to
// Critical 5.
func ocsfSeverity(s findings.Severity) (int, string) {
	switch s {
	case findings.Critical:
		return 5, "Critical"
	case findings.High:
		return 4, "High"
	case findings.Medium:
		return 3, "Medium"
	case findings.Low:
		return 2, "Low"
	}
	return 1, "Informational"
}

// Write implements Writer.
func (OCSF) Write(w io.Writer, d *compliance.Document) error {
	if err := check(d); err != nil {
		return fmt.Errorf("write compliance OCSF: %w", err)
	}
	rep := d.Report
	categories := map[string]string{}
	for _, f := range rep.Families {
		categories[f.ID] = strings.TrimSpace(f.ID + " " + f.Title)
	}
	labels := []string{"framework:" + rep.Framework.ID, "scan:" + strconv.FormatInt(d.Source.ScanID, 10)}
	if cp := d.Checkpoint; cp != nil {
		// Enough to find the checkpoint the evidence verifies against; the whole signed
		// note is in the JSON and HTML reports.
		labels = append(labels, fmt.Sprintf("audit-checkpoint:%d/%s", cp.Size, cp.Root))
	}
	standard := strings.TrimSpace(rep.Framework.Name + " " + rep.Framework.Version)
	events := make([]ocsfEvent, 0, len(rep.Controls))
	for i := range rep.Controls {
		c := &rep.Controls[i]
		events = append(events, ocsfControl(d, c, standard, categories[c.Family], labels))
	}
	b, err := json.MarshalIndent(events, "", "  ")
	if err != nil {
		return fmt.Errorf("write compliance OCSF of %s: %w", rep.Framework.ID, err)
	}
	bw := bufio.NewWriter(w)
	bw.Write(termesc.EscapeJSON(b))
	bw.WriteByte('\n')
	return bw.Flush()
}

// ocsfControl is the event of one control.
func ocsfControl(d *compliance.Document, c *compliance.ControlResult, standard, category string, labels []string) ocsfEvent {
	rep := d.Report
	at := rep.At.UnixMilli()
	statusID, status := ocsfStatus(c.Status)
	// A control is as severe as the worst finding that decides it; one that nothing
	// fails is informational.
	sevID, sev := 1, "Informational"
	decisive := c.Failing
	if c.Status == compliance.StatusUnknown {
		decisive = c.Unknown
	}
	if s, ok := maxSeverity(decisive); ok {
		sevID, sev = ocsfSeverity(s)
	}
	uid := "warden:" + rep.Framework.ID + ":" + c.ID
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", uid, rep.At.UnixNano(), d.Source.ScanID))
	e := ocsfEvent{
		ActivityID: 1, ActivityName: "Create", CategoryUID: 2, CategoryName: "Findings",
		ClassUID: 2003, ClassName: "Compliance Finding", TypeUID: 200301, TypeName: "Compliance Finding: Create",
		SeverityID: sevID, Severity: sev, Time: at,
		Message: fmt.Sprintf("%s %s: %s: %s", rep.Framework.ID, c.ID, status, c.Reason),
		Metadata: ocsfMetadata{Version: OCSFVersion, Product: ocsfProduct{Name: "warden", VendorName: "warden-sec", Version: d.Tool},
			UID: hex.EncodeToString(h[:16]), LogName: "compliance-report", ProcessedTime: d.Generated.UnixMilli(), Labels: labels},
		FindingInfo: ocsfFindingInfo{UID: uid, Title: c.ID + " " + c.Title, Desc: c.Note,
			Types: []string{"compliance/" + rep.Framework.ID}, LastSeenTime: at},
		Compliance: ocsfCompliance{Standards: []string{standard}, Requirements: []string{c.ID + " " + c.Title}, Control: c.ID,
			Category: category, Status: status, StatusID: statusID, StatusCode: string(c.Status), StatusDetails: []string{c.Reason}},
	}
	var first time.Time
	for _, f := range c.Failing {
		if !f.FirstSeen.IsZero() && (first.IsZero() || f.FirstSeen.Before(first)) {
			first = f.FirstSeen
		}
	}
	if !first.IsZero() {
		e.FindingInfo.FirstSeenTime = first.UnixMilli()
	}
	e.Compliance.Checks = ocsfChecks(c)
	for _, r := range c.RequiresConfig {
		var bounds []string
		if r.AtLeast != nil {
			bounds = append(bounds, "at least "+strconv.FormatFloat(*r.AtLeast, 'f', -1, 64))
		}
		if r.AtMost != nil {
			bounds = append(bounds, "at most "+strconv.FormatFloat(*r.AtMost, 'f', -1, 64))
		}
		e.Compliance.ControlParameters = append(e.Compliance.ControlParameters, ocsfKeyValue{Name: r.Setting, Value: strings.Join(bounds, " and ")})
	}
	e.Resources = ocsfResources(c)
	e.Remediation = ocsfRemediation(c.Failing)
	e.Unmapped = map[string]any{"warden": ocsfWarden(d, c)}
	return e
}

// ocsfChecks are the control's policies as OCSF checks: Fail with a finding that fails
// the control, Unknown when the policy was not run or could not judge all of its part,
// Pass otherwise.
func ocsfChecks(c *compliance.ControlResult) []ocsfCheck {
	titles := map[string]string{}
	sevs := map[string][]findings.Finding{}
	for _, e := range evidenceOf(c) {
		titles[e.Finding.Policy] = e.Finding.Title
		if e.Kind == evidenceFailing {
			sevs[e.Finding.Policy] = append(sevs[e.Finding.Policy], e.Finding)
		}
	}
	var out []ocsfCheck
	for _, r := range c.Runs {
		ch := ocsfCheck{UID: r.Policy, Name: titles[r.Policy], Status: "Pass", StatusID: ocsfPass}
		if ch.Name == "" {
			ch.Name = r.Policy
		}
		switch {
		case r.Failing > 0:
			ch.Status, ch.StatusID = "Fail", ocsfFail
			if s, ok := maxSeverity(sevs[r.Policy]); ok {
				ch.SeverityID, ch.Severity = ocsfSeverity(s)
			}
		case !r.Ran || r.Unknown > 0 || r.Errors > 0 || len(r.FailedScopes) > 0:
			ch.Status, ch.StatusID = "Unknown", ocsfUnknown
		}
		out = append(out, ch)
	}
	return out
}

// ocsfResources are the resources of the control's evidence, each once, labelled with how
// their findings count (failing, unknown, waived).
func ocsfResources(c *compliance.ControlResult) []ocsfResource {
	type key struct{ account, uid string }
	index := map[key]int{}
	var out []ocsfResource
	for _, e := range evidenceOf(c) {
		f := e.Finding
		k := key{f.Account, f.Resource}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			provider, _, _ := strings.Cut(f.ResourceType, ".")
			r := ocsfResource{UID: f.Resource, Type: f.ResourceType, Labels: []string{}}
			for _, kv := range []ocsfKeyValue{{"account", f.Account}, {"region", f.Region}, {"provider", provider}} {
				if kv.Value != "" {
					r.Tags = append(r.Tags, kv)
				}
			}
			out = append(out, r)
		}
		if !slices.Contains(out[i].Labels, e.Kind) {
			out[i].Labels = append(out[i].Labels, e.Kind)
		}
	}
	return out
}

// ocsfRemediation names the fixes warden proposes for the failing findings, or nil.
func ocsfRemediation(failing []findings.Finding) *ocsfText {
	var fixes []string
	for _, f := range failing {
		if a := f.Remediation.Action; a != "" {
			fix := fmt.Sprintf("%s (risk %s)", a, f.Remediation.Risk)
			if a == "manual" {
				fix = "manual"
			}
			if !slices.Contains(fixes, fix) {
				fixes = append(fixes, fix)
			}
		}
	}
	if len(fixes) == 0 {
		return nil
	}
	return &ocsfText{Desc: "warden's remediation for the failing findings: " + strings.Join(fixes, ", ") +
		"; 'warden plan' shows the changes, 'warden apply' makes them behind the approval gates"}
}

// ocsfWarden is what OCSF has no attribute for: the fingerprints behind the verdict, the
// waivers with owner, reason and expiry, and the fixes with their audit entries.
func ocsfWarden(d *compliance.Document, c *compliance.ControlResult) map[string]any {
	m := map[string]any{"framework": d.Report.Framework.ID, "scan_id": d.Source.ScanID, "assessment": string(c.Assessment)}
	if len(c.Policies) > 0 {
		m["policies"] = c.Policies
	}
	var failing, unknown []string
	var waived []map[string]any
	for _, e := range evidenceOf(c) {
		switch e.Kind {
		case evidenceFailing:
			failing = append(failing, e.Finding.Fingerprint)
		case evidenceUnknown:
			unknown = append(unknown, e.Finding.Fingerprint)
		case evidenceWaived:
			w := map[string]any{"fingerprint": e.Finding.Fingerprint}
			if wr := e.Finding.Waiver; wr != nil {
				w["owner"], w["reason"], w["expires"] = wr.Owner, wr.Reason, wr.Expires.UTC().Format(time.RFC3339)
			}
			waived = append(waived, w)
		}
	}
	if len(failing) > 0 {
		m["failing"] = failing
	}
	if len(unknown) > 0 {
		m["unknown"] = unknown
	}
	if len(waived) > 0 {
		m["waived"] = waived
	}
	var fixes []map[string]any
	for _, f := range d.Fixes {
		if slices.Contains(f.Controls, c.ID) {
			fixes = append(fixes, map[string]any{"action": f.Action, "policy": f.Policy, "target": f.Target, "state": f.State,
				"at": f.At.UTC().Format(time.RFC3339), "actor": f.Actor, "audit_seqs": f.AuditSeqs})
		}
	}
	if len(fixes) > 0 {
		m["fixes"] = fixes
	}
	return m
}
