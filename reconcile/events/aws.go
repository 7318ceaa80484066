package events

// AWS events as EventBridge delivers them (CloudTrail records, ACM's certificate events)
// and CloudTrail records from log files: the envelope, the record, who made the call.
// Which calls are mapped, and to what, is the table in aws_calls.go.

import (
	"fmt"
	"strings"

	"github.com/warden-sec/warden/internal/awsarn"
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
	a, ok := awsarn.Parse(s)
	if !ok || !partitionRe.MatchString(a.Partition) {
		return Change{}, malformed(n.at("resources")+"[0]", fmt.Sprintf("%q is not an ARN", s))
	}
	cert, err := awsHome{partition: a.Partition, account: acct, region: region}.certARN(n.at("resources")+"[0]", s)
	if err != nil {
		return Change{}, err
	}
	return change(Change{Provider: "aws", Account: acct, Region: region, Scope: "aws/" + acct + "/acm/" + region,
		Source: id, Delivery: id, Event: dt, At: at, Actor: "acm.amazonaws.com"}, []Ref{cert}, nil), nil
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
	if deniedCodes[code] {
		return Change{}, awsDenial(rec, ident, source, name, event, code, acct, at, id, env)
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
	c := &awsCtx{awsHome: awsHome{partition: partitionOf(identARN, region), account: acct, region: region}, rec: rec, ident: ident}
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

// awsCtx is one CloudTrail record being mapped: what it says, and the resources found.
type awsCtx struct {
	awsHome
	rec, ident, req, resp node
	refs                  []Ref
	why                   []string
}

func (c *awsCtx) add(r Ref) { c.refs = append(c.refs, r) }

// whole records that the scope must be read whole, and why.
func (c *awsCtx) whole(why string) { c.why = append(c.why, why) }

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
