package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A Change is what one cloud event says changed: the resources a write call touched, in
// the snapshot scope they are collected in. The daemon reads each of them again alone
// (collectors.Reader) and evaluates what it reads; with WholeScope it collects Scope.
type Change struct {
	// Provider is "aws" or "gcp".
	Provider string
	// Account is the AWS account id of the resources (CloudTrail's recipientAccountId),
	// or the GCP project id, "folders/N" or "organizations/N".
	Account string
	// Region is the AWS region of a regional service, "global" for IAM and for GCP.
	Region string
	// Scope is the id of the snapshot scope the resources are collected in
	// (docs/resources.md "Scopes"): aws/ACCT/iam, aws/ACCT/ec2/REGION,
	// aws/ACCT/acm/REGION, gcp/PROJECT/iam, gcp/PROJECT/compute, gcp/folders/N/iam,
	// gcp/organizations/N/iam.
	Scope string
	// UIDs are the uids of Resources, in order: what to read again.
	UIDs []string
	// Resources are the resources the call touched. An event that names none that
	// warden can derive has none and sets WholeScope.
	Resources []Ref
	// WholeScope says the event changed something in Scope that it does not name well
	// enough to read alone (a security group named by groupName, request parameters
	// CloudTrail omitted, a service account named by its unique id only): read the
	// whole scope. Resources may still list what the event did name.
	WholeScope bool
	// Why says why WholeScope is set, for logs.
	Why string
	// Source is the event's own id, the same however often it is delivered: the
	// CloudTrail eventID, the LogEntry insertId, the id of an ACM event.
	Source string
	// Delivery is the id of the delivery that carried it, when there is one: the
	// EventBridge event id, the Pub/Sub messageId.
	Delivery string
	// Event names the call: "iam:CreateAccessKey", "ec2:AuthorizeSecurityGroupIngress",
	// "compute.firewalls.patch", "google.iam.admin.v1.CreateServiceAccountKey",
	// "cloudresourcemanager.SetIamPolicy"; for an ACM service event its detail-type
	// ("ACM Certificate Expired").
	Event string
	// At is when the call was made (CloudTrail eventTime, LogEntry timestamp).
	At time.Time
	// Actor is who made the call, for logs: the caller's ARN, principal id or the
	// service that called on its behalf; the principal's email for GCP.
	Actor string
}

// A Ref is one resource an event touched, named as docs/resources.md names it.
type Ref struct {
	// UID is the resource's uid: an ARN for AWS, a full resource name for GCP.
	UID string
	// Type is the resource type ("aws.iam.user").
	Type string
	// Name is the resource's name as the snapshot records it, when the event carries it
	// (a user, role or policy name, an access key id, a service account's email); empty
	// otherwise (a security group is named by its id in calls, by its group name in a
	// snapshot).
	Name string
	// ByName says UID was built from Name alone, without the IAM path the event does not
	// carry: arn:aws:iam::A:user/alice for a user collected as
	// arn:aws:iam::A:user/ops/alice. The AWS collector's Read resolves such a uid by name
	// and answers the resource under its own, full uid: key what is stored by the uid of
	// the answer, and when the answer is "not found", by Type, Name and Account.
	ByName bool
}

// The kinds of error Parse returns; test with errors.Is. Each error is an *Error naming
// the field at fault.
var (
	// ErrMalformed is the error of a body that is not an event warden reads: bad JSON, a
	// shape that is none of those accepted, a missing or mistyped field, bad base64, a
	// time that is not RFC 3339, an id or name that cannot be a uid's part.
	ErrMalformed = errors.New("malformed event")
	// ErrUnknown is the error of a well-formed event warden does not act on: a read-only
	// call, a call of a service or method it does not map, a call that failed (CloudTrail
	// errorCode, a non-zero audit log status), an event that is not an API call.
	ErrUnknown = errors.New("event not handled")
	// ErrTooLarge is the error of a body over Options.MaxBody, or with more events than
	// Options.MaxEvents.
	ErrTooLarge = errors.New("event body too large")
)

// Error is an error of Parse: its kind (ErrMalformed, ErrUnknown, ErrTooLarge), the
// field it is about, and why.
type Error struct {
	// Kind is ErrMalformed, ErrUnknown or ErrTooLarge.
	Kind error
	// Field is the path of the field at fault, as in the body:
	// "detail.requestParameters.userName", "message.data", "[2].detail.eventName",
	// "message.data.protoPayload.methodName"; "body" for the body as a whole.
	Field string
	// Reason says what is wrong with it.
	Reason string
	// Event names the call when it is known ("iam:ListUsers"), for the counts of what
	// was ignored.
	Event string
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Field + ": " + e.Reason }

// Unwrap returns the kind, so that errors.Is(err, ErrMalformed) holds.
func (e *Error) Unwrap() error { return e.Kind }

func malformed(field, reason string) error {
	return &Error{Kind: ErrMalformed, Field: field, Reason: reason}
}

func unknown(field, event, reason string) error {
	return &Error{Kind: ErrUnknown, Field: field, Reason: reason, Event: event}
}

// Status is the HTTP status POST /v1/events answers for what Parse returned:
//
//   - nil: 202 Accepted. The re-reads are queued, not done, when the answer goes.
//   - ErrMalformed or ErrUnknown: 400 Bad Request, as issue 10 asks ("unknown or
//     malformed events are counted and answered 400"). EventBridge API destinations do
//     not retry a 400 (only 401, 407, 409, 429 and 5xx), so a rule that sends more than
//     warden maps costs one request an event. Pub/Sub push retries every answer other
//     than 102, 200, 201, 202 and 204 until the message expires, so a subscription that
//     passes more than warden maps must filter (LogFilter) or dead-letter: a 400 that
//     Pub/Sub redelivers shows up as a growing count of unknown events, which is the
//     point. Answering 2xx to what warden ignores would hide a sender configured to send
//     the wrong thing.
//   - ErrTooLarge: 413 Request Entity Too Large.
//   - anything else (no error of Parse): 500.
//
// A body of several events that holds both changes and errors answers for its errors:
// the daemon still acts on the changes Parse returned.
func Status(err error) int {
	switch {
	case err == nil:
		return http.StatusAccepted
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrUnknown):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

// Options bound what a Parser reads.
type Options struct {
	// MaxBody is the largest body read, in bytes; default 1 MiB. An EventBridge event is
	// at most 256 KB, a Cloud Logging entry at most 256 KB (a third more in base64).
	MaxBody int
	// MaxEvents is the most events one body may carry (a JSON array of events, a
	// CloudTrail log file's Records); default 100.
	MaxEvents int
}

const (
	defaultMaxBody   = 1 << 20
	defaultMaxEvents = 100
)

// A Parser maps event bodies to changes. It holds no state between calls and is safe for
// concurrent use.
type Parser struct {
	opts Options
}

// New returns a Parser with opts, defaults filled in.
func New(opts Options) *Parser {
	if opts.MaxBody <= 0 {
		opts.MaxBody = defaultMaxBody
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = defaultMaxEvents
	}
	return &Parser{opts: opts}
}

// Parse maps one body with default Options; see Parser.Parse.
func Parse(body []byte) ([]Change, error) { return New(Options{}).Parse(body) }

// Parse maps the event or events of one POST /v1/events body to the changes they say
// happened. It detects the shape:
//
//   - an EventBridge event: "detail-type" "AWS API Call via CloudTrail" (or "AWS Service
//     Event via CloudTrail") with the CloudTrail record in "detail", or one of ACM's
//     certificate events;
//   - a Pub/Sub push request: {"message": {"data": base64(LogEntry), "messageId", …},
//     "subscription"}, the LogEntry carrying a Cloud Audit Log in "protoPayload";
//   - a LogEntry itself (a push subscription without the wrapper, Eventarc);
//   - a CloudTrail record itself, or a CloudTrail log file ({"Records": [...]}), for
//     replays;
//   - a JSON array of any of these. EventBridge API destinations send one event a
//     request (they are not a batching target), but a relay may send several.
//
// Every event maps to one Change or one error. Parse returns the changes of the events
// that mapped and, if any did not, an error for each of them (joined; errors.Is finds
// their kinds): a body of one event answers a change or an error, never both.
func (p *Parser) Parse(body []byte) ([]Change, error) {
	changes, errs, array, err := p.parse(body)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 && !array {
		// One object (an event, a log file) answers its changes or its errors.
		changes = nil
	}
	return changes, joined(errs)
}

// parse maps a body to the changes of its events and the error of each event that did
// not map; array says the body is a JSON array of events; err is the error of a body
// that holds no event to map.
func (p *Parser) parse(body []byte) (changes []Change, errs []error, array bool, err error) {
	if len(body) > p.opts.MaxBody {
		return nil, nil, false, &Error{Kind: ErrTooLarge, Field: "body", Reason: fmt.Sprintf("%d bytes, over the limit of %d", len(body), p.opts.MaxBody)}
	}
	v, err := decode(body, "body")
	if err != nil {
		return nil, nil, false, err
	}
	switch v := v.(type) {
	case map[string]any:
		changes, errs, err := p.event(node{m: v})
		return changes, errs, false, err
	case []any:
		if len(v) == 0 {
			return nil, nil, true, malformed("body", "an empty array holds no event")
		}
		if len(v) > p.opts.MaxEvents {
			return nil, nil, true, &Error{Kind: ErrTooLarge, Field: "body", Reason: fmt.Sprintf("%d events, over the limit of %d", len(v), p.opts.MaxEvents)}
		}
		for i, e := range v {
			path := "[" + strconv.Itoa(i) + "]"
			m, ok := e.(map[string]any)
			if !ok {
				errs = append(errs, malformed(path, "want an event object, got "+kindOf(e)))
				continue
			}
			if _, nested := m["Records"]; nested {
				errs = append(errs, malformed(path+".Records", "a CloudTrail log file inside an array"))
				continue
			}
			c, cerrs, err := p.event(node{m: m, path: path})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			changes = append(changes, c...)
			errs = append(errs, cerrs...)
		}
		return changes, errs, true, nil
	default:
		return nil, nil, false, malformed("body", "want a JSON object or array, got "+kindOf(v))
	}
}

// joined is the one error of errs, or all of them joined; nil when there is none.
func joined(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// event maps one event object, whichever its shape; a CloudTrail log file is several.
func (p *Parser) event(n node) ([]Change, []error, error) {
	switch {
	case n.has("detail-type"):
		c, err := eventBridge(n)
		return one(c, err)
	case n.has("message"):
		c, err := pubsub(n)
		return one(c, err)
	case n.has("protoPayload") || n.has("logName"):
		c, err := logEntry(n, "")
		return one(c, err)
	case n.has("Records"):
		return p.records(n)
	case n.has("eventSource") && n.has("eventName"):
		c, err := cloudTrail(n, envelope{})
		return one(c, err)
	}
	return nil, nil, malformed(n.self(), "not an EventBridge event, a Pub/Sub push request, a Cloud Logging entry or a CloudTrail record "+
		"(none of detail-type, message, protoPayload, Records, eventSource)")
}

func one(c Change, err error) ([]Change, []error, error) {
	if err != nil {
		return nil, []error{err}, nil
	}
	return []Change{c}, nil, nil
}

// records maps a CloudTrail log file, record by record, as Parse does an array.
func (p *Parser) records(n node) ([]Change, []error, error) {
	recs, err := n.list("Records")
	if err != nil {
		return nil, nil, err
	}
	if len(recs) == 0 {
		return nil, nil, malformed(n.at("Records"), "no record")
	}
	if len(recs) > p.opts.MaxEvents {
		return nil, nil, &Error{Kind: ErrTooLarge, Field: n.at("Records"), Reason: fmt.Sprintf("%d records, over the limit of %d", len(recs), p.opts.MaxEvents)}
	}
	var (
		out  []Change
		errs []error
	)
	for i, r := range recs {
		path := n.at("Records") + "[" + strconv.Itoa(i) + "]"
		m, ok := r.(map[string]any)
		if !ok {
			errs = append(errs, malformed(path, "want a CloudTrail record, got "+kindOf(r)))
			continue
		}
		c, err := cloudTrail(node{m: m, path: path}, envelope{})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	return out, errs, nil
}

// decode reads one JSON value, numbers kept as json.Number, nothing after it.
func decode(b []byte, field string) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, malformed(field, fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, err))
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, malformed(field, "invalid JSON: unexpected end of input")
		default:
			return nil, malformed(field, "invalid JSON: "+err.Error())
		}
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, malformed(field, fmt.Sprintf("data after the JSON value at byte %d", d.InputOffset()))
	}
	return v, nil
}

// change builds the Change of refs in scope, the uids listed in order.
func change(base Change, refs []Ref, why []string) Change {
	base.Resources = refs
	base.UIDs = make([]string, len(refs))
	for i, r := range refs {
		base.UIDs[i] = r.UID
	}
	if len(why) > 0 || len(refs) == 0 {
		base.WholeScope = true
		base.Why = joinWhy(why)
	}
	return base
}

func joinWhy(why []string) string {
	if len(why) == 0 {
		return "the event names no resource"
	}
	return strings.Join(why, "; ")
}
