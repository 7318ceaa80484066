package render_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/findings"
)

// exampleDocument is a small framework judged on two findings: SSH open to the world on
// one security group, and a waived one on another.
func exampleDocument() *compliance.Document {
	fw, err := compliance.Parse("example.yaml", []byte(`
id: example-1.0
name: Example Benchmark
version: "1.0"
publisher: Example Inc.
source: written for the example
families:
  - {id: "1", title: Networking}
controls:
  - id: "1.1"
    title: No security group opens SSH to the internet
    family: "1"
    assessment: automated
    policies: [WARDEN-AWS-NET-001]
  - id: "1.2"
    title: The network diagram is kept current
    family: "1"
    assessment: manual
`))
	if err != nil {
		panic(err)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	sg := func(id string) string { return "arn:aws:ec2:eu-west-1:111111111111:security-group/" + id }
	rep := compliance.Evaluate(fw, compliance.Input{
		At: at,
		Findings: []findings.Finding{
			{Policy: "WARDEN-AWS-NET-001", Title: "Security group opens SSH to the internet", Severity: findings.High,
				Resource: sg("sg-web"), ResourceType: "aws.ec2.security_group", Account: "111111111111", Region: "eu-west-1",
				Message: "sg-web allows tcp 22 from 0.0.0.0/0", Fingerprint: "3f2a", Status: findings.StatusOpen},
			{Policy: "WARDEN-AWS-NET-001", Title: "Security group opens SSH to the internet", Severity: findings.High,
				Resource: sg("sg-bastion"), ResourceType: "aws.ec2.security_group", Account: "111111111111", Region: "eu-west-1",
				Message: "sg-bastion allows tcp 22 from 0.0.0.0/0", Fingerprint: "9c1d", Status: findings.StatusWaived,
				Waiver: &findings.WaiverRef{Owner: "alice@example.com", Reason: "bastion behind a NACL", Expires: at.AddDate(0, 3, 0)}},
		},
		Policies: map[string]compliance.PolicyRun{"WARDEN-AWS-NET-001": {Resources: 12}},
	})
	return &compliance.Document{
		Report: rep, Generated: at.Add(time.Minute), Tool: "v0.11.0",
		Source:     compliance.Source{ScanID: 7, Snapshot: "snapshot.json", CollectedAt: at, Resources: 12, Policies: 1},
		Checkpoint: &compliance.Checkpoint{Size: 40, Root: "q1w2e3", Note: "example.com/audit\n40\nq1w2e3\n\n— example.com/audit sig\n", At: at},
		Scopes:     []compliance.Scope{{ID: "aws/111111111111/ec2/eu-west-1", Status: "ok", Resources: 12}},
	}
}

func ExampleNew() {
	fmt.Println(render.Formats())
	_, err := render.New("pdf")
	fmt.Println(err)
	// Output:
	// [html csv json sarif ocsf]
	// unknown report format "pdf"; known: html, csv, json, sarif, ocsf
}

// The CSV has a row per control and finding of its evidence; a control without evidence
// has one row.
func ExampleCSV() {
	var buf bytes.Buffer
	if err := (render.CSV{}).Write(&buf, exampleDocument()); err != nil {
		panic(err)
	}
	// Lines end in CRLF, as RFC 4180 has them; printed here as plain lines.
	fmt.Print(strings.ReplaceAll(buf.String(), "\r\n", "\n"))
	// Output:
	// control_id,control_title,family,family_title,status,reason,evidence,policy,resource,account,region,severity,finding_message,waiver_owner,waiver_reason,waiver_expires,fingerprint
	// 1.1,No security group opens SSH to the internet,1,Networking,fail,1 open finding of WARDEN-AWS-NET-001 on 1 resource,failing,WARDEN-AWS-NET-001,arn:aws:ec2:eu-west-1:111111111111:security-group/sg-web,111111111111,eu-west-1,high,sg-web allows tcp 22 from 0.0.0.0/0,,,,3f2a
	// 1.1,No security group opens SSH to the internet,1,Networking,fail,1 open finding of WARDEN-AWS-NET-001 on 1 resource,waived,WARDEN-AWS-NET-001,arn:aws:ec2:eu-west-1:111111111111:security-group/sg-bastion,111111111111,eu-west-1,high,sg-bastion allows tcp 22 from 0.0.0.0/0,alice@example.com,bastion behind a NACL,2027-03-01T09:00:00Z,9c1d
	// 1.2,The network diagram is kept current,1,Networking,manual,assessed by a person: no warden policy checks this control,,,,,,,,,,,
}

// The JSON is the whole document: it reads back into a compliance.Document.
func ExampleJSON() {
	var buf bytes.Buffer
	if err := (render.JSON{}).Write(&buf, exampleDocument()); err != nil {
		panic(err)
	}
	var d compliance.Document
	if err := json.Unmarshal(buf.Bytes(), &d); err != nil {
		panic(err)
	}
	for _, c := range d.Report.Controls {
		fmt.Printf("%s %s: %d failing, %d waived\n", c.ID, c.Status, len(c.Failing), len(c.Waived))
	}
	fmt.Println("checkpoint of", d.Checkpoint.Size, "entries")
	// Output:
	// 1.1 fail: 1 failing, 1 waived
	// 1.2 manual: 0 failing, 0 waived
	// checkpoint of 40 entries
}

// SARIF has a result per failing or unknown finding; its rule is the policy, and the
// controls it fails are in its properties.
func ExampleSARIF() {
	var buf bytes.Buffer
	if err := (render.SARIF{}).Write(&buf, exampleDocument()); err != nil {
		panic(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID     string `json:"ruleId"`
				Kind       string `json:"kind"`
				Level      string `json:"level"`
				Properties struct {
					Controls []string `json:"controls"`
				} `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		panic(err)
	}
	for _, r := range log.Runs[0].Results {
		fmt.Println(r.RuleID, r.Kind, r.Level, r.Properties.Controls)
	}
	// Output:
	// WARDEN-AWS-NET-001 fail error [1.1]
}

// OCSF is an array of Compliance Finding events, one per control: a manual control is
// status Other (99), with its own word in compliance.status.
func ExampleOCSF() {
	var buf bytes.Buffer
	if err := (render.OCSF{}).Write(&buf, exampleDocument()); err != nil {
		panic(err)
	}
	var events []struct {
		ClassUID    int `json:"class_uid"`
		SeverityID  int `json:"severity_id"`
		FindingInfo struct {
			UID string `json:"uid"`
		} `json:"finding_info"`
		Compliance struct {
			Control  string `json:"control"`
			StatusID int    `json:"status_id"`
			Status   string `json:"status"`
		} `json:"compliance"`
	}
	if err := json.Unmarshal(buf.Bytes(), &events); err != nil {
		panic(err)
	}
	for _, e := range events {
		fmt.Println(e.ClassUID, e.FindingInfo.UID, e.Compliance.StatusID, e.Compliance.Status, "severity", e.SeverityID)
	}
	// Output:
	// 2003 warden:example-1.0:1.1 3 Fail severity 4
	// 2003 warden:example-1.0:1.2 99 Manual severity 1
}

// The HTML report is one self-contained page: charts are inline SVG, and nothing is
// loaded from anywhere else.
func ExampleHTML() {
	var buf bytes.Buffer
	if err := (render.HTML{}).Write(&buf, exampleDocument()); err != nil {
		panic(err)
	}
	page := buf.String()
	for _, chart := range []string{"chart-severity", "chart-families", "chart-trend", "chart-converge"} {
		fmt.Println(chart, strings.Contains(page, `<svg class="chart" id="`+chart+`"`))
	}
	fmt.Println("external references:", strings.Contains(page, `src="http`) || strings.Contains(page, `href="http`))
	// Output:
	// chart-severity true
	// chart-families true
	// chart-trend true
	// chart-converge true
	// external references: false
}
