package cloudsim

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// computeBase is the prefix of every Compute self link.
const computeBase = "https://www.googleapis.com/compute/v1/projects/"

// computeRoutes serves the global Compute v1 resources warden reads and fixes: firewall
// rules, networks, SSL certificates, and the global operations their writes return.
func (s *Sim) computeRoutes(mux *http.ServeMux) {
	const g = "/compute/v1/projects/{project}/global/"
	mux.HandleFunc("GET "+g+"firewalls", s.listFirewalls)
	mux.HandleFunc("POST "+g+"firewalls", s.insertFirewall)
	mux.HandleFunc("GET "+g+"firewalls/{name}", s.getFirewall)
	mux.HandleFunc("PATCH "+g+"firewalls/{name}", s.writeFirewall("PatchFirewall", "patch"))
	mux.HandleFunc("PUT "+g+"firewalls/{name}", s.writeFirewall("UpdateFirewall", "update"))
	mux.HandleFunc("DELETE "+g+"firewalls/{name}", s.deleteFirewall)
	mux.HandleFunc("GET "+g+"networks", s.listNetworks)
	mux.HandleFunc("GET "+g+"networks/{name}", s.getNetwork)
	mux.HandleFunc("GET "+g+"sslCertificates", s.listSslCertificates)
	mux.HandleFunc("POST "+g+"sslCertificates", s.insertSslCertificate)
	mux.HandleFunc("GET "+g+"sslCertificates/{name}", s.getSslCertificate)
	mux.HandleFunc("DELETE "+g+"sslCertificates/{name}", s.deleteSslCertificate)
	mux.HandleFunc("GET "+g+"operations/{name}", s.getGlobalOperation)
}

// serveCompute runs one Compute call on a project the caller can see: an unknown project
// is 403, as Compute answers for projects without access.
func (s *Sim) serveCompute(w http.ResponseWriter, r *http.Request, action, perm string, h func(p *Project) (any, error)) {
	key := r.PathValue("project")
	s.serveREST(w, r, "compute", action, s.projectKey(key), func(c *call) (any, error) {
		p := s.gcpProject(key)
		if p == nil {
			return nil, errf(kindDenied, "forbidden", "Required '%s' permission for 'projects/%s'", perm, key)
		}
		return h(p)
	})
}

func notFound(p *Project, kind, name string) error {
	return errf(kindNotFound, "notFound", "The resource 'projects/%s/global/%s/%s' was not found", p.ID, kind, name)
}

func selfLink(p *Project, kind, name string) string {
	return computeBase + p.ID + "/global/" + kind + "/" + name
}

// idOf is a stored id as the proto's uint64; ids that are not numbers are left out.
func idOf(id string) *uint64 {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// lastSegment reads a resource name out of a URL or partial path ("global/networks/x").
func lastSegment(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }

// operation is a finished global operation on target. Writes apply at once, so every
// operation is DONE; its name carries its type so that polling can answer it again.
func (s *Sim) operation(p *Project, opType, kind, name string, id *uint64) *computepb.Operation {
	now := s.now().UTC().Format("2006-01-02T15:04:05.000-07:00")
	opName := fmt.Sprintf("operation-%d-%s", s.nextID(), opType)
	return &computepb.Operation{
		Kind: proto.String("compute#operation"), Id: idOf(numericID(p.ID+"/"+opName, 19)),
		Name: proto.String(opName), OperationType: proto.String(opType),
		TargetLink: proto.String(selfLink(p, kind, name)), TargetId: id,
		Status: computepb.Operation_DONE.Enum(), Progress: proto.Int32(100),
		User: proto.String("sim@example.com"), InsertTime: proto.String(now), StartTime: proto.String(now), EndTime: proto.String(now),
		SelfLink: proto.String(selfLink(p, "operations", opName)),
	}
}

func (s *Sim) getGlobalOperation(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.serveCompute(w, r, "GetGlobalOperation", "compute.globalOperations.get", func(p *Project) (any, error) {
		opType, ok := strings.CutPrefix(name, "operation-")
		if i := strings.IndexByte(opType, '-'); ok && i > 0 {
			return &computepb.Operation{
				Kind: proto.String("compute#operation"), Name: proto.String(name), OperationType: proto.String(opType[i+1:]),
				Status: computepb.Operation_DONE.Enum(), Progress: proto.Int32(100),
				SelfLink: proto.String(selfLink(p, "operations", name)),
			}, nil
		}
		return nil, notFound(p, "operations", name)
	})
}

// listPage applies a list call's filter and pagination (maxResults: 500 by default and at
// most; pageToken: an opaque offset) to items.
func listPage[T proto.Message](items []T, q url.Values) ([]T, string, error) {
	if f := q.Get("filter"); f != "" {
		terms, err := parseFilter(f)
		if err != nil {
			return nil, "", err
		}
		items = slices.DeleteFunc(slices.Clone(items), func(it T) bool { return !filterMatches(it, terms) })
	}
	size := 0
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 500 {
			return nil, "", errf(kindInvalid, "invalid", "Invalid value for field 'maxResults': '%s'. Must be less than or equal to 500", v)
		}
		size = n
	}
	start, end, next, err := pageBounds(q.Get("pageToken"), size, 500, 500, len(items))
	if err != nil {
		return nil, "", errf(kindInvalid, "invalid", "Invalid value for field 'pageToken': '%s'.", q.Get("pageToken"))
	}
	return items[start:end], next, nil
}

// filterTerm is one comparison of a Compute list filter: `name = "web"`, `disabled !=
// true`, or the regular-expression forms `network eq ".*/default"` and `name ne "x.*"`.
type filterTerm struct {
	field, op string
	value     string
	re        *regexp.Regexp
}

var filterTermPattern = regexp.MustCompile(`^\s*\(?\s*([A-Za-z][\w.]*)\s*(=|!=|\beq\b|\bne\b)\s*("([^"]*)"|'([^']*)'|[^\s()]+)\s*\)?\s*`)

// parseFilter reads the conjunctions of comparisons Compute filters are mostly made of;
// OR and other operators are refused rather than misread.
func parseFilter(f string) ([]filterTerm, error) {
	var terms []filterTerm
	rest := strings.TrimSpace(f)
	for rest != "" {
		m := filterTermPattern.FindStringSubmatch(rest)
		if m == nil {
			return nil, errf(kindInvalid, "invalid", "Invalid value for field 'filter': '%s'. Invalid list filter expression.", f)
		}
		t := filterTerm{field: m[1], op: m[2], value: m[3]}
		if m[4] != "" || m[5] != "" || strings.HasPrefix(m[3], `"`) || strings.HasPrefix(m[3], "'") {
			t.value = m[4] + m[5]
		}
		if t.op == "eq" || t.op == "ne" {
			re, err := regexp.Compile("^(?:" + t.value + ")$")
			if err != nil {
				return nil, errf(kindInvalid, "invalid", "Invalid value for field 'filter': '%s'. %v", f, err)
			}
			t.re = re
		}
		terms = append(terms, t)
		rest = strings.TrimSpace(rest[len(m[0]):])
		if r, ok := strings.CutPrefix(rest, "AND "); ok {
			rest = strings.TrimSpace(r)
		}
	}
	return terms, nil
}

// filterMatches compares the item's JSON fields (camelCase, dotted paths; any element of
// a list) with every term.
func filterMatches(m proto.Message, terms []filterTerm) bool {
	b, err := protojson.Marshal(m)
	if err != nil {
		return false
	}
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil {
		return false
	}
	for _, t := range terms {
		var v any = doc
		for _, k := range strings.Split(t.field, ".") {
			if mm, ok := v.(map[string]any); ok {
				v = mm[k]
			} else {
				v = nil
			}
		}
		vals := []any{v}
		if l, ok := v.([]any); ok {
			vals = l
		}
		hit := slices.ContainsFunc(vals, func(x any) bool {
			s := fmt.Sprint(x)
			if x == nil {
				s = ""
			}
			if t.re != nil {
				return t.re.MatchString(s)
			}
			return s == t.value
		})
		if hit == (t.op == "!=" || t.op == "ne") {
			return false
		}
	}
	return true
}

func firewallProto(p *Project, f *Firewall) *computepb.Firewall {
	out := &computepb.Firewall{
		Kind: proto.String("compute#firewall"), Id: idOf(f.ID), Name: proto.String(f.Name),
		Network:   proto.String(selfLink(p, "networks", f.Network)),
		Direction: proto.String(f.Direction), Disabled: proto.Bool(f.Disabled), Priority: proto.Int32(int32(f.Priority)),
		SourceRanges: slices.Clone(f.SourceRanges), DestinationRanges: slices.Clone(f.DestinationRanges),
		SourceTags: slices.Clone(f.SourceTags), TargetTags: slices.Clone(f.TargetTags),
		TargetServiceAccounts: slices.Clone(f.TargetServiceAccounts),
		LogConfig:             &computepb.FirewallLogConfig{Enable: proto.Bool(false)},
		SelfLink:              proto.String(selfLink(p, "firewalls", f.Name)),
	}
	if f.Description != "" {
		out.Description = proto.String(f.Description)
	}
	for _, a := range f.Allowed {
		out.Allowed = append(out.Allowed, &computepb.Allowed{IPProtocol: proto.String(a.Protocol), Ports: slices.Clone(a.Ports)})
	}
	for _, d := range f.Denied {
		out.Denied = append(out.Denied, &computepb.Denied{IPProtocol: proto.String(d.Protocol), Ports: slices.Clone(d.Ports)})
	}
	return out
}

func findFirewall(p *Project, name string) *Firewall {
	for _, f := range p.Firewalls {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (s *Sim) listFirewalls(w http.ResponseWriter, r *http.Request) {
	s.serveCompute(w, r, "ListFirewalls", "compute.firewalls.list", func(p *Project) (any, error) {
		items := make([]*computepb.Firewall, 0, len(p.Firewalls))
		for _, f := range p.Firewalls {
			items = append(items, firewallProto(p, f))
		}
		page, next, err := listPage(items, r.URL.Query())
		if err != nil {
			return nil, err
		}
		out := &computepb.FirewallList{Kind: proto.String("compute#firewallList"), Items: page,
			SelfLink: proto.String(computeBase + p.ID + "/global/firewalls")}
		if next != "" {
			out.NextPageToken = proto.String(next)
		}
		return out, nil
	})
}

func (s *Sim) getFirewall(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.serveCompute(w, r, "GetFirewall", "compute.firewalls.get", func(p *Project) (any, error) {
		f := findFirewall(p, name)
		if f == nil {
			return nil, notFound(p, "firewalls", name)
		}
		return firewallProto(p, f), nil
	})
}

// namePattern is RFC 1035, as Compute requires of resource names.
var namePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)

func (s *Sim) insertFirewall(w http.ResponseWriter, r *http.Request) {
	s.serveCompute(w, r, "InsertFirewall", "compute.firewalls.create", func(p *Project) (any, error) {
		var in computepb.Firewall
		if err := readProto(r, &in); err != nil {
			return nil, err
		}
		if !namePattern.MatchString(in.GetName()) {
			return nil, errf(kindInvalid, "invalid", "Invalid value for field 'resource.name': '%s'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'", in.GetName())
		}
		if findFirewall(p, in.GetName()) != nil {
			return nil, errf(kindConflict, "alreadyExists", "The resource 'projects/%s/global/firewalls/%s' already exists", p.ID, in.GetName())
		}
		f := &Firewall{Name: in.GetName(), ID: numericID(fmt.Sprintf("%s/firewall/%s/%d", p.ID, in.GetName(), s.nextID()), 19), Network: "default", Priority: 1000, Direction: "INGRESS"}
		if err := s.applyFirewall(p, f, &in, true); err != nil {
			return nil, err
		}
		p.Firewalls = append(p.Firewalls, f)
		return s.operation(p, "insert", "firewalls", f.Name, idOf(f.ID)), nil
	})
}

// writeFirewall serves PATCH (the fields sent replace the rule's) and PUT (the body
// replaces the rule).
func (s *Sim) writeFirewall(action, opType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		s.serveCompute(w, r, action, "compute.firewalls.update", func(p *Project) (any, error) {
			f := findFirewall(p, name)
			if f == nil {
				return nil, notFound(p, "firewalls", name)
			}
			var in computepb.Firewall
			if err := readProto(r, &in); err != nil {
				return nil, err
			}
			if in.Name != nil && in.GetName() != name {
				return nil, errf(kindInvalid, "invalid", "Invalid value for field 'resource.name': '%s'. The name cannot be changed.", in.GetName())
			}
			next := *f
			if opType == "update" {
				next = Firewall{Name: f.Name, ID: f.ID, Network: f.Network, Priority: 1000, Direction: "INGRESS"}
			}
			if err := s.applyFirewall(p, &next, &in, opType == "update"); err != nil {
				return nil, err
			}
			*f = next
			return s.operation(p, opType, "firewalls", f.Name, idOf(f.ID)), nil
		})
	}
}

// applyFirewall copies the fields set in `in` onto f and validates the result as Compute
// does. full: `in` is the whole rule (insert, update), so default sources apply.
func (s *Sim) applyFirewall(p *Project, f *Firewall, in *computepb.Firewall, full bool) error {
	if in.Network != nil {
		f.Network = lastSegment(in.GetNetwork())
	}
	if in.Direction != nil {
		f.Direction = in.GetDirection()
	}
	if in.Priority != nil {
		f.Priority = int(in.GetPriority())
	}
	if in.Disabled != nil {
		f.Disabled = in.GetDisabled()
	}
	if in.Description != nil {
		f.Description = in.GetDescription()
	}
	set := func(dst *[]string, src []string) {
		if full || len(src) > 0 {
			*dst = slices.Clone(src)
		}
	}
	set(&f.SourceRanges, in.SourceRanges)
	set(&f.DestinationRanges, in.DestinationRanges)
	set(&f.SourceTags, in.SourceTags)
	set(&f.TargetTags, in.TargetTags)
	set(&f.TargetServiceAccounts, in.TargetServiceAccounts)
	if full || len(in.Allowed) > 0 || len(in.Denied) > 0 {
		f.Allowed, f.Denied = nil, nil
		for _, a := range in.Allowed {
			f.Allowed = append(f.Allowed, FirewallRule{Protocol: a.GetIPProtocol(), Ports: slices.Clone(a.Ports)})
		}
		for _, d := range in.Denied {
			f.Denied = append(f.Denied, FirewallRule{Protocol: d.GetIPProtocol(), Ports: slices.Clone(d.Ports)})
		}
	}
	if !slices.ContainsFunc(p.Networks, func(n *Network) bool { return n.Name == f.Network }) {
		return errf(kindInvalid, "invalid", "Invalid value for field 'resource.network': '%s'. The referenced network resource cannot be found.", in.GetNetwork())
	}
	if f.Direction != "INGRESS" && f.Direction != "EGRESS" {
		return errf(kindInvalid, "invalid", "Invalid value for field 'resource.direction': '%s'. Must be INGRESS or EGRESS.", f.Direction)
	}
	if f.Priority < 0 || f.Priority > 65535 {
		return errf(kindInvalid, "invalid", "Invalid value for field 'resource.priority': '%d'. Must be between 0 and 65535.", f.Priority)
	}
	if (len(f.Allowed) == 0) == (len(f.Denied) == 0) {
		return errf(kindInvalid, "invalid", "Invalid value for field 'resource': exactly one of 'allowed' or 'denied' must be set.")
	}
	for _, r := range append(slices.Clone(f.Allowed), f.Denied...) {
		if err := checkFirewallRule(r); err != nil {
			return err
		}
	}
	for _, c := range append(slices.Clone(f.SourceRanges), f.DestinationRanges...) {
		if _, err := netip.ParsePrefix(c); err != nil {
			if _, err := netip.ParseAddr(c); err != nil {
				return errf(kindInvalid, "invalid", "Invalid value for field 'resource.sourceRanges': '%s'. Must be a CIDR address range.", c)
			}
		}
	}
	// A rule with no peer at all applies to every address, and Compute says so.
	if f.Direction == "INGRESS" && len(f.SourceRanges) == 0 && len(f.SourceTags) == 0 {
		f.SourceRanges = []string{"0.0.0.0/0"}
	}
	if f.Direction == "EGRESS" && len(f.DestinationRanges) == 0 {
		f.DestinationRanges = []string{"0.0.0.0/0"}
	}
	return nil
}

var portPattern = regexp.MustCompile(`^(\d{1,5})(?:-(\d{1,5}))?$`)

func checkFirewallRule(r FirewallRule) error {
	switch r.Protocol {
	case "tcp", "udp", "sctp":
	case "icmp", "esp", "ah", "ipip", "all":
		if len(r.Ports) > 0 {
			return errf(kindInvalid, "invalid", "Invalid value for field 'resource.allowed[0].ports': ports are only allowed for tcp, udp and sctp.")
		}
	default:
		if n, err := strconv.Atoi(r.Protocol); err != nil || n < 0 || n > 255 {
			return errf(kindInvalid, "invalid", "Invalid value for field 'resource.allowed[0].IPProtocol': '%s'.", r.Protocol)
		}
	}
	for _, port := range r.Ports {
		m := portPattern.FindStringSubmatch(port)
		if m == nil {
			return errf(kindInvalid, "invalid", "Invalid value for field 'resource.allowed[0].ports': '%s'.", port)
		}
		lo, _ := strconv.Atoi(m[1])
		hi := lo
		if m[2] != "" {
			hi, _ = strconv.Atoi(m[2])
		}
		if lo > 65535 || hi > 65535 || hi < lo {
			return errf(kindInvalid, "invalid", "Invalid value for field 'resource.allowed[0].ports': '%s'.", port)
		}
	}
	return nil
}

func (s *Sim) deleteFirewall(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.serveCompute(w, r, "DeleteFirewall", "compute.firewalls.delete", func(p *Project) (any, error) {
		f := findFirewall(p, name)
		if f == nil {
			return nil, notFound(p, "firewalls", name)
		}
		p.Firewalls = slices.DeleteFunc(p.Firewalls, func(x *Firewall) bool { return x == f })
		return s.operation(p, "delete", "firewalls", name, idOf(f.ID)), nil
	})
}

func networkProto(p *Project, n *Network) *computepb.Network {
	out := &computepb.Network{
		Kind: proto.String("compute#network"), Id: idOf(n.ID), Name: proto.String(n.Name),
		AutoCreateSubnetworks:                 proto.Bool(n.AutoCreateSubnetworks),
		RoutingConfig:                         &computepb.NetworkRoutingConfig{RoutingMode: proto.String("REGIONAL")},
		NetworkFirewallPolicyEnforcementOrder: proto.String("AFTER_CLASSIC_FIREWALL"),
		SelfLink:                              proto.String(selfLink(p, "networks", n.Name)),
	}
	// A legacy network has no autoCreateSubnetworks field at all, but an IPv4Range and
	// gateway, as the API shows it.
	if n.Legacy {
		r := n.IPv4Range
		if r == "" {
			r = "10.240.0.0/16"
		}
		out.AutoCreateSubnetworks, out.IPv4Range = nil, proto.String(r)
		out.GatewayIPv4 = proto.String(strings.TrimSuffix(r[:strings.LastIndexByte(r, '.')+1], ".") + ".1")
	}
	return out
}

func (s *Sim) listNetworks(w http.ResponseWriter, r *http.Request) {
	s.serveCompute(w, r, "ListNetworks", "compute.networks.list", func(p *Project) (any, error) {
		items := make([]*computepb.Network, 0, len(p.Networks))
		for _, n := range p.Networks {
			items = append(items, networkProto(p, n))
		}
		page, next, err := listPage(items, r.URL.Query())
		if err != nil {
			return nil, err
		}
		out := &computepb.NetworkList{Kind: proto.String("compute#networkList"), Items: page,
			SelfLink: proto.String(computeBase + p.ID + "/global/networks")}
		if next != "" {
			out.NextPageToken = proto.String(next)
		}
		return out, nil
	})
}

func (s *Sim) getNetwork(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.serveCompute(w, r, "GetNetwork", "compute.networks.get", func(p *Project) (any, error) {
		for _, n := range p.Networks {
			if n.Name == name {
				return networkProto(p, n), nil
			}
		}
		return nil, notFound(p, "networks", name)
	})
}

// sslProto answers a certificate as Compute does: the PEM chain in `certificate` (never
// the private key), its expiry and names read from it, and `managed` for Google-managed
// certificates.
func sslProto(p *Project, c *SslCertificate) *computepb.SslCertificate {
	out := &computepb.SslCertificate{
		Kind: proto.String("compute#sslCertificate"), Id: idOf(c.ID), Name: proto.String(c.Name),
		Type: proto.String(c.Type), SelfLink: proto.String(selfLink(p, "sslCertificates", c.Name)),
	}
	if !c.Created.IsZero() {
		out.CreationTimestamp = proto.String(c.Created.Format("2006-01-02T15:04:05.000-07:00"))
	}
	if c.Cert.PEM != "" {
		out.Certificate = proto.String(c.Cert.PEM + c.Cert.Chain)
		if c.Type == "SELF_MANAGED" {
			out.SelfManaged = &computepb.SslCertificateSelfManagedSslCertificate{Certificate: out.Certificate}
		}
		if b, _ := pem.Decode([]byte(c.Cert.PEM)); b != nil {
			if x, err := x509.ParseCertificate(b.Bytes); err == nil {
				out.ExpireTime = proto.String(x.NotAfter.UTC().Format("2006-01-02T15:04:05.000-07:00"))
				out.SubjectAlternativeNames = x.DNSNames
			}
		}
	}
	if c.Type == "MANAGED" {
		status := or(c.ManagedStatus, "PROVISIONING")
		ds := map[string]string{}
		for _, d := range c.Domains {
			ds[d] = map[bool]string{true: "ACTIVE", false: "PROVISIONING"}[status == "ACTIVE"]
		}
		out.Managed = &computepb.SslCertificateManagedSslCertificate{Domains: slices.Clone(c.Domains), Status: proto.String(status), DomainStatus: ds}
	}
	return out
}

func findSslCertificate(p *Project, name string) *SslCertificate {
	for _, c := range p.SslCertificates {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (s *Sim) listSslCertificates(w http.ResponseWriter, r *http.Request) {
	s.serveCompute(w, r, "ListSslCertificates", "compute.sslCertificates.list", func(p *Project) (any, error) {
		items := make([]*computepb.SslCertificate, 0, len(p.SslCertificates))
		for _, c := range p.SslCertificates {
			items = append(items, sslProto(p, c))
		}
		page, next, err := listPage(items, r.URL.Query())
		if err != nil {
			return nil, err
		}
		out := &computepb.SslCertificateList{Kind: proto.String("compute#sslCertificateList"), Items: page,
			SelfLink: proto.String(computeBase + p.ID + "/global/sslCertificates")}
		if next != "" {
			out.NextPageToken = proto.String(next)
		}
		return out, nil
	})
}

func (s *Sim) getSslCertificate(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.serveCompute(w, r, "GetSslCertificate", "compute.sslCertificates.get", func(p *Project) (any, error) {
		c := findSslCertificate(p, name)
		if c == nil {
			return nil, notFound(p, "sslCertificates", name)
		}
		return sslProto(p, c), nil
	})
}

// insertSslCertificate adds a self-managed certificate (its PEM and matching private key,
// in `certificate`/`privateKey` or `selfManaged`) or a Google-managed one (its domains; it
// starts PROVISIONING, without a certificate).
func (s *Sim) insertSslCertificate(w http.ResponseWriter, r *http.Request) {
	s.serveCompute(w, r, "InsertSslCertificate", "compute.sslCertificates.create", func(p *Project) (any, error) {
		var in computepb.SslCertificate
		if err := readProto(r, &in); err != nil {
			return nil, err
		}
		if !namePattern.MatchString(in.GetName()) {
			return nil, errf(kindInvalid, "invalid", "Invalid value for field 'resource.name': '%s'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'", in.GetName())
		}
		if findSslCertificate(p, in.GetName()) != nil {
			return nil, errf(kindConflict, "alreadyExists", "The resource 'projects/%s/global/sslCertificates/%s' already exists", p.ID, in.GetName())
		}
		c := &SslCertificate{Name: in.GetName(), ID: numericID(fmt.Sprintf("%s/sslCertificate/%s/%d", p.ID, in.GetName(), s.nextID()), 19),
			Type: or(in.GetType(), "SELF_MANAGED"), Created: s.now().UTC().Truncate(time.Millisecond)}
		switch c.Type {
		case "SELF_MANAGED":
			certPEM := or(in.GetCertificate(), in.GetSelfManaged().GetCertificate())
			keyPEM := or(in.GetPrivateKey(), in.GetSelfManaged().GetPrivateKey())
			if certPEM == "" || keyPEM == "" {
				return nil, errf(kindInvalid, "invalid", "Invalid value for field 'resource.certificate': a self-managed certificate needs a certificate and a private key.")
			}
			if _, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM)); err != nil {
				return nil, errf(kindInvalid, "invalid", "The SSL certificate and key could not be parsed: %v", err)
			}
			c.Cert = CertSpec{PEM: certPEM}
		case "MANAGED":
			c.Domains = slices.Clone(in.GetManaged().GetDomains())
			if len(c.Domains) == 0 || len(c.Domains) > 100 {
				return nil, errf(kindInvalid, "invalid", "Invalid value for field 'resource.managed.domains': a managed certificate needs 1 to 100 domains.")
			}
			c.ManagedStatus = "PROVISIONING"
		default:
			return nil, errf(kindInvalid, "invalid", "Invalid value for field 'resource.type': '%s'. Must be SELF_MANAGED or MANAGED.", c.Type)
		}
		p.SslCertificates = append(p.SslCertificates, c)
		return s.operation(p, "insert", "sslCertificates", c.Name, idOf(c.ID)), nil
	})
}

func (s *Sim) deleteSslCertificate(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.serveCompute(w, r, "DeleteSslCertificate", "compute.sslCertificates.delete", func(p *Project) (any, error) {
		c := findSslCertificate(p, name)
		if c == nil {
			return nil, notFound(p, "sslCertificates", name)
		}
		p.SslCertificates = slices.DeleteFunc(p.SslCertificates, func(x *SslCertificate) bool { return x == c })
		return s.operation(p, "delete", "sslCertificates", name, idOf(c.ID)), nil
	})
}
