package remediate

import "context"

// Ask is a dry run that asks: warden serve --dry-run. It records the plan's actions and
// turns each one the gates hold for approval into an approval request (posted to the
// channels like any other), and never applies anything, auto-approved or approved: an
// operator watching a new deployment sees what it would do and can decide the risky
// fixes before the dry run is lifted. Approved actions then apply at the next run, after
// the drift re-check every apply makes.
func (m *Machine) Ask(ctx context.Context, p *Plan) (*Result, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	res := &Result{DryRun: true, Plan: p.Hash}
	recs, err := m.expireAndRegister(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		v := m.gcfg.Verdict(r.Risk)
		switch {
		case r.State == StateApproved:
			res.Items = append(res.Items, item(r, "approved; would apply: "+describe(r.PlannedAction)))
		case r.State != StatePlanned && r.State != StatePending:
			res.Items = append(res.Items, item(r, "already "+string(r.State)))
		case v.Refused:
			res.Items = append(res.Items, item(r, "would be refused by the gates"))
		case v.Auto:
			res.Items = append(res.Items, item(r, "would apply: "+describe(r.PlannedAction)))
		default:
			// The gates' own path: the request is created, or an existing one read and the
			// action moved to what it says (approved, denied, voided); nothing runs here.
			it, _, err := m.decide(ctx, r)
			if err != nil {
				return nil, err
			}
			if it.Action == "" {
				it = item(r, "approved; would apply: "+describe(r.PlannedAction))
			}
			res.Items = append(res.Items, it)
		}
	}
	return res, nil
}
