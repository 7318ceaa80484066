package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Options wire a Dashboard.
type Options struct {
	// Store holds everything shown; Log is its audit log (entries are read from it,
	// waivers and tokens audited to it); Gate decides approvals.
	Store *store.Store
	Log   *audit.Log
	Gate  *gates.Gate
	// Actions lists the recorded actions (a *remediate.Machine; it needs no clouds).
	Actions *remediate.Machine
	// Rollback rolls action id back as actor through warden's one path
	// (remediate.Machine.Rollback of a machine acting as actor, with the live targets).
	// nil: the actions page offers no rollback, and says why.
	Rollback func(ctx context.Context, actor, id string) (remediate.Item, error)
	// Verifier checks the audit checkpoints' signatures (nil: they cannot be checked).
	Verifier note.Verifier
	// WaiverFile is the waiver file (the config's waivers:) the findings page adds
	// waivers to, as a person would with an editor; empty: waiving is off, and the page
	// says why. Policies are the ids of the loaded policies, which a waiver must name.
	WaiverFile string
	Policies   []string
	// Report writes the report of a framework in a format (html, csv, json, sarif,
	// ocsf) to w, for the reports page's downloads; nil: the page lists the frameworks
	// without downloads. Formats are the formats it writes.
	Report  func(ctx context.Context, w io.Writer, framework, format string) error
	Formats []string
	Config  Config
	// Loopback says the server listens on loopback only: authentication may then be off,
	// and cookies are not marked Secure (a plain-HTTP origin could not set them).
	Loopback bool
	// LocalActor is who acts when authentication is off (warden serve's actor).
	LocalActor string
	// OnDecision is called after each decision recorded from the pages (serve wakes its
	// worker with it); it must not block.
	OnDecision func(requestID string)
	// Fixes are the fixes the Access page shows would close a principal's surplus
	// (nil: none shown); UnusedWindowDays is the pack's unused_access_window_days (0: 90).
	Fixes            *remediators.Registry
	UnusedWindowDays int
	Now              func() time.Time
	Logger           *slog.Logger
}

// Dashboard is the web dashboard: an http.Handler serving the pages, their forms and
// their static assets. It is safe for concurrent use.
type Dashboard struct {
	o      Options
	log    *slog.Logger
	now    func() time.Time
	tokens *Tokens
	pages  map[string]*template.Template
	mux    *http.ServeMux
	cop    *http.CrossOriginProtection
	authOn bool
	secure bool

	// waiverMu serializes edits of the waiver file by this process.
	waiverMu sync.Mutex
	// verified caches the audit log's last verification: it reads the whole log.
	verifyMu sync.Mutex
	verified *verification
}

// New returns the dashboard. Authentication off (Config.Auth off, or auto) is refused
// unless the server listens on loopback only.
func New(o Options) (*Dashboard, error) {
	if o.Store == nil || o.Log == nil || o.Gate == nil || o.Actions == nil {
		return nil, errors.New("dashboard: Store, Log, Gate and Actions are required")
	}
	if err := o.Config.Validate(); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	if o.Config.Auth == AuthOff && !o.Loopback {
		return nil, errors.New("dashboard: auth: off is allowed only when warden serve listens on loopback: anyone who reaches the pages would act as " + o.LocalActor)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Dashboard{o: o, log: o.Logger, now: o.Now, tokens: NewTokens(o.Store, o.Log, o.Now),
		authOn: o.Config.AuthOn(o.Loopback), secure: !o.Loopback, cop: http.NewCrossOriginProtection()}
	if !d.authOn && strings.TrimSpace(o.LocalActor) == "" {
		return nil, errors.New("dashboard: authentication is off and no local actor is named")
	}
	for _, origin := range o.Config.TrustedOrigins {
		if err := d.cop.AddTrustedOrigin(origin); err != nil {
			return nil, fmt.Errorf("dashboard: trusted_origins: %w", err)
		}
	}
	if err := d.parseTemplates(); err != nil {
		return nil, err
	}
	d.routes()
	return d, nil
}

// Tokens is the dashboard's token store.
func (d *Dashboard) Tokens() *Tokens { return d.tokens }

// AuthOn reports whether visitors must authenticate.
func (d *Dashboard) AuthOn() bool { return d.authOn }

func (d *Dashboard) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	m.Handle("GET /static/", http.StripPrefix("/static/", staticHandler(static)))
	m.HandleFunc("GET /{$}", d.page(RoleViewer, d.overviewPage))
	m.HandleFunc("GET /findings", d.page(RoleViewer, d.findingsPage))
	m.HandleFunc("POST /findings/waive", d.action(RoleApprover, d.waive))
	m.HandleFunc("GET /approvals", d.page(RoleViewer, d.approvalsPage))
	m.HandleFunc("POST /approvals/{id}/approve", d.action(RoleApprover, d.decide(true)))
	m.HandleFunc("POST /approvals/{id}/deny", d.action(RoleApprover, d.decide(false)))
	m.HandleFunc("POST /approvals/confirm", d.action(RoleApprover, d.confirmBulk))
	m.HandleFunc("POST /approvals/decide", d.action(RoleApprover, d.decideBulk))
	m.HandleFunc("GET /actions", d.page(RoleViewer, d.actionsPage))
	m.HandleFunc("POST /actions/{id}/rollback", d.action(RoleAdmin, d.rollback))
	m.HandleFunc("GET /audit", d.page(RoleViewer, d.auditPage))
	m.HandleFunc("GET /access", d.page(RoleViewer, d.accessPage))
	m.HandleFunc("GET /reports", d.page(RoleViewer, d.reportsPage))
	m.HandleFunc("GET /reports/{framework}/{format}", d.page(RoleViewer, d.reportDownload))
	m.HandleFunc("GET /tokens", d.page(RoleAdmin, d.tokensPage))
	m.HandleFunc("POST /tokens/{id}/revoke", d.action(RoleAdmin, d.revokeToken))
	m.HandleFunc("GET /login", d.loginPage)
	m.HandleFunc("POST /login", d.login)
	m.HandleFunc("POST /logout", d.action(RoleNone, d.logout))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		d.fail(w, r, principalOf(r), http.StatusNotFound, "There is no page at "+r.URL.Path+".")
	})
	d.mux = m
}

// contentSecurityPolicy allows nothing but the dashboard's own scripts, styles and
// requests: no inline script or style, no framing, forms posting only here.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP implements http.Handler.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// Same-origin requests keep their Referer (a fallback of the forgery check); other
	// sites learn nothing of the dashboard's URLs.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if d.secure {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	d.mux.ServeHTTP(w, r)
}

func staticHandler(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The assets are the binary's: they change with it, never while it runs.
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

type handler func(w http.ResponseWriter, r *http.Request, p *Principal)

// page wraps a GET handler: the visitor must be authenticated (else the login form)
// and hold role.
func (d *Dashboard) page(role Role, fn handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := d.authenticate(w, r)
		switch {
		case err != nil:
			w.Header().Set("WWW-Authenticate", `Bearer realm="warden"`)
			d.fail(w, r, nil, http.StatusUnauthorized, "That token is unknown or revoked.")
			return
		case p == nil:
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		case !p.May(role):
			d.fail(w, r, p, http.StatusForbidden, fmt.Sprintf("This page needs the %s role; you (%s) hold %s.", role, p.Name, p.Role))
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		fn(w, r.WithContext(withPrincipal(r.Context(), p)), p)
	}
}

// action wraps a state-changing handler: authenticated, holding role, and passing the
// forgery check (CSRF token and origin). Refusals are 401 or 403, and logged.
func (d *Dashboard) action(role Role, fn handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		p, err := d.authenticate(w, r)
		refuse := func(code int, why string) {
			name := ""
			if p != nil {
				name = p.Name
			}
			d.log.Warn("dashboard: request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr,
				"principal", name, "status", code, "reason", why)
			d.fail(w, r, p, code, why)
		}
		switch {
		case err != nil:
			refuse(http.StatusUnauthorized, "That token is unknown or revoked.")
			return
		case p == nil:
			refuse(http.StatusUnauthorized, "Log in first.")
			return
		case !p.May(role):
			refuse(http.StatusForbidden, fmt.Sprintf("This needs the %s role; you (%s) hold %s.", role, p.Name, p.Role))
			return
		}
		if code, why := readForm(r); code != 0 {
			refuse(code, why)
			return
		}
		if err := d.checkForgery(r, p); err != nil {
			refuse(http.StatusForbidden, "Refused: "+err.Error()+".")
			return
		}
		fn(w, r.WithContext(withPrincipal(r.Context(), p)), p)
	}
}

// readForm reads a posted form whole before anything looks at its fields, so that a
// form over the body's limit is refused as too large (413), not as missing its CSRF
// token; it returns 0 when the form was read.
func readForm(r *http.Request) (int, string) {
	err := r.ParseForm()
	if err == nil {
		return 0, ""
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("Refused: the form is over %d KiB.", tooLarge.Limit>>10)
	}
	return http.StatusBadRequest, "Refused: the form could not be read."
}

// view is what every page template gets.
type view struct {
	Title, Nav string
	// Back is the page's own URL, where its forms send the browser back to.
	Back    string
	P       *Principal
	CSRF    string
	Flash   *flash
	AuthOff bool
	Data    any
}

type flash struct {
	Error bool   `json:"error,omitempty"`
	Text  string `json:"text"`
}

// setFlash leaves a message for the page the browser is sent to next.
func (d *Dashboard) setFlash(w http.ResponseWriter, isErr bool, format string, args ...any) {
	b, _ := json.Marshal(flash{Error: isErr, Text: fmt.Sprintf(format, args...)})
	http.SetCookie(w, d.cookie(flashCookie, base64.RawURLEncoding.EncodeToString(b), 60))
}

func (d *Dashboard) takeFlash(w http.ResponseWriter, r *http.Request) *flash {
	v := d.readCookie(r, flashCookie)
	if v == "" {
		return nil
	}
	http.SetCookie(w, d.cookie(flashCookie, "", -1))
	b, err := base64.RawURLEncoding.DecodeString(v)
	var f flash
	if err != nil || json.Unmarshal(b, &f) != nil || f.Text == "" {
		return nil
	}
	return &f
}

// render writes page name with data, or a 500 if the template fails: the page is
// rendered into a buffer first, so that a failure never leaves half a page.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, p *Principal, status int, name, title string, data any) {
	v := view{Title: title, Nav: name, Back: r.URL.RequestURI(), P: p, Flash: d.takeFlash(w, r), AuthOff: !d.authOn, Data: data}
	v.CSRF = d.csrfFor(w, r, p)
	t := d.pages[name]
	var buf bytes.Buffer
	if t == nil {
		d.log.Error("dashboard: no template", "page", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		d.log.Error("dashboard: render a page", "page", name, "err", err)
		http.Error(w, "internal error: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders an error page.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, p *Principal, status int, msg string) {
	d.render(w, r, p, status, "error", http.StatusText(status), msg)
}

// failed logs an error reading the store and renders a 500 that names what failed,
// never the database's address.
func (d *Dashboard) failed(w http.ResponseWriter, r *http.Request, p *Principal, what string, err error) {
	d.log.Error("dashboard: "+what, "err", err)
	d.fail(w, r, p, http.StatusInternalServerError, "Could not "+what+": warden's store did not answer. Try again in a moment.")
}

// back sends the browser to the page it came from (PRG), or to fallback.
func back(w http.ResponseWriter, r *http.Request, fallback string) {
	to := fallback
	if ref := r.PostFormValue("back"); localPath(ref) {
		to = ref
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// localPath reports whether ref is a path on this host, as a browser will read it:
// browsers drop tabs and newlines anywhere in a URL and read "\" as "/", so "/\t/x"
// would be "//x", another host.
func localPath(ref string) bool {
	if !strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "//") {
		return false
	}
	for _, c := range ref {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return false
		}
	}
	u, err := url.Parse(ref)
	return err == nil && u.Scheme == "" && u.Host == ""
}
