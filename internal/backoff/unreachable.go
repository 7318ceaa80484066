package backoff

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"time"
)

// UnreachableAttempts is how many times a call is made, the first included, when the
// endpoint cannot be reached at all (Unreachable): one quick retry for a listener being
// restarted, and then the failure is reported, not waited out for half a minute.
const UnreachableAttempts = 2

// UnreachableDelay bounds the delay before that one retry.
const UnreachableDelay = 200 * time.Millisecond

// Unreachable reports whether err is a failure to reach the endpoint that retrying will
// not mend within a run: nothing listens there (connection refused), its host name does
// not resolve (no such host), or no route leads to it. Throttling, 5xx answers, resets
// and timeouts are not: they pass, and keep their retries. Errors that carry only the
// text of the dial failure (a gRPC status) are read by their text.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connect: connection refused", "no such host", "connect: no route to host", "connect: network is unreachable"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
