package tlsprobe

import (
	"context"
	"fmt"
	"strings"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/snapshot"
)

var _ collectors.ScopeCollector = (*Collector)(nil)

// Scopes implements collectors.ScopeCollector: tls/HOST:PORT for each target, in the
// targets' order, without a connection. Two targets of one address (different SNI names)
// are one scope, which CollectScope reads with the first.
func (c *Collector) Scopes(context.Context) ([]snapshot.Scope, error) {
	seen := map[string]bool{}
	out := make([]snapshot.Scope, 0, len(c.Targets))
	for _, t := range c.Targets {
		id := t.scopeID()
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, snapshot.Scope{ID: id, Provider: "tls", Account: t.Host, Service: "tls"})
	}
	return out, nil
}

// CollectScope implements collectors.ScopeCollector: it probes the endpoint of a
// tls/HOST:PORT scope as Collect does, reporting the scope and, unless it could not be
// reached, its tls.endpoint resource. An address that is not a target's is
// ErrUnknownScope.
func (c *Collector) CollectScope(ctx context.Context, id string, sink collectors.Sink) error {
	if strings.HasPrefix(id, "tls/") {
		for _, t := range c.Targets {
			if t.scopeID() != id {
				continue
			}
			res, scope := c.probe(ctx, t)
			if err := emit(sink, res, scope); err != nil {
				return fmt.Errorf("tls: %s: %w", id, err)
			}
			return ctx.Err()
		}
	}
	return fmt.Errorf("tls: collect scope %s: not a target's endpoint: %w", id, collectors.ErrUnknownScope)
}
