package cloudsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	sccpb "cloud.google.com/go/securitycenter/apiv1/securitycenterpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// GCP Security Command Center (google.cloud.securitycenter.v1.SecurityCenter, over gRPC,
// service "securitycenter" in the call counters): the sources of an organisation and their
// findings, as a finding provider uses them. CreateSource, GetSource and ListSources;
// CreateFinding, UpdateFinding (with or without a field mask; creating the finding when
// absent), SetFindingState (ACTIVE, INACTIVE), SetMute (MUTED, UNMUTED) and ListFindings
// (one source or "-" for all, with a filter on name, parent, resource_name, state,
// category, external_uri, severity, mute and source_properties.KEY, order_by, pages).
// Sources live under organizations/ORG: an organisation of the world, or any when the
// world declares none; a project sees them under projects/PROJECT (scc_project.go). The
// other methods answer Unimplemented.
//
// What the simulator holds the provider to, as SCC does: a finding id is 1 to 32
// letters and digits, unique in its source (AlreadyExists otherwise); a finding's
// resource_name cannot change after creation; SetFindingState needs a state and a
// start_time; output-only fields (name, parent, create_time, canonical_name, mute and its
// times, security_marks) sent by the client are ignored.

// sccState is Security Command Center's sources, in the order they were created.
type sccState struct {
	sources []*sccSource
	seq     int
}

type sccSource struct {
	pb       *sccpb.Source
	findings map[string]*sccpb.Finding // by finding id
}

// securityCenter implements the SCC v1 gRPC service over the simulator.
type securityCenter struct {
	sccpb.UnimplementedSecurityCenterServer
	s *Sim
}

// sccFindingID is what SCC accepts as a finding id.
var sccFindingID = regexp.MustCompile(`^[a-zA-Z0-9]{1,32}$`)

// sccOrg checks that "organizations/ORG" names an organisation of the world (any, when it
// declares none). s.mu is held.
func (s *Sim) sccOrg(parent string) (string, error) {
	id, ok := strings.CutPrefix(parent, "organizations/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", errf(kindInvalid, "", "Invalid parent %q: want organizations/ORGANIZATION_ID.", parent)
	}
	orgs := s.world.GCP.Organizations
	if len(orgs) > 0 && !slices.ContainsFunc(orgs, func(o *GCPOrganization) bool { return o.ID == id }) {
		return "", errf(kindDenied, "", "The caller does not have permission on organizations/%s (or it may not exist).", id)
	}
	return id, nil
}

// sccSourceOf finds "organizations/ORG/sources/SRC". s.mu is held.
func (s *Sim) sccSourceOf(name string) (*sccSource, error) {
	org, src, ok := strings.Cut(name, "/sources/")
	if !ok || src == "" || strings.Contains(src, "/") {
		return nil, errf(kindInvalid, "", "Invalid source name %q: want organizations/ORGANIZATION_ID/sources/SOURCE_ID.", name)
	}
	if _, err := s.sccOrg(org); err != nil {
		return nil, err
	}
	if s.scc != nil {
		for _, so := range s.scc.sources {
			if so.pb.GetName() == name {
				return so, nil
			}
		}
	}
	return nil, errf(kindNotFound, "", "Requested entity was not found: source %s.", name)
}

// sccFindingOf finds "organizations/ORG/sources/SRC/findings/ID": its source, its id, and
// the finding (nil when absent). s.mu is held.
func (s *Sim) sccFindingOf(name string) (*sccSource, string, *sccpb.Finding, error) {
	name, p, err := s.sccResolve(name)
	if err != nil {
		return nil, "", nil, err
	}
	src, id, ok := strings.Cut(name, "/findings/")
	if !ok {
		return nil, "", nil, errf(kindInvalid, "", "Invalid finding name %q: want organizations/ORGANIZATION_ID/sources/SOURCE_ID/findings/FINDING_ID.", name)
	}
	so, err := s.sccSourceOf(src)
	if err != nil {
		return nil, "", nil, err
	}
	f := so.findings[id]
	if p != nil && f != nil && !sccInProject(f, p) {
		f = nil // a project sees the findings on its own resources only
	}
	return so, id, f, nil
}

func (g *securityCenter) CreateSource(_ context.Context, req *sccpb.CreateSourceRequest) (*sccpb.Source, error) {
	s := g.s
	if _, err := s.sccOrg(req.GetParent()); err != nil {
		return nil, err
	}
	switch name := req.GetSource().GetDisplayName(); {
	case strings.TrimSpace(name) == "" || len([]rune(name)) > 64:
		return nil, errf(kindInvalid, "", "Invalid source: display_name must be 1 to 64 characters, got %d.", len([]rune(name)))
	case len([]rune(req.GetSource().GetDescription())) > 1024:
		return nil, errf(kindInvalid, "", "Invalid source: description must be at most 1024 characters.")
	}
	for _, so := range s.scc.sources {
		if strings.HasPrefix(so.pb.GetName(), req.GetParent()+"/") && so.pb.GetDisplayName() == req.GetSource().GetDisplayName() {
			return nil, errf(kindConflict, "", "A source with display name %q already exists in %s.", so.pb.GetDisplayName(), req.GetParent())
		}
	}
	s.scc.seq++
	name := fmt.Sprintf("%s/sources/%d", req.GetParent(), 9130000000000000000+uint64(s.scc.seq))
	so := &sccSource{pb: &sccpb.Source{Name: name, CanonicalName: name, DisplayName: req.GetSource().GetDisplayName(),
		Description: req.GetSource().GetDescription()}, findings: map[string]*sccpb.Finding{}}
	s.scc.sources = append(s.scc.sources, so)
	return proto.Clone(so.pb).(*sccpb.Source), nil
}

func (g *securityCenter) GetSource(_ context.Context, req *sccpb.GetSourceRequest) (*sccpb.Source, error) {
	name, _, err := g.s.sccResolve(req.GetName())
	if err != nil {
		return nil, err
	}
	so, err := g.s.sccSourceOf(name)
	if err != nil {
		return nil, err
	}
	return proto.Clone(so.pb).(*sccpb.Source), nil
}

func (g *securityCenter) ListSources(_ context.Context, req *sccpb.ListSourcesRequest) (*sccpb.ListSourcesResponse, error) {
	parent, _, err := g.s.sccResolve(req.GetParent())
	if err != nil {
		return nil, err
	}
	if _, err := g.s.sccOrg(parent); err != nil {
		return nil, err
	}
	var match []*sccpb.Source
	for _, so := range g.s.scc.sources {
		if strings.HasPrefix(so.pb.GetName(), parent+"/sources/") {
			match = append(match, so.pb)
		}
	}
	start, end, next, err := pageBounds(req.GetPageToken(), int(req.GetPageSize()), 10, 1000, len(match))
	if err != nil {
		return nil, err
	}
	out := &sccpb.ListSourcesResponse{NextPageToken: next}
	for _, so := range match[start:end] {
		out.Sources = append(out.Sources, proto.Clone(so).(*sccpb.Source))
	}
	return out, nil
}

func (g *securityCenter) CreateFinding(_ context.Context, req *sccpb.CreateFindingRequest) (*sccpb.Finding, error) {
	so, err := g.s.sccSourceOf(req.GetParent())
	if err != nil {
		return nil, err
	}
	id := req.GetFindingId()
	if !sccFindingID.MatchString(id) {
		return nil, errf(kindInvalid, "", "Invalid finding_id %q: it must be 1 to 32 letters and digits.", id)
	}
	if so.findings[id] != nil {
		return nil, errf(kindConflict, "", "Requested entity already exists: finding %s/findings/%s.", req.GetParent(), id)
	}
	return g.s.sccCreate(so, id, req.GetFinding())
}

// sccCreate stores a new finding of source so. s.mu is held.
func (s *Sim) sccCreate(so *sccSource, id string, in *sccpb.Finding) (*sccpb.Finding, error) {
	if in == nil {
		return nil, errf(kindInvalid, "", "Invalid finding: the finding is required.")
	}
	f := proto.Clone(in).(*sccpb.Finding)
	if err := sccValidate(f); err != nil {
		return nil, err
	}
	clearOutputOnly(f)
	name := so.pb.GetName() + "/findings/" + id
	f.Name, f.Parent, f.CanonicalName = name, so.pb.GetName(), name
	f.ParentDisplayName = so.pb.GetDisplayName()
	f.CreateTime = timestamppb.New(s.now())
	if f.State == sccpb.Finding_STATE_UNSPECIFIED {
		f.State = sccpb.Finding_ACTIVE
	}
	f.Mute = sccpb.Finding_UNDEFINED
	so.findings[id] = f
	return proto.Clone(f).(*sccpb.Finding), nil
}

// sccValidate checks what SCC requires of a finding a provider writes.
func sccValidate(f *sccpb.Finding) error {
	switch {
	case strings.TrimSpace(f.GetResourceName()) == "":
		return errf(kindInvalid, "", "Invalid finding: resource_name is required.")
	case strings.TrimSpace(f.GetCategory()) == "":
		return errf(kindInvalid, "", "Invalid finding: category is required.")
	case f.GetEventTime() != nil && !f.GetEventTime().IsValid():
		return errf(kindInvalid, "", "Invalid finding: event_time is not a valid time.")
	}
	return nil
}

// sccOutputOnly are the fields of a finding only SCC sets; a client's values are ignored.
var sccOutputOnly = []protoreflect.Name{"name", "parent", "create_time", "canonical_name", "mute", "mute_update_time",
	"mute_initiator", "mute_info", "security_marks", "parent_display_name"}

func clearOutputOnly(f *sccpb.Finding) {
	m := f.ProtoReflect()
	for _, n := range sccOutputOnly {
		m.Clear(m.Descriptor().Fields().ByName(n))
	}
}

func (g *securityCenter) UpdateFinding(_ context.Context, req *sccpb.UpdateFindingRequest) (*sccpb.Finding, error) {
	s := g.s
	in := req.GetFinding()
	if in == nil {
		return nil, errf(kindInvalid, "", "Invalid request: finding is required.")
	}
	so, id, cur, err := s.sccFindingOf(in.GetName())
	if err != nil {
		return nil, err
	}
	if cur == nil { // UpdateFinding creates a finding that does not exist
		if strings.HasPrefix(in.GetName(), "projects/") {
			return nil, errf(kindNotFound, "", "Requested entity was not found: finding %s (findings are created under their organisation's source).", in.GetName())
		}
		if !sccFindingID.MatchString(id) {
			return nil, errf(kindInvalid, "", "Invalid finding id %q: it must be 1 to 32 letters and digits.", id)
		}
		return s.sccCreate(so, id, in)
	}
	next := proto.Clone(cur).(*sccpb.Finding)
	src, dst := in.ProtoReflect(), next.ProtoReflect()
	fields := src.Descriptor().Fields()
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		// No mask: every mutable field takes the request's value, source_properties replaced.
		for i := range fields.Len() {
			fd := fields.Get(i)
			if slices.Contains(sccOutputOnly, fd.Name()) || fd.Name() == "resource_name" {
				continue
			}
			copyField(src, dst, fd)
		}
		if in.GetResourceName() != "" && in.GetResourceName() != cur.GetResourceName() {
			return nil, errf(kindInvalid, "", "Invalid finding: resource_name cannot be changed (it is %q).", cur.GetResourceName())
		}
	}
	for _, p := range paths {
		if key, ok := strings.CutPrefix(p, "source_properties."); ok {
			if next.SourceProperties == nil {
				next.SourceProperties = map[string]*structpb.Value{}
			}
			if v, ok := in.GetSourceProperties()[key]; ok {
				next.SourceProperties[key] = v
			} else {
				delete(next.SourceProperties, key)
			}
			continue
		}
		fd := fields.ByName(protoreflect.Name(p))
		if fd == nil {
			fd = fields.ByJSONName(p)
		}
		switch {
		case fd == nil:
			return nil, errf(kindInvalid, "", "Invalid update_mask: unknown field %q.", p)
		case fd.Name() == "resource_name":
			return nil, errf(kindInvalid, "", "Invalid update_mask: resource_name cannot be changed.")
		case slices.Contains(sccOutputOnly, fd.Name()):
			return nil, errf(kindInvalid, "", "Invalid update_mask: %s is output only.", p)
		}
		copyField(src, dst, fd)
	}
	if err := sccValidate(next); err != nil {
		return nil, err
	}
	if next.State == sccpb.Finding_STATE_UNSPECIFIED {
		next.State = cur.State
	}
	so.findings[id] = next
	return proto.Clone(next).(*sccpb.Finding), nil
}

// copyField sets dst's field fd to src's, or clears it when src does not set it.
func copyField(src, dst protoreflect.Message, fd protoreflect.FieldDescriptor) {
	if src.Has(fd) {
		dst.Set(fd, src.Get(fd))
	} else {
		dst.Clear(fd)
	}
}

func (g *securityCenter) SetFindingState(_ context.Context, req *sccpb.SetFindingStateRequest) (*sccpb.Finding, error) {
	_, _, f, err := g.s.sccFindingOf(req.GetName())
	switch {
	case err != nil:
		return nil, err
	case f == nil:
		return nil, errf(kindNotFound, "", "Requested entity was not found: finding %s.", req.GetName())
	case req.GetState() != sccpb.Finding_ACTIVE && req.GetState() != sccpb.Finding_INACTIVE:
		return nil, errf(kindInvalid, "", "Invalid state %s: want ACTIVE or INACTIVE.", req.GetState())
	case req.GetStartTime() == nil || !req.GetStartTime().IsValid():
		return nil, errf(kindInvalid, "", "Invalid request: start_time is required.")
	}
	f.State = req.GetState()
	return proto.Clone(f).(*sccpb.Finding), nil
}

func (g *securityCenter) SetMute(_ context.Context, req *sccpb.SetMuteRequest) (*sccpb.Finding, error) {
	_, _, f, err := g.s.sccFindingOf(req.GetName())
	switch {
	case err != nil:
		return nil, err
	case f == nil:
		return nil, errf(kindNotFound, "", "Requested entity was not found: finding %s.", req.GetName())
	case req.GetMute() != sccpb.Finding_MUTED && req.GetMute() != sccpb.Finding_UNMUTED:
		return nil, errf(kindInvalid, "", "Invalid mute %s: want MUTED or UNMUTED.", req.GetMute())
	}
	now := timestamppb.New(g.s.now())
	f.Mute, f.MuteUpdateTime = req.GetMute(), now
	f.MuteInfo = &sccpb.Finding_MuteInfo{StaticMute: &sccpb.Finding_MuteInfo_StaticMute{State: req.GetMute(), ApplyTime: now}}
	return proto.Clone(f).(*sccpb.Finding), nil
}

func (g *securityCenter) ListFindings(_ context.Context, req *sccpb.ListFindingsRequest) (*sccpb.ListFindingsResponse, error) {
	s := g.s
	parent, project, err := s.sccResolve(req.GetParent())
	if err != nil {
		return nil, err
	}
	org, src, ok := strings.Cut(parent, "/sources/")
	if !ok || src == "" {
		return nil, errf(kindInvalid, "", "Invalid parent %q: want organizations/ORGANIZATION_ID/sources/SOURCE_ID or …/sources/-.", req.GetParent())
	}
	var sources []*sccSource
	if src == "-" {
		if _, err := s.sccOrg(org); err != nil {
			return nil, err
		}
		for _, so := range s.scc.sources {
			if strings.HasPrefix(so.pb.GetName(), org+"/sources/") {
				sources = append(sources, so)
			}
		}
	} else {
		so, err := s.sccSourceOf(parent)
		if err != nil {
			return nil, err
		}
		sources = []*sccSource{so}
	}
	filter, err := parseSCCFilter(req.GetFilter())
	if err != nil {
		return nil, err
	}
	order, err := parseSCCOrder(req.GetOrderBy())
	if err != nil {
		return nil, err
	}
	var match []*sccpb.Finding
	for _, so := range sources {
		for _, f := range so.findings {
			if filter.matches(f) && (project == nil || sccInProject(f, project)) {
				match = append(match, f)
			}
		}
	}
	sort.SliceStable(match, func(i, j int) bool { return order.less(match[i], match[j]) })
	start, end, next, err := pageBounds(req.GetPageToken(), int(req.GetPageSize()), 10, 1000, len(match))
	if err != nil {
		return nil, err
	}
	out := &sccpb.ListFindingsResponse{ReadTime: timestamppb.New(s.now()), NextPageToken: next, TotalSize: int32(len(match))}
	for _, f := range match[start:end] {
		out.ListFindingsResults = append(out.ListFindingsResults, &sccpb.ListFindingsResponse_ListFindingsResult{
			Finding:  proto.Clone(f).(*sccpb.Finding),
			Resource: &sccpb.ListFindingsResponse_ListFindingsResult_Resource{Name: f.GetResourceName()},
		})
	}
	return out, nil
}

// SCCFindings returns the Security Command Center findings stored under a source
// ("organizations/ORG/sources/SRC"; empty: every source), ordered by name.
func (s *Sim) SCCFindings(source string) []*sccpb.Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*sccpb.Finding{}
	for _, so := range s.scc.sources {
		if source != "" && so.pb.GetName() != source {
			continue
		}
		for _, f := range so.findings {
			out = append(out, proto.Clone(f).(*sccpb.Finding))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// serveSCCAdmin answers GET /_sim/scc/findings[?source=…]: the findings as a JSON list
// of Finding messages in their JSON form (camelCase, as the REST API writes them).
func (s *Sim) serveSCCAdmin(w http.ResponseWriter, r *http.Request) {
	var out []json.RawMessage
	for _, f := range s.SCCFindings(r.URL.Query().Get("source")) {
		b, err := protojson.Marshal(f)
		if err != nil {
			http.Error(w, "encode: "+err.Error(), http.StatusInternalServerError)
			return
		}
		out = append(out, b)
	}
	if out == nil {
		out = []json.RawMessage{}
	}
	writeAdminJSON(w, out)
}

// sccScope is the organisation an SCC request acts in ("organizations/ORG"), read from the
// name it carries; "" when it names none.
func sccScope(req any) string {
	var name string
	if r, ok := req.(interface{ GetParent() string }); ok {
		name = r.GetParent()
	}
	if r, ok := req.(interface{ GetName() string }); ok && name == "" {
		name = r.GetName()
	}
	if r, ok := req.(interface{ GetFinding() *sccpb.Finding }); ok && name == "" {
		name = r.GetFinding().GetName()
	}
	if p := projectOf(name); p != "" {
		return p // a project's view: its own policy, and its ancestors', apply
	}
	parts := strings.SplitN(name, "/", 3)
	if len(parts) < 2 || parts[0] != "organizations" {
		return ""
	}
	return parts[0] + "/" + parts[1]
}
