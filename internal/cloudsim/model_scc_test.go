package cloudsim

import (
	"net/http"
	"net/url"
)

// modelSCCServed are the Security Command Center methods the simulator serves over REST
// (scc_rest.go), by discovery method id; gRPC calls reach the same code.
var modelSCCServed = []string{
	"securitycenter.organizations.sources.create", "securitycenter.organizations.sources.get",
	"securitycenter.organizations.sources.list", "securitycenter.organizations.sources.findings.create",
	"securitycenter.organizations.sources.findings.patch", "securitycenter.organizations.sources.findings.setState",
	"securitycenter.organizations.sources.findings.setMute", "securitycenter.organizations.sources.findings.list",
}

// sccOps answers every Security Command Center method over REST, as an exporter calls
// them, and a few errors.
func (m *modelSuite) sccOps() {
	// The discovery document is wired in: a finding with an unknown field and state fails.
	if p := m.gcp["securitycenter"].ValidateResponse("securitycenter.organizations.sources.findings.list",
		[]byte(`{"listFindingsResults": [{"finding": {"state": "OPEN", "colour": "red"}}]}`)); len(p) < 2 {
		m.t.Errorf("a drifted ListFindings answer gives %v, want an unknown field and a bad enum at least", p)
	}
	org := "organizations/" + m.sim.world.GCP.Organizations[0].ID
	src := m.rest("securitycenter.organizations.sources.create", http.MethodPost, "/v1/"+org+"/sources", 0,
		map[string]any{"displayName": "warden", "description": "warden's findings"})
	name, _ := src["name"].(string)
	m.rest("securitycenter.organizations.sources.create", http.MethodPost, "/v1/"+org+"/sources", http.StatusConflict, map[string]any{"displayName": "warden"})
	m.rest("securitycenter.organizations.sources.get", http.MethodGet, "/v1/"+name, 0, nil)
	m.rest("securitycenter.organizations.sources.get", http.MethodGet, "/v1/"+org+"/sources/1", http.StatusNotFound, nil)
	m.rest("securitycenter.organizations.sources.list", http.MethodGet, "/v1/"+org+"/sources?pageSize=1", 0, nil)
	finding := map[string]any{"state": "ACTIVE", "category": "OPEN_SSH_PORT", "severity": "HIGH", "eventTime": "2026-12-01T10:00:00Z",
		"resourceName": "//compute.googleapis.com/projects/acme-prod/global/firewalls/fw1", "externalUri": "https://warden.example/f/1",
		"sourceProperties": map[string]any{"rule": "WARDEN-GCP-NET-001", "risk": 3}}
	m.rest("securitycenter.organizations.sources.findings.create", http.MethodPost, "/v1/"+name+"/findings?findingId=f1", 0, finding)
	m.rest("securitycenter.organizations.sources.findings.create", http.MethodPost, "/v1/"+name+"/findings?findingId=f1", http.StatusConflict, finding)
	m.rest("securitycenter.organizations.sources.findings.patch", http.MethodPatch, "/v1/"+name+"/findings/f1?updateMask=eventTime,sourceProperties.plan", 0,
		map[string]any{"eventTime": "2026-12-01T11:00:00Z", "sourceProperties": map[string]any{"plan": "42"}})
	m.rest("securitycenter.organizations.sources.findings.setState", http.MethodPost, "/v1/"+name+"/findings/f1:setState", 0,
		map[string]any{"state": "INACTIVE", "startTime": "2026-12-01T12:00:00Z"})
	m.rest("securitycenter.organizations.sources.findings.setState", http.MethodPost, "/v1/"+name+"/findings/f1:setState", http.StatusBadRequest,
		map[string]any{"state": "INACTIVE"})
	m.rest("securitycenter.organizations.sources.findings.setMute", http.MethodPost, "/v1/"+name+"/findings/f1:setMute", 0, map[string]any{"mute": "MUTED"})
	m.rest("securitycenter.organizations.sources.findings.list", http.MethodGet, "/v1/"+name+"/findings?filter="+url.QueryEscape(`state="INACTIVE"`), 0, nil)
	m.rest("securitycenter.organizations.sources.findings.list", http.MethodGet, "/v1/"+org+"/sources/-/findings?pageSize=5", 0, nil)
	m.rest("securitycenter.organizations.sources.findings.list", http.MethodGet, "/v1/"+name+"/findings?filter="+url.QueryEscape(`colour="red"`), http.StatusBadRequest, nil)
}
