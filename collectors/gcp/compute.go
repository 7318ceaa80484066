package gcp

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	computepb "cloud.google.com/go/compute/apiv1/computepb"

	"github.com/warden-sec/warden/collectors/certinfo"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

// collectCompute reads scope gcp/P/compute. Firewall rules are the primary read (networks
// list the rules on them, so they are unknown without it); networks, SSL certificates and
// instances are secondary: when one of those lists fails, the scope is partial and that
// type is missing, not empty (for instances: every rule's targets are unknown).
func (c *Collector) collectCompute(ctx context.Context, cl *clients, project string) result {
	sc := newScope(project, "compute")
	ctx, cnt := scoped(ctx, project)
	var secondary []error
	res, primary := c.readCompute(ctx, cl, project, sc.ID, &secondary)
	finish(&sc, cnt, primary, secondary)
	return result{scope: sc, resources: res}
}

func (c *Collector) readCompute(ctx context.Context, cl *clients, project, scopeID string, secondary *[]error) ([]snapshot.Resource, error) {
	size := uint32(c.pageSize(500))
	firewalls, err := gcpapi.Pages(ctx, cl.api, "compute.ListFirewalls", func(ctx context.Context, token string, items *[]*computepb.Firewall) (string, error) {
		it := cl.api.Firewalls.List(ctx, &computepb.ListFirewallsRequest{Project: project, MaxResults: &size}, gcpapi.NoRetry())
		return gcpapi.NextPage(it, int(size), token, items)
	})
	if err != nil {
		return nil, err
	}
	networks, err := gcpapi.Pages(ctx, cl.api, "compute.ListNetworks", func(ctx context.Context, token string, items *[]*computepb.Network) (string, error) {
		it := cl.api.Networks.List(ctx, &computepb.ListNetworksRequest{Project: project, MaxResults: &size}, gcpapi.NoRetry())
		return gcpapi.NextPage(it, int(size), token, items)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		*secondary = append(*secondary, err)
	}
	certs, err := gcpapi.Pages(ctx, cl.api, "compute.ListSslCertificates", func(ctx context.Context, token string, items *[]*computepb.SslCertificate) (string, error) {
		it := cl.api.SslCertificates.List(ctx, &computepb.ListSslCertificatesRequest{Project: project, MaxResults: &size}, gcpapi.NoRetry())
		return gcpapi.NextPage(it, int(size), token, items)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		*secondary = append(*secondary, err)
	}

	// Instances are secondary too: without them no rule's targets are known, and the
	// rules say so (targets.known false) rather than that they target nothing.
	instances, err := readFleet(ctx, cl, project, size)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		*secondary = append(*secondary, err)
	}

	base := computeBase(project)
	newRes := func(kind, typ, name string, attrs map[string]any) snapshot.Resource {
		return snapshot.Resource{UID: base + kind + "/" + name, Type: typ, Name: name, Account: project,
			Region: "global", Scope: scopeID, Attributes: attrs}
	}
	var res []snapshot.Resource
	onNetwork := map[string][]any{}
	for _, f := range firewalls {
		network := lastSegment(f.GetNetwork())
		onNetwork[network] = append(onNetwork[network], f.GetName())
		r := firewallResource(project, scopeID, f)
		r.Attributes["targets"] = instances.targets(f)
		res = append(res, r)
	}
	for _, n := range networks {
		fws := onNetwork[n.GetName()]
		if fws == nil {
			fws = []any{}
		}
		res = append(res, newRes("networks", "gcp.compute.network", n.GetName(), networkAttributes(n, fws)))
	}
	for _, ct := range certs {
		r, err := sslResource(project, scopeID, ct)
		if err != nil {
			// The certificate is there but unknown: a null one would read as none, in a
			// scope that claims to be whole.
			*secondary = append(*secondary, fmt.Errorf("compute.ListSslCertificates: %w", err))
		}
		res = append(res, r)
	}
	return res, nil
}

// computeBase is the uid prefix of a project's global Compute resources.
func computeBase(project string) string {
	return "//compute.googleapis.com/projects/" + project + "/global/"
}

func firewallResource(project, scopeID string, f *computepb.Firewall) snapshot.Resource {
	return snapshot.Resource{UID: computeBase(project) + "firewalls/" + f.GetName(), Type: "gcp.compute.firewall", Name: f.GetName(),
		Account: project, Region: "global", Scope: scopeID, Attributes: map[string]any{
			"network": lastSegment(f.GetNetwork()), "direction": f.GetDirection(), "disabled": f.GetDisabled(),
			"priority": int(f.GetPriority()), "source_ranges": strs(f.GetSourceRanges()),
			"source_tags": strs(f.GetSourceTags()), "target_tags": strs(f.GetTargetTags()),
			"target_service_accounts": strs(f.GetTargetServiceAccounts()),
			"allowed":                 firewallRules(f.GetAllowed()), "denied": firewallRules(f.GetDenied()),
		}}
}

// sslResource is an SSL certificate; one whose body does not parse is returned with a
// null certificate, and the error.
func sslResource(project, scopeID string, ct *computepb.SslCertificate) (snapshot.Resource, error) {
	var cert any
	var err error
	if x := leaf(ct.GetCertificate()); x != nil {
		cert = certinfo.Describe(x)
	} else if ct.GetCertificate() != "" {
		err = fmt.Errorf("certificate %s does not parse", ct.GetName())
	}
	return snapshot.Resource{UID: computeBase(project) + "sslCertificates/" + ct.GetName(), Type: "gcp.compute.ssl_certificate", Name: ct.GetName(),
		Account: project, Region: "global", Scope: scopeID, Attributes: map[string]any{
			"cert_type": ct.GetType(), "managed_status": ct.GetManaged().GetStatus(), "certificate": cert,
		}}, err
}

// ruleSpec is the shape shared by computepb.Allowed and computepb.Denied.
type ruleSpec interface {
	GetIPProtocol() string
	GetPorts() []string
}

func firewallRules[T ruleSpec](rules []T) []any {
	out := make([]any, 0, len(rules))
	for _, r := range rules {
		out = append(out, map[string]any{"protocol": r.GetIPProtocol(), "ports": strs(r.GetPorts())})
	}
	return out
}

// leaf parses the first certificate of a PEM chain; nil when there is none.
func leaf(chain string) *x509.Certificate {
	rest := []byte(chain)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil
		}
		if b.Type == "CERTIFICATE" {
			x, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil
			}
			return x
		}
	}
}

// lastSegment is the name at the end of a resource URL.
func lastSegment(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }

// networkAttributes are a network's attributes; mode is legacy when the API shows no
// autoCreateSubnetworks field (a legacy network, with an IPv4Range), else auto or custom.
func networkAttributes(n *computepb.Network, fws []any) map[string]any {
	attrs := map[string]any{"firewalls": fws}
	switch {
	case n.AutoCreateSubnetworks == nil:
		attrs["mode"] = "legacy"
	case n.GetAutoCreateSubnetworks():
		attrs["mode"], attrs["auto_create_subnetworks"] = "auto", true
	default:
		attrs["mode"], attrs["auto_create_subnetworks"] = "custom", false
	}
	return attrs
}

// computePermissions are the IAM permissions of this file's reads.
func computePermissions() []string {
	return []string{"compute.firewalls.list", "compute.instances.list", "compute.networks.list", "compute.projects.get",
		"compute.sslCertificates.list"}
}
