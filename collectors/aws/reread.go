package aws

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/buildinfo"
	"github.com/warden-sec/warden/snapshot"
)

var _ collectors.Rereader = (*Collector)(nil)

// CollectScopeAgain implements collectors.Rereader: with the tape of the scope's last
// read, it first sends that read's requests again (awsapi.Account.Replay); answered as
// they were, the scope is unchanged, and nothing is decoded or reported. Otherwise it
// reads the scope as CollectScope does, taking the answers the replay already got
// instead of asking again, and returns the new read's tape.
//
// A tape holds under a tag: the scope, this collector's configuration, warden's
// version and the day (UTC), so that a read never stands in for one made with other
// settings, by other code, or on another day. An IAM scope that collects usage has no
// tape: its reads depend on this process's usage cache and on Access Advisor's jobs,
// which are new each time.
func (c *Collector) CollectScopeAgain(ctx context.Context, id string, again collectors.Again, sink collectors.Sink) (collectors.Reread, error) {
	var out collectors.Reread
	full := func(ctx context.Context, read readScope, sink collectors.Sink) error {
		if again.Full != nil {
			release, err := again.Full(ctx)
			if err != nil {
				return err
			}
			defer release()
		}
		return read(ctx, sink)
	}
	err := c.collectScope(ctx, id, sink, func(ctx context.Context, a *account, service string, read readScope) error {
		if service == "iam" && c.cfg.Usage.Enabled {
			out.Why = "an IAM scope that collects usage is not replayed"
			return full(ctx, read, sink)
		}
		tag := c.tapeTag(id, time.Now())
		var replayed *awsapi.Replayed
		if len(again.Tape) > 0 {
			rep, err := a.api.Replay(ctx, again.Tape, tag, readsOf(service))
			if err != nil {
				return err
			}
			if rep.Refused {
				c.log.Warn("a scope's tape holds a request warden does not replay: read in full (was the store altered?)",
					"scope", id, "why", rep.Why)
			}
			if rep.Same {
				rep.Release()
				out.Unchanged, out.Calls, out.Throttled = true, rep.Calls, rep.Throttled
				return nil
			}
			out.Why, replayed = rep.Why, rep
			defer rep.Release()
		}
		rctx, rec := awsapi.Record(ctx, replayed)
		readSink := sink
		if replayed != nil {
			// The read's scope counts its calls as its SDK clients made them, answers
			// taken from the replay included; AWS answered the replay's calls instead.
			readSink = &replayedCalls{Sink: sink, calls: func() int { return replayed.Calls - rec.Served() }, throttled: replayed.Throttled}
		}
		if err := full(rctx, read, readSink); err != nil {
			return err
		}
		var why string
		if out.Tape, why = rec.Tape(tag); why != "" && out.Why == "" {
			out.Why = why
		}
		return nil
	})
	return out, err
}

// readsOf are the operations a replay of a scope of service may send: the collector's
// reads of that service, and nothing else.
func readsOf(service string) []string {
	var out []string
	for _, p := range Permissions() {
		if strings.HasPrefix(p, service+":") {
			out = append(out, p)
		}
	}
	return out
}

// tapeTag is what a tape of scope id, recorded at, holds under.
func (c *Collector) tapeTag(id string, at time.Time) string {
	return fmt.Sprintf("%s %s %s", id, at.UTC().Format(time.DateOnly), c.settings())
}

// settingsDigest digests what a read depends on besides its answers and its day: the
// collector's configuration and warden's build. Neither changes while it runs, so the
// collector computes it once (settings), after its sessions are open.
func (c *Collector) settingsDigest() string {
	bi := buildinfo.Read("", "")
	modified := bi.Modified != nil && *bi.Modified
	cfg, _ := json.Marshal(struct {
		Regions    []string
		Org        bool
		OrgRole    string
		Endpoint   string
		Usage      UsageConfig
		Version    string
		Revision   string
		Modified   bool
		GoVersion  string
		Collecting string
	}{c.cfg.Regions, c.cfg.Org, c.cfg.OrgRole, c.sessions.Endpoint(), c.cfg.Usage, bi.Version, bi.Revision, modified, bi.GoVersion, "aws/1"})
	return fmt.Sprintf("%x", sha256.Sum256(cfg))
}

// replayedCalls is a sink whose scopes count, besides their read's calls, those of the
// replay before it that the read did not take an answer from, and the replay's
// throttled calls.
type replayedCalls struct {
	collectors.Sink
	calls     func() int
	throttled int
}

func (s *replayedCalls) Scope(sc snapshot.Scope) {
	sc.Calls += s.calls()
	sc.Throttled += s.throttled
	s.Sink.Scope(sc)
}
