package events

// Denials: calls the cloud refused for want of a permission. They change nothing, so
// Parse answers them ErrUnknown as any failed call; Read hands them over as Denials,
// for the daemon to tell whether a right-sizing fix removed what was denied.

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/warden-sec/warden/internal/awsarn"
)

// A Denial is one call the cloud refused because its caller lacked a permission: who
// was refused what, where and when.
type Denial struct {
	// Provider is "aws" or "gcp".
	Provider string
	// Account is the AWS account id the call was made in, or the GCP project id.
	Account string
	// Principal is the uid of whom the permission was refused, as the snapshot names
	// it: an IAM user's ARN; for an assumed role, the role's ARN (the session's
	// issuer), since a role's policies are what a session is granted; a GCP service
	// account's full resource name (//iam.googleapis.com/projects/P/serviceAccounts/
	// EMAIL); any other GCP principal as IAM members are written ("user:EMAIL").
	Principal string
	// Actions are what was denied as IAM names it: "kms:Decrypt" (AWS, one), the
	// permissions the audit log says were not granted ("iam.serviceAccountKeys.create"),
	// else the method.
	Actions []string
	// Event names the call as Change.Event does; Code is the error it ended with
	// ("AccessDenied", "7").
	Event, Code string
	// At is when the call was made; Source the event's own id (CloudTrail eventID,
	// LogEntry insertId); Delivery the id of the delivery that carried it.
	At               time.Time
	Source, Delivery string
}

// Events is what one body says: the changes to read again, and the denials.
type Events struct {
	Changes []Change
	Denials []Denial
}

// deniedCodes are the CloudTrail errorCodes of a call refused for want of a permission.
var deniedCodes = map[string]bool{
	"AccessDenied":                 true,
	"AccessDeniedException":        true,
	"UnauthorizedOperation":        true,
	"Client.UnauthorizedOperation": true,
	"UnauthorizedAccess":           true,
}

// gcpPermissionDenied is google.rpc.Code PERMISSION_DENIED, an audit log's status.code.
const gcpPermissionDenied = 7

// iamPrefixes are the services whose IAM action prefix is not their endpoint's name,
// the first label of CloudTrail's eventSource ("monitoring.amazonaws.com" logs calls of
// cloudwatch:PutMetricData). Services absent here use the endpoint's name, which is
// right for most (iam, kms, s3, ec2, secretsmanager, lambda, sts, …).
var iamPrefixes = map[string]string{
	"monitoring":        "cloudwatch",
	"email":             "ses",
	"streams.dynamodb":  "dynamodb",
	"tagging":           "tag",
	"runtime.sagemaker": "sagemaker",
	"runtime.lex":       "lex",
}

// lambdaVersion is the API version Lambda's CloudTrail event names end with
// ("UpdateFunctionCode20150331v2"), which its IAM actions do not.
var lambdaVersion = regexp.MustCompile(`20[0-9]{6}(v[0-9]+)?$`)

// awsAction is the IAM action of a CloudTrail event: the service's IAM prefix and the
// event name.
func awsAction(source, name string) string {
	svc := strings.TrimSuffix(source, ".amazonaws.com")
	if p, ok := iamPrefixes[svc]; ok {
		svc = p
	}
	if svc == "lambda" {
		name = lambdaVersion.ReplaceAllString(name, "")
	}
	return svc + ":" + name
}

// denialError is the ErrUnknown a denial is to Parse, carrying the denial for Read.
type denialError struct {
	err    *Error
	denial Denial
}

func (e *denialError) Error() string { return e.err.Error() }

// Unwrap returns the *Error, whose kind is ErrUnknown.
func (e *denialError) Unwrap() error { return e.err }

// awsDenial is the denial a CloudTrail record with a denied errorCode is, as the error
// Parse answers for it; a caller warden cannot name (a service, a federated user, the
// root user) leaves a plain ErrUnknown.
func awsDenial(rec, ident node, source, name, event, code, acct string, at time.Time, id string, env envelope) error {
	plain := unknown(rec.at("errorCode"), event, code+": the call failed and changed nothing")
	typ, err := ident.str("type")
	if err != nil {
		return err
	}
	var principal, field string
	switch typ {
	case "IAMUser":
		field = ident.at("arn")
		if principal, err = ident.str("arn"); err != nil {
			return err
		}
	case "AssumedRole":
		sc, err := ident.obj("sessionContext")
		if err != nil {
			return err
		}
		issuer, err := sc.obj("sessionIssuer")
		if err != nil {
			return err
		}
		field = issuer.at("arn")
		if principal, err = issuer.str("arn"); err != nil {
			return err
		}
	default:
		return plain
	}
	if principal == "" {
		return plain
	}
	a, ok := awsarn.Parse(principal)
	if !ok || a.Service != "iam" || !accountRe.MatchString(a.Account) ||
		!(strings.HasPrefix(a.Resource, "user/") || strings.HasPrefix(a.Resource, "role/")) {
		return malformed(field, fmt.Sprintf("%q is not the ARN of an IAM user or role", principal))
	}
	return &denialError{err: &Error{Kind: ErrUnknown, Field: rec.at("errorCode"), Event: event,
		Reason: code + ": the call was denied and changed nothing"},
		denial: Denial{Provider: "aws", Account: acct, Principal: principal, Actions: []string{awsAction(source, name)},
			Event: event, Code: code, At: at, Source: id, Delivery: env.id}}
}

// saEmailRe is a user-managed service account's email: NAME@PROJECT.iam.gserviceaccount.com.
var saEmailRe = regexp.MustCompile(`^[^@]+@([a-z][a-z0-9-]{4,28}[a-z0-9])\.iam\.gserviceaccount\.com$`)

// gcpDenial is the denial an audit log entry with PERMISSION_DENIED is, as the error
// Parse answers for it; an entry without the principal's email leaves a plain
// ErrUnknown.
func gcpDenial(n, pp node, event, method, source, delivery, msg string, at time.Time) error {
	plain := unknown(pp.at("status.code"), event, fmt.Sprintf("%d %s: the call failed and changed nothing", gcpPermissionDenied, msg))
	auth, err := pp.obj("authenticationInfo")
	if err != nil {
		return err
	}
	email, err := auth.str("principalEmail")
	if err != nil {
		return err
	}
	if email == "" {
		return plain
	}
	if !emailRe.MatchString(email) {
		return malformed(auth.at("principalEmail"), fmt.Sprintf("%q is not an email", email))
	}
	res, err := n.obj("resource")
	if err != nil {
		return err
	}
	labels, err := res.obj("labels")
	if err != nil {
		return err
	}
	project, err := labels.str("project_id")
	if err != nil {
		return err
	}
	if project == "" {
		// A sink's entry names its project in its log name.
		logName, err := n.str("logName")
		if err != nil {
			return err
		}
		if rest, ok := strings.CutPrefix(logName, "projects/"); ok {
			project, _, _ = strings.Cut(rest, "/")
		}
	}
	if !projectIDRe.MatchString(project) {
		return malformed(labels.at("project_id"), fmt.Sprintf("%q is not a project id, and the log name names none", project))
	}
	principal := "user:" + email
	switch {
	case saEmailRe.MatchString(email):
		principal = saUID(saEmailRe.FindStringSubmatch(email)[1], email)
	case strings.HasSuffix(email, ".gserviceaccount.com"):
		// A Google-managed or default account (N-compute@developer…): its email names
		// no project id; it belongs to the project it acts in.
		principal = saUID(project, email)
	}
	var perms []string
	infos, err := pp.objects("authorizationInfo")
	if err != nil {
		return err
	}
	for _, ai := range infos {
		granted, err := ai.boolean("granted")
		if err != nil {
			return err
		}
		perm, err := ai.str("permission")
		if err != nil {
			return err
		}
		if !granted && perm != "" {
			perms = append(perms, perm)
		}
	}
	if len(perms) == 0 {
		perms = []string{method}
	}
	return &denialError{err: &Error{Kind: ErrUnknown, Field: pp.at("status.code"), Event: event,
		Reason: fmt.Sprintf("%d %s: the call was denied and changed nothing", gcpPermissionDenied, msg)},
		denial: Denial{Provider: "gcp", Account: project, Principal: principal, Actions: perms, Event: event,
			Code: fmt.Sprint(gcpPermissionDenied), At: at, Source: source, Delivery: delivery}}
}

// Read maps one body as Parse does, and hands over the denials Parse answers ErrUnknown
// for: a body of denials only is no error, and a log file's denials do not cost it its
// changes. Errors are Parse's otherwise.
func (p *Parser) Read(body []byte) (Events, error) {
	changes, errs, array, err := p.parse(body)
	if err != nil {
		return Events{}, err
	}
	ev := Events{Changes: changes}
	var rest []error
	for _, e := range errs {
		if d, ok := errors.AsType[*denialError](e); ok {
			ev.Denials = append(ev.Denials, d.denial)
			continue
		}
		rest = append(rest, e)
	}
	if len(rest) > 0 && !array {
		ev.Changes = nil // as Parse: one object answers its changes or its errors
	}
	return ev, joined(rest)
}

// Read maps one body with default Options; see Parser.Read.
func Read(body []byte) (Events, error) { return New(Options{}).Read(body) }
