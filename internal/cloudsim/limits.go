package cloudsim

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxRequestBody is the largest request body the simulator reads (gRPC messages are
// bounded by the gRPC server itself, at 4 MiB, with ResourceExhausted).
const maxRequestBody = 32 << 20

// errBodyTooLarge is the error of a request body over maxRequestBody.
var errBodyTooLarge = fmt.Errorf("request body exceeds the limit of %d bytes", maxRequestBody)

// readBody reads a request body whole, or refuses it when it is larger than
// maxRequestBody. It never returns a prefix: a body cut at the limit can still parse and
// would run as a request the client never sent.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(b) > maxRequestBody {
		return nil, errBodyTooLarge
	}
	return b, nil
}

// tooLarge is the 413 answer to an oversized body, with the protocol's error code:
// RequestEntityTooLarge (AWS Query), RequestEntityTooLargeException (AWS JSON) or the
// Google errors[].reason requestTooLarge.
func tooLarge(code string) *apiError {
	return &apiError{Kind: kindInvalid, Code: code, Status: http.StatusRequestEntityTooLarge,
		Message: fmt.Sprintf("Request body exceeds the limit of %d bytes; the request was not executed.", maxRequestBody)}
}

// bodyError is the answer to a body that could not be read: 413 when it is too large.
func bodyError(err error, tooLargeCode, invalidCode string) *apiError {
	if errors.Is(err, errBodyTooLarge) {
		return tooLarge(tooLargeCode)
	}
	return errf(kindInvalid, invalidCode, "%v", err)
}

// refuseTooLarge answers a request whose Content-Length is over the limit before any of
// it is read, in the error shape of the protocol it was sent in.
func (s *Sim) refuseTooLarge(w http.ResponseWriter, r *http.Request) {
	// The rest of the body is never read: close the connection after the answer rather
	// than make net/http drain 32 MiB or more of it.
	w.Header().Set("Connection", "close")
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256") {
		writeGCPError(w, tooLarge("requestTooLarge"))
		return
	}
	_, region, service, _ := sigv4(r.Header.Get("Authorization"))
	c := &call{ctx: r.Context(), Service: service, Region: region}
	s.mu.Lock()
	c.ReqID = fmt.Sprintf("%08x-sim0-4000-8000-%012x", s.nextID(), 0)
	s.mu.Unlock()
	s.writeAWSError(w, c, nil)
}

// writeAWSError answers e (nil: an oversized body) in the error shape of c's service: AWS
// JSON for ACM and Organizations, AWS Query/XML otherwise.
func (s *Sim) writeAWSError(w http.ResponseWriter, c *call, e *apiError) {
	if _, ok := s.jsonx[c.Service]; ok {
		if e == nil {
			e = tooLarge("RequestEntityTooLargeException")
		}
		s.writeJSONError(w, c, e)
		return
	}
	if e == nil {
		e = tooLarge("RequestEntityTooLarge")
	}
	s.writeQueryError(w, c, e)
}
