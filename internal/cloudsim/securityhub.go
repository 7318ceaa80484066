package cloudsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// AWS Security Hub (REST-JSON, SigV4 service "securityhub"): the finding provider's side
// (BatchImportFindings), the customer's (BatchUpdateFindings), GetFindings, and
// EnableSecurityHub and DescribeHub. Findings are kept per account and region, as Security
// Hub keeps them, in the AWS Security Finding Format (ASFF) documents the provider sent,
// with what Security Hub adds (Region, ProductName, CompanyName, ProductFields,
// FindingProviderFields, RecordState, Workflow) filled in.
//
// What the simulator holds the provider to, as Security Hub does:
//   - a request carries 1 to 100 findings (InvalidInputException otherwise);
//   - the provider is the custom integration of the caller's account in the call's region,
//     arn:aws:securityhub:REGION:ACCOUNT:product/ACCOUNT/default, and every finding's
//     AwsAccountId is the caller's account (AccessDeniedException for the whole request
//     otherwise: AWS answers so, not per finding);
//   - each finding is valid ASFF (required fields present and non-empty, SchemaVersion
//     2018-10-08, dates in RFC 3339, a Severity and Types, or FindingProviderFields with
//     them, at least one resource with a Type and an Id, at most 240 KB): one that is not
//     is reported in FailedFindings with ErrorCode InvalidInput and Security Hub's
//     "Finding does not adhere to Amazon Finding Format" message, the others are imported;
//   - a finding with the (ProductArn, Id) of a stored one replaces it only when its
//     UpdatedAt is later; otherwise the update is ignored (and still counted a success).
//     The fields the customer owns (Workflow, Note, UserDefinedFields, VerificationState,
//     and the Severity, Confidence, Criticality, Types and RelatedFindings once
//     BatchUpdateFindings set them) are kept. A finding moving from ARCHIVED to ACTIVE, or
//     whose Compliance.Status leaves PASSED, has its NOTIFIED or RESOLVED workflow reset
//     to NEW.
//
// Security Hub is enabled in every region of every account unless the world says
// securityhub_disabled for the account; then BatchImportFindings fails each finding with
// InvalidAccess, GetFindings and DescribeHub answer InvalidAccessException, until
// EnableSecurityHub.

// shFindingLimit is the most findings one BatchImportFindings or BatchUpdateFindings takes.
const shFindingLimit = 100

// shMaxFinding is the largest finding Security Hub imports, in bytes.
const shMaxFinding = 240 << 10

// hubState is Security Hub in one account and region.
type hubState struct {
	enabled      bool
	subscribedAt time.Time
	// findings in the order they were first imported; byKey finds them by ProductArn and Id.
	findings []*hubFinding
	byKey    map[string]*hubFinding
}

// hubFinding is one stored finding: its ASFF document, and which of its fields the
// customer set through BatchUpdateFindings (the provider's imports no longer change them).
type hubFinding struct {
	doc      map[string]any
	customer map[string]bool
}

func hubKey(productArn, id string) string { return productArn + "\x00" + id }

// hub is Security Hub in the call's account and region, created enabled (or as the
// world's securityhub_disabled says) on first use. s.mu is held.
func (s *Sim) hub(c *call, a *Account) *hubState {
	if s.hubs == nil {
		s.hubs = map[string]*hubState{}
	}
	k := a.ID + "/" + c.Region
	h := s.hubs[k]
	if h == nil {
		h = &hubState{enabled: !a.SecurityHubDisabled, byKey: map[string]*hubFinding{}}
		if h.enabled {
			h.subscribedAt = s.stamp()
		}
		s.hubs[k] = h
	}
	return h
}

func hubARN(c *call, a *Account) string {
	return "arn:aws:securityhub:" + c.Region + ":" + a.ID + ":hub/default"
}

// defaultProductARN is the product ARN of an account's custom integration in a region.
func defaultProductARN(region, account string) string {
	return "arn:aws:securityhub:" + region + ":" + account + ":product/" + account + "/default"
}

// serveSecurityHub routes a Security Hub request by method and path, then serves it as
// the other AWS services are: admitted (faults, rate limits), authorized, recorded.
func (s *Sim) serveSecurityHub(w http.ResponseWriter, r *http.Request, c *call, body []byte) {
	var h func(c *call, a *Account, body []byte) (any, error)
	switch r.Method + " " + r.URL.Path {
	case "POST /findings/import":
		c.Action, h = "BatchImportFindings", s.shBatchImport
	case "POST /findings":
		c.Action, h = "GetFindings", s.shGetFindings
	case "PATCH /findings/batchupdate":
		c.Action, h = "BatchUpdateFindings", s.shBatchUpdate
	case "POST /accounts":
		c.Action, h = "EnableSecurityHub", s.shEnable
	case "GET /accounts":
		c.Action = "DescribeHub"
		arn := r.URL.Query().Get("HubArn")
		h = func(c *call, a *Account, _ []byte) (any, error) { return s.shDescribeHub(c, a, arn) }
	default:
		s.writeSHError(w, c, &apiError{Kind: kindInvalid, Code: "InvalidInputException", Status: http.StatusNotFound,
			Message: fmt.Sprintf("the simulator does not serve %s %s for securityhub", r.Method, r.URL.Path)})
		return
	}
	if e := s.admit(r.Context(), c); e != nil {
		s.writeSHError(w, c, e)
		return
	}
	s.mu.Lock()
	var res any
	var err error
	if e := s.authorize(c, func(a *Account) string { return s.shResource(c, a, body) }); e != nil {
		err = e
	} else if a, aerr := s.regionalAccount(c); aerr != nil {
		err = aerr
	} else if res, err = h(c, a, body); err == nil {
		s.recordAccess(c)
	}
	s.mu.Unlock()
	s.delayAnswer(r.Context(), c)
	if err != nil {
		s.writeSHError(w, c, asAPIError(err))
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		s.writeSHError(w, c, errf(kindInternal, "InternalException", "encode: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", c.ReqID)
	_, _ = w.Write(b)
}

// shResource is what a Security Hub call acts on, for IAM policies: the product a
// BatchImportFindings imports for (its first finding's), else the account's hub.
func (s *Sim) shResource(c *call, a *Account, body []byte) string {
	if c.Action == "BatchImportFindings" {
		var in struct{ Findings []struct{ ProductArn string } }
		if json.Unmarshal(body, &in) == nil && len(in.Findings) > 0 && in.Findings[0].ProductArn != "" {
			return in.Findings[0].ProductArn
		}
	}
	return "arn:aws:securityhub:" + c.Region + ":" + a.ID + ":hub/default"
}

// writeSHError answers an error with the codes and statuses of Security Hub's model.
func (s *Sim) writeSHError(w http.ResponseWriter, c *call, e *apiError) {
	code, status := e.Code, e.Status
	switch e.Kind {
	case kindThrottle:
		code, status = "TooManyRequestsException", http.StatusTooManyRequests
	case kindDenied:
		code, status = "AccessDeniedException", http.StatusForbidden
	case kindUnavailable:
		code, status = "ServiceUnavailableException", http.StatusServiceUnavailable
	case kindInternal:
		code, status = or(code, "InternalException"), http.StatusInternalServerError
	case kindNotFound:
		code = or(code, "ResourceNotFoundException")
		status = max(status, http.StatusNotFound)
	case kindConflict:
		code = or(code, "ResourceConflictException")
		status = max(status, http.StatusConflict)
	}
	switch code { // the credential errors, as the REST-JSON services name them
	case "InvalidClientTokenId":
		code = "UnrecognizedClientException"
	case "SignatureDoesNotMatch":
		code = "InvalidSignatureException"
	}
	if code == "" || code == "ValidationException" {
		code = "InvalidInputException"
	}
	if status == 0 {
		status = http.StatusBadRequest
	}
	b, _ := json.Marshal(map[string]string{"Code": code, "Message": e.Message})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", c.ReqID)
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func shInvalid(format string, args ...any) *apiError {
	return &apiError{Kind: kindInvalid, Code: "InvalidInputException", Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// shNotSubscribed is the answer of a region where Security Hub is not enabled.
func shNotSubscribed(a *Account) *apiError {
	return &apiError{Kind: kindInvalid, Code: "InvalidAccessException", Status: http.StatusUnauthorized,
		Message: fmt.Sprintf("Account %s is not subscribed to AWS Security Hub", a.ID)}
}

type shFailedFinding struct {
	ID           string `json:"Id"`
	ErrorCode    string
	ErrorMessage string
}

type shImportResult struct {
	FailedCount    int
	SuccessCount   int
	FailedFindings []shFailedFinding
}

// decodeFindings decodes the findings of a BatchImportFindings request, keeping each one's
// raw size and its numbers as written.
func decodeFindings(body []byte) ([]json.RawMessage, error) {
	var in struct{ Findings []json.RawMessage }
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, shInvalid("malformed request: %v", err)
	}
	if len(in.Findings) == 0 || len(in.Findings) > shFindingLimit {
		return nil, shInvalid("1 validation error detected: Value at 'findings' failed to satisfy constraint: Member must have length between 1 and %d, got %d", shFindingLimit, len(in.Findings))
	}
	return in.Findings, nil
}

func (s *Sim) shBatchImport(c *call, a *Account, body []byte) (any, error) {
	raws, err := decodeFindings(body)
	if err != nil {
		return nil, err
	}
	docs := make([]map[string]any, len(raws))
	for i, raw := range raws {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&docs[i]); err != nil || docs[i] == nil {
			return nil, shInvalid("malformed finding %d: want a JSON object", i)
		}
	}
	// The provider and the account are checked for the whole request before any finding
	// is imported: AWS refuses the call rather than the finding.
	for _, d := range docs {
		if arn, ok := d["ProductArn"].(string); ok && arn != "" {
			p := strings.Split(arn, ":")
			if len(p) != 6 || p[0] != "arn" || p[2] != "securityhub" || p[3] == "" || !strings.HasPrefix(p[5], "product/") {
				return nil, shInvalid("productArn: %q", arn)
			}
			if arn != defaultProductARN(c.Region, a.ID) {
				return nil, &apiError{Kind: kindDenied, Message: fmt.Sprintf("User: %s is not authorized to perform: securityhub:BatchImportFindings on resource: %s", c.Principal, arn)}
			}
		}
		if acct, ok := d["AwsAccountId"].(string); ok && acct != "" && acct != a.ID {
			return nil, &apiError{Kind: kindDenied, Message: fmt.Sprintf("User: %s is not authorized to perform: securityhub:BatchImportFindings on resource: %s", c.Principal, defaultProductARN(c.Region, acct))}
		}
	}
	h := s.hub(c, a)
	out := shImportResult{FailedFindings: []shFailedFinding{}}
	fail := func(d map[string]any, code, msg string) {
		id, _ := d["Id"].(string)
		out.FailedCount++
		out.FailedFindings = append(out.FailedFindings, shFailedFinding{ID: id, ErrorCode: code, ErrorMessage: msg})
	}
	for i, d := range docs {
		switch {
		case !h.enabled:
			fail(d, "InvalidAccess", fmt.Sprintf("Account %s is not subscribed to AWS Security Hub", a.ID))
		case len(raws[i]) > shMaxFinding:
			fail(d, "FindingSizeExceeded", "Finding size exceeded 240 KB")
		default:
			if problems := asffProblems(d); len(problems) > 0 {
				fail(d, "InvalidInput", "Finding does not adhere to Amazon Finding Format. "+strings.Join(problems, ", ")+".")
				continue
			}
			s.shStore(c, h, d)
			out.SuccessCount++
		}
	}
	return out, nil
}

// shStore imports a valid finding: a new one, or a later version of a stored one.
func (s *Sim) shStore(c *call, h *hubState, d map[string]any) {
	arn, id := d["ProductArn"].(string), d["Id"].(string)
	now := s.now().UTC().Format("2006-01-02T15:04:05.000Z")
	account := d["AwsAccountId"].(string)
	d["Region"] = c.Region
	d["ProductName"], d["CompanyName"] = "Default", "Personal"
	pf, _ := d["ProductFields"].(map[string]any)
	if pf == nil {
		pf = map[string]any{}
	}
	pf["aws/securityhub/FindingId"] = "arn:aws:securityhub:" + c.Region + ":" + account + ":product/" + account + "/default/" + id
	pf["aws/securityhub/ProductName"], pf["aws/securityhub/CompanyName"] = "Default", "Personal"
	d["ProductFields"] = pf
	d["ProcessedAt"] = now
	if _, ok := d["RecordState"]; !ok {
		d["RecordState"] = "ACTIVE"
	}
	normalizeSeverity(d)
	old := h.byKey[hubKey(arn, id)]
	if old == nil {
		wf, _ := d["Workflow"].(map[string]any)
		if wf == nil || wf["Status"] == nil {
			d["Workflow"] = map[string]any{"Status": "NEW"}
		}
		d["WorkflowState"] = "NEW"
		f := &hubFinding{doc: d, customer: map[string]bool{}}
		h.findings = append(h.findings, f)
		h.byKey[hubKey(arn, id)] = f
		return
	}
	if !laterTime(d["UpdatedAt"].(string), old.doc["UpdatedAt"].(string)) {
		return // Security Hub ignores an update that is not later than the stored finding
	}
	// The customer's fields survive the provider's update.
	for _, k := range []string{"Workflow", "WorkflowState", "Note", "UserDefinedFields", "VerificationState"} {
		if v, ok := old.doc[k]; ok {
			d[k] = v
		} else {
			delete(d, k)
		}
	}
	for k := range old.customer {
		d[k] = old.doc[k]
	}
	if wf, _ := d["Workflow"].(map[string]any); wf != nil && (wf["Status"] == "NOTIFIED" || wf["Status"] == "RESOLVED") {
		reopened := old.doc["RecordState"] == "ARCHIVED" && d["RecordState"] == "ACTIVE"
		if complianceOf(old.doc) == "PASSED" && complianceOf(d) != "" && complianceOf(d) != "PASSED" {
			reopened = true
		}
		if reopened {
			d["Workflow"] = map[string]any{"Status": "NEW"}
			d["WorkflowState"] = "NEW"
		}
	}
	old.doc = d
}

func complianceOf(d map[string]any) string {
	c, _ := d["Compliance"].(map[string]any)
	s, _ := c["Status"].(string)
	return s
}

// laterTime reports whether RFC 3339 time a is after b (both validated on import).
func laterTime(a, b string) bool {
	ta, _ := time.Parse(time.RFC3339Nano, a)
	tb, _ := time.Parse(time.RFC3339Nano, b)
	return ta.After(tb)
}

// severityLabels are the labels of Severity.Normalized's ranges, as Security Hub derives
// one from the other.
var severityLabels = []struct {
	label string
	from  int64
}{{"CRITICAL", 90}, {"HIGH", 70}, {"MEDIUM", 40}, {"LOW", 1}, {"INFORMATIONAL", 0}}

// normalizeSeverity fills in the Severity's Label or Normalized from the other, and
// FindingProviderFields from Severity and Types, as Security Hub does on import.
func normalizeSeverity(d map[string]any) {
	fpf, _ := d["FindingProviderFields"].(map[string]any)
	if fpf == nil {
		fpf = map[string]any{}
		d["FindingProviderFields"] = fpf
	}
	sev, _ := d["Severity"].(map[string]any)
	if sev == nil {
		if ps, _ := fpf["Severity"].(map[string]any); ps != nil {
			sev = map[string]any{"Label": ps["Label"], "Original": ps["Original"]}
			d["Severity"] = sev
		} else {
			return
		}
	}
	if _, ok := sev["Label"]; !ok {
		n, _ := sev["Normalized"].(json.Number).Int64()
		for _, l := range severityLabels {
			if n >= l.from {
				sev["Label"] = l.label
				break
			}
		}
	}
	if _, ok := sev["Normalized"]; !ok {
		for _, l := range severityLabels {
			if sev["Label"] == l.label {
				sev["Normalized"] = json.Number(fmt.Sprint(l.from))
			}
		}
	}
	if _, ok := fpf["Severity"]; !ok {
		fpf["Severity"] = map[string]any{"Label": sev["Label"]}
	}
	if t, ok := d["Types"]; ok {
		if _, ok := fpf["Types"]; !ok {
			fpf["Types"] = t
		}
	} else if t, ok := fpf["Types"]; ok {
		d["Types"] = t
	}
}

// asffProblems lists what makes a finding invalid ASFF, in the words of Security Hub's
// schema validator; none: valid.
func asffProblems(d map[string]any) []string {
	var out []string
	for _, f := range []struct {
		name string
		max  int
	}{{"SchemaVersion", 0}, {"Id", 512}, {"ProductArn", 512}, {"GeneratorId", 512}, {"AwsAccountId", 0},
		{"CreatedAt", 0}, {"UpdatedAt", 0}, {"Title", 256}, {"Description", 1024}} {
		v, present := d[f.name]
		s, isString := v.(string)
		switch {
		case !present:
			out = append(out, fmt.Sprintf("data should have required property '%s'", f.name))
		case !isString:
			out = append(out, fmt.Sprintf("data.%s should be string", f.name))
		case strings.TrimSpace(s) == "":
			out = append(out, fmt.Sprintf("data.%s should NOT be shorter than 1 characters", f.name))
		case f.max > 0 && len([]rune(s)) > f.max:
			out = append(out, fmt.Sprintf("data.%s should NOT be longer than %d characters", f.name, f.max))
		}
	}
	if v, ok := d["SchemaVersion"].(string); ok && v != "" && v != "2018-10-08" {
		out = append(out, "data.SchemaVersion should be equal to one of the allowed values")
	}
	for _, k := range []string{"CreatedAt", "UpdatedAt", "FirstObservedAt", "LastObservedAt"} {
		if v, ok := d[k].(string); ok && v != "" {
			if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
				out = append(out, fmt.Sprintf(`data.%s should match format "date-time"`, k))
			}
		}
	}
	if v, ok := d["AwsAccountId"].(string); ok && v != "" && !awsAccountRE.MatchString(v) {
		out = append(out, `data.AwsAccountId should match pattern "^\d{12}$"`)
	}
	fpf, _ := d["FindingProviderFields"].(map[string]any)
	if !hasSeverity(d["Severity"]) && (fpf == nil || !hasSeverity(fpf["Severity"])) {
		out = append(out, "data should have required property 'Severity', data should have required property 'FindingProviderFields', data should match some schema in anyOf")
	}
	if types, _ := d["Types"].([]any); len(types) == 0 {
		if ft, _ := fpf["Types"].([]any); len(ft) == 0 {
			out = append(out, "data should have required property 'Types', data.FindingProviderFields should have required property 'Types', data should match some schema in anyOf")
		}
	}
	if r, ok := d["RecordState"]; ok && r != "ACTIVE" && r != "ARCHIVED" {
		out = append(out, "data.RecordState should be equal to one of the allowed values")
	}
	if wf, _ := d["Workflow"].(map[string]any); wf != nil && wf["Status"] != nil && !slices.Contains(shWorkflowStatuses, fmt.Sprint(wf["Status"])) {
		out = append(out, "data.Workflow.Status should be equal to one of the allowed values")
	}
	if c := complianceOf(d); c != "" && !slices.Contains([]string{"PASSED", "WARNING", "FAILED", "NOT_AVAILABLE"}, c) {
		out = append(out, "data.Compliance.Status should be equal to one of the allowed values")
	}
	res, isList := d["Resources"].([]any)
	switch {
	case d["Resources"] == nil:
		out = append(out, "data should have required property 'Resources'")
	case !isList:
		out = append(out, "data.Resources should be array")
	case len(res) == 0:
		out = append(out, "data.Resources should NOT have fewer than 1 items")
	case len(res) > 32:
		out = append(out, "data.Resources should NOT have more than 32 items")
	}
	for i, r := range res {
		m, _ := r.(map[string]any)
		for _, k := range []string{"Type", "Id"} {
			if v, _ := m[k].(string); strings.TrimSpace(v) == "" {
				out = append(out, fmt.Sprintf("data.Resources[%d] should have required property '%s'", i, k))
			}
		}
	}
	return out
}

// hasSeverity tells whether v is a Severity with a valid Label or Normalized score.
func hasSeverity(v any) bool {
	sev, _ := v.(map[string]any)
	if sev == nil {
		return false
	}
	if l, ok := sev["Label"].(string); ok {
		return slices.Contains([]string{"INFORMATIONAL", "LOW", "MEDIUM", "HIGH", "CRITICAL"}, l)
	}
	if n, ok := sev["Normalized"].(json.Number); ok {
		v, err := n.Int64()
		return err == nil && v >= 0 && v <= 100
	}
	return false
}

// shWorkflowStatuses are the values of Workflow.Status.
var shWorkflowStatuses = []string{"NEW", "NOTIFIED", "RESOLVED", "SUPPRESSED"}

// shEnable serves EnableSecurityHub: it subscribes the account in the call's region.
func (s *Sim) shEnable(c *call, a *Account, body []byte) (any, error) {
	var in struct {
		EnableDefaultStandards  *bool
		ControlFindingGenerator string
		Tags                    map[string]string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, shInvalid("%s", err.(*apiError).Message)
	}
	h := s.hub(c, a)
	if h.enabled {
		return nil, &apiError{Kind: kindConflict, Code: "ResourceConflictException", Status: http.StatusConflict,
			Message: fmt.Sprintf("Account %s is already subscribed to Security Hub", a.ID)}
	}
	h.enabled, h.subscribedAt = true, s.stamp()
	return struct{}{}, nil
}

// shDescribeHub serves DescribeHub: the account's hub in the call's region.
func (s *Sim) shDescribeHub(c *call, a *Account, arn string) (any, error) {
	h := s.hub(c, a)
	if arn != "" && arn != hubARN(c, a) {
		return nil, &apiError{Kind: kindNotFound, Code: "ResourceNotFoundException", Status: http.StatusNotFound, Message: fmt.Sprintf("Hub %s not found", arn)}
	}
	if !h.enabled {
		return nil, shNotSubscribed(a)
	}
	return map[string]any{"HubArn": hubARN(c, a), "SubscribedAt": h.subscribedAt.UTC().Format("2006-01-02T15:04:05.000Z"),
		"AutoEnableControls": true, "ControlFindingGenerator": "SECURITY_CONTROL"}, nil
}
