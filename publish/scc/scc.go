// Package scc sends warden's findings to Google Security Command Center (API v1) under
// a source of warden's own in the organization: the source is created once and found
// again by its display name; each finding is created once (its id is warden's
// fingerprint) and updated afterwards, ACTIVE while warden sees it and INACTIVE once
// resolved, and muted while a waiver covers it.
package scc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	securitycenter "cloud.google.com/go/securitycenter/apiv1"
	"cloud.google.com/go/securitycenter/apiv1/securitycenterpb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/publish"
)

// SourceName is the display name of warden's source, by which it is found again.
const SourceName = "warden"

// sourceDescription is what Security Command Center shows of the source.
const sourceDescription = "Findings of warden, the cloud security posture reconciler: its Rego policies' verdicts on the resources it reads, with the fix it proposes and where its approval stands."

// Client is what the sink calls of Security Command Center (*securitycenter.Client).
type Client interface {
	ListSources(ctx context.Context, req *securitycenterpb.ListSourcesRequest, opts ...gax.CallOption) *securitycenter.SourceIterator
	CreateSource(ctx context.Context, req *securitycenterpb.CreateSourceRequest, opts ...gax.CallOption) (*securitycenterpb.Source, error)
	CreateFinding(ctx context.Context, req *securitycenterpb.CreateFindingRequest, opts ...gax.CallOption) (*securitycenterpb.Finding, error)
	UpdateFinding(ctx context.Context, req *securitycenterpb.UpdateFindingRequest, opts ...gax.CallOption) (*securitycenterpb.Finding, error)
	SetFindingState(ctx context.Context, req *securitycenterpb.SetFindingStateRequest, opts ...gax.CallOption) (*securitycenterpb.Finding, error)
	SetMute(ctx context.Context, req *securitycenterpb.SetMuteRequest, opts ...gax.CallOption) (*securitycenterpb.Finding, error)
}

// Permissions are the IAM permissions the sink's calls need, one per method of Client,
// granted on the organization: what `warden permissions` grants warden's exporter
// (package permissions), held to the calls the sink makes by permissions' tests.
func Permissions() []string {
	return []string{"securitycenter.findings.create", "securitycenter.findings.setMute", "securitycenter.findings.setState",
		"securitycenter.findings.update", "securitycenter.sources.create", "securitycenter.sources.list"}
}

// Options configure the sink.
type Options struct {
	// Organization is the organization's numeric id.
	Organization string
	// All sends every finding, not only Google Cloud ones.
	All bool
}

// BatchSize is how many findings the sink takes in one Send (each is its own call or
// two: the batch only paces what is recorded together).
const BatchSize = 50

// Sink is Security Command Center as a publish.Sink.
type Sink struct {
	client Client
	o      Options

	mu     sync.Mutex
	source string // organizations/ORG/sources/ID once found or created
}

var orgID = regexp.MustCompile(`^[0-9]{1,20}$`)

// New returns the sink sending to o's organization through client.
func New(client Client, o Options) (*Sink, error) {
	o.Organization = strings.TrimPrefix(o.Organization, "organizations/")
	if !orgID.MatchString(o.Organization) {
		return nil, fmt.Errorf("security command center: organization %q: want its numeric id", o.Organization)
	}
	return &Sink{client: client, o: o}, nil
}

// Name implements publish.Sink.
func (s *Sink) Name() string { return "scc/organizations/" + s.o.Organization }

// Wants implements publish.Sink: Google Cloud findings, or all with Options.All.
func (s *Sink) Wants(f *findings.Finding) bool {
	return s.o.All || strings.HasPrefix(f.ResourceType, "gcp.")
}

// BatchSize implements publish.Sink.
func (s *Sink) BatchSize() int { return BatchSize }

// Source returns warden's source in the organization, found by its display name or
// created the first time: one ListSources call (a page at a time) per sink, and one
// CreateSource call ever.
func (s *Sink) Source(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.source != "" {
		return s.source, nil
	}
	parent := "organizations/" + s.o.Organization
	it := s.client.ListSources(ctx, &securitycenterpb.ListSourcesRequest{Parent: parent})
	for {
		src, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("security command center: list the sources of %s: %w", parent, err)
		}
		if src.GetDisplayName() == SourceName {
			s.source = src.GetName()
			return s.source, nil
		}
	}
	src, err := s.client.CreateSource(ctx, &securitycenterpb.CreateSourceRequest{Parent: parent,
		Source: &securitycenterpb.Source{DisplayName: SourceName, Description: sourceDescription}})
	if err != nil {
		return "", fmt.Errorf("security command center: create warden's source in %s: %w", parent, err)
	}
	s.source = src.GetName()
	return s.source, nil
}

// Send implements publish.Sink: per finding, CreateFinding the first time (UpdateFinding
// when it exists already), UpdateFinding afterwards, then SetFindingState and SetMute
// when its state or mute is not the one last sent. A finding Security Command Center
// refuses as invalid is refused; any other error fails the batch.
func (s *Sink) Send(ctx context.Context, batch []publish.Item) (map[string]string, error) {
	src, err := s.Source(ctx)
	if err != nil {
		return nil, err
	}
	refused := map[string]string{}
	for i := range batch {
		it := &batch[i]
		if err := s.send(ctx, src, it); err != nil {
			if invalid(err) {
				refused[it.Finding.Fingerprint] = gcpapi.Code(err).String() + ": " + err.Error()
				continue
			}
			return nil, fmt.Errorf("security command center: finding %s: %w", it.Finding.Fingerprint, err)
		}
	}
	return refused, nil
}

// send makes the calls one finding needs.
func (s *Sink) send(ctx context.Context, src string, it *publish.Item) error {
	f := Finding(src, it)
	name := src + "/findings/" + it.Finding.Fingerprint
	// What Security Command Center holds before these calls: a new finding is created
	// ACTIVE and with its mute undefined.
	wasState, wasMute := securitycenterpb.Finding_ACTIVE, securitycenterpb.Finding_MUTE_UNSPECIFIED
	created := false
	if it.Previous == nil {
		_, err := s.client.CreateFinding(ctx, &securitycenterpb.CreateFindingRequest{Parent: src, FindingId: it.Finding.Fingerprint, Finding: f})
		switch {
		case err == nil:
			created, wasState = true, f.GetState()
		case gcpapi.Code(err) == codes.AlreadyExists:
			// Sent before, but warden no longer knows what (a new database): its state
			// is unknown, and set below.
			wasState = securitycenterpb.Finding_STATE_UNSPECIFIED
		default:
			return fmt.Errorf("CreateFinding: %w", err)
		}
	} else {
		wasState, wasMute = state(it.Previous), mute(it.Previous)
	}
	if !created {
		upd := Finding(src, it)
		upd.Name = name
		upd.State = securitycenterpb.Finding_STATE_UNSPECIFIED // SetFindingState's
		_, err := s.client.UpdateFinding(ctx, &securitycenterpb.UpdateFindingRequest{Finding: upd, UpdateMask: &fieldmaskpb.FieldMask{
			Paths: []string{"category", "source_properties", "event_time", "severity", "finding_class", "description", "next_steps"}}})
		if err != nil {
			return fmt.Errorf("UpdateFinding: %w", err)
		}
	}
	if st := f.GetState(); st != wasState {
		if _, err := s.client.SetFindingState(ctx, &securitycenterpb.SetFindingStateRequest{Name: name, State: st, StartTime: timestamppb.New(it.UpdatedAt)}); err != nil {
			return fmt.Errorf("SetFindingState %s: %w", st, err)
		}
	}
	if m := mute(it); m != wasMute && (m == securitycenterpb.Finding_MUTED || wasMute == securitycenterpb.Finding_MUTED) {
		if _, err := s.client.SetMute(ctx, &securitycenterpb.SetMuteRequest{Name: name, Mute: m}); err != nil {
			return fmt.Errorf("SetMute %s: %w", m, err)
		}
	}
	return nil
}

// invalid reports whether err is Security Command Center refusing the finding itself,
// not the call failing.
func invalid(err error) bool {
	switch gcpapi.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return true
	}
	return false
}

// Finding is the Security Command Center finding of it in source src.
func Finding(src string, it *publish.Item) *securitycenterpb.Finding {
	f := &it.Finding
	props := map[string]*structpb.Value{
		"title":         structpb.NewStringValue(f.Title),
		"policy":        structpb.NewStringValue(f.Policy),
		"warden_status": structpb.NewStringValue(f.Status),
		"resource_type": structpb.NewStringValue(f.ResourceType),
		"fingerprint":   structpb.NewStringValue(f.Fingerprint),
	}
	if f.Scope != "" {
		props["scope"] = structpb.NewStringValue(f.Scope)
	}
	if reqs := it.Controls(); len(reqs) > 0 {
		props["frameworks"] = structpb.NewStringValue(strings.Join(reqs, ", "))
	}
	if w := f.Waiver; w != nil {
		props["waiver_owner"] = structpb.NewStringValue(w.Owner)
		props["waiver_reason"] = structpb.NewStringValue(w.Reason)
		props["waiver_expires"] = structpb.NewStringValue(w.Expires.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if fx := it.Fix; fx != nil {
		props["fix_action"] = structpb.NewStringValue(fx.Action)
		props["fix_risk"] = structpb.NewStringValue(f.Remediation.Risk.String())
		props["fix_state"] = structpb.NewStringValue(cmp.Or(fx.State, "proposed"))
		props["fix_approval"] = structpb.NewStringValue(fx.Approval())
		if fx.ID != "" {
			props["fix_id"] = structpb.NewStringValue(fx.ID)
		}
	}
	return &securitycenterpb.Finding{
		Parent:           src,
		ResourceName:     f.Resource,
		State:            state(it),
		Category:         f.Policy,
		SourceProperties: props,
		EventTime:        timestamppb.New(it.UpdatedAt),
		CreateTime:       timestamppb.New(it.CreatedAt),
		Severity:         severity(f.Severity),
		FindingClass:     securitycenterpb.Finding_MISCONFIGURATION,
		Description:      cmp.Or(f.Message, f.Title),
		NextSteps:        it.Describe(),
	}
}

// state follows warden's lifecycle: ACTIVE until resolved (an unknown finding is not
// known to be gone), then INACTIVE.
func state(it *publish.Item) securitycenterpb.Finding_State {
	if it.Finding.Status == findings.StatusResolved {
		return securitycenterpb.Finding_INACTIVE
	}
	return securitycenterpb.Finding_ACTIVE
}

// mute is MUTED while a waiver covers the finding, UNMUTED once it no longer does, and
// left undefined for a finding never waived (a mute rule of the organization may still
// mute it).
func mute(it *publish.Item) securitycenterpb.Finding_Mute {
	switch {
	case it.Finding.Status == findings.StatusWaived:
		return securitycenterpb.Finding_MUTED
	case it.Previous != nil && it.Previous.Finding.Status == findings.StatusWaived:
		return securitycenterpb.Finding_UNMUTED
	}
	return securitycenterpb.Finding_MUTE_UNSPECIFIED
}

func severity(s findings.Severity) securitycenterpb.Finding_Severity {
	switch s {
	case findings.Critical:
		return securitycenterpb.Finding_CRITICAL
	case findings.High:
		return securitycenterpb.Finding_HIGH
	case findings.Medium:
		return securitycenterpb.Finding_MEDIUM
	}
	return securitycenterpb.Finding_LOW
}
