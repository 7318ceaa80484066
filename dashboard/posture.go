package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/reconcile/watch"
	"github.com/warden-sec/warden/store"
)

// finding is one finding with its life: as the daemon follows it (package state), or as
// the latest scan of the history recorded it.
type finding struct {
	findings.Finding
	OpenedAt, ResolvedAt time.Time
}

// RollbackID is the fix an open finding of the watch after a right-sizing offers to roll
// back (WARDEN-WATCH-001: its principal was denied what the fix removed), "" for others.
func (f finding) RollbackID() string {
	if f.Status != findings.StatusOpen {
		return ""
	}
	id, _ := watch.RollbackAction(f.Finding)
	return id
}

// posture is what the pages show the findings from: the daemon's state when it has read
// any scope, else the latest scan of the history.
type posture struct {
	// Daemon is set when the findings are the daemon's; Scan is the latest scan (nil if
	// none), the source otherwise.
	Daemon bool
	Scan   *store.ScanRecord
	// Resources is the number of resources judged.
	Resources int
	Findings  []finding
}

// Source says in words where the findings come from.
func (p *posture) Source() string {
	switch {
	case p.Daemon:
		return "the daemon's state (warden serve's latest read of each scope)"
	case p.Scan != nil:
		return fmt.Sprintf("scan %d of %s, collected %s", p.Scan.ID, p.Scan.Snapshot, p.Scan.CollectedAt.UTC().Format(time.RFC3339))
	}
	return "nothing yet: no scan is recorded and the daemon has read no scope"
}

func (d *Dashboard) loadPosture(ctx context.Context) (*posture, error) {
	p := &posture{}
	scans, err := d.o.Store.Scans(ctx, 1)
	if err != nil {
		return nil, err
	}
	if len(scans) > 0 {
		p.Scan = &scans[0]
	}
	var scopes int
	err = d.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		if scopes, err = state.CountScopes(ctx, q); err != nil || scopes == 0 {
			return err
		}
		if p.Resources, err = state.CountResources(ctx, q); err != nil {
			return err
		}
		fs, err := state.Findings(ctx, q, nil)
		for _, f := range fs {
			p.Findings = append(p.Findings, finding{Finding: f.Finding, OpenedAt: f.OpenedAt, ResolvedAt: f.ResolvedAt})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read the daemon's findings: %w", err)
	}
	if scopes > 0 {
		p.Daemon = true
	} else if p.Scan != nil {
		fs, err := d.o.Store.Findings(ctx, p.Scan.ID)
		if err != nil {
			return nil, err
		}
		p.Resources = p.Scan.Resources
		for _, f := range fs {
			p.Findings = append(p.Findings, finding{Finding: f, OpenedAt: f.FirstSeen})
		}
	}
	slices.SortStableFunc(p.Findings, func(a, b finding) int {
		if findings.Less(&a.Finding, &b.Finding) {
			return -1
		}
		if findings.Less(&b.Finding, &a.Finding) {
			return 1
		}
		return 0
	})
	return p, nil
}

// sevCount is the count of one severity.
type sevCount struct {
	Severity string
	Count    int
}

// summary is the overview's numbers.
type summary struct {
	Open, Waived, Unknown, Resolved int
	BySeverity                      []sevCount
	// Score is the share of resources with no open finding, in percent; nil with no
	// resources.
	Score               *float64
	ResourcesWithOpen   int
	MedianOpen, P90Open time.Duration
	OldestOpen          time.Duration
}

func (p *posture) summarize(now time.Time) summary {
	var s summary
	bySev := map[string]int{}
	withOpen := map[string]bool{}
	var openFor []time.Duration
	for _, f := range p.Findings {
		switch f.Status {
		case findings.StatusOpen:
			s.Open++
			bySev[f.Severity.String()]++
			withOpen[f.Scope+"\x00"+f.Resource] = true
			if !f.OpenedAt.IsZero() {
				s.OldestOpen = max(s.OldestOpen, now.Sub(f.OpenedAt))
			}
		case findings.StatusWaived:
			s.Waived++
		case findings.StatusUnknown:
			s.Unknown++
		case findings.StatusResolved:
			s.Resolved++
			if !f.OpenedAt.IsZero() && !f.ResolvedAt.IsZero() {
				openFor = append(openFor, f.ResolvedAt.Sub(f.OpenedAt))
			}
		}
	}
	for _, sev := range findings.Severities {
		s.BySeverity = append(s.BySeverity, sevCount{sev.String(), bySev[sev.String()]})
	}
	s.ResourcesWithOpen = len(withOpen)
	if p.Resources > 0 {
		score := 100 * float64(p.Resources-min(s.ResourcesWithOpen, p.Resources)) / float64(p.Resources)
		s.Score = &score
	}
	if len(openFor) > 0 {
		slices.Sort(openFor)
		s.MedianOpen = openFor[len(openFor)/2]
		s.P90Open = openFor[min(len(openFor)-1, len(openFor)*9/10)]
	}
	return s
}

// day is one day of the daemon's convergence: findings opened and resolved.
type day struct {
	Day              time.Time
	Opened, Resolved int
}

// days counts, for each of the last n days (UTC), the findings opened and resolved.
func (p *posture) days(now time.Time, n int) []day {
	start := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(n - 1))
	out := make([]day, n)
	for i := range out {
		out[i].Day = start.AddDate(0, 0, i)
	}
	idx := func(t time.Time) int {
		if t.IsZero() || t.Before(start) {
			return -1
		}
		return int(t.Sub(start) / (24 * time.Hour))
	}
	for _, f := range p.Findings {
		if i := idx(f.OpenedAt); i >= 0 && i < n {
			out[i].Opened++
		}
		if i := idx(f.ResolvedAt); i >= 0 && i < n {
			out[i].Resolved++
		}
	}
	return out
}

// filter selects findings on the findings page.
type filter struct {
	Severity, Policy, Account, Status, Q string
	Page                                 int
}

// pageSize is how many findings a page lists.
const pageSize = 100

func (f filter) keep(x *finding) bool {
	switch {
	case f.Severity != "" && x.Severity.String() != f.Severity,
		f.Policy != "" && x.Policy != f.Policy,
		f.Account != "" && x.Account != f.Account:
		return false
	}
	switch f.Status {
	case "":
		if x.Status == findings.StatusResolved {
			return false
		}
	case "all":
	default:
		if x.Status != f.Status {
			return false
		}
	}
	if f.Q != "" {
		q := strings.ToLower(f.Q)
		for _, s := range []string{x.Resource, x.Policy, x.Title, x.Message, x.Account, x.ResourceType} {
			if strings.Contains(strings.ToLower(s), q) {
				return true
			}
		}
		return false
	}
	return true
}

// choices are the values the filters offer, from the findings themselves.
type choices struct {
	Policies, Accounts []string
}

func (p *posture) choices() choices {
	var c choices
	for _, f := range p.Findings {
		c.Policies = append(c.Policies, f.Policy)
		c.Accounts = append(c.Accounts, f.Account)
	}
	for _, l := range []*[]string{&c.Policies, &c.Accounts} {
		slices.SortFunc(*l, cmp.Compare[string])
		*l = slices.Compact(*l)
		*l = slices.DeleteFunc(*l, func(s string) bool { return s == "" })
	}
	return c
}

// titles maps the policies of the findings to their titles.
func (p *posture) titles() map[string]string {
	out := map[string]string{}
	for _, f := range p.Findings {
		if f.Title != "" {
			out[f.Policy] = f.Title
		}
	}
	return out
}

// history is the open findings by severity at each of the latest scans, oldest first.
func (d *Dashboard) history(ctx context.Context, n int) ([]historyPoint, error) {
	scans, err := d.o.Store.Scans(ctx, n)
	if err != nil {
		return nil, err
	}
	out := make([]historyPoint, 0, len(scans))
	for i := len(scans) - 1; i >= 0; i-- {
		s := scans[i]
		var sum struct {
			Findings   int            `json:"findings"`
			BySeverity map[string]int `json:"by_severity"`
			Waived     int            `json:"waived"`
			Unknown    int            `json:"unknown"`
		}
		if len(s.Summary) > 0 {
			if err := json.Unmarshal(s.Summary, &sum); err != nil {
				return nil, fmt.Errorf("scan %d: summary: %w", s.ID, err)
			}
		}
		out = append(out, historyPoint{ScanID: s.ID, At: s.FinishedAt, Open: sum.Findings, BySeverity: sum.BySeverity,
			Waived: sum.Waived, Unknown: sum.Unknown})
	}
	return out, nil
}

type historyPoint struct {
	ScanID     int64
	At         time.Time
	Open       int
	BySeverity map[string]int
	Waived     int
	Unknown    int
}
