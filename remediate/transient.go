package remediate

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
)

// Transient reports whether a failed call may well succeed if made again soon: the cloud
// refused it for its rate (throttling, quota), answered a server error (5xx,
// UNAVAILABLE), or did not answer in time. A fix that failed so is marked
// [Item.Transient], and the daemon reads its target again shortly to plan it anew
// rather than waiting for the next sweep; a denied or invalid call is not transient.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || awsapi.IsThrottled(err) {
		return true
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		return status.HTTPStatusCode() >= 500 || status.HTTPStatusCode() == 429
	}
	if awsapi.Code(err) != "" {
		return false // another answer from AWS
	}
	switch gcpapi.Code(err) {
	case codes.ResourceExhausted, codes.Unavailable, codes.Internal, codes.DeadlineExceeded:
		return true
	}
	return false
}
