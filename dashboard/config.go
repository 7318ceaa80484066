package dashboard

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
)

// Config is the dashboard: section of warden's config.
//
//	dashboard:
//	  enabled: true              # default true: warden serve serves the pages at /
//	  auth: auto                 # auto: off on loopback, required elsewhere; required; off (loopback only)
//	  session_ttl: 12h           # how long a login lasts
//	  trusted_origins: [https://warden.example.com]  # Origins accepted besides the Host's own
//	  proxy:                     # identities from an authenticating proxy (OIDC)
//	    user_header: X-Forwarded-Email
//	    groups_header: X-Forwarded-Groups   # comma-separated
//	    trusted_proxies: [10.0.0.0/8]       # only requests from these addresses are believed
//	    roles: {sec-admins: admin, sec-oncall: approver, engineering: viewer}
//
// Tokens (warden token create) work whenever authentication is on; the proxy's headers
// are believed only from the trusted proxies' addresses.
type Config struct {
	// Enabled turns the pages on (nil: on).
	Enabled *bool
	// Auth is AuthAuto (the default), AuthRequired or AuthOff.
	Auth string
	// SessionTTL is how long a browser session lasts (0: DefaultSessionTTL).
	SessionTTL time.Duration
	// TrustedOrigins are extra Origins (scheme://host[:port]) accepted on state-changing
	// requests: the public URL of a proxy that rewrites the Host header.
	TrustedOrigins []string
	// Proxy, when set, takes identities from an authenticating proxy's headers.
	Proxy *ProxyConfig

	lines map[string]int
}

// ProxyConfig names the headers an authenticating proxy (oauth2-proxy, an OIDC-aware
// load balancer) sets, where it connects from, and which of its groups hold which role.
type ProxyConfig struct {
	UserHeader     string
	GroupsHeader   string
	TrustedProxies []netip.Prefix
	// Roles maps a group to the role its members hold; a user holds the highest role of
	// their groups, and none (403) if no group of theirs is listed.
	Roles map[string]Role
}

// Values of Config.Auth.
const (
	AuthAuto     = "auto"
	AuthRequired = "required"
	AuthOff      = "off"
)

// DefaultSessionTTL is how long a login lasts unless session_ttl says otherwise.
const DefaultSessionTTL = 12 * time.Hour

// IsEnabled reports whether the pages are served.
func (c Config) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// AuthOn reports whether visitors must authenticate, for a server listening on
// loopback or not: auto is off on loopback only.
func (c Config) AuthOn(loopback bool) bool {
	switch c.Auth {
	case AuthOff:
		return false
	case AuthRequired:
		return true
	}
	return !loopback
}

// TTL is the session lifetime.
func (c Config) TTL() time.Duration {
	if c.SessionTTL > 0 {
		return c.SessionTTL
	}
	return DefaultSessionTTL
}

// errorf is a problem with field, on its line, or on its parent's (a missing field, a
// list's item).
func (c Config) errorf(field, format string, args ...any) *yamlerr.Error {
	line := c.lines[field]
	for k := field; line == 0 && strings.ContainsAny(k, ".["); {
		k = k[:strings.LastIndexAny(k, ".[")]
		line = c.lines[k]
	}
	return &yamlerr.Error{Section: "dashboard", Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks the section; errors are *yamlerr.Error naming the field.
func (c Config) Validate() error {
	if !slices.Contains([]string{"", AuthAuto, AuthRequired, AuthOff}, c.Auth) {
		return c.errorf("auth", "%q: want auto, required or off", c.Auth)
	}
	if c.SessionTTL < 0 {
		return c.errorf("session_ttl", "want a positive duration such as 12h")
	}
	for i, o := range c.TrustedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != "" || u.User != nil || u.RawQuery != "" {
			return c.errorf(fmt.Sprintf("trusted_origins[%d]", i), "%q: want an origin such as https://warden.example.com (scheme and host, no path)", o)
		}
	}
	if p := c.Proxy; p != nil {
		for _, h := range []struct{ field, v string }{{"proxy.user_header", p.UserHeader}, {"proxy.groups_header", p.GroupsHeader}} {
			if h.v == "" && h.field == "proxy.groups_header" {
				continue
			}
			if h.v == "" || strings.ContainsAny(h.v, " :\t\r\n") {
				return c.errorf(h.field, "%q: want a header name such as X-Forwarded-Email", h.v)
			}
			switch http.CanonicalHeaderKey(h.v) {
			case "Authorization", "Cookie", "Host":
				return c.errorf(h.field, "%s carries credentials or routing, not an identity", h.v)
			}
		}
		if len(p.TrustedProxies) == 0 {
			return c.errorf("proxy.trusted_proxies", "missing: the addresses the proxy connects from (such as [10.0.0.5/32]); from anywhere else the headers would be anyone's to forge")
		}
		if len(p.Roles) == 0 {
			return c.errorf("proxy.roles", "missing: map the proxy's groups to roles, such as {sec-oncall: approver}")
		}
	}
	return nil
}

var configKeys = []string{"enabled", "auth", "session_ttl", "trusted_origins", "proxy"}
var proxyKeys = []string{"user_header", "groups_header", "trusted_proxies", "roles"}

// UnmarshalYAML reads the dashboard: section and validates it; errors are
// *yamlerr.Error with the line of the offending key, and unknown keys are errors.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	out := Config{lines: map[string]int{}}
	fail := func(line int, field, format string, args ...any) error {
		return &yamlerr.Error{Section: "dashboard", Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if n.Kind != yaml.MappingNode {
		return fail(n.Line, "", "want a mapping with keys %s", strings.Join(configKeys, ", "))
	}
	err := eachKey(n, "", configKeys, out.lines, fail, func(key string, v *yaml.Node) error {
		switch key {
		case "enabled":
			var b bool
			if v.ShortTag() != "!!bool" || v.Decode(&b) != nil {
				return fail(v.Line, key, "want true or false")
			}
			out.Enabled = &b
		case "auth":
			out.Auth = v.Value
			if v.Kind != yaml.ScalarNode {
				return fail(v.Line, key, "want auto, required or off")
			}
		case "session_ttl":
			d, err := time.ParseDuration(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || d <= 0 {
				return fail(v.Line, key, "%q: want a positive duration such as 12h", v.Value)
			}
			out.SessionTTL = d
		case "trusted_origins":
			list, err := stringList(v, key, fail)
			if err != nil {
				return err
			}
			out.TrustedOrigins = list
		case "proxy":
			p, err := readProxy(v, out.lines, fail)
			if err != nil {
				return err
			}
			out.Proxy = p
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*c = out
	return nil
}

type failFunc func(line int, field, format string, args ...any) error

// eachKey calls fn for each key of the mapping n, refusing unknown and repeated keys and
// recording each key's line under prefix+key.
func eachKey(n *yaml.Node, prefix string, known []string, lines map[string]int, fail failFunc, fn func(key string, v *yaml.Node) error) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := prefix + k.Value
		if l, ok := seen[k.Value]; ok {
			return fail(k.Line, field, "given twice (also line %d)", l)
		}
		seen[k.Value] = k.Line
		lines[field] = k.Line
		if !slices.Contains(known, k.Value) {
			if s := suggest.Closest(k.Value, known); s != "" {
				return fail(k.Line, field, "unknown key (did you mean %q?)", s)
			}
			return fail(k.Line, field, "unknown key (known: %s)", strings.Join(known, ", "))
		}
		if err := fn(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

// stringList reads a list of strings.
func stringList(v *yaml.Node, field string, fail failFunc) ([]string, error) {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, fail(v.Line, field, "want a list")
	}
	var out []string
	for i, it := range v.Content {
		if it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" {
			return nil, fail(it.Line, fmt.Sprintf("%s[%d]", field, i), "want a string")
		}
		out = append(out, it.Value)
	}
	return out, nil
}

func readProxy(n *yaml.Node, lines map[string]int, fail failFunc) (*ProxyConfig, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fail(n.Line, "proxy", "want a mapping with keys %s", strings.Join(proxyKeys, ", "))
	}
	p := &ProxyConfig{}
	err := eachKey(n, "proxy.", proxyKeys, lines, fail, func(key string, v *yaml.Node) error {
		field := "proxy." + key
		switch key {
		case "user_header", "groups_header":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
				return fail(v.Line, field, "want a header name")
			}
			if key == "user_header" {
				p.UserHeader = v.Value
			} else {
				p.GroupsHeader = v.Value
			}
		case "trusted_proxies":
			list, err := stringList(v, field, fail)
			if err != nil {
				return err
			}
			for i, s := range list {
				pf, err := netip.ParsePrefix(s)
				if err != nil {
					a, aerr := netip.ParseAddr(s)
					if aerr != nil {
						return fail(v.Content[i].Line, fmt.Sprintf("%s[%d]", field, i), "%q: want an address or a CIDR such as 10.0.0.0/8", s)
					}
					pf = netip.PrefixFrom(a, a.BitLen())
				}
				p.TrustedProxies = append(p.TrustedProxies, pf.Masked())
			}
		case "roles":
			if v.Kind != yaml.MappingNode {
				return fail(v.Line, field, "want a mapping of group to role, such as {sec-oncall: approver}")
			}
			p.Roles = map[string]Role{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				g, r := v.Content[i], v.Content[i+1]
				role, err := ParseRole(r.Value)
				if err != nil || r.Kind != yaml.ScalarNode {
					return fail(r.Line, field+"."+g.Value, "%q: want viewer, approver or admin", r.Value)
				}
				if _, dup := p.Roles[g.Value]; dup {
					return fail(g.Line, field+"."+g.Value, "given twice")
				}
				p.Roles[g.Value] = role
			}
		}
		return nil
	})
	return p, err
}
