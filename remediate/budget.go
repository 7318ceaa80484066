package remediate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/store"
)

// budgetWindow is the span of the hourly budget.
const budgetWindow = time.Hour

// overBudget says why the action may not begin now (the hourly budget of every run
// sharing the store is spent), or "". Intents are counted from the actions' history: an
// action begun is an action counted, whether it then succeeded or not.
func (m *Machine) overBudget(ctx context.Context, r *Record) (string, error) {
	if m.limits.PerHour <= 0 && m.limits.PerAccountPerHour <= 0 {
		return "", nil
	}
	// Times are stored as RFC 3339 text without trailing zeros, so they compare as
	// strings to within a second: enough for an hour's window.
	since := store.FormatTime(m.now().Add(-budgetWindow).Truncate(time.Second))
	var total, account int
	err := m.st.Read(ctx, func(q *store.Reader) error {
		return q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN a.account = ? THEN 1 ELSE 0 END), 0)
			FROM action_events e JOIN actions a ON a.id = e.action_id WHERE e.state = ? AND e.at >= ?`,
			r.Account, string(StateApplying), since).Scan(&total, &account)
	})
	if err != nil {
		return "", fmt.Errorf("action %s: count the fixes of the last hour: %w", r.ID, err)
	}
	switch {
	case m.limits.PerHour > 0 && total >= m.limits.PerHour:
		return fmt.Sprintf("hourly budget spent: %d fixes begun in the last hour (at most %d)", total, m.limits.PerHour), nil
	case m.limits.PerAccountPerHour > 0 && account >= m.limits.PerAccountPerHour:
		return fmt.Sprintf("hourly budget of account %s spent: %d fixes begun in the last hour (at most %d)", r.Account, account, m.limits.PerAccountPerHour), nil
	}
	return "", nil
}

// failureStreak pauses remediation when the last PauseAfterFailures outcomes of every
// run sharing the store all failed, and says so; "" otherwise.
func (m *Machine) failureStreak(ctx context.Context) (string, error) {
	n := m.limits.PauseAfterFailures
	if n <= 0 {
		return "", nil
	}
	pause, err := m.Paused(ctx)
	if err != nil {
		return "", err
	}
	if pause.Paused {
		return pause.Reason, nil
	}
	// Failures before the last resume were looked into by whoever resumed.
	since := store.FormatTime(pause.At)
	var states []string
	err = m.st.Read(ctx, func(q *store.Reader) error {
		rows, err := q.QueryContext(ctx, `SELECT e.state, a.remediator FROM action_events e JOIN actions a ON a.id = e.action_id
			WHERE e.state IN (?, ?, ?) AND e.at >= ? ORDER BY e.id DESC LIMIT ?`,
			string(StateVerified), string(StateFailed), string(StateRolledBack), since, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var st, rem string
			if err := rows.Scan(&st, &rem); err != nil {
				return err
			}
			if st != string(StateFailed) {
				return nil
			}
			states = append(states, rem)
		}
		return rows.Err()
	})
	if err != nil {
		return "", fmt.Errorf("read the latest outcomes: %w", err)
	}
	if len(states) < n {
		return "", nil
	}
	reason := fmt.Sprintf("breaker: the last %d fixes failed (%s); find out why, then warden resume", n, strings.Join(uniq(states), ", "))
	if err := m.SetPause(ctx, true, reason); err != nil {
		return "", fmt.Errorf("pause after %d failures: %w", n, err)
	}
	m.logger.Error("remediation paused by the breaker", "failures", n, "reason", reason)
	return reason, nil
}

func uniq(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
