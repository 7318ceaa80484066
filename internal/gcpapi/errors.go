package gcpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// CallError is a call that failed for good, named the way scope errors and reports name
// it: "iam.ListServiceAccounts: PermissionDenied: …".
type CallError struct {
	Call    string     // "service.Method"
	Code    codes.Code // the canonical code, from either transport
	Message string     // Google's message
	Err     error      // the client's error
}

func (e *CallError) Error() string { return fmt.Sprintf("%s: %s: %s", e.Call, e.Code, e.Message) }

// Unwrap returns the client's error.
func (e *CallError) Unwrap() error { return e.Err }

// Code is the canonical code of err: a CallError's, or read from the gRPC status or the
// HTTP status of a REST answer; codes.OK for nil, codes.Unknown for an error that is no
// answer from Google.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Code
	}
	c, _ := codeOf(err)
	return c
}

// codeOf reads the canonical code of an error from either transport: gRPC status, or the
// HTTP status of a REST call (as gax maps it), with Google's message.
func codeOf(err error) (codes.Code, string) {
	var ae *apierror.APIError
	if errors.As(err, &ae) {
		switch c := ae.HTTPCode(); {
		case c == 429:
			return codes.ResourceExhausted, ae.Message()
		case c == 403:
			return codes.PermissionDenied, ae.Message()
		case c == 409 && restStatus(err) == "ALREADY_EXISTS":
			// gax reads every REST 409 as ABORTED; Google's body says which it is.
			return codes.AlreadyExists, ae.Message()
		}
		return ae.GRPCStatus().Code(), ae.Message()
	}
	if st, ok := status.FromError(err); ok {
		return st.Code(), st.Message()
	}
	return codes.Unknown, err.Error()
}

// restStatus is the canonical status name a REST error body gives ("ALREADY_EXISTS"),
// or "" when there is none.
func restStatus(err error) string {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return ""
	}
	var body struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(ge.Body), &body) == nil && body.Error.Status != "" {
		return body.Error.Status
	}
	for _, e := range ge.Errors {
		if e.Reason == "alreadyExists" || e.Reason == "duplicate" {
			return "ALREADY_EXISTS"
		}
	}
	return ""
}

// IsDenied reports whether the caller may not make the call (PERMISSION_DENIED, 403).
// Google answers so as well for a project that does not exist: to a caller, a project it
// cannot see and one that is gone look the same, and neither is "not found".
func IsDenied(err error) bool { return err != nil && Code(err) == codes.PermissionDenied }

// IsNotFound reports whether Google said the thing does not exist (NOT_FOUND, 404).
func IsNotFound(err error) bool { return err != nil && Code(err) == codes.NotFound }

// IsThrottled reports whether the call was refused for rate or quota
// (RESOURCE_EXHAUSTED, 429).
func IsThrottled(err error) bool { return err != nil && Code(err) == codes.ResourceExhausted }

// IsConflict reports whether a read-modify-write lost a race: ABORTED (setIamPolicy with
// a stale etag, 409 "There were concurrent policy changes") or a failed precondition on
// an etag or fingerprint (Compute's 412). Read again and redo the change.
func IsConflict(err error) bool {
	if err == nil {
		return false
	}
	switch Code(err) {
	case codes.Aborted:
		return true
	case codes.FailedPrecondition:
		msg := strings.ToLower(err.Error())
		return strings.Contains(msg, "etag") || strings.Contains(msg, "fingerprint")
	}
	return false
}
