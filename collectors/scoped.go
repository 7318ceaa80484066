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

// Rereader is a ScopeCollector that can tell a scope unchanged since its last read from
// the raw answers alone: it keeps a tape of each read (the requests it sent, a digest of
// each answer), and a read again first sends the tape's requests and compares. The
// daemon keeps the tape of a scope's last complete read, and an unchanged scope then
// costs its reads: nothing is decoded, judged or written but the record of the read.
type Rereader interface {
	ScopeCollector
	// CollectScopeAgain reads the scope with this id again, given the tape its last
	// read returned (again.Tape; none: read in full). When every request of the tape is
	// answered as then, the scope is unchanged: nothing is reported to sink, and the
	// Reread says so. Otherwise the scope is read as CollectScope reads it (the answers
	// the replay got and kept are not asked for again) and reported to sink, and the
	// Reread holds the new read's tape, if it has one. Errors are CollectScope's, and
	// again.Full's.
	CollectScopeAgain(ctx context.Context, id string, again Again, sink Sink) (Reread, error)
}

// Again is what a read again starts from.
type Again struct {
	// Tape is the tape the scope's last read returned; nil: none.
	Tape []byte
	// Full, when set, is called before the scope is read in full (without a tape, or
	// once its replay found a change), and the release it returns once that read is
	// done: a full read decodes and holds the whole scope, where a replay waits on its
	// cloud's rate limits holding little, so a caller that runs many reads at once
	// bounds the full ones.
	Full func(ctx context.Context) (release func(), err error)
}

// Reread is what CollectScopeAgain did.
type Reread struct {
	// Unchanged says the tape's requests were answered as they were then: the scope is
	// as its last read saw it, and nothing was reported.
	Unchanged bool
	// Calls counts the replay's calls when Unchanged (a read reports its own calls with
	// its scope), and Throttled those of them the cloud refused for their rate, each
	// asked again.
	Calls, Throttled int
	// Tape is the record of this read, for the next (nil when Unchanged, or when the
	// read cannot be replayed: Why says why).
	Tape []byte
	// Why says why the scope was read and not found unchanged, or why its read has no
	// tape: for logs.
	Why string
}
