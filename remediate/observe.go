package remediate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// observation is one re-read of an action's target.
type observation struct {
	gone         bool              // the cloud says the resource does not exist
	res          snapshot.Resource // when not gone
	part         *remediators.Target
	stillFinding bool // the policy still finds the planned finding on the resource
}

// observe re-reads the target of r and looks for its part and its finding.
func (m *Machine) observe(ctx context.Context, r *Record, rem remediators.Remediator, accounts []string) (observation, error) {
	res, err := m.obs.Read(ctx, r.Target)
	if errors.Is(err, collectors.ErrNotFound) {
		return observation{gone: true}, nil
	}
	if err != nil {
		return observation{}, fmt.Errorf("re-read %s: %w", r.Target, err)
	}
	o := observation{res: res}
	ts, err := rem.Targets(res, r.Params)
	if err != nil {
		return observation{}, fmt.Errorf("find %s in %s: %w", r.Part, r.Target, err)
	}
	for i := range ts {
		if ts[i].Part == r.Part {
			o.part = &ts[i]
			break
		}
	}
	if m.eng != nil {
		h := snapshot.Header{Version: 1, CollectedAt: m.now().UTC(), Accounts: accounts}
		out, err := m.eng.Evaluate(ctx, h, m.now().UTC(), []snapshot.Resource{res})
		if err != nil {
			return observation{}, fmt.Errorf("re-evaluate %s: %w", r.Target, err)
		}
		for _, e := range out.EvalErrors {
			if e.Policy == r.Policy {
				return observation{}, fmt.Errorf("re-evaluate %s: policy %s: %s", r.Target, r.Policy, e.Error)
			}
		}
		for _, f := range out.Findings {
			if f.Fingerprint == r.Finding {
				o.stillFinding = true
			}
		}
	}
	return o, nil
}

// converged reports whether the observation shows the fix in place: the resource is gone,
// or its part is, and the policy no longer finds the finding.
func (o observation) converged() bool { return o.gone || (o.part == nil && !o.stillFinding) }

// drifted reports whether the part is still there but no longer as planned.
func (o observation) drifted(r *Record) bool {
	return o.part != nil && !bytes.Equal(compact(o.part.Before), compact(r.Before))
}

// planAccounts returns the accounts of the snapshot a plan was made from, or def.
func (m *Machine) planAccounts(ctx context.Context, hash string, def []string) ([]string, error) {
	if len(def) > 0 {
		return def, nil
	}
	var data string
	err := m.st.Read(ctx, func(q *store.Reader) error {
		return q.QueryRowContext(ctx, `SELECT data FROM plans WHERE hash = ?`, hash).Scan(&data)
	})
	if err != nil {
		return nil, fmt.Errorf("read plan %s: %w", short(hash), err)
	}
	var p Plan
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return nil, fmt.Errorf("read plan %s: %w", short(hash), err)
	}
	return p.Accounts, nil
}
