package events

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The EventBridge detail-types of CloudTrail records.
const (
	detailAPICall      = "AWS API Call via CloudTrail"
	detailServiceEvent = "AWS Service Event via CloudTrail"
)

// acmEvents are the detail-types of ACM's own certificate events that say a certificate
// changed (it expired, was issued or renewed, needs action to renew, was rotated or
// revoked). "ACM Certificate Approaching Expiration", sent daily while nothing changes,
// is not among them. Read-only.
var acmEvents = map[string]bool{
	"ACM Certificate Expired":                 true,
	"ACM Certificate Available":               true,
	"ACM Certificate Renewal Action Required": true,
	"ACM Certificate Rotated":                 true,
	"ACM Certificate Revoked":                 true,
}

// envelope is what an EventBridge event says around its CloudTrail record.
type envelope struct {
	id, account string
}

// eventBridge maps an EventBridge event.
func eventBridge(n node) (Change, error) {
	dt, err := n.need("detail-type")
	if err != nil {
		return Change{}, err
	}
	id, err := n.str("id")
	if err != nil {
		return Change{}, err
	}
	switch {
	case dt == detailAPICall || dt == detailServiceEvent:
		detail, err := n.obj("detail")
		if err != nil {
			return Change{}, err
		}
		if detail.m == nil {
			return Change{}, malformed(n.at("detail"), "missing")
		}
		acct, err := n.str("account")
		if err != nil {
			return Change{}, err
		}
		return cloudTrail(detail, envelope{id: id, account: acct})
	case acmEvents[dt]:
		return acmServiceEvent(n, dt, id)
	}
	return Change{}, unknown(n.at("detail-type"), dt, fmt.Sprintf("%q is not an event warden maps (CloudTrail API calls, ACM certificate events)", dt))
}

// acmServiceEvent maps one of ACM's certificate events: the certificate is its only
// resource.
func acmServiceEvent(n node, dt, id string) (Change, error) {
	if id == "" {
		return Change{}, malformed(n.at("id"), "missing")
	}
	at, err := n.timestamp("time")
	if err != nil {
		return Change{}, err
	}
	acct, err := n.match("account", accountRe, "an AWS account id")
	if err != nil {
		return Change{}, err
	}
	region, err := n.match("region", regionRe, "an AWS region")
	if err != nil {
		return Change{}, err
	}
	res, err := n.list("resources")
	if err != nil {
		return Change{}, err
	}
	if len(res) != 1 {
		return Change{}, malformed(n.at("resources"), fmt.Sprintf("want the one certificate ARN, got %d resources", len(res)))
	}
	s, ok := res[0].(string)
	if !ok {
		return Change{}, malformed(n.at("resources")+"[0]", "want a string, got "+kindOf(res[0]))
	}
	a, ok := parseARN(s)
	if !ok || !partitionRe.MatchString(a.partition) {
		return Change{}, malformed(n.at("resources")+"[0]", fmt.Sprintf("%q is not an ARN", s))
	}
	c := &awsCtx{rec: n, partition: a.partition, account: acct, region: region}
	if err := c.certARN(n.at("resources")+"[0]", s); err != nil {
		return Change{}, err
	}
	return change(Change{Provider: "aws", Account: acct, Region: region, Scope: "aws/" + acct + "/acm/" + region,
		Source: id, Delivery: id, Event: dt, At: at, Actor: "acm.amazonaws.com"}, c.refs, c.why), nil
}

// cloudTrail maps one CloudTrail record, from EventBridge's detail or a log file.
func cloudTrail(rec node, env envelope) (Change, error) {
	source, err := rec.need("eventSource")
	if err != nil {
		return Change{}, err
	}
	name, err := rec.need("eventName")
	if err != nil {
		return Change{}, err
	}
	at, err := rec.timestamp("eventTime")
	if err != nil {
		return Change{}, err
	}
	id, err := rec.need("eventID")
	if err != nil {
		return Change{}, err
	}
	region, err := rec.match("awsRegion", regionRe, "an AWS region")
	if err != nil {
		return Change{}, err
	}
	acct, err := rec.str("recipientAccountId")
	if err != nil {
		return Change{}, err
	}
	if acct == "" {
		// Records older than CloudTrail's eventVersion 1.02 lack it; EventBridge's
		// envelope names the account the event happened in.
		acct = env.account
	}
	if acct == "" {
		return Change{}, malformed(rec.at("recipientAccountId"), "missing")
	}
	if !accountRe.MatchString(acct) {
		return Change{}, malformed(rec.at("recipientAccountId"), fmt.Sprintf("%q is not an AWS account id", acct))
	}
	ident, err := rec.obj("userIdentity")
	if err != nil {
		return Change{}, err
	}
	identARN, err := ident.str("arn")
	if err != nil {
		return Change{}, err
	}
	event := strings.TrimSuffix(source, ".amazonaws.com") + ":" + name
	code, err := rec.str("errorCode")
	if err != nil {
		return Change{}, err
	}
	if code != "" {
		return Change{}, unknown(rec.at("errorCode"), event, code+": the call failed and changed nothing")
	}
	mapper, ok := awsCalls[event]
	if !ok {
		ro, err := rec.boolean("readOnly")
		if err != nil {
			return Change{}, err
		}
		if ro {
			return Change{}, unknown(rec.at("eventName"), event, event+" is a read-only call")
		}
		return Change{}, unknown(rec.at("eventName"), event, event+" is not a call warden maps")
	}
	c := &awsCtx{rec: rec, ident: ident, partition: partitionOf(identARN, region), account: acct, region: region}
	if c.req, err = rec.obj("requestParameters"); err != nil {
		return Change{}, withEvent(err, event)
	}
	if c.resp, err = rec.obj("responseElements"); err != nil {
		return Change{}, withEvent(err, event)
	}
	if err := mapper(c); err != nil {
		return Change{}, withEvent(err, event)
	}
	actor, err := awsActor(ident)
	if err != nil {
		return Change{}, err
	}
	base := Change{Provider: "aws", Account: acct, Source: id, Delivery: env.id, Event: event, At: at, Actor: actor}
	if service := event[:strings.IndexByte(event, ':')]; service == "iam" {
		base.Region, base.Scope = "global", "aws/"+acct+"/iam"
	} else {
		base.Region, base.Scope = region, "aws/"+acct+"/"+service+"/"+region
	}
	return change(base, c.refs, c.why), nil
}

// withEvent names the call in an error of its mapping.
func withEvent(err error, event string) error {
	if e, ok := err.(*Error); ok && e.Event == "" {
		e.Event = event
	}
	return err
}

// awsActor is who made the call: the caller's ARN, else its principal id, else the
// service that called on its behalf.
func awsActor(ident node) (string, error) {
	for _, k := range []string{"arn", "principalId", "invokedBy", "type"} {
		s, err := ident.str(k)
		if err != nil || s != "" {
			return s, err
		}
	}
	return "", nil
}

var (
	accountRe   = regexp.MustCompile(`^[0-9]{12}$`)
	regionRe    = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
	partitionRe = regexp.MustCompile(`^aws(-[a-z]+)*$`)
	// IAM's patterns for names ([\w+=,.@-]+) and paths (/ or /…/ of printable ASCII).
	iamNameRe = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
	iamPathRe = regexp.MustCompile(`^/([\x21-\x7E]{1,510}/)?$`)
	keyIDRe   = regexp.MustCompile(`^\w{16,128}$`)
	sgIDRe    = regexp.MustCompile(`^sg-[0-9a-f]{1,32}$`)
	acmIDRe   = regexp.MustCompile(`^[\w-]{1,128}$`)
)

// partitionOf is the partition of the caller's ARN, else the one region belongs to.
func partitionOf(identARN, region string) string {
	if a, ok := parseARN(identARN); ok && partitionRe.MatchString(a.partition) {
		return a.partition
	}
	for _, p := range []struct{ prefix, partition string }{
		{"cn-", "aws-cn"}, {"us-gov-", "aws-us-gov"}, {"us-isob-", "aws-iso-b"}, {"us-iso-", "aws-iso"},
		{"eu-isoe-", "aws-iso-e"}, {"us-isof-", "aws-iso-f"},
	} {
		if strings.HasPrefix(region, p.prefix) {
			return p.partition
		}
	}
	return "aws"
}

// arnParts are the fields of "arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE".
type arnParts struct {
	partition, service, region, account, resource string
}

func parseARN(s string) (arnParts, bool) {
	f := strings.SplitN(s, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[1] == "" || f[2] == "" || f[4] == "" || f[5] == "" {
		return arnParts{}, false
	}
	return arnParts{partition: f[1], service: f[2], region: f[3], account: f[4], resource: f[5]}, true
}

// awsCtx is one CloudTrail record being mapped: what it says, and the resources found.
type awsCtx struct {
	rec, ident, req, resp node
	partition, account    string
	region                string
	refs                  []Ref
	why                   []string
}

func (c *awsCtx) add(r Ref) { c.refs = append(c.refs, r) }

// whole records that the scope must be read whole, and why.
func (c *awsCtx) whole(why string) { c.why = append(c.why, why) }

func (c *awsCtx) arn(service, region, resource string) string {
	return "arn:" + c.partition + ":" + service + ":" + region + ":" + c.account + ":" + resource
}

// iamKind is one kind of named IAM entity.
type iamKind struct{ typ, prefix string }

var (
	userKind  = iamKind{"aws.iam.user", "user/"}
	groupKind = iamKind{"aws.iam.group", "group/"}
	roleKind  = iamKind{"aws.iam.role", "role/"}
	certKind  = iamKind{"aws.iam.server_certificate", "server-certificate/"}
)

// iamName checks a name from field.
func iamName(field, name string) error {
	if !iamNameRe.MatchString(name) {
		return malformed(field, fmt.Sprintf("%q is not an IAM name", name))
	}
	return nil
}

// byName is the ref of the k named name, its uid without the path the event lacks.
func (c *awsCtx) byName(k iamKind, field, name string) (Ref, error) {
	if err := iamName(field, name); err != nil {
		return Ref{}, err
	}
	return Ref{UID: c.arn("iam", "", k.prefix+name), Type: k.typ, Name: name, ByName: true}, nil
}

// withPath is the ref of the k named name under path, its exact uid.
func (c *awsCtx) withPath(k iamKind, nameField, name, pathField, path string) (Ref, error) {
	if err := iamName(nameField, name); err != nil {
		return Ref{}, err
	}
	if path == "" {
		path = "/" // IAM's default
	}
	if !iamPathRe.MatchString(path) {
		return Ref{}, malformed(pathField, fmt.Sprintf("%q is not an IAM path", path))
	}
	return Ref{UID: c.arn("iam", "", k.prefix+path[1:]+name), Type: k.typ, Name: name}, nil
}

// iamARN is the ref of an ARN of kind k the event carries, which must be in the event's
// partition and account.
func (c *awsCtx) iamARN(k iamKind, field, s string) (Ref, error) {
	a, ok := parseARN(s)
	if !ok || a.service != "iam" || a.region != "" || !strings.HasPrefix(a.resource, k.prefix) {
		return Ref{}, malformed(field, fmt.Sprintf("%q is not an IAM %s ARN", s, strings.TrimSuffix(k.prefix, "/")))
	}
	if err := c.sameAccount(field, a, false); err != nil {
		return Ref{}, err
	}
	rest := a.resource[len(k.prefix):]
	name := rest[strings.LastIndexByte(rest, '/')+1:]
	if err := iamName(field, name); err != nil {
		return Ref{}, err
	}
	if path := "/" + rest[:len(rest)-len(name)]; !iamPathRe.MatchString(path) {
		return Ref{}, malformed(field, fmt.Sprintf("%q has no valid IAM path", s))
	}
	return Ref{UID: s, Type: k.typ, Name: name}, nil
}

// sameAccount refuses an ARN of another partition or account than the event's (an
// AWS-managed policy's account is "aws" when awsOK).
func (c *awsCtx) sameAccount(field string, a arnParts, awsOK bool) error {
	if a.partition != c.partition {
		return malformed(field, fmt.Sprintf("partition %q, the event's is %q", a.partition, c.partition))
	}
	if a.account != c.account && !(awsOK && a.account == "aws") {
		return malformed(field, fmt.Sprintf("account %q, the event's is %q", a.account, c.account))
	}
	return nil
}

// named maps a call on the k named by requestParameters[field].
func named(k iamKind, field string) func(*awsCtx) error {
	return func(c *awsCtx) error { return c.named(k, field) }
}

func (c *awsCtx) named(k iamKind, field string) error {
	name, err := c.req.str(field)
	if err != nil {
		return err
	}
	if name == "" {
		c.whole(c.req.at(field) + " is absent")
		return nil
	}
	if k == userKind {
		typ, err := c.ident.str("type")
		if err != nil {
			return err
		}
		if r, ok := c.callerNamed(typ, name); ok {
			c.add(r)
			return nil
		}
	}
	r, err := c.byName(k, c.req.at(field), name)
	if err != nil {
		return err
	}
	c.add(r)
	return nil
}

// created maps a create call: the new entity's ARN in responseElements[in].arn, else its
// name in requestParameters[field] under requestParameters.path.
func created(k iamKind, field, in string) func(*awsCtx) error {
	return func(c *awsCtx) error {
		out, err := c.resp.obj(in)
		if err != nil {
			return err
		}
		s, err := out.str("arn")
		if err != nil {
			return err
		}
		if s != "" {
			r, err := c.iamARN(k, out.at("arn"), s)
			if err != nil {
				return err
			}
			c.add(r)
			return nil
		}
		name, err := c.req.str(field)
		if err != nil {
			return err
		}
		if name == "" {
			c.whole(c.req.at(field) + " and " + out.at("arn") + " are absent")
			return nil
		}
		path, err := c.req.str("path")
		if err != nil {
			return err
		}
		r, err := c.withPath(k, c.req.at(field), name, c.req.at("path"), path)
		if err != nil {
			return err
		}
		c.add(r)
		return nil
	}
}

// renamed maps an update that may rename the k named by requestParameters[field] to
// requestParameters[newField] under requestParameters.newPath: the old name, and the new.
func renamed(k iamKind, field, newField string) func(*awsCtx) error {
	return func(c *awsCtx) error {
		if err := c.named(k, field); err != nil {
			return err
		}
		name, err := c.req.str(newField)
		if err != nil {
			return err
		}
		path, err := c.req.str("newPath")
		if err != nil {
			return err
		}
		if name == "" && path == "" {
			return nil
		}
		if name == "" {
			if name, err = c.req.str(field); err != nil || name == "" {
				return err
			}
		}
		var r Ref
		if path != "" {
			r, err = c.withPath(k, c.req.at(newField), name, c.req.at("newPath"), path)
		} else {
			r, err = c.byName(k, c.req.at(newField), name)
		}
		if err != nil {
			return err
		}
		c.add(r)
		return nil
	}
}

// subject is the user a call on "the user named, or the caller" acts on: the user named
// name, else the caller when it is an IAM user (IAM takes the caller's own user when
// UserName is omitted) or the root user. ok is false, and the scope is to be read whole,
// when there is none.
func (c *awsCtx) subject(name, field string) (r Ref, root, ok bool, err error) {
	typ, err := c.ident.str("type")
	if err != nil {
		return Ref{}, false, false, err
	}
	if name != "" {
		if r, ok := c.callerNamed(typ, name); ok {
			return r, false, true, nil
		}
		r, err = c.byName(userKind, field, name)
		return r, false, err == nil, err
	}
	switch typ {
	case "IAMUser":
		s, err := c.ident.str("arn")
		if err != nil {
			return Ref{}, false, false, err
		}
		if s != "" {
			r, err := c.iamARN(userKind, c.ident.at("arn"), s)
			return r, false, err == nil, err
		}
		own, err := c.ident.str("userName")
		if err != nil {
			return Ref{}, false, false, err
		}
		if own != "" {
			r, err := c.byName(userKind, c.ident.at("userName"), own)
			return r, false, err == nil, err
		}
	case "Root":
		return Ref{UID: c.arn("iam", "", "root"), Type: "aws.iam.root_user", Name: "root"}, true, true, nil
	}
	c.whole(field + " is absent and the caller is not an IAM user")
	return Ref{}, false, false, nil
}

// callerIsUser says the caller is an IAM user or the root user, whose own user a call
// without UserName acts on.
func (c *awsCtx) callerIsUser() bool {
	typ, _ := c.ident.str("type")
	return typ == "IAMUser" || typ == "Root"
}

// callerNamed is the caller's own user, by its full ARN, when a call names the caller:
// the name alone lacks the path the caller's ARN has.
func (c *awsCtx) callerNamed(typ, name string) (Ref, bool) {
	if typ != "IAMUser" {
		return Ref{}, false
	}
	own, _ := c.ident.str("userName")
	s, _ := c.ident.str("arn")
	if own != name || s == "" {
		return Ref{}, false
	}
	r, err := c.iamARN(userKind, c.ident.at("arn"), s)
	if err != nil || r.Name != name {
		return Ref{}, false
	}
	return r, true
}

// rootWhy is why a change to the root user reads the IAM scope: the root user's facts
// come from the credential report and the account summary, which only a collection of
// the scope reads (collectors/aws Read does not read the root user alone).
const rootWhy = "the root user is read with its account's IAM scope"

// userOrCaller maps a call on the user named by requestParameters[field], or the caller.
func userOrCaller(field string) func(*awsCtx) error {
	return func(c *awsCtx) error {
		name, err := c.req.str(field)
		if err != nil {
			return err
		}
		r, root, ok, err := c.subject(name, c.req.at(field))
		if err != nil || !ok {
			return err
		}
		c.add(r)
		if root {
			c.whole(rootWhy)
		}
		return nil
	}
}

// accessKey maps a call on an access key: the key, and the user whose access_keys list
// it is in. The key id is requestParameters.accessKeyId, or for a created key
// responseElements.accessKey.accessKeyId; the user is requestParameters.userName, else
// the userName the created key answers, else the caller.
func accessKey(created bool) func(*awsCtx) error {
	return func(c *awsCtx) error {
		in := c.req
		if created {
			k, err := c.resp.obj("accessKey")
			if err != nil {
				return err
			}
			in = k
		}
		id, err := in.str("accessKeyId")
		if err != nil {
			return err
		}
		name, err := c.req.str("userName")
		if err != nil {
			return err
		}
		field := c.req.at("userName")
		if name == "" && created && !c.callerIsUser() {
			// The caller is not the key's user (an IAM user's own key, a root user's, is
			// the caller's): the created key names its user.
			if name, err = in.str("userName"); err != nil {
				return err
			}
			field = in.at("userName")
		}
		u, root, ok, err := c.subject(name, field)
		if err != nil || !ok {
			return err
		}
		if root {
			// The root user's keys are counts on the root user, not resources.
			c.add(u)
			c.whole(rootWhy)
			return nil
		}
		if id == "" {
			c.add(u)
			c.whole(in.at("accessKeyId") + " is absent")
			return nil
		}
		if !keyIDRe.MatchString(id) {
			return malformed(in.at("accessKeyId"), fmt.Sprintf("%q is not an access key id", id))
		}
		c.add(Ref{UID: u.UID + "/accesskey/" + id, Type: "aws.iam.access_key", Name: id, ByName: u.ByName})
		c.add(u)
		return nil
	}
}

func requestParams(c *awsCtx) node { return c.req }

// policyAt maps a call on the managed policy whose ARN is requestParameters[field].
func policyAt(field string) func(*awsCtx) error {
	return func(c *awsCtx) error { return c.policy(c.req, field) }
}

func (c *awsCtx) policy(n node, field string) error {
	s, err := n.str(field)
	if err != nil {
		return err
	}
	if s == "" {
		c.whole(n.at(field) + " is absent")
		return nil
	}
	a, ok := parseARN(s)
	if !ok || a.service != "iam" || a.region != "" || !strings.HasPrefix(a.resource, "policy/") {
		return malformed(n.at(field), fmt.Sprintf("%q is not an IAM policy ARN", s))
	}
	if err := c.sameAccount(n.at(field), a, true); err != nil {
		return err
	}
	rest := a.resource[len("policy/"):]
	name := rest[strings.LastIndexByte(rest, '/')+1:]
	if err := iamName(n.at(field), name); err != nil {
		return err
	}
	if !iamPathRe.MatchString("/" + rest[:len(rest)-len(name)]) {
		return malformed(n.at(field), fmt.Sprintf("%q has no valid IAM path", s))
	}
	c.add(Ref{UID: s, Type: "aws.iam.policy", Name: name})
	return nil
}

// createdPolicy maps CreatePolicy: responseElements.policy.arn, else the ARN of
// requestParameters.policyName under requestParameters.path.
func createdPolicy(c *awsCtx) error {
	out, err := c.resp.obj("policy")
	if err != nil {
		return err
	}
	if out.has("arn") {
		return c.policy(out, "arn")
	}
	name, err := c.req.str("policyName")
	if err != nil {
		return err
	}
	if name == "" {
		c.whole(c.req.at("policyName") + " and " + out.at("arn") + " are absent")
		return nil
	}
	path, err := c.req.str("path")
	if err != nil {
		return err
	}
	r, err := c.withPath(iamKind{"aws.iam.policy", "policy/"}, c.req.at("policyName"), name, c.req.at("path"), path)
	if err != nil {
		return err
	}
	c.add(r)
	return nil
}

func passwordPolicy(c *awsCtx) error {
	c.add(Ref{UID: c.arn("iam", "", "account-password-policy"), Type: "aws.iam.password_policy", Name: "account-password-policy"})
	return nil
}

// all maps a call that touches what each of fs finds.
func all(fs ...func(*awsCtx) error) func(*awsCtx) error {
	return func(c *awsCtx) error {
		for _, f := range fs {
			if err := f(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// sg adds the security group id, read from field.
func (c *awsCtx) sg(field, id, name string) error {
	if !sgIDRe.MatchString(id) {
		return malformed(field, fmt.Sprintf("%q is not a security group id", id))
	}
	for _, r := range c.refs {
		if r.UID == c.arn("ec2", c.region, "security-group/"+id) {
			return nil
		}
	}
	c.add(Ref{UID: c.arn("ec2", c.region, "security-group/"+id), Type: "aws.ec2.security_group", Name: name})
	return nil
}

// sgRules maps a change of a security group's rules (a rule is an attribute of its
// group): requestParameters.groupId, else the groups of the rules the response lists.
// A group named by groupName alone (EC2-Classic and default VPCs allow it) reads the
// region's scope.
func sgRules(c *awsCtx) error {
	id, err := c.req.str("groupId")
	if err != nil {
		return err
	}
	if id != "" {
		return c.sg(c.req.at("groupId"), id, "")
	}
	set, err := c.resp.obj("securityGroupRuleSet")
	if err != nil {
		return err
	}
	rules, err := set.objects("items")
	if err != nil {
		return err
	}
	for _, rule := range rules {
		gid, err := rule.need("groupId")
		if err != nil {
			return err
		}
		if err := c.sg(rule.at("groupId"), gid, ""); err != nil {
			return err
		}
	}
	if len(c.refs) == 0 {
		c.whole(groupWhy(c))
	}
	return nil
}

func groupWhy(c *awsCtx) string {
	if c.req.has("groupName") {
		return "the security group is named by " + c.req.at("groupName") + ", not by its id"
	}
	return c.req.at("groupId") + " is absent"
}

// modifySGRules maps ModifySecurityGroupRules, whose request CloudTrail records as the
// query API's: requestParameters.ModifySecurityGroupRulesRequest.GroupId.
func modifySGRules(c *awsCtx) error {
	in, err := c.req.obj("ModifySecurityGroupRulesRequest")
	if err != nil {
		return err
	}
	id, err := in.str("GroupId")
	if err != nil {
		return err
	}
	if id == "" {
		c.whole(in.at("GroupId") + " is absent")
		return nil
	}
	return c.sg(in.at("GroupId"), id, "")
}

func createSG(c *awsCtx) error {
	id, err := c.resp.str("groupId")
	if err != nil {
		return err
	}
	name, err := c.req.str("groupName")
	if err != nil {
		return err
	}
	if id == "" {
		c.whole(c.resp.at("groupId") + " is absent")
		return nil
	}
	return c.sg(c.resp.at("groupId"), id, name)
}

func deleteSG(c *awsCtx) error {
	id, err := c.req.str("groupId")
	if err != nil {
		return err
	}
	if id == "" {
		c.whole(groupWhy(c))
		return nil
	}
	return c.sg(c.req.at("groupId"), id, "")
}

// sgTags maps CreateTags and DeleteTags: the security groups among the resources tagged
// (requestParameters.resourcesSet.items[].resourceId); tags on anything else are not
// warden's.
func sgTags(c *awsCtx) error {
	set, err := c.req.obj("resourcesSet")
	if err != nil {
		return err
	}
	items, err := set.objects("items")
	if err != nil {
		return err
	}
	for _, item := range items {
		id, err := item.need("resourceId")
		if err != nil {
			return err
		}
		if strings.HasPrefix(id, "sg-") {
			if err := c.sg(item.at("resourceId"), id, ""); err != nil {
				return err
			}
		}
	}
	if len(items) == 0 {
		c.whole(set.at("items") + " is absent")
	} else if len(c.refs) == 0 {
		return unknown(set.at("items"), "", "no security group among the resources tagged")
	}
	return nil
}

// certAt maps an ACM call on the certificate whose ARN is in the response or request.
func certAt(in ...func(*awsCtx) node) func(*awsCtx) error {
	return func(c *awsCtx) error {
		var tried []string
		for _, f := range in {
			n := f(c)
			s, err := n.str("certificateArn")
			if err != nil {
				return err
			}
			if s != "" {
				return c.certARN(n.at("certificateArn"), s)
			}
			tried = append(tried, n.at("certificateArn"))
		}
		verb := " is absent"
		if len(tried) > 1 {
			verb = " are absent"
		}
		c.whole(strings.Join(tried, " and ") + verb)
		return nil
	}
}

func responseElements(c *awsCtx) node { return c.resp }

func (c *awsCtx) certARN(field, s string) error {
	a, ok := parseARN(s)
	if !ok || a.service != "acm" || !strings.HasPrefix(a.resource, "certificate/") || !acmIDRe.MatchString(a.resource[len("certificate/"):]) {
		return malformed(field, fmt.Sprintf("%q is not an ACM certificate ARN", s))
	}
	if err := c.sameAccount(field, a, false); err != nil {
		return err
	}
	if a.region != c.region {
		return malformed(field, fmt.Sprintf("region %q, the event's is %q", a.region, c.region))
	}
	c.add(Ref{UID: s, Type: "aws.acm.certificate"})
	return nil
}

// awsCalls maps the CloudTrail write calls warden acts on ("service:eventName") to the
// resources each touches. Read-only.
var awsCalls = map[string]func(*awsCtx) error{
	// IAM users.
	"iam:CreateUser":          created(userKind, "userName", "user"),
	"iam:DeleteUser":          named(userKind, "userName"),
	"iam:UpdateUser":          renamed(userKind, "userName", "newUserName"),
	"iam:TagUser":             named(userKind, "userName"),
	"iam:UntagUser":           named(userKind, "userName"),
	"iam:AddUserToGroup":      all(named(groupKind, "groupName"), named(userKind, "userName")),
	"iam:RemoveUserFromGroup": all(named(groupKind, "groupName"), named(userKind, "userName")),
	"iam:AttachUserPolicy":    all(named(userKind, "userName"), policyAt("policyArn")),
	"iam:DetachUserPolicy":    all(named(userKind, "userName"), policyAt("policyArn")),
	"iam:PutUserPolicy":       named(userKind, "userName"),
	"iam:DeleteUserPolicy":    named(userKind, "userName"),
	// Console passwords and MFA: the user's password_enabled, password_last_changed and
	// mfa_active (the root user's mfa_active when the root user enables its own).
	"iam:CreateLoginProfile":  userOrCaller("userName"),
	"iam:UpdateLoginProfile":  userOrCaller("userName"),
	"iam:DeleteLoginProfile":  userOrCaller("userName"),
	"iam:ChangePassword":      userOrCaller("userName"),
	"iam:EnableMFADevice":     userOrCaller("userName"),
	"iam:DeactivateMFADevice": userOrCaller("userName"),
	// Access keys: the key and its user's access_keys.
	"iam:CreateAccessKey": accessKey(true),
	"iam:UpdateAccessKey": accessKey(false),
	"iam:DeleteAccessKey": accessKey(false),
	// Groups.
	"iam:CreateGroup":       created(groupKind, "groupName", "group"),
	"iam:DeleteGroup":       named(groupKind, "groupName"),
	"iam:UpdateGroup":       renamed(groupKind, "groupName", "newGroupName"),
	"iam:AttachGroupPolicy": all(named(groupKind, "groupName"), policyAt("policyArn")),
	"iam:DetachGroupPolicy": all(named(groupKind, "groupName"), policyAt("policyArn")),
	"iam:PutGroupPolicy":    named(groupKind, "groupName"),
	"iam:DeleteGroupPolicy": named(groupKind, "groupName"),
	// Roles.
	"iam:CreateRole":              created(roleKind, "roleName", "role"),
	"iam:CreateServiceLinkedRole": created(roleKind, "roleName", "role"),
	"iam:DeleteRole":              named(roleKind, "roleName"),
	"iam:DeleteServiceLinkedRole": named(roleKind, "roleName"),
	"iam:UpdateRole":              named(roleKind, "roleName"),
	"iam:UpdateRoleDescription":   named(roleKind, "roleName"),
	"iam:UpdateAssumeRolePolicy":  named(roleKind, "roleName"),
	"iam:TagRole":                 named(roleKind, "roleName"),
	"iam:UntagRole":               named(roleKind, "roleName"),
	"iam:AttachRolePolicy":        all(named(roleKind, "roleName"), policyAt("policyArn")),
	"iam:DetachRolePolicy":        all(named(roleKind, "roleName"), policyAt("policyArn")),
	"iam:PutRolePolicy":           named(roleKind, "roleName"),
	"iam:DeleteRolePolicy":        named(roleKind, "roleName"),
	// Managed policies: the default version's document, attachments, tags.
	"iam:CreatePolicy":            createdPolicy,
	"iam:DeletePolicy":            policyAt("policyArn"),
	"iam:CreatePolicyVersion":     policyAt("policyArn"),
	"iam:DeletePolicyVersion":     policyAt("policyArn"),
	"iam:SetDefaultPolicyVersion": policyAt("policyArn"),
	"iam:TagPolicy":               policyAt("policyArn"),
	"iam:UntagPolicy":             policyAt("policyArn"),
	// Server certificates.
	"iam:UploadServerCertificate": created(certKind, "serverCertificateName", "serverCertificateMetadata"),
	"iam:UpdateServerCertificate": renamed(certKind, "serverCertificateName", "newServerCertificateName"),
	"iam:DeleteServerCertificate": named(certKind, "serverCertificateName"),
	// The account's password policy.
	"iam:UpdateAccountPasswordPolicy": passwordPolicy,
	"iam:DeleteAccountPasswordPolicy": passwordPolicy,

	// EC2 security groups; a rule is an attribute of its group.
	"ec2:AuthorizeSecurityGroupIngress":              sgRules,
	"ec2:AuthorizeSecurityGroupEgress":               sgRules,
	"ec2:RevokeSecurityGroupIngress":                 sgRules,
	"ec2:RevokeSecurityGroupEgress":                  sgRules,
	"ec2:UpdateSecurityGroupRuleDescriptionsIngress": sgRules,
	"ec2:UpdateSecurityGroupRuleDescriptionsEgress":  sgRules,
	"ec2:ModifySecurityGroupRules":                   modifySGRules,
	"ec2:CreateSecurityGroup":                        createSG,
	"ec2:DeleteSecurityGroup":                        deleteSG,
	"ec2:CreateTags":                                 sgTags,
	"ec2:DeleteTags":                                 sgTags,

	// ACM certificates. ImportCertificate answers the ARN, and a re-import names it in
	// its request too.
	"acm:ImportCertificate":         certAt(responseElements, requestParams),
	"acm:RequestCertificate":        certAt(responseElements),
	"acm:DeleteCertificate":         certAt(requestParams),
	"acm:RenewCertificate":          certAt(requestParams),
	"acm:AddTagsToCertificate":      certAt(requestParams),
	"acm:RemoveTagsFromCertificate": certAt(requestParams),
	"acm:UpdateCertificateOptions":  certAt(requestParams),
}

// AWSCalls lists the CloudTrail calls Parse maps, "service:eventName", sorted.
func AWSCalls() []string {
	out := make([]string, 0, len(awsCalls))
	for k := range awsCalls {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
