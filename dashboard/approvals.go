package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
)

// approvalView is one request as the approvals page shows it: the request, the action it
// asks for, and what the visitor may do with it.
type approvalView struct {
	gates.Request
	Action *remediate.Record
	// Title is the title of the action's policy, when a finding of it is known.
	Title   string
	Expired bool
	// CanDecide shows the buttons and the checkbox; Why says why they are not shown.
	CanDecide bool
	Why       string
	// Selected checks the request's checkbox (the page's "select all").
	Selected bool
}

// Shown is the request's state as the page names it: a pending request past its expiry
// is expired, whether or not the gate has marked it yet.
func (v approvalView) Shown() string {
	if v.Expired {
		return string(gates.StateExpired)
	}
	return string(v.State)
}

// Policy is the action's policy, empty when the action is unknown.
func (v approvalView) Policy() string {
	if v.Action == nil {
		return ""
	}
	return v.Action.Policy
}

// Account is the account or project of the action's target.
func (v approvalView) Account() string {
	if v.Action == nil {
		return ""
	}
	return v.Action.Account
}

// ParamsSummary is the action's params on one line (key=value, sorted), for the
// confirmation's list.
func (v approvalView) ParamsSummary() string {
	if v.Action == nil || len(v.Action.Params) == 0 {
		return "—"
	}
	keys := make([]string, 0, len(v.Action.Params))
	for k := range v.Action.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v.Action.Params[k]))
	}
	s := strings.Join(parts, ", ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// approvalFilter is the approvals page's query: filters, sort and grouping, as GET
// parameters so that a view can be linked and works without JavaScript.
type approvalFilter struct {
	Policy, Account, Risk, Remediator, State string
	Sort, Group                              string
	// Select checks the boxes of every row shown ("all") or of one group ("g:" + key).
	Select string
}

// approvalStates are the state filter's choices; pending (the default) is what waits
// for a decision now, decided is every other state.
var approvalStates = []string{"pending", "approved", "denied", "expired", "voided", "decided", "all"}

// approvalSorts are the sort choices, the default first.
var approvalSorts = []string{"risk", "expiry", "newest", "oldest", "policy", "account"}

// approvalGroups are the grouping choices ("" is none).
var approvalGroups = []string{"policy", "account", "risk"}

func parseApprovalFilter(r *http.Request) approvalFilter {
	q := r.URL.Query()
	fl := approvalFilter{Policy: q.Get("policy"), Account: q.Get("account"), Risk: q.Get("risk"), Remediator: q.Get("remediator"),
		State: q.Get("state"), Sort: q.Get("sort"), Group: q.Get("group"), Select: q.Get("select")}
	if !slices.Contains(approvalStates, fl.State) {
		fl.State = "pending"
	}
	if !slices.Contains(approvalSorts, fl.Sort) {
		fl.Sort = approvalSorts[0]
	}
	if !slices.Contains(approvalGroups, fl.Group) {
		fl.Group = ""
	}
	return fl
}

func (fl approvalFilter) keep(v *approvalView) bool {
	switch fl.State {
	case "all":
	case "decided":
		if v.Shown() == string(gates.StatePending) {
			return false
		}
	default:
		if v.Shown() != fl.State {
			return false
		}
	}
	return (fl.Policy == "" || v.Policy() == fl.Policy) && (fl.Account == "" || v.Account() == fl.Account) &&
		(fl.Risk == "" || v.Risk.String() == fl.Risk) && (fl.Remediator == "" || v.Remediator == fl.Remediator)
}

// Query is the filter as a query string, with one parameter set to another value (for
// the page's links): key, value pairs.
func (fl approvalFilter) Query(kv ...string) string {
	m := map[string]string{"policy": fl.Policy, "account": fl.Account, "risk": fl.Risk, "remediator": fl.Remediator,
		"state": fl.State, "sort": fl.Sort, "group": fl.Group}
	if m["state"] == "pending" {
		m["state"] = ""
	}
	if m["sort"] == approvalSorts[0] {
		m["sort"] = ""
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	var args []any
	for _, k := range []string{"state", "policy", "account", "risk", "remediator", "sort", "group", "select"} {
		args = append(args, k, m[k])
	}
	return query(args...)
}

// compare orders two rows by the chosen sort; ties fall to the soonest expiry, then the id.
func (fl approvalFilter) compare(a, b *approvalView) int {
	var c int
	switch fl.Sort {
	case "risk":
		c = cmp.Compare(b.Risk, a.Risk)
	case "newest":
		c = b.CreatedAt.Compare(a.CreatedAt)
	case "oldest":
		c = a.CreatedAt.Compare(b.CreatedAt)
	case "policy":
		c = cmp.Compare(a.Policy(), b.Policy())
	case "account":
		c = cmp.Compare(a.Account(), b.Account())
	}
	return cmp.Or(c, a.ExpiresAt.Compare(b.ExpiresAt), cmp.Compare(a.ID, b.ID))
}

// groupKey is the row's group under the chosen grouping.
func (fl approvalFilter) groupKey(v *approvalView) string {
	switch fl.Group {
	case "policy":
		return v.Policy()
	case "account":
		return v.Account()
	case "risk":
		return v.Risk.String()
	}
	return ""
}

// approvalGroup is the rows of one group (one group of everything without grouping).
type approvalGroup struct {
	Key, Label string
	Rows       []approvalView
	// Decidable counts the rows the visitor may decide.
	Decidable int
	risk      findings.Risk
}

type approvalChoices struct {
	Policies, Accounts, Remediators, Risks []string
}

type approvalsData struct {
	Filter  approvalFilter
	Choices approvalChoices
	// Titles are the policies' titles, for the policy filter's choices.
	Titles   map[string]string
	States   []string
	Sorts    []string
	Groups   []approvalGroup
	Grouping []string
	Total    int
	// Decidable counts the shown rows the visitor may decide; Bulk says whether the
	// page offers the bulk decision (an approver, and something to decide).
	Decidable int
	Bulk      bool
	MaxBatch  int
	Vouched   bool
}

// approvals reads every request with its action and its policy's title, judged for p.
func (d *Dashboard) approvals(ctx context.Context, p *Principal, f gates.Filter) ([]approvalView, error) {
	reqs, err := d.o.Gate.List(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("read the approval requests: %w", err)
	}
	recs, err := d.o.Actions.Actions(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the actions: %w", err)
	}
	actions := make(map[string]*remediate.Record, len(recs))
	for _, rec := range recs {
		actions[rec.ID] = rec
	}
	titles, err := d.policyTitles(ctx)
	if err != nil {
		return nil, err
	}
	now := d.now()
	out := make([]approvalView, 0, len(reqs))
	for _, req := range reqs {
		v := approvalView{Request: req, Action: actions[req.ActionID], Expired: req.State == gates.StatePending && !now.Before(req.ExpiresAt)}
		v.Title = titles[v.Policy()]
		if req.State == gates.StatePending && !v.Expired {
			switch dec, decided := req.DecisionBy(p.Name); {
			case !p.May(RoleApprover):
				v.Why = "Deciding needs the approver role."
			case p.Name == req.Requester:
				v.Why = "You requested this fix: another approver must decide."
			case decided:
				v.Why = "You " + string(dec.Vote) + "d this request " + ago(now, dec.At) + "."
			default:
				v.CanDecide = true
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// policyTitles maps the policies of the known findings to their titles.
func (d *Dashboard) policyTitles(ctx context.Context) (map[string]string, error) {
	pos, err := d.loadPosture(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the findings: %w", err)
	}
	return pos.titles(), nil
}

func (d *Dashboard) approvalsPage(w http.ResponseWriter, r *http.Request, p *Principal) {
	all, err := d.approvals(r.Context(), p, gates.Filter{})
	if err != nil {
		d.failed(w, r, p, "read the approval requests", err)
		return
	}
	fl := parseApprovalFilter(r)
	data := approvalsData{Filter: fl, Titles: map[string]string{}, States: approvalStates, Sorts: approvalSorts, Grouping: approvalGroups,
		MaxBatch: maxBatch, Vouched: p.Vouched()}
	var rows []approvalView
	for i := range all {
		v := &all[i]
		data.Choices.Policies = append(data.Choices.Policies, v.Policy())
		if v.Title != "" {
			data.Titles[v.Policy()] = v.Title
		}
		data.Choices.Accounts = append(data.Choices.Accounts, v.Account())
		data.Choices.Remediators = append(data.Choices.Remediators, v.Remediator)
		if fl.keep(v) {
			rows = append(rows, *v)
		}
	}
	for _, l := range []*[]string{&data.Choices.Policies, &data.Choices.Accounts, &data.Choices.Remediators} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
		*l = slices.DeleteFunc(*l, func(s string) bool { return s == "" })
	}
	for _, rk := range findings.Risks {
		data.Choices.Risks = append(data.Choices.Risks, rk.String())
	}
	slices.SortStableFunc(rows, func(a, b approvalView) int { return fl.compare(&a, &b) })
	data.Total = len(rows)
	data.Groups = groupApprovals(fl, rows)
	for i := range data.Groups {
		g := &data.Groups[i]
		for j := range g.Rows {
			v := &g.Rows[j]
			if !v.CanDecide {
				continue
			}
			g.Decidable++
			data.Decidable++
			v.Selected = fl.Select == "all" || fl.Select == "g:"+g.Key
		}
	}
	data.Bulk = p.May(RoleApprover) && data.Decidable > 0
	d.render(w, r, p, http.StatusOK, "approvals", "Approvals", data)
}

// groupApprovals splits the sorted rows into the filter's groups: risks from the highest,
// the others by name; rows keep their order within a group.
func groupApprovals(fl approvalFilter, rows []approvalView) []approvalGroup {
	if fl.Group == "" {
		return []approvalGroup{{Rows: rows}}
	}
	var groups []approvalGroup
	at := map[string]int{}
	for _, v := range rows {
		k := fl.groupKey(&v)
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			label := k
			if label == "" {
				label = "(unknown)"
			}
			if fl.Group == "policy" && v.Title != "" {
				label = v.Title
			}
			groups = append(groups, approvalGroup{Key: k, Label: label, risk: v.Risk})
		}
		groups[i].Rows = append(groups[i].Rows, v)
	}
	slices.SortStableFunc(groups, func(a, b approvalGroup) int {
		if fl.Group == "risk" {
			return cmp.Compare(b.risk, a.risk)
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return groups
}

// expiresIn says how long a pending request has left.
func expiresIn(now, at time.Time) string {
	if !now.Before(at) {
		return "expired " + ago(now, at)
	}
	return "expires in " + fmtDuration(at.Sub(now))
}

// shortUID is the end of a resource uid a person recognizes a resource by: an ARN's
// resource (user/jane, security-group/sg-…), a Google full name's last two segments;
// the page shows the whole uid beside it.
func shortUID(uid string) string {
	if strings.HasPrefix(uid, "arn:") {
		if parts := strings.SplitN(uid, ":", 6); len(parts) == 6 && parts[5] != "" {
			return parts[5]
		}
		return uid
	}
	if strings.HasPrefix(uid, "//") {
		segs := strings.Split(uid, "/")
		if len(segs) > 4 {
			return strings.Join(segs[len(segs)-2:], "/")
		}
	}
	return uid
}
