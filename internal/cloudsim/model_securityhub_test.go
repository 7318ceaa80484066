package cloudsim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
)

// modelSecurityHubServed are the Security Hub operations the simulator serves
// (securityhub.go's routes), which TestSimulator_matchesProviderModels must answer.
var modelSecurityHubServed = []string{"securityhub:BatchImportFindings", "securityhub:GetFindings",
	"securityhub:BatchUpdateFindings", "securityhub:EnableSecurityHub", "securityhub:DescribeHub"}

// shCall calls a Security Hub operation (REST-JSON) and checks its answer against the
// model: the output shape for a success; for an error, the code (the X-Amzn-Errortype
// header, as REST-JSON clients read it) and its HTTP status.
func (m *modelSuite) shCall(op, method, path, wantErr string, req any) map[string]any {
	m.t.Helper()
	var body string
	if req != nil {
		b, _ := json.Marshal(req)
		body = string(b)
	}
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	awsAuth(r, "securityhub", "us-east-1")
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, r)
	key, model, out := "securityhub:"+op, m.aws["securityhub"], rec.Body.Bytes()
	if rec.Code >= 300 {
		code := rec.Header().Get("X-Amzn-Errortype")
		m.checkError(key, model, op, rec.Code, code, code != "", wantErr, out)
		return nil
	}
	if wantErr != "" {
		m.t.Errorf("%s succeeded, want %s", key, wantErr)
	}
	for _, p := range model.ValidateJSON(op, out) {
		m.problem(key, p)
	}
	m.ok[key]++
	var res map[string]any
	_ = json.Unmarshal(out, &res)
	return res
}

// securityHub answers every Security Hub operation, with the findings an exporter sends
// (and a few it must not), so that the stored findings GetFindings answers are held to
// AwsSecurityFinding's shape.
func (m *modelSuite) securityHub() {
	// The model is wired in: a finding with an unknown member and a misspelt enum fails.
	if p := m.aws["securityhub"].ValidateJSON("GetFindings", []byte(`{"Findings": [{"Id": "x", "RecordState": "OPEN", "Bogus": 1}]}`)); len(p) < 2 {
		m.t.Errorf("a drifted GetFindings answer gives %v, want an unknown member and a bad enum at least", p)
	}
	acct := m.sim.callerAccount()
	product := defaultProductARN("us-east-1", acct)
	finding := func(id string, updated string) map[string]any {
		return map[string]any{"SchemaVersion": "2018-10-08", "Id": id, "ProductArn": product, "GeneratorId": "warden/WARDEN-AWS-NET-001",
			"AwsAccountId": acct, "Types": []string{"Software and Configuration Checks"}, "CreatedAt": "2026-12-01T10:00:00Z",
			"UpdatedAt": updated, "Severity": map[string]any{"Label": "HIGH", "Original": "high"}, "Title": "SSH open", "Description": "Port 22 open.",
			"Resources":  []map[string]any{{"Type": "AwsEc2SecurityGroup", "Id": "arn:aws:ec2:us-east-1:" + acct + ":security-group/sg-1", "Region": "us-east-1"}},
			"Compliance": map[string]any{"Status": "FAILED"}, "RecordState": "ACTIVE",
			"Remediation":   map[string]any{"Recommendation": map[string]any{"Text": "revoke the rule", "Url": "https://warden.example/plans/1"}},
			"ProductFields": map[string]string{"warden/rule": "WARDEN-AWS-NET-001"}}
	}
	m.sim.Do(func(w *World) { // the caller's hub starts disabled, so that enabling it succeeds
		for _, a := range w.AWS.Accounts {
			if a.ID == acct {
				a.SecurityHubDisabled = true
			}
		}
	})
	m.shCall("DescribeHub", http.MethodGet, "/accounts", "InvalidAccessException", nil)
	m.shCall("EnableSecurityHub", http.MethodPost, "/accounts", "", map[string]any{"EnableDefaultStandards": false})
	m.shCall("EnableSecurityHub", http.MethodPost, "/accounts", "ResourceConflictException", map[string]any{})
	m.shCall("DescribeHub", http.MethodGet, "/accounts", "", nil)
	invalid := finding("bad", "2026-12-01T10:00:00Z")
	delete(invalid, "Title")
	out := m.shCall("BatchImportFindings", http.MethodPost, "/findings/import", "", map[string]any{"Findings": []any{
		finding("f-1", "2026-12-01T10:00:00Z"), finding("f-2", "2026-12-01T10:00:00Z"), invalid}})
	if out["FailedCount"] != 1.0 || out["SuccessCount"] != 2.0 {
		m.t.Errorf("BatchImportFindings: %v", out)
	}
	m.shCall("BatchImportFindings", http.MethodPost, "/findings/import", "InvalidInputException", map[string]any{"Findings": []any{}})
	other := finding("x", "2026-12-01T10:00:00Z")
	other["AwsAccountId"] = "999999999999"
	m.shCall("BatchImportFindings", http.MethodPost, "/findings/import", "AccessDeniedException", map[string]any{"Findings": []any{other}})
	m.shCall("BatchUpdateFindings", http.MethodPatch, "/findings/batchupdate", "", map[string]any{
		"FindingIdentifiers": []map[string]string{{"Id": "f-1", "ProductArn": product}, {"Id": "nope", "ProductArn": product}},
		"Workflow":           map[string]string{"Status": "RESOLVED"}, "Note": map[string]string{"Text": "fixed", "UpdatedBy": "warden"},
		"Severity": map[string]any{"Label": "LOW"}})
	m.shCall("BatchUpdateFindings", http.MethodPatch, "/findings/batchupdate", "InvalidInputException", map[string]any{
		"FindingIdentifiers": []map[string]string{{"Id": "f-1", "ProductArn": product}}})
	got := m.shCall("GetFindings", http.MethodPost, "/findings", "", map[string]any{"MaxResults": 1,
		"Filters": map[string]any{"ProductArn": []map[string]string{{"Value": product, "Comparison": "EQUALS"}}}})
	if fs, _ := got["Findings"].([]any); len(fs) != 1 || got["NextToken"] == nil {
		m.t.Errorf("GetFindings MaxResults 1: %v", got)
	}
	m.shCall("GetFindings", http.MethodPost, "/findings", "", map[string]any{"NextToken": got["NextToken"]})
	m.shCall("GetFindings", http.MethodPost, "/findings", "InvalidInputException", map[string]any{"MaxResults": 500})
}
