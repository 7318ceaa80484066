package awsapi

import (
	"context"
	"sync/atomic"

	"github.com/aws/smithy-go/middleware"
)

// Counter counts the attempts of the clients it is added to, and those AWS throttled or
// denied, for a collector's scope or a remediation's report. Add it to a client with
//
//	acct.IAM(func(o *iam.Options) { o.APIOptions = append(o.APIOptions, c.Middleware()) })
//
// A client takes one Counter. The zero value is ready; it is safe for concurrent use.
type Counter struct {
	calls, throttled, denied atomic.Int64
}

// Calls is the number of attempts made, retries included.
func (c *Counter) Calls() int { return int(c.calls.Load()) }

// Throttled is the number of attempts AWS throttled.
func (c *Counter) Throttled() int { return int(c.throttled.Load()) }

// Denied is the number of attempts AWS denied.
func (c *Counter) Denied() int { return int(c.denied.Load()) }

// Add adds o's counts to c (a call made under one counter that belongs to another too).
func (c *Counter) Add(o *Counter) {
	c.calls.Add(o.calls.Load())
	c.throttled.Add(o.throttled.Load())
	c.denied.Add(o.denied.Load())
}

// Middleware is the client middleware that counts each attempt, after the account's
// token bucket let it through.
func (c *Counter) Middleware() func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("WardenCount",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				c.calls.Add(1)
				out, md, err := next.HandleFinalize(ctx, in)
				switch {
				case err == nil:
				case IsThrottled(err):
					c.throttled.Add(1)
				case IsDenied(err):
					c.denied.Add(1)
				}
				return out, md, err
			}), middleware.After)
	}
}
