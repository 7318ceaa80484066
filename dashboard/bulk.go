package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/warden-sec/warden/gates"
)

// maxBatch is the most requests one bulk decision takes.
const maxBatch = 200

// bulkData is the page of a bulk decision: its confirmation (Results nil), then what
// happened to each request.
type bulkData struct {
	Approve bool
	Verb    string
	Reason  string
	// Rows are the selected requests as they stand, in the order selected; Confirm binds
	// the second POST to exactly these ids and this decision.
	Rows    []approvalView
	IDs     []string
	Confirm string
	Problem string
	Back    string
	// Results say, per request, what the gate did; Recorded and Refused count them.
	Results           []bulkResult
	Recorded, Refused int
}

type bulkResult struct {
	ID, Change string
	OK         bool
	Text       string
}

// bulkForm reads a bulk decision's form: the decision, the selected ids (in order, each
// once) and the reason; problem says what is wrong with it.
func bulkForm(r *http.Request) (approve bool, ids []string, reason, problem string) {
	switch r.PostFormValue("decision") {
	case "approve":
		approve = true
	case "deny":
	default:
		return false, nil, "", "Choose approve or deny."
	}
	seen := map[string]bool{}
	for _, id := range r.PostForm["id"] {
		if id = strings.TrimSpace(id); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	reason = strings.TrimSpace(r.PostFormValue("reason"))
	switch {
	case len(ids) == 0:
		problem = "No request is selected: tick the requests to decide first."
	case len(ids) > maxBatch:
		problem = fmt.Sprintf("%d requests are selected; one decision takes %d at most. Filter the page down and decide them in parts.", len(ids), maxBatch)
	}
	return approve, ids, reason, problem
}

// bulkBack is where the bulk pages send the browser back to: the approvals page it came
// from, its filters kept and its selection dropped (those requests are decided now).
func bulkBack(r *http.Request) string {
	ref := r.PostFormValue("back")
	u, err := url.Parse(ref)
	if !localPath(ref) || err != nil || u.Path != "/approvals" {
		return "/approvals"
	}
	q := u.Query()
	q.Del("select")
	u.RawQuery = q.Encode()
	return u.RequestURI()
}

// confirmBulk is the first POST of a bulk decision: it decides nothing, and answers with
// the confirmation page listing every selected change as it stands, whose form carries
// a token binding the second POST to these ids and this decision.
func (d *Dashboard) confirmBulk(w http.ResponseWriter, r *http.Request, p *Principal) {
	approve, ids, reason, problem := bulkForm(r)
	data := bulkData{Approve: approve, Verb: verb(approve), Reason: reason, IDs: ids, Back: bulkBack(r)}
	if problem != "" {
		data.IDs, data.Problem = nil, problem
		d.render(w, r, p, http.StatusBadRequest, "bulk", "Confirm decisions", data)
		return
	}
	var err error
	if data.Rows, err = d.selected(r.Context(), p, ids); err != nil {
		d.failed(w, r, p, "read the approval requests", err)
		return
	}
	data.Confirm = confirmToken(p, data.Verb, ids)
	d.render(w, r, p, http.StatusOK, "bulk", "Confirm decisions", data)
}

// selected reads the selected requests, in the order selected; an unknown id is listed
// as such (the gate will refuse it).
func (d *Dashboard) selected(ctx context.Context, p *Principal, ids []string) ([]approvalView, error) {
	all, err := d.approvals(ctx, p, gates.Filter{})
	if err != nil {
		return nil, err
	}
	byID := make(map[string]approvalView, len(all))
	for _, v := range all {
		byID[v.ID] = v
	}
	rows := make([]approvalView, 0, len(ids))
	for _, id := range ids {
		v, ok := byID[id]
		if !ok {
			v = approvalView{Request: gates.Request{ID: id}, Why: "No such approval request."}
		}
		rows = append(rows, v)
	}
	return rows, nil
}

// decideBulk is the confirmed second POST: each request is decided through the same
// gate call as a single decision (one compare-and-set and audit entry each), and the
// page says what happened to each.
func (d *Dashboard) decideBulk(w http.ResponseWriter, r *http.Request, p *Principal) {
	approve, ids, reason, problem := bulkForm(r)
	data := bulkData{Approve: approve, Verb: verb(approve), Reason: reason, IDs: ids, Back: bulkBack(r)}
	if problem == "" && !checkConfirm(p, data.Verb, ids, r.PostFormValue("confirm")) {
		problem = "Not confirmed: these decisions were not listed on a confirmation page. Select them again."
	}
	if problem != "" {
		d.log.Warn("dashboard: bulk decision refused", "actor", p.Name, "requests", len(ids), "reason", problem)
		data.IDs, data.Problem = nil, problem
		d.render(w, r, p, http.StatusBadRequest, "bulk", "Confirm decisions", data)
		return
	}
	ctx := r.Context()
	if err := reasonProblem(approve, reason); err != nil {
		// The same for every request: say it once, with the list still to confirm.
		var rerr error
		if data.Rows, rerr = d.selected(ctx, p, ids); rerr != nil {
			d.failed(w, r, p, "read the approval requests", rerr)
			return
		}
		data.Confirm, data.Problem = confirmToken(p, data.Verb, ids), "Not decided: "+err.Error()+"."
		d.render(w, r, p, http.StatusBadRequest, "bulk", "Confirm decisions", data)
		return
	}
	for _, id := range ids {
		req, err := d.decideOne(ctx, p, id, approve, reason)
		res := bulkResult{ID: id}
		if req.Remediator != "" {
			res.Change = req.Remediator + " on " + req.Target
		}
		switch {
		case err == nil:
			res.OK, res.Text = true, "recorded: "+outcome(req)
			data.Recorded++
		case refusal(err):
			res.Text = "refused: " + gates.Reason(err)
			data.Refused++
		default:
			res.Text = "not recorded: warden could not reach its store; nothing was decided"
			data.Refused++
		}
		data.Results = append(data.Results, res)
	}
	d.log.Info("dashboard: bulk decision", "actor", p.Name, "decision", data.Verb, "requests", len(ids),
		"recorded", data.Recorded, "refused", data.Refused, "via", p.Via)
	d.render(w, r, p, http.StatusOK, "bulk", "Decisions", data)
}

// reasonProblem is what the gate would refuse about the reason of every request alike.
func reasonProblem(approve bool, reason string) error {
	switch {
	case !approve && reason == "":
		return gates.ErrDenyNeedsReason
	case len([]rune(reason)) > gates.MaxReason:
		return gates.ErrReasonTooLong
	}
	return nil
}

func verb(approve bool) string {
	if approve {
		return "approve"
	}
	return "deny"
}

// outcome says where a request stands after a recorded decision.
func outcome(req gates.Request) string {
	switch req.State {
	case gates.StateApproved:
		return fmt.Sprintf("approved (%d of %d); warden serve applies it next", len(req.Approvals()), req.Quorum)
	case gates.StateDenied:
		return "denied: " + req.Remediator + " on " + req.Target + " will not run"
	}
	n := len(req.Approvals())
	return fmt.Sprintf("approved by you (%d of %d); %d more needed", n, req.Quorum, req.Quorum-n)
}

// confirmToken binds a bulk decision's second POST to what its confirmation page listed:
// an HMAC keyed by the principal's binding secret over the decision and the ids in order.
// A form that skipped the confirmation, or added a request to it, does not carry it.
func confirmToken(p *Principal, verb string, ids []string) string {
	m := hmac.New(sha256.New, []byte(p.binding))
	m.Write([]byte("warden dashboard bulk decision v1\x00" + p.Name + "\x00" + verb + "\x00" + strings.Join(ids, "\n")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkConfirm reports whether got is the confirmation token of these decisions.
func checkConfirm(p *Principal, verb string, ids []string, got string) bool {
	return got != "" && hmac.Equal([]byte(got), []byte(confirmToken(p, verb, ids)))
}
