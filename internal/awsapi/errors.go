package awsapi

import (
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
)

// Code is the error code AWS answered ("NoSuchEntity", "Throttling",
// "InvalidGroup.NotFound"…); empty when err is not an answer from AWS (a transport
// failure, a cancelled context, no credentials).
func Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// IsThrottled reports whether AWS refused the call for its rate ("Throttling",
// "RequestLimitExceeded", "TooManyRequestsException"…).
func IsThrottled(err error) bool {
	_, ok := retry.DefaultThrottleErrorCodes[Code(err)]
	return ok
}

// IsDenied reports whether the caller may not make the call: AccessDenied (IAM, STS and
// the JSON services), UnauthorizedOperation (EC2), AuthFailure (EC2 in a region the
// account has not opted in to), OptInRequired.
func IsDenied(err error) bool {
	switch Code(err) {
	case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess",
		"AuthFailure", "OptInRequired", "AccessDeniedForDependencyException":
		return true
	}
	return false
}

// IsNotFound reports whether AWS said the thing does not exist: NoSuchEntity (IAM),
// InvalidGroup.NotFound, InvalidPermission.NotFound and the other "….NotFound" codes
// (EC2), ResourceNotFoundException and the other "…NotFoundException" codes (ACM,
// Organizations). A denied, throttled or failed call is never "not found".
func IsNotFound(err error) bool {
	c := Code(err)
	switch {
	case c == "NoSuchEntity", c == "NoSuchEntityException":
		return true
	case strings.HasSuffix(c, ".NotFound"), strings.HasSuffix(c, "NotFoundException"):
		return true
	}
	return false
}

// canonicalEcho starts what AWS appends to a signature it could not verify: the request
// as it canonicalised it, headers included, and so the x-amz-security-token of temporary
// credentials.
const canonicalEcho = "The Canonical String for this request"

// RedactText cuts the echoed request out of an error message, so that no session token
// reaches a snapshot, a log or the terminal.
func RedactText(msg string) string {
	if i := strings.Index(msg, canonicalEcho); i >= 0 {
		return strings.TrimSpace(msg[:i]) + " [the request AWS echoed back is left out: it holds credentials]"
	}
	return msg
}

// Redact wraps err so that its text is redacted (RedactText); errors.As and errors.Is
// still see the original. Nil stays nil.
func Redact(err error) error {
	if err == nil {
		return nil
	}
	var r redacted
	if errors.As(err, &r) && r.err == err {
		return err
	}
	return redacted{err}
}

type redacted struct{ err error }

func (r redacted) Error() string { return RedactText(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }

// Message is an error as a scope or a report records it: the code and message AWS
// answered, without the SDK's request ids and wrapping, redacted; or else the error's
// redacted text.
func Message(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return RedactText(ae.ErrorCode() + ": " + ae.ErrorMessage())
	}
	return RedactText(err.Error())
}
