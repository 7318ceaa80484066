package cloudsim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Drift of a generated organisation: changes made behind warden's back, as people and
// pipelines make them. Each call of Sim.Drift (POST /_sim/drift) starts an epoch; in
// epoch k every resource of every generated account is changed with the epoch's rate, as
// drawn from (Seed, k, account, resource) — the same resources each time, whichever order
// accounts are read in and however often they are built again:
//
//	user             an access key created (or, holding two already, a tag drift=k)
//	role, group      an inline policy drift-k granting s3:* on *
//	customer policy  a new default version granting s3:* on *
//	security group   an ingress rule: RDP (3389) from 0.0.0.0/0
//
// AWS-managed policies do not drift. Between two sweeps, one Drift(0.01) changes 1% of
// the resources of the organisation.

// driftEpoch is one call of Drift: its rate, and when it happened (the creation time of
// what it makes).
type driftEpoch struct {
	rate float64
	at   time.Time
}

// driftDoc is the policy document drift adds: broader than anything generated.
const driftDoc Doc = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`

// Drift starts a drift epoch changing a share rate of the generated accounts' resources
// (0: the world's drift_rate) and returns its number, from 1. Accounts see it when they
// are next used.
func (s *Sim) Drift(rate float64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == nil {
		return 0, fmt.Errorf("drift: the world generates no accounts (aws.organization.generated)")
	}
	if rate == 0 {
		rate = s.gen.cfg.DriftRate
	}
	if !shareOK(rate) || rate == 0 {
		return 0, fmt.Errorf("drift: rate %v is not a share above 0 and at most 1 (nor is the world's drift_rate)", rate)
	}
	s.gen.epochs = append(s.gen.epochs, driftEpoch{rate: rate, at: s.stamp()})
	s.answers.changedAll()
	return len(s.gen.epochs), nil
}

// drift applies epoch k to account a and returns how many resources it changed.
func (g *genOrg) drift(a *Account, k int) int {
	ep := g.epochs[k-1]
	tag, place := strconv.Itoa(k), strconv.Itoa(g.cfg.index(a.ID))
	hit := func(kind, key string) bool {
		return unit(mix(g.cfg.Seed, "drift", tag, place, kind, key)) < ep.rate
	}
	n := 0
	for _, u := range a.Users {
		if !hit("user", u.Name) {
			continue
		}
		n++
		if len(u.AccessKeys) < 2 {
			u.AccessKeys = append(slices.Clip(u.AccessKeys), &AccessKey{ID: makeID("AKIA", a.ID+"/drift/"+tag+"/"+u.Name, 16),
				Status: "Active", Created: ep.at})
			continue
		}
		u.Tags = maps.Clone(u.Tags)
		if u.Tags == nil {
			u.Tags = map[string]string{}
		}
		u.Tags["drift"] = tag
	}
	for _, r := range a.Roles {
		if hit("role", r.Name) {
			n++
			r.InlinePolicies = append(slices.Clip(r.InlinePolicies), InlinePolicy{Name: "drift-" + tag, Document: driftDoc})
		}
	}
	for _, gr := range a.Groups {
		if hit("group", gr.Name) {
			n++
			gr.InlinePolicies = append(slices.Clip(gr.InlinePolicies), InlinePolicy{Name: "drift-" + tag, Document: driftDoc})
		}
	}
	for _, p := range a.Policies {
		if p.AWSManaged || !hit("policy", p.Name) {
			continue
		}
		n++
		next := 0
		for _, v := range p.Versions {
			if i, err := strconv.Atoi(strings.TrimPrefix(v.ID, "v")); err == nil {
				next = max(next, i)
			}
		}
		vs := slices.Clip(p.Versions)
		if len(vs) >= 5 { // IAM keeps five versions: the oldest one not the default goes
			i := slices.IndexFunc(vs, func(v PolicyVersion) bool { return v.ID != p.DefaultVersion })
			vs = slices.Delete(slices.Clone(vs), i, i+1)
		}
		id := "v" + strconv.Itoa(next+1)
		p.Versions = append(vs, PolicyVersion{ID: id, Document: driftDoc, Created: ep.at})
		p.DefaultVersion, p.Updated = id, ep.at
	}
	for _, sg := range a.SecurityGroups {
		if hit("sg", sg.ID) {
			n++
			sg.Ingress = append(slices.Clip(sg.Ingress), Rule{Protocol: "tcp", FromPort: 3389, ToPort: 3389, CIDR: "0.0.0.0/0", Description: "drift " + tag})
		}
	}
	return n
}
