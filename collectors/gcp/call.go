package gcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	gax "github.com/googleapis/gax-go/v2"
	"github.com/googleapis/gax-go/v2/apierror"
	"golang.org/x/time/rate"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// noRetry turns off the clients' own retries: every attempt goes through run.call, so
// that it is rate-limited and a throttled one is counted.
var noRetry = gax.WithRetry(func() gax.Retryer { return nil })

// run is the collection of one scope: its rate limiter and the counts its scope reports.
// One goroutine uses it.
type run struct {
	cfg          *Config
	log          *slog.Logger
	lim          *rate.Limiter
	calls        int
	throttled    int
	accessDenied int
}

// callError is a call that failed for good, named the way scope errors name it:
// "iam.ListServiceAccounts: PermissionDenied: …".
type callError struct {
	call string
	code codes.Code
	msg  string
	err  error
}

func (e *callError) Error() string { return fmt.Sprintf("%s: %s: %s", e.call, e.code, e.msg) }
func (e *callError) Unwrap() error { return e.err }

// denied reports whether err is a call refused for lack of permission.
func denied(err error) bool {
	var ce *callError
	return errors.As(err, &ce) && ce.code == codes.PermissionDenied
}

// codeOf reads the canonical code of an error from either transport: gRPC status, or the
// HTTP status of a REST call (as gax maps it).
func codeOf(err error) (codes.Code, string) {
	var ae *apierror.APIError
	if errors.As(err, &ae) {
		if ae.HTTPCode() > 0 {
			switch c := ae.HTTPCode(); {
			case c == 429:
				return codes.ResourceExhausted, ae.Message()
			case c == 403:
				return codes.PermissionDenied, ae.Message()
			case c >= 500:
				return ae.GRPCStatus().Code(), ae.Message()
			}
		}
		return ae.GRPCStatus().Code(), ae.Message()
	}
	if st, ok := status.FromError(err); ok {
		return st.Code(), st.Message()
	}
	return codes.Unknown, err.Error()
}

// retryable: throttling, and server or transport trouble that may pass.
func retryable(c codes.Code) bool {
	switch c {
	case codes.ResourceExhausted, codes.Unavailable, codes.Internal, codes.DeadlineExceeded, codes.Unknown:
		return true
	}
	return false
}

// call runs f until it succeeds, fails for good, or MaxAttempts are spent: each attempt
// waits for the rate limiter; throttled (429, RESOURCE_EXHAUSTED) and transient (5xx,
// UNAVAILABLE) failures are retried after an exponential backoff with jitter.
func (r *run) call(ctx context.Context, name string, f func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		if err := r.lim.Wait(ctx); err != nil {
			return &callError{call: name, code: codes.Canceled, msg: err.Error(), err: err}
		}
		r.calls++
		err := f(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return &callError{call: name, code: codes.Canceled, msg: ctx.Err().Error(), err: ctx.Err()}
		}
		code, msg := codeOf(err)
		switch code {
		case codes.ResourceExhausted:
			r.throttled++
		case codes.PermissionDenied:
			r.accessDenied++
		}
		if !retryable(code) || attempt >= r.cfg.MaxAttempts {
			r.log.Debug("gcp call failed", "call", name, "code", code, "attempts", attempt, "error", msg)
			return &callError{call: name, code: code, msg: msg, err: err}
		}
		d := r.backoff(attempt)
		r.log.Debug("gcp call retried", "call", name, "code", code, "attempt", attempt, "backoff", d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return &callError{call: name, code: codes.Canceled, msg: ctx.Err().Error(), err: ctx.Err()}
		case <-t.C:
		}
	}
}

// backoff is BaseBackoff·2^(attempt-1), capped at MaxBackoff, of which the upper half is
// random ("equal jitter"), so that clients throttled together do not retry together.
func (r *run) backoff(attempt int) time.Duration {
	d := r.cfg.BaseBackoff << min(attempt-1, 30)
	if d <= 0 || d > r.cfg.MaxBackoff {
		d = r.cfg.MaxBackoff
	}
	half := d / 2
	return half + rand.N(half+1)
}

// pages reads a whole listing one page per call, so that each page is rate-limited and
// retried on its own. page fetches the page at token into *items and returns the next
// token; a fresh iterator per attempt keeps a failed attempt from poisoning the next.
func pages[T any](ctx context.Context, r *run, name string, page func(ctx context.Context, token string, items *[]T) (string, error)) ([]T, error) {
	var all []T
	token := ""
	seen := map[string]bool{}
	for {
		var items []T
		var next string
		err := r.call(ctx, name, func(ctx context.Context) error {
			items = items[:0]
			var err error
			next, err = page(ctx, token, &items)
			return err
		})
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		// A server that hands back a token it gave before would loop for ever and
		// repeat its items: stop, and let the scope say what was not read.
		if seen[next] {
			return nil, &callError{call: name, code: codes.Internal, msg: "the server repeated page token " + strconv.Quote(next)}
		}
		seen[next] = true
		token = next
	}
}

// nextPage takes one page of at most size items from it, starting at token.
func nextPage[T any](it iterator.Pageable, size int, token string, items *[]T) (string, error) {
	return iterator.NewPager(it, size, token).NextPage(items)
}
