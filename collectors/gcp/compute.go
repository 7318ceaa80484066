package gcp

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	computepb "cloud.google.com/go/compute/apiv1/computepb"

	"github.com/warden-sec/warden/collectors/certinfo"
	"github.com/warden-sec/warden/snapshot"
)

// collectCompute reads scope gcp/P/compute. Firewall rules are the primary read (networks
// list the rules on them, so they are unknown without it); networks and SSL certificates
// are secondary: when one of those lists fails, the scope is partial and that type is
// missing, not empty.
func (c *Collector) collectCompute(ctx context.Context, cl *clients, project string) result {
	sc := newScope(project, "compute")
	r := c.newRun()
	var secondary []error
	res, primary := c.readCompute(ctx, cl, r, project, sc.ID, &secondary)
	finish(&sc, r, primary, secondary)
	return result{scope: sc, resources: res}
}

func (c *Collector) readCompute(ctx context.Context, cl *clients, r *run, project, scopeID string, secondary *[]error) ([]snapshot.Resource, error) {
	size := uint32(c.pageSize(500))
	firewalls, err := pages(ctx, r, "compute.ListFirewalls", func(ctx context.Context, token string, items *[]*computepb.Firewall) (string, error) {
		it := cl.firewalls.List(ctx, &computepb.ListFirewallsRequest{Project: project, MaxResults: &size}, noRetry)
		return nextPage(it, int(size), token, items)
	})
	if err != nil {
		return nil, err
	}
	networks, err := pages(ctx, r, "compute.ListNetworks", func(ctx context.Context, token string, items *[]*computepb.Network) (string, error) {
		it := cl.networks.List(ctx, &computepb.ListNetworksRequest{Project: project, MaxResults: &size}, noRetry)
		return nextPage(it, int(size), token, items)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		*secondary = append(*secondary, err)
	}
	certs, err := pages(ctx, r, "compute.ListSslCertificates", func(ctx context.Context, token string, items *[]*computepb.SslCertificate) (string, error) {
		it := cl.certs.List(ctx, &computepb.ListSslCertificatesRequest{Project: project, MaxResults: &size}, noRetry)
		return nextPage(it, int(size), token, items)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		*secondary = append(*secondary, err)
	}

	base := "//compute.googleapis.com/projects/" + project + "/global/"
	newRes := func(kind, typ, name string, attrs map[string]any) snapshot.Resource {
		return snapshot.Resource{UID: base + kind + "/" + name, Type: typ, Name: name, Account: project,
			Region: "global", Scope: scopeID, Attributes: attrs}
	}
	var res []snapshot.Resource
	onNetwork := map[string][]any{}
	for _, f := range firewalls {
		network := lastSegment(f.GetNetwork())
		onNetwork[network] = append(onNetwork[network], f.GetName())
		res = append(res, newRes("firewalls", "gcp.compute.firewall", f.GetName(), map[string]any{
			"network": network, "direction": f.GetDirection(), "disabled": f.GetDisabled(),
			"priority": int(f.GetPriority()), "source_ranges": strs(f.GetSourceRanges()),
			"source_tags": strs(f.GetSourceTags()), "target_tags": strs(f.GetTargetTags()),
			"allowed": firewallRules(f.GetAllowed()), "denied": firewallRules(f.GetDenied()),
		}))
	}
	for _, n := range networks {
		fws := onNetwork[n.GetName()]
		if fws == nil {
			fws = []any{}
		}
		res = append(res, newRes("networks", "gcp.compute.network", n.GetName(), map[string]any{
			"auto_create_subnetworks": n.GetAutoCreateSubnetworks(), "firewalls": fws,
		}))
	}
	for _, ct := range certs {
		var cert any
		if x := leaf(ct.GetCertificate()); x != nil {
			cert = certinfo.Describe(x)
		} else if ct.GetCertificate() != "" {
			// The certificate is there but unknown: a null one would read as none, in a
			// scope that claims to be whole.
			*secondary = append(*secondary, fmt.Errorf("compute.ListSslCertificates: certificate %s does not parse", ct.GetName()))
		}
		res = append(res, newRes("sslCertificates", "gcp.compute.ssl_certificate", ct.GetName(), map[string]any{
			"cert_type": ct.GetType(), "managed_status": ct.GetManaged().GetStatus(), "certificate": cert,
		}))
	}
	return res, nil
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
