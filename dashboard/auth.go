package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Principal is who makes a request, and what they may do.
type Principal struct {
	// Name is the identity they act as: the name approvers, the gates' self-approval rule
	// and the audit log know them by.
	Name string
	Role Role
	// Via says how they authenticated: "token" (a bearer header), "session" (a login
	// cookie), "proxy" (an authenticating proxy's headers) or "local" (authentication
	// is off: loopback only).
	Via string
	// binding is the secret the CSRF token is derived from: the bearer token, the
	// session's secret, or the browser's binding cookie.
	binding string
	// session is the session cookie's secret, for logout.
	session string
}

// May reports whether the principal holds role r or a higher one.
func (p *Principal) May(r Role) bool { return p != nil && p.Role >= r }

// Vouched reports whether the dashboard itself established that the principal may
// decide approvals (their role), as Slack's approver list does: such decisions go
// through gates.Gate.DecideAuthorized. The local operator of an unauthenticated
// dashboard is judged as the CLI judges its user: by gates.approvers.
func (p *Principal) Vouched() bool { return p.Via != "local" }

type principalKey struct{}

func withPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalOf returns the request's principal; nil for an anonymous one.
func principalOf(r *http.Request) *Principal {
	p, _ := r.Context().Value(principalKey{}).(*Principal)
	return p
}

// Cookie names. With Secure set they take the __Host- prefix, which browsers accept only
// from a secure origin, for path /, without a Domain: no other host can plant them.
const (
	sessionCookie = "warden_session"
	bindCookie    = "warden_bind"
	flashCookie   = "warden_flash"
)

func (d *Dashboard) cookieName(base string) string {
	if d.secure {
		return "__Host-" + base
	}
	return base
}

func (d *Dashboard) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: d.cookieName(name), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: d.secure, SameSite: http.SameSiteStrictMode}
}

func (d *Dashboard) readCookie(r *http.Request, name string) string {
	c, err := r.Cookie(d.cookieName(name))
	if err != nil {
		return ""
	}
	return c.Value
}

// errUnauthenticated: a credential was presented and is no good.
var errUnauthenticated = errors.New("authentication failed")

// authenticate finds the request's principal: a bearer token first, then a session
// cookie, then the proxy's identity headers, then the local operator when authentication
// is off. It returns nil for an anonymous visitor, and errUnauthenticated when a bearer
// token was presented and is unknown or revoked. binding is the browser's binding
// cookie (made if missing), which the CSRF token of cookie-borne identities derives from.
func (d *Dashboard) authenticate(w http.ResponseWriter, r *http.Request) (*Principal, error) {
	ctx := r.Context()
	if !d.authOn {
		return &Principal{Name: d.o.LocalActor, Role: RoleAdmin, Via: "local", binding: d.binding(w, r)}, nil
	}
	if h := r.Header.Get("Authorization"); h != "" {
		secret, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return nil, errUnauthenticated
		}
		t, err := d.tokens.Authenticate(ctx, strings.TrimSpace(secret))
		if err != nil {
			if !errors.Is(err, ErrBadToken) {
				d.log.Error("dashboard: authenticate a bearer token", "err", err)
			}
			return nil, errUnauthenticated
		}
		return &Principal{Name: t.Name, Role: t.Role, Via: "token", binding: secret}, nil
	}
	if s := d.readCookie(r, sessionCookie); s != "" {
		t, err := d.tokens.Session(ctx, s)
		if err == nil {
			return &Principal{Name: t.Name, Role: t.Role, Via: "session", binding: s, session: s}, nil
		}
		if !errors.Is(err, ErrBadToken) {
			d.log.Error("dashboard: read a session", "err", err)
		}
		// An ended session is forgotten: the visitor logs in again.
		http.SetCookie(w, d.cookie(sessionCookie, "", -1))
	}
	if p := d.proxyPrincipal(r); p != nil {
		p.binding = d.binding(w, r)
		return p, nil
	}
	return nil, nil
}

// proxyPrincipal is the identity the authenticating proxy vouches for, if the request
// comes from a trusted proxy and names a user.
func (d *Dashboard) proxyPrincipal(r *http.Request) *Principal {
	pc := d.o.Config.Proxy
	if pc == nil {
		return nil
	}
	user := strings.TrimSpace(r.Header.Get(pc.UserHeader))
	if user == "" {
		return nil
	}
	if !d.fromTrustedProxy(r) {
		// A forged header from elsewhere is ignored, and said so once per request.
		d.log.Warn("dashboard: identity header from an untrusted address ignored", "header", pc.UserHeader, "remote", r.RemoteAddr)
		return nil
	}
	if checkName(user) != nil {
		d.log.Warn("dashboard: the proxy's user name is unusable", "header", pc.UserHeader, "remote", r.RemoteAddr)
		return nil
	}
	role := RoleNone
	if pc.GroupsHeader != "" {
		for g := range strings.SplitSeq(r.Header.Get(pc.GroupsHeader), ",") {
			if gr, ok := pc.Roles[strings.TrimSpace(g)]; ok && gr > role {
				role = gr
			}
		}
	}
	return &Principal{Name: user, Role: role, Via: "proxy"}
}

func (d *Dashboard) fromTrustedProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range d.o.Config.Proxy.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// binding returns the browser's binding cookie, setting a new one if it has none: the
// secret the CSRF tokens of an anonymous visitor, a proxy's user and the local operator
// derive from. It is HttpOnly and SameSite=Strict: a page elsewhere can neither read it
// nor have it sent.
func (d *Dashboard) binding(w http.ResponseWriter, r *http.Request) string {
	if b := d.readCookie(r, bindCookie); len(b) >= 32 {
		return b
	}
	b := newSecret()
	http.SetCookie(w, d.cookie(bindCookie, b, 0))
	// The cookie reaches the handlers of this same request too (the login form's token).
	r.AddCookie(&http.Cookie{Name: d.cookieName(bindCookie), Value: b})
	return b
}

// csrfToken is the anti-forgery token of a principal (or, with p nil, of the anonymous
// visitor whose binding cookie is b): an HMAC keyed by the binding secret, over the
// name. It is useless to anyone who does not hold the binding secret, which a page on
// another origin never does.
func csrfToken(binding, name string) string {
	m := hmac.New(sha256.New, []byte(binding))
	m.Write([]byte("warden dashboard csrf v1\x00" + name))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// csrfFor is the token the pages embed for r's principal.
func (d *Dashboard) csrfFor(w http.ResponseWriter, r *http.Request, p *Principal) string {
	if p == nil {
		return csrfToken(d.binding(w, r), "")
	}
	return csrfToken(p.binding, p.Name)
}

// checkForgery refuses a state-changing request that does not prove it comes from the
// dashboard's own pages: its CSRF token (form field csrf, or header X-CSRF-Token) must be
// the principal's, and the browser's Sec-Fetch-Site, Origin or Referer must name this
// origin (or a trusted one). A request that names none is accepted only with a bearer
// token, which a browser never sends on its own.
func (d *Dashboard) checkForgery(r *http.Request, p *Principal) error {
	if err := d.cop.Check(r); err != nil {
		return errors.New("the request comes from another site")
	}
	if r.Header.Get("Sec-Fetch-Site") == "" && r.Header.Get("Origin") == "" {
		ref := r.Header.Get("Referer")
		switch u, err := url.Parse(ref); {
		case ref != "" && (err != nil || !d.sameOrigin(r, u)):
			return errors.New("the request's Referer is another site")
		case ref == "" && (p == nil || p.Via != "token"):
			return errors.New("the request names no Origin or Referer")
		}
	}
	want := ""
	if p == nil {
		want = csrfToken(d.readCookie(r, bindCookie), "")
		if d.readCookie(r, bindCookie) == "" {
			return errors.New("no CSRF binding cookie: load the form again")
		}
	} else {
		want = csrfToken(p.binding, p.Name)
	}
	got := r.PostFormValue("csrf")
	if got == "" {
		got = r.Header.Get("X-CSRF-Token")
	}
	if got == "" {
		return errors.New("no CSRF token")
	}
	if !hmac.Equal([]byte(got), []byte(want)) {
		return errors.New("wrong CSRF token")
	}
	return nil
}

// sameOrigin reports whether u is this server's origin (its Host) or a trusted one.
func (d *Dashboard) sameOrigin(r *http.Request, u *url.URL) bool {
	if u.Host == r.Host {
		return true
	}
	for _, o := range d.o.Config.TrustedOrigins {
		if strings.EqualFold(o, u.Scheme+"://"+u.Host) {
			return true
		}
	}
	return false
}
