// Package dashboard is warden's web dashboard, served by warden serve: server-rendered
// pages (html/template) over the store — the overview (posture score, open findings by
// severity, convergence over the history and the daemon's finding state), the findings
// (filters, search, waive), the approval requests (filtered, sorted and grouped as
// compact rows that open to the exact change; approve and deny one, or several behind
// one confirmation that lists every change and binds the deciding post to it),
// the actions (history; roll back), the audit log (verification, last checkpoint,
// entries) and the compliance reports — with htmx 2.0.11 embedded for the little
// interaction there is. Every page works without JavaScript, and nothing is loaded from
// the network.
//
// # Wiring (warden serve)
//
//	d, err := dashboard.New(dashboard.Options{Store: st, Log: log, Gate: gate, Actions: machine,
//		Rollback: rollbackAs, Verifier: v, WaiverFile: cfg.Waivers, Policies: ids,
//		Config: cfg.Dashboard, Loopback: isLoopback(addr), LocalActor: actor,
//		OnDecision: func(string) { loop.Wake() }}) // reconcile/daemon.Loop
//	routes["/"] = d
//
// # Who may do what
//
// A visitor is a token's holder (a bearer header, or a session cookie the login form
// exchanged the token for), a user an authenticating proxy vouches for (Config.Proxy,
// believed only from its addresses), or — with authentication off, which New allows on
// loopback only — the local operator. Roles: viewer reads, approver also decides and
// waives, admin also rolls back and revokes tokens. Decisions go through the gate like
// every channel's: a principal whose role allows deciding is vouched for by the
// dashboard (gates.Gate.DecideAuthorized, as Slack vouches for slack.approvers); the
// local operator is judged as the CLI's user (gates.Gate.Decide, gates.approvers).
//
// # Forgery and secrets
//
// Every state-changing request needs the principal's CSRF token (an HMAC keyed by the
// session's secret, the bearer token, or the browser's HttpOnly SameSite=Strict binding
// cookie) and, from a browser, a Sec-Fetch-Site, Origin or Referer of this origin;
// refusals are 403 and logged. The Content-Security-Policy allows the dashboard's own
// scripts and styles only (no inline code: the charts are SVG coloured by the
// stylesheet), pages cannot be framed, and no token, session or key is ever written into
// a page or a log: tokens are stored as their SHA-256 (migration 0012).
package dashboard
