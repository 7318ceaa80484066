package cloudsim

import (
	"strings"

	sccpb "cloud.google.com/go/securitycenter/apiv1/securitycenterpb"
)

// Security Command Center seen from a project (scc.go): SCC keeps a provider's sources in
// its organisation, and a project sees them, and the findings on its own resources,
// under projects/PROJECT/sources/…. GetSource, ListSources, ListFindings, UpdateFinding
// (of an existing finding), SetFindingState and SetMute accept those names; sources and
// findings are created under the organisation only, as SCC v1 requires. Answers name
// sources and findings by their organisation names.

// sccResolve maps a projects/PROJECT/… name to the organisation's name of the same source
// or finding, and the project (nil for a name that is already the organisation's).
// s.mu is held.
func (s *Sim) sccResolve(name string) (string, *Project, error) {
	rest, ok := strings.CutPrefix(name, "projects/")
	if !ok {
		return name, nil, nil
	}
	key, tail, _ := strings.Cut(rest, "/")
	p := s.gcpProject(key)
	if p == nil {
		return "", nil, errf(kindDenied, "", "Permission denied on resource project %s (or it may not exist).", key)
	}
	org := s.orgOfProject(p)
	if org == "" {
		return "", nil, errf(kindInvalid, "", "Project %s is in no organisation: the simulator keeps Security Command Center sources in organisations.", key)
	}
	if tail == "" {
		return org, p, nil
	}
	return org + "/" + tail, p, nil
}

// orgOfProject is "organizations/ORG" above a project, through its folders; "" when none.
// s.mu is held.
func (s *Sim) orgOfProject(p *Project) string {
	parent := p.Parent
	for range 32 {
		id, isFolder := strings.CutPrefix(parent, "folders/")
		if !isFolder {
			break
		}
		parent = ""
		for _, f := range s.world.GCP.Folders {
			if f.ID == id {
				parent = f.Parent
			}
		}
	}
	if strings.HasPrefix(parent, "organizations/") {
		return parent
	}
	return ""
}

// sccInProject tells whether a finding's resource lies in project p (named by id or
// number in its full resource name).
func sccInProject(f *sccpb.Finding, p *Project) bool {
	rn := f.GetResourceName()
	for _, k := range []string{p.ID, p.Number} {
		if k != "" && (strings.Contains(rn, "/projects/"+k+"/") || strings.HasSuffix(rn, "/projects/"+k)) {
			return true
		}
	}
	return false
}
