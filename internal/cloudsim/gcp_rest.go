package cloudsim

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	iampb "cloud.google.com/go/iam/apiv1/iampb"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// gcpRoutes serves the GCP REST APIs the Go clients call under the endpoint:
// Resource Manager v3 ("/v3/…"), Compute v1 ("/compute/v1/…"), IAM v1 workload identity
// the Policy Analyzer v1 and Security Command Center v1 ("/v1/…"). Custom verbs
// ("projects/P:getIamPolicy") sit inside one path segment, so routes with a verb take the
// whole segment and cut the ":verb" themselves.
func (s *Sim) gcpRoutes(mux *http.ServeMux) {
	s.world.GCP.usage = newGCPUsage(s.now().UTC())
	mux.HandleFunc("GET /v3/projects/{project}", s.getProject)
	mux.HandleFunc("POST /v3/projects/{rest}", s.projectVerb)
	mux.HandleFunc("GET /v3/projects", s.listProjects)
	mux.HandleFunc("GET /v3/projects:search", s.searchProjects)
	mux.HandleFunc("GET /v3/organizations/{org}", s.getOrganization)
	mux.HandleFunc("POST /v3/organizations/{rest}", s.organizationVerb)
	mux.HandleFunc("GET /v3/folders/{folder}", s.getFolder)
	mux.HandleFunc("POST /v3/folders/{rest}", s.folderVerb)
	s.computeRoutes(mux)
	s.instanceRoutes(mux)
	s.wifRoutes(mux)
	s.activityRoutes(mux)
	s.sccRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeGCPError(w, errf(kindNotFound, "notFound", "The requested URL %s was not found on this server.", r.URL.Path))
	})
}

// projectKey maps a project number to its id, so that faults match on the id whichever
// the caller used; unknown keys are returned as given.
func (s *Sim) projectKey(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.gcpProject(key); p != nil {
		return p.ID
	}
	return key
}

// readProto decodes a JSON request body into m, ignoring fields m does not know (as
// Google's servers ignore output-only fields sent back).
func readProto(r *http.Request, m proto.Message) error {
	b, err := readBody(r)
	if err != nil {
		return bodyError(err, "requestTooLarge", "invalid")
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, m); err != nil {
		return errf(kindInvalid, "invalid", "Invalid JSON payload received. %v", err)
	}
	return nil
}

func (s *Sim) getProject(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("project")
	s.serveREST(w, r, "cloudresourcemanager", "GetProject", s.projectKey(key), func(c *call) (any, error) {
		p, err := s.rmProject(key, "get")
		if err != nil {
			return nil, err
		}
		return projectProto(p), nil
	})
}

// rmProject finds a project for Resource Manager, answering PermissionDenied for one the
// world does not have, as GCP does for projects the caller cannot see.
func (s *Sim) rmProject(key, perm string) (*Project, error) {
	if p := s.gcpProject(key); p != nil {
		return p, nil
	}
	return nil, errf(kindDenied, "forbidden", "Permission 'resourcemanager.projects.%s' denied on resource '//cloudresourcemanager.googleapis.com/projects/%s' (or it may not exist).", perm, key)
}

func projectProto(p *Project) *resourcemanagerpb.Project {
	return &resourcemanagerpb.Project{
		Name: "projects/" + p.Number, Parent: p.Parent, ProjectId: p.ID,
		State: resourcemanagerpb.Project_ACTIVE, DisplayName: p.Name,
		Etag: `W/"` + makeID("", p.ID+p.Name+p.Parent, 16) + `"`,
	}
}

// projectVerb serves POST /v3/projects/P:getIamPolicy and :setIamPolicy.
func (s *Sim) projectVerb(w http.ResponseWriter, r *http.Request) {
	key, verb, _ := strings.Cut(r.PathValue("rest"), ":")
	switch verb {
	case "getIamPolicy":
		s.serveREST(w, r, "cloudresourcemanager", "GetIamPolicy", s.projectKey(key), func(c *call) (any, error) {
			var req iampb.GetIamPolicyRequest
			if err := readProto(r, &req); err != nil {
				return nil, err
			}
			p, err := s.rmProject(key, "getIamPolicy")
			if err != nil {
				return nil, err
			}
			return policyProto(p.IAMPolicy), nil
		})
	case "setIamPolicy":
		s.serveREST(w, r, "cloudresourcemanager", "SetIamPolicy", s.projectKey(key), func(c *call) (any, error) {
			var req iampb.SetIamPolicyRequest
			if err := readProto(r, &req); err != nil {
				return nil, err
			}
			p, err := s.rmProject(key, "setIamPolicy")
			if err != nil {
				return nil, err
			}
			before := p.IAMPolicy
			out, err := setPolicy(&p.IAMPolicy, req.GetPolicy(), req.GetUpdateMask(), "a project")
			if err == nil {
				s.noteBindings(p, before) // when each binding appeared: the usage recommendations' observation
			}
			return out, err
		})
	default:
		writeGCPError(w, errf(kindNotFound, "notFound", "The requested URL %s was not found on this server.", r.URL.Path))
	}
}

// etagBytes is the etag as the proto carries it: GCP's etags are base64 of bytes, and the
// simulator's (etagOf) are valid base64 too, so that the JSON shows the etag unchanged.
func etagBytes(etag string) []byte {
	if b, err := base64.StdEncoding.DecodeString(etag); err == nil {
		return b
	}
	return []byte(etag)
}

// policyProto is the policy as getIamPolicy answers it. Its version is what GCP stores:
// 3 for a policy with a conditional binding (which only a version 3 write could have
// made), else 1, whatever a world file left out.
func policyProto(p IAMPolicy) *iampb.Policy {
	version := max(p.Version, 1)
	for _, b := range p.Bindings {
		if b.Condition != nil {
			version = 3
		}
	}
	out := &iampb.Policy{Version: int32(version), Etag: etagBytes(p.Etag)}
	for _, b := range p.Bindings {
		pb := &iampb.Binding{Role: b.Role, Members: slices.Clone(b.Members)}
		if b.Condition != nil {
			pb.Condition = &expr.Expr{Title: b.Condition.Title, Description: b.Condition.Description, Expression: b.Condition.Expression}
		}
		out.Bindings = append(out.Bindings, pb)
	}
	for _, ac := range p.AuditConfigs {
		pa := &iampb.AuditConfig{Service: ac.Service}
		for _, lc := range ac.LogConfigs {
			pa.AuditLogConfigs = append(pa.AuditLogConfigs, &iampb.AuditLogConfig{
				LogType:         iampb.AuditLogConfig_LogType(iampb.AuditLogConfig_LogType_value[lc.LogType]),
				ExemptedMembers: slices.Clone(lc.ExemptedMembers)})
		}
		out.AuditConfigs = append(out.AuditConfigs, pa)
	}
	return out
}

// auditConfigsOf converts a request's auditConfigs to the world's shape.
func auditConfigsOf(in []*iampb.AuditConfig) []AuditConfig {
	var out []AuditConfig
	for _, ac := range in {
		a := AuditConfig{Service: ac.GetService()}
		for _, lc := range ac.GetAuditLogConfigs() {
			a.LogConfigs = append(a.LogConfigs, AuditLogConfig{LogType: lc.GetLogType().String(), ExemptedMembers: slices.Clone(lc.GetExemptedMembers())})
		}
		out = append(out, a)
	}
	return out
}

// masksAuditConfigs says whether a setIamPolicy updateMask names auditConfigs: without
// one, GCP changes only bindings and etag and keeps the policy's auditConfigs.
func masksAuditConfigs(m *fieldmaskpb.FieldMask) bool {
	return slices.ContainsFunc(m.GetPaths(), func(p string) bool { return p == "auditConfigs" || p == "audit_configs" })
}

// memberPrefixes are the principal kinds a Resource Manager policy accepts.
var memberPrefixes = []string{"user:", "serviceAccount:", "group:", "domain:", "deleted:", "principal://", "principalSet://"}

// setPolicy replaces the policy of a project, folder or organisation (what names it in
// messages: "a project") under GCP's rules: a stale etag is ABORTED (read-modify-write
// must start again), conditions need version 3, allUsers and allAuthenticatedUsers cannot
// be granted on Resource Manager resources, and bindings without members are dropped.
func setPolicy(cur *IAMPolicy, in *iampb.Policy, mask *fieldmaskpb.FieldMask, what string) (any, error) {
	if in == nil {
		return nil, errf(kindInvalid, "badRequest", "Request contains an invalid argument: policy is required.")
	}
	if len(in.GetEtag()) > 0 && !bytes.Equal(in.GetEtag(), etagBytes(cur.Etag)) {
		return nil, errf(kindConflict, "ABORTED", "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff. The request's ETag '%s' did not match the current policy's ETag '%s'.",
			base64.StdEncoding.EncodeToString(in.GetEtag()), cur.Etag)
	}
	next := IAMPolicy{Version: 1}
	for _, b := range in.GetBindings() {
		if !strings.HasPrefix(b.GetRole(), "roles/") && !strings.Contains(b.GetRole(), "/roles/") {
			return nil, errf(kindInvalid, "badRequest", "Role %q is not a valid role name.", b.GetRole())
		}
		for _, m := range b.GetMembers() {
			if m == "allUsers" || m == "allAuthenticatedUsers" {
				return nil, errf(kindInvalid, "badRequest", "One or more users named in the policy do not belong to a permitted customer: %s cannot be granted on %s.", m, what)
			}
			if !slices.ContainsFunc(memberPrefixes, func(pre string) bool { return strings.HasPrefix(m, pre) && len(m) > len(pre) }) {
				return nil, errf(kindInvalid, "badRequest", "Invalid member %q: want user:, serviceAccount:, group:, domain: or principal.", m)
			}
		}
		if len(b.GetMembers()) == 0 {
			continue
		}
		nb := Binding{Role: b.GetRole(), Members: slices.Clone(b.GetMembers())}
		if c := b.GetCondition(); c != nil {
			if in.GetVersion() < 3 {
				return nil, errf(kindInvalid, "badRequest", "Conditional role bindings require policy version 3; the request has version %d.", in.GetVersion())
			}
			nb.Condition = &Expr{Title: c.GetTitle(), Description: c.GetDescription(), Expression: c.GetExpression()}
			next.Version = 3
		}
		next.Bindings = append(next.Bindings, nb)
	}
	next.AuditConfigs = cur.AuditConfigs
	if masksAuditConfigs(mask) {
		next.AuditConfigs = auditConfigsOf(in.GetAuditConfigs())
	}
	next.Etag = etagOf(next)
	*cur = next
	return policyProto(next), nil
}

// listProjects serves GET /v3/projects?parent=…: the projects directly under a parent.
func (s *Sim) listProjects(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.serveREST(w, r, "cloudresourcemanager", "ListProjects", "", func(c *call) (any, error) {
		parent := q.Get("parent")
		if !strings.HasPrefix(parent, "organizations/") && !strings.HasPrefix(parent, "folders/") {
			return nil, errf(kindInvalid, "badRequest", "Request contains an invalid argument: parent must be organizations/N or folders/N, got %q.", parent)
		}
		var match []*Project
		for _, p := range s.allProjects() {
			if p.Parent == parent {
				match = append(match, p)
			}
		}
		projects, next, err := projectPage(match, q.Get("pageToken"), q.Get("pageSize"))
		if err != nil {
			return nil, err
		}
		return &resourcemanagerpb.ListProjectsResponse{Projects: projects, NextPageToken: next}, nil
	})
}

// searchProjects serves GET /v3/projects:search?query=…, with the query terms
// id, projectId, name, displayName, number, projectNumber, parent, parent.type, parent.id
// and state (values may end in a * wildcard); an empty query lists every project.
func (s *Sim) searchProjects(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.serveREST(w, r, "cloudresourcemanager", "SearchProjects", "", func(c *call) (any, error) {
		terms, err := parseProjectQuery(q.Get("query"))
		if err != nil {
			return nil, err
		}
		var match []*Project
		for _, p := range s.allProjects() {
			if projectMatches(p, terms) {
				match = append(match, p)
			}
		}
		projects, next, err := projectPage(match, q.Get("pageToken"), q.Get("pageSize"))
		if err != nil {
			return nil, err
		}
		return &resourcemanagerpb.SearchProjectsResponse{Projects: projects, NextPageToken: next}, nil
	})
}

func projectPage(match []*Project, token, size string) ([]*resourcemanagerpb.Project, string, error) {
	n := 0
	if size != "" {
		var err error
		if n, err = strconv.Atoi(size); err != nil || n < 0 {
			return nil, "", errf(kindInvalid, "badRequest", "Invalid pageSize %q.", size)
		}
	}
	start, end, next, err := pageBounds(token, n, 50, 1000, len(match))
	if err != nil {
		return nil, "", err
	}
	out := make([]*resourcemanagerpb.Project, 0, end-start)
	for _, p := range match[start:end] {
		out = append(out, projectProto(p))
	}
	return out, next, nil
}

type queryTerm struct{ key, value string }

func parseProjectQuery(query string) ([]queryTerm, error) {
	var terms []queryTerm
	for _, f := range strings.Fields(query) {
		if strings.EqualFold(f, "AND") {
			continue
		}
		i := strings.IndexAny(f, ":=")
		if i <= 0 {
			return nil, errf(kindInvalid, "badRequest", "Request contains an invalid argument: cannot parse query term %q.", f)
		}
		key, value := f[:i], strings.Trim(f[i+1:], `"'`)
		switch key {
		case "id", "projectId", "name", "displayName", "number", "projectNumber", "parent", "parent.type", "parent.id", "state", "lifecycleState":
		default:
			return nil, errf(kindInvalid, "badRequest", "Request contains an invalid argument: unknown query field %q.", key)
		}
		terms = append(terms, queryTerm{key, value})
	}
	return terms, nil
}

func projectMatches(p *Project, terms []queryTerm) bool {
	ptype, pid, _ := strings.Cut(p.Parent, "s/")
	for _, t := range terms {
		var v string
		switch t.key {
		case "id", "projectId":
			v = p.ID
		case "name", "displayName":
			v = p.Name
		case "number", "projectNumber":
			v = p.Number
		case "parent":
			v = p.Parent
		case "parent.type":
			v = ptype
		case "parent.id":
			v = pid
		case "state", "lifecycleState":
			v = "ACTIVE"
		}
		if ok, _ := path.Match(t.value, v); !ok && !strings.EqualFold(t.value, v) {
			return false
		}
	}
	return true
}

// gcpOrg finds an organisation; unknown ones are PermissionDenied on perm
// (resourcemanager.organizations.PERM), as GCP answers.
func (s *Sim) gcpOrg(id, perm string) (*GCPOrganization, error) {
	for _, o := range s.world.GCP.Organizations {
		if o.ID == id {
			return o, nil
		}
	}
	return nil, errf(kindDenied, "forbidden", "Permission 'resourcemanager.organizations.%s' denied on resource '//cloudresourcemanager.googleapis.com/organizations/%s' (or it may not exist).", perm, id)
}

func (s *Sim) getOrganization(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("org")
	s.serveREST(w, r, "cloudresourcemanager", "GetOrganization", "organizations/"+id, func(c *call) (any, error) {
		o, err := s.gcpOrg(id, "get")
		if err != nil {
			return nil, err
		}
		return &resourcemanagerpb.Organization{
			Name: "organizations/" + o.ID, DisplayName: o.Domain, State: resourcemanagerpb.Organization_ACTIVE,
			Owner: &resourcemanagerpb.Organization_DirectoryCustomerId{DirectoryCustomerId: "C0" + strings.ToLower(makeID("", o.ID, 7))},
			Etag:  `W/"` + makeID("", o.ID+o.Domain, 16) + `"`,
		}, nil
	})
}

// organizationVerb serves POST /v3/organizations/N:getIamPolicy and :setIamPolicy. The
// call's account is "organizations/N", which faults match on.
func (s *Sim) organizationVerb(w http.ResponseWriter, r *http.Request) {
	id, verb, _ := strings.Cut(r.PathValue("rest"), ":")
	s.policyVerb(w, r, verb, "organizations/"+id, func(perm string) (*IAMPolicy, error) {
		o, err := s.gcpOrg(id, perm)
		if err != nil {
			return nil, err
		}
		return &o.IAMPolicy, nil
	})
}

// policyVerb serves :getIamPolicy and :setIamPolicy on a folder or organisation named
// name; policy finds its policy, or the PermissionDenied GCP answers for one the caller
// cannot see, given the permission checked ("getIamPolicy", "setIamPolicy").
func (s *Sim) policyVerb(w http.ResponseWriter, r *http.Request, verb, name string, policy func(perm string) (*IAMPolicy, error)) {
	what := "an organization"
	if strings.HasPrefix(name, "folders/") {
		what = "a folder"
	}
	switch verb {
	case "getIamPolicy":
		s.serveREST(w, r, "cloudresourcemanager", "GetIamPolicy", name, func(c *call) (any, error) {
			var req iampb.GetIamPolicyRequest
			if err := readProto(r, &req); err != nil {
				return nil, err
			}
			p, err := policy("getIamPolicy")
			if err != nil {
				return nil, err
			}
			return policyProto(*p), nil
		})
	case "setIamPolicy":
		s.serveREST(w, r, "cloudresourcemanager", "SetIamPolicy", name, func(c *call) (any, error) {
			var req iampb.SetIamPolicyRequest
			if err := readProto(r, &req); err != nil {
				return nil, err
			}
			p, err := policy("setIamPolicy")
			if err != nil {
				return nil, err
			}
			return setPolicy(p, req.GetPolicy(), req.GetUpdateMask(), what)
		})
	default:
		writeGCPError(w, errf(kindNotFound, "notFound", "The requested URL %s was not found on this server.", r.URL.Path))
	}
}

// allProjects are the projects Resource Manager lists: the world's, then what it says of
// the generated ones (which are not built for it).
func (s *Sim) allProjects() []*Project {
	if s.genProj == nil {
		return s.world.GCP.Projects
	}
	return append(slices.Clip(s.world.GCP.Projects), s.genProj.headers()...)
}
