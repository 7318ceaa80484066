package cloudsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IAM Access Analyzer's unused-access analyzer (REST-JSON, SigV4 service
// "access-analyzer"): ListAnalyzers, ListFindingsV2 and GetFindingV2, for the analyzer an
// account's world setting declares (Account.AccessAnalyzer). Its findings are computed,
// at each call, from the same last-access data Access Advisor reports (iam_lastaccessed.go),
// so that both sources agree: per role and user, one UnusedPermission finding listing each
// granted service unused for more than the analyzer's age (with its last use, if any
// within IAM's tracking period) and, for a service used since, its tracked actions unused
// that long. Groups get no findings, as with AWS. The simulator does not produce
// UnusedIAMRole, UnusedIAMUserAccessKey or UnusedIAMUserPassword findings.

// analyzerActions are the IAM actions of the operations whose action has another name:
// AWS authorizes the V2 finding calls as the first version's.
var analyzerActions = map[string]string{"ListFindingsV2": "ListFindings", "GetFindingV2": "GetFinding"}

// AccessAnalyzer is an account's unused-access analyzer.
type AccessAnalyzer struct {
	// Name defaults to "unused-access".
	Name string `yaml:"name,omitempty"`
	// Type is ACCOUNT_UNUSED_ACCESS (the default: the account's roles and users) or
	// ORGANIZATION_UNUSED_ACCESS (those of every account of the world's organization).
	Type string `yaml:"type,omitempty"`
	// UnusedAccessAge is how many days unused access must be to be a finding (default 90).
	UnusedAccessAge int `yaml:"unused_access_age,omitempty"`
	// Status is ACTIVE (the default), CREATING, DISABLED or FAILED.
	Status string `yaml:"status,omitempty"`
	// Region is where the analyzer is (analyzers are regional): default the account's
	// first region, else us-east-1.
	Region string `yaml:"region,omitempty"`
	// Created is when it was created (default: the simulator's clock).
	Created time.Time `yaml:"created,omitempty"`
}

// defaults fills in the analyzer's defaults for account a, and checks it.
func (an *AccessAnalyzer) defaults(a *Account) error {
	an.Name = or(an.Name, "unused-access")
	an.Type = or(an.Type, "ACCOUNT_UNUSED_ACCESS")
	an.Status = or(an.Status, "ACTIVE")
	if an.UnusedAccessAge == 0 {
		an.UnusedAccessAge = 90
	}
	if an.Region == "" {
		an.Region = "us-east-1"
		if len(a.Regions) > 0 {
			an.Region = a.Regions[0]
		}
	}
	switch {
	case an.Type != "ACCOUNT_UNUSED_ACCESS" && an.Type != "ORGANIZATION_UNUSED_ACCESS":
		return fmt.Errorf("account %s: access_analyzer.type %q: want ACCOUNT_UNUSED_ACCESS or ORGANIZATION_UNUSED_ACCESS", a.ID, an.Type)
	case !slices.Contains([]string{"ACTIVE", "CREATING", "DISABLED", "FAILED"}, an.Status):
		return fmt.Errorf("account %s: access_analyzer.status %q: want ACTIVE, CREATING, DISABLED or FAILED", a.ID, an.Status)
	case an.UnusedAccessAge < 1 || an.UnusedAccessAge > 365:
		return fmt.Errorf("account %s: access_analyzer.unused_access_age %d: want 1 to 365 days", a.ID, an.UnusedAccessAge)
	}
	return nil
}

func analyzerARN(a *Account, an *AccessAnalyzer) string {
	return "arn:aws:access-analyzer:" + an.Region + ":" + a.ID + ":analyzer/" + an.Name
}

// serveAccessAnalyzer routes an Access Analyzer request by method and path, then serves
// it as the JSON services are: admitted (faults, rate limits), authorized, recorded.
func (s *Sim) serveAccessAnalyzer(w http.ResponseWriter, r *http.Request, c *call, body []byte) {
	q := r.URL.Query()
	var h func(c *call, a *Account, an *AccessAnalyzer) (any, error)
	id, isFinding := strings.CutPrefix(r.URL.Path, "/findingv2/")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/analyzer":
		c.Action = "ListAnalyzers"
		h = func(c *call, a *Account, an *AccessAnalyzer) (any, error) { return s.listAnalyzers(c, a, an, q) }
	case r.Method == http.MethodPost && r.URL.Path == "/findingv2":
		c.Action = "ListFindingsV2"
		h = func(c *call, a *Account, an *AccessAnalyzer) (any, error) { return s.listFindingsV2(c, a, an, body) }
	case r.Method == http.MethodGet && isFinding && id != "":
		c.Action = "GetFindingV2"
		h = func(c *call, a *Account, an *AccessAnalyzer) (any, error) { return s.getFindingV2(c, a, an, id, q) }
	default:
		s.writeJSONError(w, c, errf(kindInvalid, "UnknownOperationException", "the simulator does not serve %s %s for access-analyzer", r.Method, r.URL.Path))
		return
	}
	if e := s.admit(r.Context(), c); e != nil {
		s.writeJSONError(w, c, e)
		return
	}
	s.mu.Lock()
	var res any
	var err error
	if e := s.authorize(c, func(*Account) string { return "*" }); e != nil {
		err = e
	} else if a, aerr := s.account(c); aerr != nil {
		err = aerr
	} else if res, err = h(c, a, a.AccessAnalyzer); err == nil {
		s.recordAccess(c)
	}
	s.mu.Unlock()
	s.delayAnswer(r.Context(), c)
	if err != nil {
		e := asAPIError(err)
		if e.Kind == kindNotFound {
			e.Status = http.StatusNotFound
		}
		s.writeJSONError(w, c, e)
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		s.writeJSONError(w, c, errf(kindInternal, "InternalServerException", "encode: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", c.ReqID)
	_, _ = w.Write(b)
}

type xAnalyzer struct {
	Arn                    string          `json:"arn"`
	Name                   string          `json:"name"`
	Type                   string          `json:"type"`
	Status                 string          `json:"status"`
	CreatedAt              awsTime         `json:"createdAt"`
	LastResourceAnalyzed   string          `json:"lastResourceAnalyzed,omitempty"`
	LastResourceAnalyzedAt *awsTime        `json:"lastResourceAnalyzedAt,omitempty"`
	Configuration          json.RawMessage `json:"configuration"`
}

// listAnalyzers lists the account's analyzer, when it is in the call's region and of the
// type asked for (if any).
func (s *Sim) listAnalyzers(c *call, a *Account, an *AccessAnalyzer, q url.Values) (any, error) {
	if _, _, err := pageParams(q.Get("maxResults"), q.Get("nextToken")); err != nil {
		return nil, err
	}
	out := struct {
		Analyzers []xAnalyzer `json:"analyzers"`
	}{Analyzers: []xAnalyzer{}}
	if t := q.Get("type"); t != "" && !slices.Contains([]string{"ACCOUNT", "ORGANIZATION", "ACCOUNT_UNUSED_ACCESS", "ORGANIZATION_UNUSED_ACCESS", "ACCOUNT_INTERNAL_ACCESS", "ORGANIZATION_INTERNAL_ACCESS"}, t) {
		return nil, errf(kindInvalid, "ValidationException", "1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set", t)
	}
	if an == nil || an.Region != c.Region || (q.Get("type") != "" && q.Get("type") != an.Type) {
		return out, nil
	}
	now := s.stamp()
	created := an.Created
	if created.IsZero() {
		created = now
	}
	x := xAnalyzer{Arn: analyzerARN(a, an), Name: an.Name, Type: an.Type, Status: an.Status, CreatedAt: awsTime(created),
		Configuration: json.RawMessage(fmt.Sprintf(`{"unusedAccess":{"unusedAccessAge":%d}}`, an.UnusedAccessAge))}
	if an.Status == "ACTIVE" {
		x.LastResourceAnalyzedAt = optTime(&now)
	}
	out.Analyzers = append(out.Analyzers, x)
	return out, nil
}

// xFinding is a finding: its summary, and its details for GetFindingV2.
type xFinding struct {
	AnalyzedAt           awsTime `json:"analyzedAt"`
	CreatedAt            awsTime `json:"createdAt"`
	UpdatedAt            awsTime `json:"updatedAt"`
	ID                   string  `json:"id"`
	Resource             string  `json:"resource"`
	ResourceOwnerAccount string  `json:"resourceOwnerAccount"`
	ResourceType         string  `json:"resourceType"`
	Status               string  `json:"status"`
	FindingType          string  `json:"findingType"`
	details              []xUnusedPermission
}

type xUnusedPermission struct {
	ServiceNamespace string          `json:"serviceNamespace"`
	LastAccessed     *awsTime        `json:"lastAccessed,omitempty"`
	Actions          []xUnusedAction `json:"actions,omitempty"`
}

type xUnusedAction struct {
	Action       string   `json:"action"`
	LastAccessed *awsTime `json:"lastAccessed,omitempty"`
}

// analyzerOf finds the call's analyzer by ARN: the account's, in the call's region.
func analyzerOf(c *call, a *Account, an *AccessAnalyzer, arn string) error {
	if arn == "" {
		return errf(kindInvalid, "ValidationException", "analyzerArn is required")
	}
	if an == nil || an.Region != c.Region || analyzerARN(a, an) != arn {
		return errf(kindNotFound, "ResourceNotFoundException", "Analyzer %s not found", arn)
	}
	return nil
}

// findings are the analyzer's active findings, computed now from the last-access data:
// one UnusedPermission finding per role or user with something unused for longer than
// the analyzer's age, sorted by resource. An analyzer that is not ACTIVE has none.
func (s *Sim) findings(a *Account, an *AccessAnalyzer) []xFinding {
	if an.Status != "ACTIVE" {
		return nil
	}
	accounts := []*Account{a}
	if an.Type == "ORGANIZATION_UNUSED_ACCESS" && s.world.AWS.Organization != nil {
		accounts = s.world.AWS.Accounts
	}
	now := s.stamp()
	cutoff := now.AddDate(0, 0, -an.UnusedAccessAge)
	var out []xFinding
	for _, acct := range accounts {
		var principals []string
		for _, u := range acct.Users {
			principals = append(principals, userARN(acct.ID, u))
		}
		for _, r := range acct.Roles {
			principals = append(principals, roleARN(acct.ID, r))
		}
		for _, arn := range principals {
			sources, docs, err := s.accessSubject(acct, arn)
			if err != nil {
				continue
			}
			var details []xUnusedPermission
			for _, x := range s.accessReport(acct, policyGrants(docs), sources, true, now) {
				if d, ok := unusedDetail(x, cutoff); ok {
					details = append(details, d)
				}
			}
			if len(details) == 0 {
				continue
			}
			resType := "AWS::IAM::User"
			if strings.Contains(arn, ":role/") {
				resType = "AWS::IAM::Role"
			}
			out = append(out, xFinding{AnalyzedAt: awsTime(now), CreatedAt: awsTime(now), UpdatedAt: awsTime(now),
				ID: jobUUID("access-analyzer/" + analyzerARN(a, an) + "/" + arn), Resource: arn, ResourceOwnerAccount: acct.ID,
				ResourceType: resType, Status: "ACTIVE", FindingType: "UnusedPermission", details: details})
		}
	}
	slices.SortFunc(out, func(x, y xFinding) int { return strings.Compare(x.Resource, y.Resource) })
	return out
}

// unusedDetail is what a service of an Access Advisor report shows unused before cutoff:
// the whole service (with its last use, if any), or, for a service used since, its
// tracked actions unused.
func unusedDetail(x xServiceLastAccessed, cutoff time.Time) (xUnusedPermission, bool) {
	d := xUnusedPermission{ServiceNamespace: x.ServiceNamespace, LastAccessed: x.LastAuthenticated}
	if x.LastAuthenticated == nil || !time.Time(*x.LastAuthenticated).After(cutoff) {
		return d, true
	}
	if x.TrackedActionsLastAccessed == nil {
		return d, false
	}
	for _, t := range x.TrackedActionsLastAccessed.Member {
		if t.LastAccessedTime == nil || !time.Time(*t.LastAccessedTime).After(cutoff) {
			d.Actions = append(d.Actions, xUnusedAction{Action: x.ServiceNamespace + ":" + t.ActionName, LastAccessed: t.LastAccessedTime})
		}
	}
	return d, len(d.Actions) > 0
}

// findingFilterKeys are the filter keys ListFindingsV2 honours here.
var findingFilterKeys = map[string]func(f xFinding) string{
	"id": func(f xFinding) string { return f.ID }, "resource": func(f xFinding) string { return f.Resource },
	"resourceType": func(f xFinding) string { return f.ResourceType }, "status": func(f xFinding) string { return f.Status },
	"findingType": func(f xFinding) string { return f.FindingType }, "resourceOwnerAccount": func(f xFinding) string { return f.ResourceOwnerAccount },
}

type criterion struct {
	Eq  []string `json:"eq"`
	Neq []string `json:"neq"`
}

func (s *Sim) listFindingsV2(c *call, a *Account, an *AccessAnalyzer, body []byte) (any, error) {
	var in struct {
		AnalyzerArn string               `json:"analyzerArn"`
		Filter      map[string]criterion `json:"filter"`
		MaxResults  int                  `json:"maxResults"`
		NextToken   string               `json:"nextToken"`
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if err := analyzerOf(c, a, an, in.AnalyzerArn); err != nil {
		return nil, err
	}
	for k := range in.Filter {
		if findingFilterKeys[k] == nil {
			return nil, errf(kindInvalid, "ValidationException", "Invalid filter key: %s", k)
		}
	}
	var kept []xFinding
	for _, f := range s.findings(a, an) {
		ok := true
		for k, cr := range in.Filter {
			v := findingFilterKeys[k](f)
			if (len(cr.Eq) > 0 && !slices.Contains(cr.Eq, v)) || slices.Contains(cr.Neq, v) {
				ok = false
			}
		}
		if ok {
			kept = append(kept, f)
		}
	}
	start, size, err := pageParams(strconv.Itoa(in.MaxResults), in.NextToken)
	if err != nil {
		return nil, err
	}
	start, end, next := pageOf(start, size, len(kept))
	out := struct {
		Findings  []xFinding `json:"findings"`
		NextToken string     `json:"nextToken,omitempty"`
	}{Findings: append([]xFinding{}, kept[start:end]...), NextToken: next}
	return out, nil
}

func (s *Sim) getFindingV2(c *call, a *Account, an *AccessAnalyzer, id string, q url.Values) (any, error) {
	if err := analyzerOf(c, a, an, q.Get("analyzerArn")); err != nil {
		return nil, err
	}
	for _, f := range s.findings(a, an) {
		if f.ID != id {
			continue
		}
		start, size, err := pageParams(q.Get("maxResults"), q.Get("nextToken"))
		if err != nil {
			return nil, err
		}
		start, end, next := pageOf(start, size, len(f.details))
		details := make([]map[string]xUnusedPermission, 0, end-start)
		for _, d := range f.details[start:end] {
			details = append(details, map[string]xUnusedPermission{"unusedPermissionDetails": d})
		}
		return struct {
			xFinding
			FindingDetails []map[string]xUnusedPermission `json:"findingDetails"`
			NextToken      string                         `json:"nextToken,omitempty"`
		}{f, details, next}, nil
	}
	return nil, errf(kindNotFound, "ResourceNotFoundException", "Finding %s not found", id)
}

// pageParams reads maxResults (default and most 100) and nextToken (an offset the
// simulator gave).
func pageParams(maxResults, token string) (start, size int, err error) {
	size = 100
	if maxResults != "" && maxResults != "0" {
		n, err := strconv.Atoi(maxResults)
		if err != nil || n < 1 {
			return 0, 0, errf(kindInvalid, "ValidationException", "maxResults %q: want a positive number", maxResults)
		}
		size = min(n, 100)
	}
	if token != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(token, "p"))
		if err != nil || n < 0 || !strings.HasPrefix(token, "p") {
			return 0, 0, errf(kindInvalid, "ValidationException", "Invalid nextToken")
		}
		start = n
	}
	return start, size, nil
}

// pageOf is the page [start, end) of n items, and the token of the next ("" at the end).
func pageOf(start, size, n int) (int, int, string) {
	start = min(start, n)
	end := min(start+size, n)
	if end < n {
		return start, end, "p" + strconv.Itoa(end)
	}
	return start, end, ""
}
