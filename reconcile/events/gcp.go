package events

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// auditLogType is the @type of a Cloud Audit Log payload.
const auditLogType = "type.googleapis.com/google.cloud.audit.AuditLog"

// pubsub maps a Pub/Sub push request: the LogEntry is message.data, base64.
func pubsub(n node) (Change, error) {
	msg, err := n.obj("message")
	if err != nil {
		return Change{}, err
	}
	data, err := msg.need("data")
	if err != nil {
		return Change{}, err
	}
	raw, ok := unbase64(data)
	if !ok {
		return Change{}, malformed(msg.at("data"), "not base64")
	}
	// Push requests carry the id twice, as messageId and message_id.
	id, err := msg.str("messageId")
	if err != nil {
		return Change{}, err
	}
	if id == "" {
		if id, err = msg.str("message_id"); err != nil {
			return Change{}, err
		}
	}
	v, err := decode(raw, msg.at("data"))
	if err != nil {
		return Change{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Change{}, malformed(msg.at("data"), "want a Cloud Logging entry, got "+kindOf(v))
	}
	return logEntry(node{m: m, path: msg.at("data")}, id)
}

// unbase64 decodes Pub/Sub's standard base64, and the URL-safe and unpadded forms a
// relay may write.
func unbase64(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// logEntry maps a Cloud Logging entry whose protoPayload is a Cloud Audit Log.
func logEntry(n node, delivery string) (Change, error) {
	pp, err := n.obj("protoPayload")
	if err != nil {
		return Change{}, err
	}
	if pp.m == nil {
		for _, k := range []string{"jsonPayload", "textPayload"} {
			if n.has(k) {
				return Change{}, unknown(n.at(k), "", "the entry is not a Cloud Audit Log")
			}
		}
		return Change{}, malformed(n.at("protoPayload"), "missing")
	}
	typ, err := pp.str("@type")
	if err != nil {
		return Change{}, err
	}
	if typ != "" && typ != auditLogType {
		return Change{}, unknown(pp.at("@type"), "", fmt.Sprintf("%q is not a Cloud Audit Log", typ))
	}
	service, err := pp.need("serviceName")
	if err != nil {
		return Change{}, err
	}
	method, err := pp.need("methodName")
	if err != nil {
		return Change{}, err
	}
	at, err := n.timestamp("timestamp")
	if err != nil {
		return Change{}, err
	}
	source, err := n.str("insertId")
	if err != nil {
		return Change{}, err
	}
	if source == "" {
		source = delivery
	}
	if source == "" {
		return Change{}, malformed(n.at("insertId"), "missing")
	}
	event := gcpEvent(service, method)
	status, err := pp.obj("status")
	if err != nil {
		return Change{}, err
	}
	code, err := status.integer("code")
	if err != nil {
		return Change{}, err
	}
	if code != 0 {
		msg, err := status.str("message")
		if err != nil {
			return Change{}, err
		}
		if code == gcpPermissionDenied {
			return Change{}, gcpDenial(n, pp, event, method, source, delivery, msg, at)
		}
		return Change{}, unknown(status.at("code"), event, fmt.Sprintf("%d %s: the call failed and changed nothing", code, msg))
	}
	call, ok := gcpCalls[event]
	if !ok || call.service != service {
		return Change{}, unknown(pp.at("methodName"), event, event+" of "+service+" is not a call warden maps")
	}
	g := &gcpCtx{entry: n, pp: pp, event: event}
	if g.resourceName, err = pp.str("resourceName"); err != nil {
		return Change{}, err
	}
	if g.req, err = pp.obj("request"); err != nil {
		return Change{}, err
	}
	if g.resp, err = pp.obj("response"); err != nil {
		return Change{}, err
	}
	res, err := n.obj("resource")
	if err != nil {
		return Change{}, err
	}
	if g.labels, err = res.obj("labels"); err != nil {
		return Change{}, err
	}
	if err := call.refs(g); err != nil {
		return Change{}, withEvent(err, event)
	}
	actor, err := gcpActor(pp)
	if err != nil {
		return Change{}, err
	}
	return change(Change{Provider: "gcp", Account: g.account, Region: "global", Scope: g.scope,
		Source: source, Delivery: delivery, Event: event, At: at, Actor: actor}, g.refs, g.why), nil
}

// computeVersion is the API version Compute Engine's method names begin with.
var computeVersion = regexp.MustCompile(`^(v1|beta|alpha)\.`)

// gcpEvent names a call: Compute Engine's methods without their API version
// ("compute.firewalls.patch"), a bare method with its service ("cloudresourcemanager.
// SetIamPolicy"), any other as logged.
func gcpEvent(service, method string) string {
	short := strings.TrimSuffix(service, ".googleapis.com")
	switch {
	case short == "compute":
		return computeVersion.ReplaceAllString(method, "")
	case !strings.Contains(method, "."):
		return short + "." + method
	}
	return method
}

func gcpActor(pp node) (string, error) {
	auth, err := pp.obj("authenticationInfo")
	if err != nil {
		return "", err
	}
	for _, k := range []string{"principalEmail", "principalSubject"} {
		s, err := auth.str(k)
		if err != nil || s != "" {
			return s, err
		}
	}
	return "", nil
}

// gcpCtx is one audit log entry being mapped.
type gcpCtx struct {
	entry, pp, req, resp, labels node
	event, resourceName          string
	account, scope               string
	refs                         []Ref
	why                          []string
}

var (
	// A project id, with the domain prefix of the oldest projects ("example.com:proj").
	projectIDRe  = regexp.MustCompile(`^([a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	numericIDRe  = regexp.MustCompile(`^[0-9]{1,32}$`)
	emailRe      = regexp.MustCompile(`^[^\s/@]{1,128}@[^\s/@]{1,255}$`)
	saKeyIDRe    = regexp.MustCompile(`^[\w-]{1,128}$`)
	computeName  = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)
	saNameInPath = regexp.MustCompile(`(?:^|/)serviceAccounts/([^/]+)`)
	keyInPath    = regexp.MustCompile(`/keys/([^/]+)$`)
)

// project is the project the entry is about: resource.labels.project_id, else the
// projects/ID that begins one of names (a project number there is not an id).
func (g *gcpCtx) project(names ...string) (string, error) {
	p, err := g.labels.str("project_id")
	if err != nil {
		return "", err
	}
	if p != "" {
		if !projectIDRe.MatchString(p) {
			return "", malformed(g.labels.at("project_id"), fmt.Sprintf("%q is not a project id", p))
		}
		return p, nil
	}
	for _, name := range names {
		if rest, ok := strings.CutPrefix(name, "projects/"); ok {
			id, _, _ := strings.Cut(rest, "/")
			if projectIDRe.MatchString(id) {
				return id, nil
			}
		}
	}
	return "", malformed(g.labels.at("project_id"), "missing, and no resource name names the project by its id")
}

func (g *gcpCtx) in(account, service string) {
	g.account, g.scope = account, "gcp/"+account+"/"+service
}

// setPolicy maps SetIamPolicy on a project, folder or organization: its IAM policy.
func setPolicy(g *gcpCtx) error {
	name := g.resourceName
	field := g.pp.at("resourceName")
	if name == "" {
		s, err := g.req.str("resource")
		if err != nil {
			return err
		}
		name, field = s, g.req.at("resource")
	}
	kind, id, _ := strings.Cut(name, "/")
	if id == "" && projectIDRe.MatchString(kind) {
		// Resource Manager v1 logs a project's request.resource as its bare id.
		kind, name = "projects", "projects/"+kind
	}
	switch kind {
	case "projects":
		p, err := g.project(name)
		if err != nil {
			return err
		}
		g.in(p, "iam")
		g.refs = append(g.refs, Ref{UID: "//cloudresourcemanager.googleapis.com/projects/" + p, Type: "gcp.project.iam_policy", Name: p})
		return nil
	case "folders", "organizations":
		if !numericIDRe.MatchString(id) {
			return malformed(field, fmt.Sprintf("%q is not a %s name", name, strings.TrimSuffix(kind, "s")))
		}
		typ := "gcp.folder.iam_policy"
		if kind == "organizations" {
			typ = "gcp.organization.iam_policy"
		}
		g.in(name, "iam")
		g.refs = append(g.refs, Ref{UID: "//cloudresourcemanager.googleapis.com/" + name, Type: typ})
		return nil
	case "":
		return malformed(field, "missing")
	}
	return unknown(field, g.event, fmt.Sprintf("%q is not a project, folder or organization", name))
}

// serviceAccountOf finds the service account an IAM admin call is about: its project
// and email, from resource.labels (project_id, email_id), the created account's
// response.email, or a resource name that names it by email (audit logs mostly name it
// by unique id, projects/-/serviceAccounts/1234…, which is not its uid). An email it
// cannot find leaves the scope to be read whole.
func (g *gcpCtx) serviceAccountOf() (project, email string, err error) {
	type named struct{ field, name string }
	names := []named{{g.pp.at("resourceName"), g.resourceName}}
	for _, n := range []node{g.req, g.resp} {
		for _, k := range []string{"name", "resource"} {
			s, err := n.str(k)
			if err != nil {
				return "", "", err
			}
			names = append(names, named{n.at(k), s})
		}
	}
	all := make([]string, len(names))
	for i, n := range names {
		all[i] = n.name
	}
	if project, err = g.project(all...); err != nil {
		return "", "", err
	}
	g.in(project, "iam")
	email, err = g.labels.str("email_id")
	if err != nil {
		return "", "", err
	}
	field := g.labels.at("email_id")
	if email == "" {
		if email, err = g.resp.str("email"); err != nil {
			return "", "", err
		}
		field = g.resp.at("email")
	}
	for _, n := range names {
		if email != "" {
			break
		}
		if m := saNameInPath.FindStringSubmatch(n.name); m != nil && strings.Contains(m[1], "@") {
			email, field = m[1], n.field
		}
	}
	if email == "" {
		g.why = append(g.why, "the service account is named by its unique id only")
		return project, "", nil
	}
	if !emailRe.MatchString(email) {
		return "", "", malformed(field, fmt.Sprintf("%q is not a service account email", email))
	}
	return project, email, nil
}

func saUID(project, email string) string {
	return "//iam.googleapis.com/projects/" + project + "/serviceAccounts/" + email
}

// serviceAccount maps a call on a service account: the account. Deleting it deletes its
// keys too, whose uids begin with the account's and "/keys/".
func serviceAccount(g *gcpCtx) error {
	project, email, err := g.serviceAccountOf()
	if err != nil || email == "" {
		return err
	}
	g.refs = append(g.refs, Ref{UID: saUID(project, email), Type: "gcp.iam.service_account", Name: email})
	return nil
}

// serviceAccountKey maps a call on a service account key: the key, named by the
// response (a created key) or the request or resource name (…/keys/KEY_ID).
func serviceAccountKey(g *gcpCtx) error {
	project, email, err := g.serviceAccountOf()
	if err != nil || email == "" {
		return err
	}
	var id, field string
	for _, c := range []struct {
		n   node
		key string
	}{{g.resp, "name"}, {g.req, "name"}, {g.pp, "resourceName"}} {
		s, err := c.n.str(c.key)
		if err != nil {
			return err
		}
		if m := keyInPath.FindStringSubmatch(s); m != nil {
			id, field = m[1], c.n.at(c.key)
			break
		}
	}
	if id == "" {
		g.why = append(g.why, "no resource name names the key")
		return nil
	}
	if !saKeyIDRe.MatchString(id) {
		return malformed(field, fmt.Sprintf("%q is not a service account key id", id))
	}
	g.refs = append(g.refs, Ref{UID: saUID(project, email) + "/keys/" + id, Type: "gcp.iam.service_account_key", Name: id})
	return nil
}

// computeGlobal maps a call on a global Compute Engine resource of kind ("firewalls"),
// named projects/P/global/KIND/NAME by resourceName.
func computeGlobal(kind, typ string) func(*gcpCtx) error {
	return func(g *gcpCtx) error {
		field := g.pp.at("resourceName")
		f := strings.Split(g.resourceName, "/")
		if g.resourceName == "" {
			p, err := g.project()
			if err != nil {
				return err
			}
			g.in(p, "compute")
			g.why = append(g.why, field+" is absent")
			return nil
		}
		if len(f) != 5 || f[0] != "projects" || f[2] != "global" || f[3] != kind {
			return malformed(field, fmt.Sprintf("%q is not a global %s name", g.resourceName, kind))
		}
		p, err := g.project(g.resourceName)
		if err != nil {
			return err
		}
		if !computeName.MatchString(f[4]) {
			return malformed(field, fmt.Sprintf("%q is not a Compute Engine name", f[4]))
		}
		g.in(p, "compute")
		g.refs = append(g.refs, Ref{UID: "//compute.googleapis.com/projects/" + p + "/global/" + kind + "/" + f[4], Type: typ, Name: f[4]})
		return nil
	}
}

// computeInstance maps a call on a Compute Engine instance, named
// projects/P/zones/Z/instances/NAME by resourceName. Instances are not resources of the
// snapshot, but they decide what every firewall rule of their project targets
// (attributes.targets): the project's compute scope is read whole.
func computeInstance(g *gcpCtx) error {
	field := g.pp.at("resourceName")
	f := strings.Split(g.resourceName, "/")
	if g.resourceName != "" && (len(f) != 6 || f[0] != "projects" || f[2] != "zones" || f[4] != "instances" || !computeName.MatchString(f[5])) {
		return malformed(field, fmt.Sprintf("%q is not an instance name (projects/P/zones/Z/instances/NAME)", g.resourceName))
	}
	p, err := g.project(g.resourceName)
	if err != nil {
		return err
	}
	g.in(p, "compute")
	g.why = append(g.why, "an instance decides which firewall rules of its project target something")
	return nil
}

// gcpCall is one audit-logged call warden maps.
type gcpCall struct {
	service string
	refs    func(*gcpCtx) error
}

// gcpCalls maps the Admin Activity calls warden acts on, by their event name (gcpEvent),
// to the resources each touches. Compute Engine logs a call twice when it runs as an
// operation (operation.first, then operation.last with the outcome): both map, so the
// resource is read when the change begins and again when it has happened. Read-only.
var gcpCalls = func() map[string]gcpCall {
	const crm, iam, compute = "cloudresourcemanager.googleapis.com", "iam.googleapis.com", "compute.googleapis.com"
	m := map[string]gcpCall{
		// IAM policies of projects (v1), folders (v2), organizations (v1), and of all
		// three through Resource Manager v3.
		"cloudresourcemanager.SetIamPolicy":                          {crm, setPolicy},
		"google.cloud.resourcemanager.v3.Projects.SetIamPolicy":      {crm, setPolicy},
		"google.cloud.resourcemanager.v3.Folders.SetIamPolicy":       {crm, setPolicy},
		"google.cloud.resourcemanager.v3.Organizations.SetIamPolicy": {crm, setPolicy},
		"compute.firewalls.insert":                                   {compute, computeGlobal("firewalls", "gcp.compute.firewall")},
		"compute.firewalls.patch":                                    {compute, computeGlobal("firewalls", "gcp.compute.firewall")},
		"compute.firewalls.update":                                   {compute, computeGlobal("firewalls", "gcp.compute.firewall")},
		"compute.firewalls.delete":                                   {compute, computeGlobal("firewalls", "gcp.compute.firewall")},
		"compute.sslCertificates.insert":                             {compute, computeGlobal("sslCertificates", "gcp.compute.ssl_certificate")},
		"compute.sslCertificates.delete":                             {compute, computeGlobal("sslCertificates", "gcp.compute.ssl_certificate")},
		// Instances: created or deleted, or given other tags or another service account,
		// they change what firewall rules target.
		"compute.instances.insert":            {compute, computeInstance},
		"compute.instances.delete":            {compute, computeInstance},
		"compute.instances.setTags":           {compute, computeInstance},
		"compute.instances.setServiceAccount": {compute, computeInstance},
	}
	// Service accounts and their keys (IAM's audit logs spell the policy call
	// SetIAMPolicy; it sets who may use the account, and maps to the account).
	for _, method := range []string{"CreateServiceAccount", "DeleteServiceAccount", "DisableServiceAccount", "EnableServiceAccount",
		"UpdateServiceAccount", "PatchServiceAccount", "UndeleteServiceAccount", "SetIAMPolicy"} {
		m["google.iam.admin.v1."+method] = gcpCall{iam, serviceAccount}
	}
	for _, method := range []string{"CreateServiceAccountKey", "UploadServiceAccountKey", "DeleteServiceAccountKey",
		"DisableServiceAccountKey", "EnableServiceAccountKey"} {
		m["google.iam.admin.v1."+method] = gcpCall{iam, serviceAccountKey}
	}
	return m
}()

// GCPCalls lists the audit-logged calls Parse maps, by the names Change.Event gives them,
// sorted.
func GCPCalls() []string {
	out := make([]string, 0, len(gcpCalls))
	for k := range gcpCalls {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
