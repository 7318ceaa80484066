package cloudsim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Security Hub's GetFindings and BatchUpdateFindings (securityhub.go), and the stored
// findings as tests and the admin API read them.

var awsAccountRE = regexp.MustCompile(`^\d{12}$`)

// shStringFields are the string filters and sort fields GetFindings serves: each reads the
// values a finding has for it (Types and resources have several).
var shStringFields = map[string]func(d map[string]any) []string{
	"Id":                shPath("Id"),
	"ProductArn":        shPath("ProductArn"),
	"GeneratorId":       shPath("GeneratorId"),
	"AwsAccountId":      shPath("AwsAccountId"),
	"Region":            shPath("Region"),
	"Title":             shPath("Title"),
	"Description":       shPath("Description"),
	"ProductName":       shPath("ProductName"),
	"CompanyName":       shPath("CompanyName"),
	"RecordState":       shPath("RecordState"),
	"WorkflowState":     shPath("WorkflowState"),
	"WorkflowStatus":    shPath("Workflow", "Status"),
	"ComplianceStatus":  shPath("Compliance", "Status"),
	"SeverityLabel":     shPath("Severity", "Label"),
	"VerificationState": shPath("VerificationState"),
	"CreatedAt":         shPath("CreatedAt"),
	"UpdatedAt":         shPath("UpdatedAt"),
	"Type":              shList("Types", ""),
	"ResourceId":        shList("Resources", "Id"),
	"ResourceType":      shList("Resources", "Type"),
	"ResourceRegion":    shList("Resources", "Region"),
}

// shPath reads one string at a path of nested objects.
func shPath(path ...string) func(d map[string]any) []string {
	return func(d map[string]any) []string {
		var v any = d
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		if s, ok := v.(string); ok {
			return []string{s}
		}
		return nil
	}
}

// shList reads the strings of a list, or a field of each of its objects.
func shList(list, field string) func(d map[string]any) []string {
	return func(d map[string]any) []string {
		items, _ := d[list].([]any)
		var out []string
		for _, it := range items {
			if field != "" {
				m, _ := it.(map[string]any)
				it = m[field]
			}
			if s, ok := it.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
}

// shMapFields are the map filters GetFindings serves: a filter's Key names the entry.
var shMapFields = map[string]bool{"ProductFields": true, "UserDefinedFields": true}

// shStringFilter is a string filter, or a map filter (Key set) on one map entry.
type shStringFilter struct {
	Key        string
	Value      string
	Comparison string
}

// values reads the finding's values the filter tests: the field's, or the map entry's.
func (f shStringFilter) values(field string, d map[string]any) []string {
	if shMapFields[field] {
		m, _ := d[field].(map[string]any)
		if v, ok := m[f.Key].(string); ok {
			return []string{v}
		}
		return nil
	}
	return shStringFields[field](d)
}

// matches tells whether one of a finding's values passes the filter.
func (f shStringFilter) matches(values []string) bool {
	neg := strings.HasPrefix(f.Comparison, "NOT_") || f.Comparison == "PREFIX_NOT_EQUALS"
	test := func(v string) bool {
		switch f.Comparison {
		case "EQUALS", "NOT_EQUALS":
			return v == f.Value
		case "PREFIX", "PREFIX_NOT_EQUALS":
			return strings.HasPrefix(v, f.Value)
		case "CONTAINS", "NOT_CONTAINS":
			return strings.Contains(v, f.Value)
		}
		return slices.Contains(strings.Fields(v), f.Value) // CONTAINS_WORD
	}
	hit := slices.ContainsFunc(values, test)
	if neg {
		return !hit
	}
	return hit
}

// shMatches applies one field's filters as Security Hub combines them: the positive ones
// (EQUALS, PREFIX, CONTAINS) with OR, the negative ones with AND.
func shMatches(field string, filters []shStringFilter, d map[string]any) bool {
	anyPos, posHit := false, false
	for _, f := range filters {
		if strings.Contains(f.Comparison, "NOT_") {
			if !f.matches(f.values(field, d)) {
				return false
			}
			continue
		}
		anyPos = true
		posHit = posHit || f.matches(f.values(field, d))
	}
	return !anyPos || posHit
}

var shComparisons = []string{"EQUALS", "PREFIX", "NOT_EQUALS", "PREFIX_NOT_EQUALS", "CONTAINS", "NOT_CONTAINS", "CONTAINS_WORD"}

// shFilters decodes GetFindings' Filters; a filter the simulator does not serve is an
// error rather than ignored, so that a test never passes on a filter that did nothing.
func shFilters(raw map[string]json.RawMessage) (map[string][]shStringFilter, error) {
	out := map[string][]shStringFilter{}
	for name, v := range raw {
		if shStringFields[name] == nil && !shMapFields[name] {
			return nil, shInvalid("the simulator does not filter findings on %s", name)
		}
		var fs []shStringFilter
		if err := json.Unmarshal(v, &fs); err != nil {
			return nil, shInvalid("Filters.%s: want a list of string filters: %v", name, err)
		}
		for _, f := range fs {
			if shMapFields[name] && (f.Key == "" || !slices.Contains(shComparisons[:6], f.Comparison) || strings.HasPrefix(f.Comparison, "PREFIX")) {
				return nil, shInvalid("Filters.%s: a map filter needs a Key and EQUALS, NOT_EQUALS, CONTAINS or NOT_CONTAINS", name)
			}
			if !slices.Contains(shComparisons, f.Comparison) {
				return nil, shInvalid("Filters.%s: Comparison %q: want one of %s", name, f.Comparison, strings.Join(shComparisons, ", "))
			}
		}
		out[name] = fs
	}
	return out, nil
}

type shGetResult struct {
	Findings  []map[string]any
	NextToken string `json:",omitempty"`
}

// shGetFindings serves GetFindings: the account's findings in the call's region that pass
// the filters, sorted as asked (by default, most recently updated first), a page at a
// time (MaxResults 1 to 100, default 100).
func (s *Sim) shGetFindings(c *call, a *Account, body []byte) (any, error) {
	var in struct {
		Filters      map[string]json.RawMessage
		SortCriteria []struct{ Field, SortOrder string }
		NextToken    string
		MaxResults   *int
	}
	if err := json.Unmarshal(nonEmpty(body), &in); err != nil {
		return nil, shInvalid("malformed request: %v", err)
	}
	h := s.hub(c, a)
	if !h.enabled {
		return nil, shNotSubscribed(a)
	}
	filters, err := shFilters(in.Filters)
	if err != nil {
		return nil, err
	}
	size := 100
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 100 {
			return nil, shInvalid("MaxResults must be a number between 1 and 100")
		}
		size = *in.MaxResults
	}
	var match []map[string]any
	for _, f := range h.findings {
		ok := true
		for name, fs := range filters {
			if !shMatches(name, fs, f.doc) {
				ok = false
				break
			}
		}
		if ok {
			match = append(match, f.doc)
		}
	}
	sorts := in.SortCriteria
	if len(sorts) == 0 {
		sorts = append(sorts, struct{ Field, SortOrder string }{"UpdatedAt", "desc"})
	}
	for _, sc := range sorts {
		if shStringFields[sc.Field] == nil {
			return nil, shInvalid("the simulator does not sort findings by %s", sc.Field)
		}
	}
	sort.SliceStable(match, func(i, j int) bool {
		for _, sc := range sorts {
			vi, vj := first(shStringFields[sc.Field](match[i])), first(shStringFields[sc.Field](match[j]))
			if sc.Field == "UpdatedAt" || sc.Field == "CreatedAt" {
				vi, vj = normTime(vi), normTime(vj)
			}
			if vi != vj {
				return (vi < vj) != strings.EqualFold(sc.SortOrder, "desc")
			}
		}
		return false
	})
	start := 0
	if in.NextToken != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(in.NextToken, "sh"))
		if err != nil || n < 0 || !strings.HasPrefix(in.NextToken, "sh") {
			return nil, shInvalid("Invalid NextToken")
		}
		start = n
	}
	start, end, next := pageOf(start, size, len(match))
	out := shGetResult{Findings: slices.Clip(match[start:end])}
	if out.Findings == nil {
		out.Findings = []map[string]any{}
	}
	if next != "" {
		out.NextToken = "sh" + strings.TrimPrefix(next, "p")
	}
	return out, nil
}

func nonEmpty(body []byte) []byte {
	if len(strings.TrimSpace(string(body))) == 0 {
		return []byte("{}")
	}
	return body
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// normTime makes an RFC 3339 time sortable as a string (UTC, nanoseconds).
func normTime(v string) string {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC().Format("2006-01-02T15:04:05.000000000Z")
	}
	return v
}

type shIdentifier struct {
	ID         string `json:"Id"`
	ProductArn string
}

type shUnprocessed struct {
	FindingIdentifier shIdentifier
	ErrorCode         string
	ErrorMessage      string
}

// shCustomerFields are the fields BatchUpdateFindings sets and which, once set, the
// provider's imports no longer change.
var shCustomerFields = []string{"Severity", "Confidence", "Criticality", "Types", "RelatedFindings"}

// shBatchUpdate serves BatchUpdateFindings: the customer's changes to up to 100 findings
// of the call's account and region. A finding not found, or named twice, is reported in
// UnprocessedFindings; an invalid change refuses the whole request.
func (s *Sim) shBatchUpdate(c *call, a *Account, body []byte) (any, error) {
	var in struct {
		FindingIdentifiers []shIdentifier
		Note               *struct{ Text, UpdatedBy string }
		Severity           *struct {
			Label      string
			Normalized *int
			Product    *float64
		}
		Workflow          *struct{ Status string }
		VerificationState string
		Confidence        *int
		Criticality       *int
		Types             []string
		UserDefinedFields map[string]string
		RelatedFindings   []shIdentifier
	}
	if err := json.Unmarshal(nonEmpty(body), &in); err != nil {
		return nil, shInvalid("malformed request: %v", err)
	}
	switch {
	case len(in.FindingIdentifiers) == 0 || len(in.FindingIdentifiers) > shFindingLimit:
		return nil, shInvalid("1 validation error detected: Value at 'findingIdentifiers' failed to satisfy constraint: Member must have length between 1 and %d, got %d", shFindingLimit, len(in.FindingIdentifiers))
	case in.Note != nil && (strings.TrimSpace(in.Note.Text) == "" || strings.TrimSpace(in.Note.UpdatedBy) == ""):
		return nil, shInvalid("Invalid Note: Text and UpdatedBy are required")
	case in.Note != nil && len(in.Note.Text) > 512:
		return nil, shInvalid("Invalid Note: Text must be at most 512 characters")
	case in.Workflow != nil && !slices.Contains(shWorkflowStatuses, in.Workflow.Status):
		return nil, shInvalid("Invalid Workflow.Status %q: want NEW, NOTIFIED, RESOLVED or SUPPRESSED", in.Workflow.Status)
	case in.Severity != nil && in.Severity.Label == "" && in.Severity.Normalized == nil:
		return nil, shInvalid("Invalid Severity: a Label or a Normalized score is required")
	case in.Severity != nil && in.Severity.Label != "" && !hasSeverity(map[string]any{"Label": in.Severity.Label}):
		return nil, shInvalid("Invalid Severity.Label %q: want INFORMATIONAL, LOW, MEDIUM, HIGH or CRITICAL", in.Severity.Label)
	case in.Note == nil && in.Severity == nil && in.Workflow == nil && in.VerificationState == "" && in.Confidence == nil &&
		in.Criticality == nil && in.Types == nil && in.UserDefinedFields == nil && in.RelatedFindings == nil:
		return nil, shInvalid("At least one of the finding attributes to update must be specified")
	}
	h := s.hub(c, a)
	if !h.enabled {
		return nil, shNotSubscribed(a)
	}
	out := struct {
		ProcessedFindings   []shIdentifier
		UnprocessedFindings []shUnprocessed
	}{ProcessedFindings: []shIdentifier{}, UnprocessedFindings: []shUnprocessed{}}
	seen := map[shIdentifier]int{}
	for _, id := range in.FindingIdentifiers {
		seen[id]++
	}
	now := s.now().UTC().Format("2006-01-02T15:04:05.000Z")
	for _, id := range in.FindingIdentifiers {
		f := h.byKey[hubKey(id.ProductArn, id.ID)]
		switch {
		case seen[id] > 1:
			out.UnprocessedFindings = append(out.UnprocessedFindings, shUnprocessed{id, "DuplicatedFindingIdentifier", "Finding Identifier is duplicated"})
			continue
		case f == nil:
			out.UnprocessedFindings = append(out.UnprocessedFindings, shUnprocessed{id, "FindingNotFound", "Finding Not Found"})
			continue
		}
		d := f.doc
		if in.Note != nil {
			d["Note"] = map[string]any{"Text": in.Note.Text, "UpdatedBy": in.Note.UpdatedBy, "UpdatedAt": now}
		}
		if in.Workflow != nil {
			d["Workflow"] = map[string]any{"Status": in.Workflow.Status}
			d["WorkflowState"] = map[string]string{"NEW": "NEW", "NOTIFIED": "ASSIGNED", "RESOLVED": "RESOLVED", "SUPPRESSED": "DEFERRED"}[in.Workflow.Status]
		}
		if in.Severity != nil {
			sev := map[string]any{}
			if in.Severity.Label != "" {
				sev["Label"] = in.Severity.Label
			}
			if in.Severity.Normalized != nil {
				sev["Normalized"] = json.Number(strconv.Itoa(*in.Severity.Normalized))
			}
			if in.Severity.Product != nil {
				sev["Product"] = *in.Severity.Product
			}
			d["Severity"] = sev
			normalizeSeverity(d)
			f.customer["Severity"] = true
		}
		if in.VerificationState != "" {
			d["VerificationState"] = in.VerificationState
		}
		if in.Confidence != nil {
			d["Confidence"], f.customer["Confidence"] = *in.Confidence, true
		}
		if in.Criticality != nil {
			d["Criticality"], f.customer["Criticality"] = *in.Criticality, true
		}
		if in.Types != nil {
			d["Types"], f.customer["Types"] = in.Types, true
		}
		if in.RelatedFindings != nil {
			d["RelatedFindings"], f.customer["RelatedFindings"] = in.RelatedFindings, true
		}
		if in.UserDefinedFields != nil {
			d["UserDefinedFields"] = in.UserDefinedFields
		}
		d["ProcessedAt"] = now
		out.ProcessedFindings = append(out.ProcessedFindings, id)
	}
	return out, nil
}

// SecurityHubFindings returns the Security Hub findings stored in an account and region
// (empty: every account, every region), as GetFindings would answer them (ASFF
// documents), in the order they were first imported, by account and region.
func (s *Sim) SecurityHubFindings(account, region string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.hubs))
	for k := range s.hubs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []map[string]any{}
	for _, k := range keys {
		acct, reg, _ := strings.Cut(k, "/")
		if (account != "" && acct != account) || (region != "" && reg != region) {
			continue
		}
		for _, f := range s.hubs[k].findings {
			b, err := json.Marshal(f.doc)
			if err != nil {
				continue
			}
			var cp map[string]any
			if json.Unmarshal(b, &cp) == nil {
				out = append(out, cp)
			}
		}
	}
	return out
}

// serveSecurityHubAdmin answers GET /_sim/securityhub/findings[?account=…&region=…].
func (s *Sim) serveSecurityHubAdmin(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	writeAdminJSON(w, s.SecurityHubFindings(q.Get("account"), q.Get("region")))
}
