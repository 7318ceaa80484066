package collectors

import (
	"context"
	"errors"

	"github.com/warden-sec/warden/snapshot"
)

// ErrUnknownScope is the error of a CollectScope whose id is not one of the collector's
// scopes: malformed, of another provider, or naming an account, project, region,
// ancestor or endpoint the collector does not read now.
var ErrUnknownScope = errors.New("unknown scope")

// ScopeCollector is a collector that can name its scopes and read one alone: the unit of
// work of warden's daemon, which lists the scopes and collects each as its own job.
type ScopeCollector interface {
	Collector
	// Scopes lists the scopes Collect would read now (accounts discovered, regions
	// listed), as snapshot.Scope values with ID, Provider, Account, Service and Region
	// set and no status: nothing has been read yet. A target that cannot be opened or
	// listed is still named, by the ids Collect would report failed for it, so that the
	// daemon records those scopes as failed rather than forgets them. The error is only
	// a listing that cannot be made at all (no credentials, no account or project list).
	Scopes(ctx context.Context) ([]snapshot.Scope, error)
	// CollectScope reads the scope with this id as Collect reads it, reporting that
	// scope (ok, partial or failed, with its counters) and its resources, and nothing
	// else, to sink. A scope that cannot be read is a failed scope, not an error; an id
	// that is not one of its scopes is an error wrapping ErrUnknownScope, and nothing is
	// reported. Otherwise the error is only a sink that failed or the context.
	CollectScope(ctx context.Context, id string, sink Sink) error
}
