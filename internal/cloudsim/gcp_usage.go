package cloudsim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Usage and the IAM recommendations derived from it.
//
// Every allowed call a member makes on a project (gcp_enforce.go says how a call names
// its member) records, for the member and the project, when each permission the call
// needed was last exercised. The simulator also notes when each role binding of a project
// appeared: through setIamPolicy, or, for the bindings the world declares, when the
// simulator started.
//
// When the world's gcp.recommend_from_usage is set, the IAM recommender serves, besides
// the recommendations the world declares, those it derives as Google's does from 90 days
// of observation (iamObservationDays). For each unconditional binding of a predefined role
// R (gcpRoles) to a user: or serviceAccount: member M on the project, once the binding is
// at least 90 days old:
//
//   - no permission of R exercised by M on the project in the last 90 days: REMOVE_ROLE;
//   - otherwise, when the smallest role of the table (fewest permissions; ties by name)
//     holding every permission of R that M exercised is smaller than R: REPLACE_ROLE with
//     that role;
//   - otherwise nothing.
//
// Each carries its permissions-usage insight (the exercised permissions, R's size in the
// table) and an id derived from the project, member, role and when the binding appeared,
// so that it is stable while the binding lives and a binding granted again later gets a
// new one. A derived recommendation still ACTIVE follows the usage (it is refreshed, with
// a new etag, when its content changes, and dropped when it no longer holds); once marked
// (CLAIMED, SUCCEEDED, FAILED, DISMISSED) it stays as marked. Group, domain and
// principalSet members get none: the simulator cannot see what their members use; nor
// does a binding on which the world declares a recommendation: the declared one stands.

// gcpUsage is what members exercised and when bindings appeared.
type gcpUsage struct {
	// start is when the simulator started: the bindings a world declares count from it.
	start time.Time
	// used is when each permission was last exercised: project id → member → permission.
	used map[string]map[string]map[string]time.Time
	// seen is when a binding appeared, by bindingKey.
	seen map[string]time.Time
}

func newGCPUsage(start time.Time) *gcpUsage {
	return &gcpUsage{start: start, used: map[string]map[string]map[string]time.Time{}, seen: map[string]time.Time{}}
}

func bindingKey(project, role, member string) string {
	return project + "\x00" + role + "\x00" + member
}

// recordGCPUse records that member exercised the permissions of a call it was allowed
// on a project. s.mu is held.
func (s *Sim) recordGCPUse(member string, c *call, detail string) {
	u := s.world.GCP.usage
	if member == "" || u == nil {
		return
	}
	p := s.gcpProject(c.Account)
	if p == nil {
		return
	}
	perms := GCPCallPermissions(c.Service, c.Action, c.Account, detail)
	if len(perms) == 0 {
		return
	}
	if u.used[p.ID] == nil {
		u.used[p.ID] = map[string]map[string]time.Time{}
	}
	if u.used[p.ID][member] == nil {
		u.used[p.ID][member] = map[string]time.Time{}
	}
	now := s.now().UTC()
	for _, perm := range perms {
		u.used[p.ID][member][perm] = now
	}
}

// GCPUsage returns when each GCP member last exercised each permission, by project id,
// member and permission (a copy).
func (s *Sim) GCPUsage() map[string]map[string]map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]map[string]map[string]time.Time{}
	if u := s.world.GCP.usage; u != nil {
		for project, members := range u.used {
			out[project] = map[string]map[string]time.Time{}
			for member, perms := range members {
				out[project][member] = maps.Clone(perms)
			}
		}
	}
	return out
}

// unconditionalPairs are the role/member pairs an IAM policy grants without condition.
func unconditionalPairs(pol IAMPolicy) map[[2]string]bool {
	out := map[[2]string]bool{}
	for _, b := range pol.Bindings {
		if b.Condition != nil {
			continue
		}
		for _, m := range b.Members {
			out[[2]string{b.Role, m}] = true
		}
	}
	return out
}

// noteBindings records, after a project's policy changed from before, when its new
// role/member pairs appeared, and forgets the removed ones (granted again later, a pair
// is observed afresh). s.mu is held.
func (s *Sim) noteBindings(p *Project, before IAMPolicy) {
	u := s.world.GCP.usage
	if u == nil {
		return
	}
	old, cur := unconditionalPairs(before), unconditionalPairs(p.IAMPolicy)
	now := s.now().UTC()
	for pair := range cur {
		if !old[pair] {
			u.seen[bindingKey(p.ID, pair[0], pair[1])] = now
		}
	}
	for pair := range old {
		if !cur[pair] {
			delete(u.seen, bindingKey(p.ID, pair[0], pair[1]))
		}
	}
}

// smallestRoleCovering is the role of the table with the fewest permissions that holds
// every one of perms (ties broken by name), and its size.
func smallestRoleCovering(perms []string) (string, int) {
	names := make([]string, 0, len(gcpRoles))
	for name := range gcpRoles {
		names = append(names, name)
	}
	slices.Sort(names)
	best, size := "", 0
	for _, name := range names {
		held := gcpRoles[name]
		if len(held) == 0 || best != "" && len(held) >= size {
			continue
		}
		if !slices.ContainsFunc(perms, func(p string) bool { return !slices.Contains(held, p) }) {
			best, size = name, len(held)
		}
	}
	return best, size
}

// usageRecommendations are the recommendations the usage of p's members supports now
// (see the comment at the top of this file). s.mu is held.
func (s *Sim) usageRecommendations(p *Project) []*RoleRecommendation {
	u := s.world.GCP.usage
	if u == nil {
		return nil
	}
	now := s.now().UTC()
	window := time.Duration(iamObservationDays) * 24 * time.Hour
	var out []*RoleRecommendation
	for _, b := range p.IAMPolicy.Bindings {
		held := gcpRoles[b.Role]
		if b.Condition != nil || len(held) == 0 {
			continue
		}
		for _, m := range b.Members {
			if !strings.HasPrefix(m, "user:") && !strings.HasPrefix(m, "serviceAccount:") || declared(p, b.Role, m) {
				continue
			}
			since, ok := u.seen[bindingKey(p.ID, b.Role, m)]
			if !ok {
				since = u.start
			}
			if now.Sub(since) < window {
				continue
			}
			var exercised []string
			for _, perm := range held {
				if last, ok := u.used[p.ID][m][perm]; ok && now.Sub(last) <= window {
					exercised = append(exercised, perm)
				}
			}
			var newRoles []string
			if len(exercised) > 0 {
				best, size := smallestRoleCovering(exercised)
				if best == "" || best == b.Role || size >= len(held) {
					continue
				}
				newRoles = []string{best}
			}
			sum := sha1.Sum(fmt.Appendf(nil, "%s/%s/%s/%d", p.ID, m, b.Role, since.Unix()))
			out = append(out, &RoleRecommendation{
				ID: hex.EncodeToString(sum[:12]), Member: m, Role: b.Role, NewRoles: newRoles,
				ExercisedPermissions: exercised, TotalPermissions: len(held),
				LastRefresh: now.Truncate(time.Second), generated: true,
			})
		}
	}
	return out
}

// declared tells whether the world declares a recommendation on role's binding to member,
// which then speaks for that binding instead of the usage.
func declared(p *Project, role, member string) bool {
	return slices.ContainsFunc(p.Recommendations, func(r *RoleRecommendation) bool {
		return !r.generated && r.Role == role && r.Member == member
	})
}

// refreshUsageRecommendations brings p's derived recommendations up to date with its
// usage, when the world asks for them: new ones are added, ACTIVE ones follow the usage,
// marked ones are kept. s.mu is held.
func (s *Sim) refreshUsageRecommendations(p *Project) {
	if !s.world.GCP.RecommendFromUsage {
		return
	}
	cands := s.usageRecommendations(p)
	byID := make(map[string]*RoleRecommendation, len(cands))
	for _, c := range cands {
		byID[c.ID] = c
	}
	have := map[string]bool{}
	out := make([]*RoleRecommendation, 0, len(p.Recommendations)+len(cands))
	for _, r := range p.Recommendations {
		if r.generated && r.state() == "ACTIVE" {
			c, ok := byID[r.ID]
			if !ok {
				continue // the binding or its usage changed: it no longer holds
			}
			if !slices.Equal(c.NewRoles, r.NewRoles) || !slices.Equal(c.ExercisedPermissions, r.ExercisedPermissions) {
				r.NewRoles, r.ExercisedPermissions, r.TotalPermissions = c.NewRoles, c.ExercisedPermissions, c.TotalPermissions
				sum := sha1.Sum(fmt.Appendf(nil, "%s/%v/%v/%d", r.ID, r.NewRoles, r.ExercisedPermissions, r.LastRefresh.Unix()))
				r.LastRefresh, r.Etag = c.LastRefresh, `"`+hex.EncodeToString(sum[:8])+`"`
			}
		}
		have[r.ID] = true
		out = append(out, r)
	}
	for _, c := range cands {
		if !have[c.ID] {
			out = append(out, c)
		}
	}
	p.Recommendations = out
}
