package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

type overviewData struct {
	Source            string
	Summary           summary
	Resources         int
	Severity, History chart
	Convergence       chart
	Daemon            bool
	Pending           int
	ActionsByState    []stateCount
	AuditEntries      int64
	LastCheckpoint    time.Time
	HasCheckpoint     bool
	ConvergenceDays   int
	WaiverFile        string
	RollbackAvailable bool
}

type stateCount struct {
	State string
	Count int
}

func (d *Dashboard) overviewPage(w http.ResponseWriter, r *http.Request, p *Principal) {
	ctx := r.Context()
	pos, err := d.loadPosture(ctx)
	if err != nil {
		d.failed(w, r, p, "read the findings", err)
		return
	}
	now := d.now()
	data := overviewData{Source: pos.Source(), Summary: pos.summarize(now), Resources: pos.Resources, Daemon: pos.Daemon,
		ConvergenceDays: 14, WaiverFile: d.o.WaiverFile}
	data.Severity = severityChart(data.Summary.BySeverity)
	hist, err := d.history(ctx, 30)
	if err != nil {
		d.failed(w, r, p, "read the scan history", err)
		return
	}
	data.History = historyChart(hist)
	data.Convergence = convergenceChart(pos.days(now, data.ConvergenceDays))
	pending, err := d.o.Gate.List(ctx, gates.Filter{States: []gates.State{gates.StatePending}})
	if err != nil {
		d.failed(w, r, p, "read the approval requests", err)
		return
	}
	data.Pending = len(pending)
	acts, err := d.o.Actions.Actions(ctx)
	if err != nil {
		d.failed(w, r, p, "read the actions", err)
		return
	}
	byState := map[string]int{}
	for _, a := range acts {
		byState[string(a.State)]++
	}
	for s, n := range byState {
		data.ActionsByState = append(data.ActionsByState, stateCount{s, n})
	}
	slices.SortFunc(data.ActionsByState, func(a, b stateCount) int { return cmp.Compare(a.State, b.State) })
	if data.AuditEntries, data.LastCheckpoint, data.HasCheckpoint, err = d.auditSize(ctx); err != nil {
		d.failed(w, r, p, "read the audit log", err)
		return
	}
	d.render(w, r, p, http.StatusOK, "overview", "Overview", data)
}

type findingsData struct {
	Source   string
	Filter   filter
	Choices  choices
	Titles   map[string]string
	Rows     []finding
	Total    int
	Pages    int
	CanWaive bool
	// CanRollback: the principal may roll back the fix a watch finding names (admin).
	CanRollback bool
	NoWaive     string
	MaxDate     string
	MinDate     string
	Severities  []string
	Statuses    []string
	Daemon      bool
}

func (d *Dashboard) findingsPage(w http.ResponseWriter, r *http.Request, p *Principal) {
	pos, err := d.loadPosture(r.Context())
	if err != nil {
		d.failed(w, r, p, "read the findings", err)
		return
	}
	q := r.URL.Query()
	fl := filter{Severity: q.Get("severity"), Policy: q.Get("policy"), Account: q.Get("account"), Status: q.Get("status"), Q: strings.TrimSpace(q.Get("q"))}
	fl.Page, _ = strconv.Atoi(q.Get("page"))
	fl.Page = max(fl.Page, 1)
	var rows []finding
	for i := range pos.Findings {
		if fl.keep(&pos.Findings[i]) {
			rows = append(rows, pos.Findings[i])
		}
	}
	data := findingsData{Source: pos.Source(), Filter: fl, Choices: pos.choices(), Titles: pos.titles(), Total: len(rows), Daemon: pos.Daemon,
		Pages: max(1, (len(rows)+pageSize-1)/pageSize), CanWaive: p.May(RoleApprover) && d.o.WaiverFile != "",
		CanRollback: p.May(RoleAdmin) && d.o.Rollback != nil}
	for _, s := range findings.Severities {
		data.Severities = append(data.Severities, s.String())
	}
	data.Statuses = []string{findings.StatusOpen, findings.StatusWaived, findings.StatusUnknown, findings.StatusResolved, "all"}
	switch {
	case d.o.WaiverFile == "":
		data.NoWaive = "Waiving from this page is off: the config names no waiver file (waivers:)."
	case !p.May(RoleApprover):
		data.NoWaive = "Waiving needs the approver role."
	}
	today := d.now().UTC()
	data.MinDate = today.AddDate(0, 0, 1).Format(time.DateOnly)
	data.MaxDate = today.AddDate(0, 0, maxWaiverDays).Format(time.DateOnly)
	from := min((fl.Page-1)*pageSize, len(rows))
	data.Rows = rows[from:min(from+pageSize, len(rows))]
	d.render(w, r, p, http.StatusOK, "findings", "Findings", data)
}

type actionView struct {
	*remediate.Record
	CanRollback bool
	NoRollback  string
}

type actionsData struct {
	State  string
	States []string
	Rows   []actionView
	Total  int
}

// actionStates are the actions page's filters: applied means verified.
var actionStates = map[string]remediate.State{"applied": remediate.StateVerified, "failed": remediate.StateFailed,
	"rolled_back": remediate.StateRolledBack, "pending_approval": remediate.StatePending, "in_progress": remediate.StateInProgress}

func (d *Dashboard) actionsPage(w http.ResponseWriter, r *http.Request, p *Principal) {
	rs, err := d.o.Actions.Actions(r.Context())
	if err != nil {
		d.failed(w, r, p, "read the actions", err)
		return
	}
	state := r.URL.Query().Get("state")
	data := actionsData{State: state, States: []string{"applied", "failed", "rolled_back", "pending_approval", "in_progress"}}
	for _, rec := range rs {
		if want, ok := actionStates[state]; ok && rec.State != want {
			continue
		}
		data.Total++
		if len(data.Rows) >= 200 {
			continue
		}
		v := actionView{Record: rec}
		rollbackable := rec.State == remediate.StateVerified || rec.Progress != nil && (rec.State == remediate.StateInProgress || rec.State == remediate.StateFailed)
		switch {
		case !rollbackable:
		case !rec.Rollback.Possible:
			v.NoRollback = "No rollback: " + rec.Rollback.Reason
		case d.o.Rollback == nil:
			v.NoRollback = "Rollback is off: this warden serve has no live targets to call."
		case !p.May(RoleAdmin):
			v.NoRollback = "Rolling back needs the admin role."
		default:
			v.CanRollback = true
		}
		data.Rows = append(data.Rows, v)
	}
	d.render(w, r, p, http.StatusOK, "actions", "Actions", data)
}

// verification is one check of the audit log (audit.Log.Verify), kept a minute.
type verification struct {
	At          time.Time
	OK          bool
	Entries     int64
	Root        string
	Checkpoints int
	Problem     string
	// Unchecked says why the checkpoints' signatures were not checked.
	Unchecked string
}

// verifyEvery is how long a verification is shown before the log is read again: it
// reads every entry, and the audit page is paged through.
const verifyEvery = time.Minute

func (d *Dashboard) verify(ctx context.Context, hasCheckpoint bool) (*verification, error) {
	d.verifyMu.Lock()
	defer d.verifyMu.Unlock()
	if v := d.verified; v != nil && d.now().Sub(v.At) < verifyEvery {
		return v, nil
	}
	v := &verification{At: d.now()}
	if d.o.Verifier == nil && hasCheckpoint {
		// Verify needs the key to check a stored checkpoint: say so rather than fail.
		v.Unchecked = "no verifier key ($WARDEN_AUDIT_KEY or the audit key file): the log cannot be checked against its signed checkpoints here; run warden audit verify"
		d.verified = v
		return v, nil
	}
	rep, err := d.o.Log.Verify(ctx, d.o.Verifier)
	v.Entries, v.Root, v.Checkpoints = rep.Entries, rep.Root.String(), rep.Checkpoints
	switch {
	case errors.Is(err, audit.ErrTampered):
		v.Problem = err.Error()
	case err != nil:
		return nil, err
	default:
		v.OK = true
	}
	d.verified = v
	return v, nil
}

type auditData struct {
	Verify           *verification
	Checkpoint       *audit.Checkpoint
	CheckpointAt     time.Time
	CheckpointNote   string
	Entries          []audit.Entry
	Size, From, To   int64
	Prev, Next, Last int64
	HasPrev, HasNext bool
}

// auditPageSize is how many entries the audit page shows.
const auditPageSize = 50

func (d *Dashboard) auditPage(w http.ResponseWriter, r *http.Request, p *Principal) {
	ctx := r.Context()
	size, at, has, err := d.auditSize(ctx)
	if err != nil {
		d.failed(w, r, p, "read the audit log", err)
		return
	}
	data := auditData{Size: size, CheckpointAt: at}
	if data.Verify, err = d.verify(ctx, has); err != nil {
		d.failed(w, r, p, "verify the audit log", err)
		return
	}
	if has {
		signed, err := d.o.Log.LatestCheckpoint(ctx)
		if err != nil {
			d.failed(w, r, p, "read the latest checkpoint", err)
			return
		}
		data.CheckpointNote = string(signed)
		if cp, err := parseNote(signed); err == nil {
			data.Checkpoint = &cp
		}
	}
	last := max(0, size-auditPageSize)
	data.From, data.Last = last, last
	if v, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64); err == nil && v >= 0 && v < size {
		data.From = v
	}
	if data.Entries, err = d.o.Log.Entries(ctx, data.From, auditPageSize); err != nil {
		d.failed(w, r, p, "read the audit entries", err)
		return
	}
	data.To = data.From + int64(len(data.Entries)) - 1
	slices.Reverse(data.Entries)
	data.Prev, data.HasPrev = max(0, data.From-auditPageSize), data.From > 0
	data.Next, data.HasNext = data.From+auditPageSize, data.From+auditPageSize < size
	d.render(w, r, p, http.StatusOK, "audit", "Audit log", data)
}

// parseNote reads a signed checkpoint's body without checking its signature (the
// verification above does, when the key is at hand).
func parseNote(signed []byte) (audit.Checkpoint, error) {
	text, _, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return audit.Checkpoint{}, errors.New("not a signed note")
	}
	return audit.ParseCheckpoint(string(text) + "\n")
}

// auditSize is the audit log's size and its latest checkpoint's time.
func (d *Dashboard) auditSize(ctx context.Context) (size int64, at time.Time, has bool, err error) {
	err = d.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		if size, err = audit.Size(ctx, q); err != nil {
			return err
		}
		cp, ok, err := audit.LatestCheckpoint(ctx, q)
		at, has = cp.At, ok
		return err
	})
	return size, at, has, err
}

type reportsData struct {
	Frameworks []*compliance.Framework
	Formats    []string
	Downloads  bool
}

func (d *Dashboard) reportsPage(w http.ResponseWriter, r *http.Request, p *Principal) {
	fws, err := compliance.Load()
	if err != nil {
		d.log.Error("dashboard: load the frameworks", "err", err)
		d.fail(w, r, p, http.StatusInternalServerError, "The compliance frameworks could not be loaded.")
		return
	}
	d.render(w, r, p, http.StatusOK, "reports", "Reports", reportsData{Frameworks: fws, Formats: d.o.Formats, Downloads: d.o.Report != nil})
}

var reportTypes = map[string]string{"html": "text/html; charset=utf-8", "csv": "text/csv; charset=utf-8",
	"json": "application/json", "sarif": "application/sarif+json", "ocsf": "application/json"}

func (d *Dashboard) reportDownload(w http.ResponseWriter, r *http.Request, p *Principal) {
	id, format := r.PathValue("framework"), r.PathValue("format")
	if d.o.Report == nil || !slices.Contains(d.o.Formats, format) {
		d.fail(w, r, p, http.StatusNotFound, "No such report download.")
		return
	}
	if _, err := compliance.Lookup(id); err != nil {
		d.fail(w, r, p, http.StatusNotFound, "No such framework.")
		return
	}
	var buf bytes.Buffer
	if err := d.o.Report(r.Context(), &buf, id, format); err != nil {
		d.log.Error("dashboard: write a report", "framework", id, "format", format, "err", err)
		d.fail(w, r, p, http.StatusInternalServerError, "The report could not be written; the server's log says why.")
		return
	}
	ext := format
	if format == "ocsf" || format == "sarif" {
		ext = format + ".json"
	}
	h := w.Header()
	h.Set("Content-Type", cmp.Or(reportTypes[format], "application/octet-stream"))
	h.Set("Content-Disposition", `attachment; filename="warden-`+id+`.`+ext+`"`)
	// A report opened from here runs nothing in the dashboard's origin.
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	_, _ = w.Write(buf.Bytes())
}

func (d *Dashboard) tokensPage(w http.ResponseWriter, r *http.Request, p *Principal) {
	ts, err := d.tokens.List(r.Context())
	if err != nil {
		d.failed(w, r, p, "list the tokens", err)
		return
	}
	slices.Reverse(ts)
	d.render(w, r, p, http.StatusOK, "tokens", "Tokens", ts)
}

func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	p, err := d.authenticate(w, r)
	if err != nil {
		p = nil
	}
	w.Header().Set("Cache-Control", "no-store")
	d.render(w, r, p, http.StatusOK, "login", "Log in", nil)
}
