package cloudsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	securitycenter "cloud.google.com/go/securitycenter/apiv1"
	sccpb "cloud.google.com/go/securitycenter/apiv1/securitycenterpb"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

const sccOrgName = "organizations/123456789012"

var sccT0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// sccSim serves the GCP test world (organisation 123456789012) and returns the simulator,
// its server and an official SCC client over gRPC.
func sccSim(t *testing.T) (*Sim, *Server, *securitycenter.Client) {
	t.Helper()
	return sccSimOver(t, "grpc")
}

// sccSimOver is sccSim with a client over gRPC (securitycenter.NewClient) or REST
// (NewRESTClient).
func sccSimOver(t *testing.T, transport string) (*Sim, *Server, *securitycenter.Client) {
	t.Helper()
	sim, srv := startSim(t, gcpTestWorld(), Options{Now: func() time.Time { return sccT0 }})
	var c *securitycenter.Client
	var err error
	if transport == "rest" {
		c, err = securitycenter.NewRESTClient(context.Background(), option.WithEndpoint(srv.URL), option.WithoutAuthentication())
	} else {
		c, err = securitycenter.NewClient(context.Background(), option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return sim, srv, c
}

// wantCode checks a client error's code: its gRPC status, or over REST the HTTP status
// and Google's status name.
func wantCode(t *testing.T, err error, code codes.Code) {
	t.Helper()
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		httpCode, name, _ := gcpStatus(map[codes.Code]errKind{codes.InvalidArgument: kindInvalid, codes.NotFound: kindNotFound,
			codes.AlreadyExists: kindConflict, codes.PermissionDenied: kindDenied}[code])
		if ge.Code != httpCode || !strings.Contains(string(ge.Body), `"status":"`+name+`"`) {
			t.Fatalf("error %v (%s), want %s", err, ge.Body, code)
		}
		return
	}
	if status.Code(err) != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

func sccCreateSource(t *testing.T, c *securitycenter.Client, name string) *sccpb.Source {
	t.Helper()
	src, err := c.CreateSource(context.Background(), &sccpb.CreateSourceRequest{Parent: sccOrgName,
		Source: &sccpb.Source{DisplayName: name, Description: "Findings of warden, a cloud posture reconciler."}})
	if err != nil {
		t.Fatalf("CreateSource: %v", err)
	}
	return src
}

// sccNewFinding is an active finding on a firewall of acme-prod.
func sccNewFinding(category, rule string) *sccpb.Finding {
	return &sccpb.Finding{
		State: sccpb.Finding_ACTIVE, Category: category, Severity: sccpb.Finding_HIGH,
		ResourceName: "//compute.googleapis.com/projects/acme-prod/global/firewalls/" + rule,
		EventTime:    timestamppb.New(sccT0), ExternalUri: "https://warden.example/findings/" + rule,
		SourceProperties: map[string]*structpb.Value{"rule": structpb.NewStringValue("WARDEN-GCP-NET-001"), "plan": structpb.NewStringValue("none")},
	}
}

func sccList(t *testing.T, c *securitycenter.Client, req *sccpb.ListFindingsRequest) []*sccpb.Finding {
	t.Helper()
	var out []*sccpb.Finding
	it := c.ListFindings(context.Background(), req)
	for {
		r, err := it.Next()
		if err == iterator.Done {
			return out
		}
		if err != nil {
			t.Fatalf("ListFindings %q: %v", req.GetFilter(), err)
		}
		out = append(out, r.GetFinding())
	}
}

func sccIDs(fs []*sccpb.Finding) []string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.GetName()[len(f.GetParent())+len("/findings/"):])
	}
	slices.Sort(ids)
	return ids
}

// A source is created once per organisation (a second one of the same display name is
// AlreadyExists), read back and listed a page at a time; other parents are refused.
func TestSCC_sources(t *testing.T) {
	_, _, c := sccSim(t)
	ctx := context.Background()
	warden := sccCreateSource(t, c, "warden")
	other := sccCreateSource(t, c, "other")
	if warden.GetName() == other.GetName() || len(warden.GetName()) <= len(sccOrgName+"/sources/") || warden.GetDescription() == "" {
		t.Fatalf("sources: %v, %v", warden, other)
	}
	_, err := c.CreateSource(ctx, &sccpb.CreateSourceRequest{Parent: sccOrgName, Source: &sccpb.Source{DisplayName: "warden"}})
	wantCode(t, err, codes.AlreadyExists)
	_, err = c.CreateSource(ctx, &sccpb.CreateSourceRequest{Parent: "organizations/999", Source: &sccpb.Source{DisplayName: "warden"}})
	wantCode(t, err, codes.PermissionDenied)
	_, err = c.CreateSource(ctx, &sccpb.CreateSourceRequest{Parent: "projects/acme-prod", Source: &sccpb.Source{DisplayName: "warden"}})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.CreateSource(ctx, &sccpb.CreateSourceRequest{Parent: sccOrgName, Source: &sccpb.Source{DisplayName: strings.Repeat("w", 65)}})
	wantCode(t, err, codes.InvalidArgument)

	got, err := c.GetSource(ctx, &sccpb.GetSourceRequest{Name: warden.GetName()})
	if err != nil || got.GetDisplayName() != "warden" {
		t.Fatalf("GetSource: %v, %v", got, err)
	}
	_, err = c.GetSource(ctx, &sccpb.GetSourceRequest{Name: sccOrgName + "/sources/42"})
	wantCode(t, err, codes.NotFound)

	var names []string
	it := c.ListSources(ctx, &sccpb.ListSourcesRequest{Parent: sccOrgName, PageSize: 1})
	for {
		s, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, s.GetDisplayName())
	}
	if !slices.Equal(names, []string{"warden", "other"}) {
		t.Fatalf("ListSources: %v", names)
	}
}

// A finding's life as an exporter drives it: created with its id, updated with and
// without a field mask, made inactive, muted, and listed back by state, category and
// mute, across sources and a page at a time; over gRPC and over REST alike.
func TestSCC_findingLifecycle(t *testing.T) {
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			sim, _, c := sccSimOver(t, transport)
			sccLifecycle(t, c)
			if n := sim.CallsTo("securitycenter"); n < 30 {
				t.Fatalf("%d SCC calls counted", n)
			}
		})
	}
}

func sccLifecycle(t *testing.T, c *securitycenter.Client) {
	ctx := context.Background()
	src := sccCreateSource(t, c, "warden")
	for i, cat := range []string{"OPEN_SSH_PORT", "OPEN_SSH_PORT", "PUBLIC_BUCKET", "OWNER_GRANTED"} {
		f, err := c.CreateFinding(ctx, &sccpb.CreateFindingRequest{Parent: src.GetName(), FindingId: fmt.Sprintf("f%d", i), Finding: sccNewFinding(cat, fmt.Sprintf("fw%d", i))})
		if err != nil {
			t.Fatalf("CreateFinding: %v", err)
		}
		if f.GetName() != src.GetName()+fmt.Sprintf("/findings/f%d", i) || f.GetParent() != src.GetName() || f.GetCreateTime() == nil || f.GetMute() != sccpb.Finding_UNDEFINED {
			t.Fatalf("created finding: %v", f)
		}
	}
	_, err := c.CreateFinding(ctx, &sccpb.CreateFindingRequest{Parent: src.GetName(), FindingId: "f0", Finding: sccNewFinding("X", "x")})
	wantCode(t, err, codes.AlreadyExists)
	_, err = c.CreateFinding(ctx, &sccpb.CreateFindingRequest{Parent: src.GetName(), FindingId: "not-alphanumeric", Finding: sccNewFinding("X", "x")})
	wantCode(t, err, codes.InvalidArgument)

	// A masked update changes the fields named, and one source property, only.
	upd := &sccpb.Finding{Name: src.GetName() + "/findings/f0", EventTime: timestamppb.New(sccT0.Add(time.Hour)), Category: "IGNORED",
		SourceProperties: map[string]*structpb.Value{"plan": structpb.NewStringValue("42 approved")}}
	f, err := c.UpdateFinding(ctx, &sccpb.UpdateFindingRequest{Finding: upd, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"event_time", "source_properties.plan"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !f.GetEventTime().AsTime().Equal(sccT0.Add(time.Hour)) || f.GetCategory() != "OPEN_SSH_PORT" ||
		f.GetSourceProperties()["plan"].GetStringValue() != "42 approved" || f.GetSourceProperties()["rule"].GetStringValue() != "WARDEN-GCP-NET-001" {
		t.Fatalf("masked update: %v", f)
	}
	// Without a mask every mutable field is replaced, source properties included.
	full := sccNewFinding("OPEN_SSH_PORT", "fw1")
	full.Name, full.Severity, full.SourceProperties = src.GetName()+"/findings/f1", sccpb.Finding_CRITICAL, map[string]*structpb.Value{"plan": structpb.NewStringValue("7")}
	if f, err = c.UpdateFinding(ctx, &sccpb.UpdateFindingRequest{Finding: full}); err != nil || f.GetSeverity() != sccpb.Finding_CRITICAL || len(f.GetSourceProperties()) != 1 {
		t.Fatalf("unmasked update: %v, %v", f, err)
	}
	moved := sccNewFinding("OPEN_SSH_PORT", "elsewhere")
	moved.Name = src.GetName() + "/findings/f1"
	_, err = c.UpdateFinding(ctx, &sccpb.UpdateFindingRequest{Finding: moved})
	wantCode(t, err, codes.InvalidArgument)
	// UpdateFinding creates the finding it names when there is none.
	created := sccNewFinding("PUBLIC_BUCKET", "bucket")
	created.Name = src.GetName() + "/findings/f4"
	if f, err = c.UpdateFinding(ctx, &sccpb.UpdateFindingRequest{Finding: created}); err != nil || f.GetState() != sccpb.Finding_ACTIVE || f.GetCreateTime() == nil {
		t.Fatalf("UpdateFinding of a new finding: %v, %v", f, err)
	}

	// Resolved: inactive; waived: muted.
	if f, err = c.SetFindingState(ctx, &sccpb.SetFindingStateRequest{Name: src.GetName() + "/findings/f2", State: sccpb.Finding_INACTIVE,
		StartTime: timestamppb.New(sccT0)}); err != nil || f.GetState() != sccpb.Finding_INACTIVE {
		t.Fatalf("SetFindingState: %v, %v", f, err)
	}
	_, err = c.SetFindingState(ctx, &sccpb.SetFindingStateRequest{Name: src.GetName() + "/findings/f2", State: sccpb.Finding_INACTIVE})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.SetFindingState(ctx, &sccpb.SetFindingStateRequest{Name: src.GetName() + "/findings/nope", State: sccpb.Finding_INACTIVE, StartTime: timestamppb.New(sccT0)})
	wantCode(t, err, codes.NotFound)
	if f, err = c.SetMute(ctx, &sccpb.SetMuteRequest{Name: src.GetName() + "/findings/f3", Mute: sccpb.Finding_MUTED}); err != nil ||
		f.GetMute() != sccpb.Finding_MUTED || f.GetMuteUpdateTime() == nil {
		t.Fatalf("SetMute: %v, %v", f, err)
	}
	_, err = c.SetMute(ctx, &sccpb.SetMuteRequest{Name: src.GetName() + "/findings/f3", Mute: sccpb.Finding_UNDEFINED})
	wantCode(t, err, codes.InvalidArgument)

	// Another source's findings are listed with "-" only.
	other := sccCreateSource(t, c, "other")
	if _, err := c.CreateFinding(ctx, &sccpb.CreateFindingRequest{Parent: other.GetName(), FindingId: "o1", Finding: sccNewFinding("OPEN_SSH_PORT", "o")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		parent, filter string
		want           []string
	}{
		{src.GetName(), "", []string{"f0", "f1", "f2", "f3", "f4"}},
		{src.GetName(), `state="ACTIVE"`, []string{"f0", "f1", "f3", "f4"}},
		{src.GetName(), `state="INACTIVE"`, []string{"f2"}},
		{src.GetName(), `category="OPEN_SSH_PORT"`, []string{"f0", "f1"}},
		{src.GetName(), `category="PUBLIC_BUCKET" OR category="OWNER_GRANTED"`, []string{"f2", "f3", "f4"}},
		{src.GetName(), `state="ACTIVE" AND -mute="MUTED"`, []string{"f0", "f1", "f4"}},
		{src.GetName(), `mute="MUTED"`, []string{"f3"}},
		{src.GetName(), `source_properties.plan = "42 approved"`, []string{"f0"}},
		{src.GetName(), `resource_name : "firewalls/fw1"`, []string{"f1"}},
		{sccOrgName + "/sources/-", `category="OPEN_SSH_PORT"`, []string{"f0", "f1", "o1"}},
	} {
		got := sccIDs(sccList(t, c, &sccpb.ListFindingsRequest{Parent: tc.parent, Filter: tc.filter, PageSize: 2}))
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListFindings %s %q: %v, want %v", tc.parent, tc.filter, got, tc.want)
		}
	}
	_, err = c.ListFindings(ctx, &sccpb.ListFindingsRequest{Parent: src.GetName(), Filter: `colour="red"`}).Next()
	wantCode(t, err, codes.InvalidArgument)
	ordered := sccList(t, c, &sccpb.ListFindingsRequest{Parent: src.GetName(), OrderBy: "category desc, name"})
	var cats []string
	for _, f := range ordered {
		cats = append(cats, f.GetCategory())
	}
	if !slices.Equal(cats, []string{"PUBLIC_BUCKET", "PUBLIC_BUCKET", "OWNER_GRANTED", "OPEN_SSH_PORT", "OPEN_SSH_PORT"}) {
		t.Fatalf("order_by category desc: %v", cats)
	}
}

// Every SCC call is counted by method (writes apart), and the admin API answers the
// stored findings.
func TestSCC_countsCallsAndAdminReadsFindings(t *testing.T) {
	sim, srv, c := sccSim(t)
	src := sccCreateSource(t, c, "warden")
	if _, err := c.CreateFinding(context.Background(), &sccpb.CreateFindingRequest{Parent: src.GetName(), FindingId: "f1", Finding: sccNewFinding("OPEN_SSH_PORT", "fw1")}); err != nil {
		t.Fatal(err)
	}
	sccList(t, c, &sccpb.ListFindingsRequest{Parent: src.GetName()})
	if n := sim.CallsTo("securitycenter"); n != 3 {
		t.Fatalf("CallsTo(securitycenter) = %d, want 3", n)
	}
	if w := sim.Writes(); w["securitycenter:CreateSource"] != 1 || w["securitycenter:CreateFinding"] != 1 || w["securitycenter:ListFindings"] != 0 {
		t.Fatalf("Writes() = %v", w)
	}
	resp, err := http.Get(srv.URL + "/_sim/scc/findings?source=" + src.GetName())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var docs []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0]["name"] != src.GetName()+"/findings/f1" || docs[0]["state"] != "ACTIVE" || docs[0]["category"] != "OPEN_SSH_PORT" {
		t.Fatalf("GET /_sim/scc/findings: %v", docs)
	}
	if got := sim.SCCFindings(""); len(got) != 1 {
		t.Fatalf("SCCFindings: %d", len(got))
	}
}

// When the world enforces GCP IAM, a member's SCC calls need the permissions Google
// checks, on the organisation: a findings editor writes findings but cannot create a
// source; a member without a role is refused, and the refusal is counted.
func TestSCC_enforcesOrganizationIAM(t *testing.T) {
	w := gcpTestWorld()
	w.GCP.EnforceIAM = true
	const editor, nobody = "serviceAccount:exporter@acme-prod.iam.gserviceaccount.com", "user:nobody@acme.example"
	w.GCP.Organizations[0].IAMPolicy.Bindings = append(w.GCP.Organizations[0].IAMPolicy.Bindings,
		Binding{Role: "roles/securitycenter.findingsEditor", Members: []string{editor}})
	sim, srv := startSim(t, w, Options{Now: func() time.Time { return sccT0 }})
	as := func(member string) *securitycenter.Client {
		opts := []option.ClientOption{option.WithEndpoint(srv.Addr), option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}
		if member == "" {
			opts = append(opts, option.WithoutAuthentication())
		} else {
			opts = append(opts, option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: SimToken(member), TokenType: "Bearer"})))
		}
		c, err := securitycenter.NewClient(context.Background(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	ctx := context.Background()
	src := sccCreateSource(t, as(""), "warden") // the operator
	_, err := as(editor).CreateSource(ctx, &sccpb.CreateSourceRequest{Parent: sccOrgName, Source: &sccpb.Source{DisplayName: "mine"}})
	wantCode(t, err, codes.PermissionDenied)
	if _, err := as(editor).CreateFinding(ctx, &sccpb.CreateFindingRequest{Parent: src.GetName(), FindingId: "f1", Finding: sccNewFinding("OPEN_SSH_PORT", "fw1")}); err != nil {
		t.Fatalf("findings editor: %v", err)
	}
	_, err = as(nobody).ListFindings(ctx, &sccpb.ListFindingsRequest{Parent: src.GetName()}).Next()
	wantCode(t, err, codes.PermissionDenied)
	if st := sim.Calls()["securitycenter:ListFindings"]; st.AccessDenied != 1 {
		t.Fatalf("ListFindings counters: %+v", st)
	}
}

// A project sees its organisation's sources, and the findings on its own resources only,
// under projects/PROJECT/sources/… (by id or number); findings are created under the
// organisation. Over gRPC and REST alike.
func TestSCC_projectView(t *testing.T) {
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			_, _, c := sccSimOver(t, transport)
			ctx := context.Background()
			src := sccCreateSource(t, c, "warden")
			srcID := src.GetName()[len(sccOrgName+"/sources/"):]
			mine := sccNewFinding("OPEN_SSH_PORT", "fw1")
			theirs := sccNewFinding("OPEN_SSH_PORT", "fw2")
			theirs.ResourceName = "//compute.googleapis.com/projects/other-project/global/firewalls/fw2"
			for id, f := range map[string]*sccpb.Finding{"mine": mine, "theirs": theirs} {
				if _, err := c.CreateFinding(ctx, &sccpb.CreateFindingRequest{Parent: src.GetName(), FindingId: id, Finding: f}); err != nil {
					t.Fatal(err)
				}
			}
			for _, parent := range []string{"projects/acme-prod/sources/-", "projects/111111111111/sources/" + srcID} {
				if got := sccIDs(sccList(t, c, &sccpb.ListFindingsRequest{Parent: parent})); !slices.Equal(got, []string{"mine"}) {
					t.Errorf("ListFindings %s: %v, want [mine]", parent, got)
				}
			}
			if got, err := c.GetSource(ctx, &sccpb.GetSourceRequest{Name: "projects/acme-prod/sources/" + srcID}); err != nil || got.GetName() != src.GetName() {
				t.Fatalf("GetSource through the project: %v, %v", got, err)
			}
			it := c.ListSources(ctx, &sccpb.ListSourcesRequest{Parent: "projects/acme-prod"})
			if s, err := it.Next(); err != nil || s.GetDisplayName() != "warden" {
				t.Fatalf("ListSources through the project: %v, %v", s, err)
			}
			f, err := c.SetFindingState(ctx, &sccpb.SetFindingStateRequest{Name: "projects/acme-prod/sources/" + srcID + "/findings/mine",
				State: sccpb.Finding_INACTIVE, StartTime: timestamppb.New(sccT0)})
			if err != nil || f.GetState() != sccpb.Finding_INACTIVE {
				t.Fatalf("SetFindingState through the project: %v, %v", f, err)
			}
			_, err = c.SetMute(ctx, &sccpb.SetMuteRequest{Name: "projects/acme-prod/sources/" + srcID + "/findings/theirs", Mute: sccpb.Finding_MUTED})
			wantCode(t, err, codes.NotFound)
			_, err = c.CreateFinding(ctx, &sccpb.CreateFindingRequest{Parent: "projects/acme-prod/sources/" + srcID, FindingId: "new", Finding: mine})
			wantCode(t, err, codes.InvalidArgument)
			_, err = c.ListFindings(ctx, &sccpb.ListFindingsRequest{Parent: "projects/nowhere/sources/-"}).Next()
			wantCode(t, err, codes.PermissionDenied)
		})
	}
}
