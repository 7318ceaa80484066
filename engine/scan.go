package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/open-policy-agent/opa/v1/ast"
	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/urgency"
	"github.com/warden-sec/warden/snapshot"
)

// Result is what one evaluation produced.
type Result struct {
	Header    snapshot.Header
	Now       time.Time // the time policies measured ages against
	Resources int
	// ByType counts the resources of each type.
	ByType     map[string]int
	Findings   []findings.Finding
	EvalErrors []findings.EvalError
}

// Options tune one evaluation.
type Options struct {
	// Now is the time policies measure ages against; zero means the snapshot's
	// collected_at, or the current time when the snapshot has none.
	Now time.Time
	// Progress, when set, is called from one goroutine with the number of resources
	// evaluated so far.
	Progress func(done int)
}

const batchSize = 256

type batch struct {
	seq   int
	elems []snapshot.Element
}

type batchResult struct {
	seq      int
	uids     []uint64
	lines    []int // the line each resource starts on, for errors
	first    int   // index of the batch's first element
	types    map[string]int
	scopes   map[string]scopeUse // first resource of each scope seen
	findings []findings.Finding
	errs     []findings.EvalError
}

// Scan streams a snapshot through the policies: one goroutine reads, the workers parse,
// check and evaluate, so memory stays bounded by the batches in flight and the findings.
// A malformed resource stops the scan with an error naming its line and field.
//
// A cancelled ctx ends the scan with ctx's error and no result: never a partial one
// that would read as complete. A policy that fails on a resource, runs past the
// deadline or the memory limit is an eval error for that policy and resource; the
// other policies' results for it still count.
func (e *Engine) Scan(ctx context.Context, rd *snapshot.Reader, opts Options) (*Result, error) {
	parent := ctx
	g, ctx := errgroup.WithContext(ctx)
	jobs := make(chan batch, e.workers*2)
	results := make(chan batchResult, e.workers*2)
	var (
		headerOnce sync.Once
		ev         *evaluation
		snapInfo   *ast.Term
		now        time.Time
		collected  time.Time
		ready      = make(chan struct{})
		// readFailed: the snapshot was refused before its first resource (empty,
		// garbage, another version), and only that error is worth saying.
		readFailed bool
	)
	setup := func() {
		h := rd.Header()
		collected = h.CollectedAt
		now = opts.Now
		if now.IsZero() {
			now = h.CollectedAt
		}
		if now.IsZero() {
			now = time.Now()
			if !readFailed {
				e.log.Warn("snapshot has no collected_at: ages are measured from now", "snapshot", rd.Name())
			}
		}
		ev = e.newEvaluation(ctx, e.workers, now)
		snapInfo = snapshotTerm(h, now)
		close(ready)
	}
	defer func() {
		if ev != nil {
			ev.close()
		}
	}()

	g.Go(func() error {
		defer close(jobs)
		defer headerOnce.Do(setup)
		seq := 0
		b := batch{elems: make([]snapshot.Element, 0, batchSize)}
		for {
			el, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				readFailed = true
				return err
			}
			headerOnce.Do(setup)
			b.elems = append(b.elems, el)
			if len(b.elems) == batchSize {
				select {
				case jobs <- b:
				case <-ctx.Done():
					return ctx.Err()
				}
				seq++
				b = batch{seq: seq, elems: make([]snapshot.Element, 0, batchSize)}
			}
		}
		if len(b.elems) > 0 {
			select {
			case jobs <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})

	var wg sync.WaitGroup
	for slot := range e.workers {
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			p := snapshot.NewParser(rd.Name())
			conv := newConverter()
			for b := range jobs {
				<-ready
				p.SetCollectedAt(collected)
				br := batchResult{seq: b.seq, first: b.elems[0].Index, types: map[string]int{}, scopes: map[string]scopeUse{}, uids: make([]uint64, len(b.elems)), lines: make([]int, len(b.elems))}
				for i, el := range b.elems {
					res, v, err := p.Parse(el)
					if err != nil {
						return err
					}
					br.uids[i] = xxhash.Sum64String(res.Account + "\x00" + res.UID)
					br.lines[i] = el.Line
					br.types[res.Type]++
					if _, ok := br.scopes[res.Scope]; !ok {
						br.scopes[res.Scope] = scopeUse{index: el.Index, line: el.Line}
					}
					te := e.byType[res.Type]
					if te == nil {
						continue
					}
					fs, errs, err := ev.resource(ctx, slot, te, &res, inputOf(conv.term(v), snapInfo))
					if err != nil {
						return err
					}
					br.findings = append(br.findings, fs...)
					br.errs = append(br.errs, errs...)
				}
				select {
				case results <- br:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	out := &Result{ByType: map[string]int{}}
	scopes := map[string]scopeUse{}
	var dupErr error
	g.Go(func() error {
		type at struct{ index, line int }
		seen := make(map[uint64]at, 1<<16)
		for br := range results {
			for i, h := range br.uids {
				if prev, ok := seen[h]; ok && dupErr == nil {
					dupErr = fmt.Errorf("read snapshot %s: line %d: resources[%d].uid: duplicate resource: same account and uid as resources[%d] (line %d)",
						rd.Name(), br.lines[i], br.first+i, prev.index, prev.line)
				}
				seen[h] = at{br.first + i, br.lines[i]}
			}
			out.Resources += len(br.uids)
			for t, n := range br.types {
				out.ByType[t] += n
			}
			for sc, u := range br.scopes {
				if prev, ok := scopes[sc]; !ok || u.index < prev.index {
					scopes[sc] = u
				}
			}
			out.Findings = append(out.Findings, br.findings...)
			out.EvalErrors = append(out.EvalErrors, br.errs...)
			if opts.Progress != nil {
				opts.Progress(out.Resources)
			}
		}
		return nil
	})
	err := g.Wait()
	if cerr := parent.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	out.Header = rd.Header()
	out.Now = now
	if err := checkScopes(rd.Name(), out.Header, scopes); err != nil {
		return nil, err
	}
	findings.Sort(out.Findings)
	sortEvalErrors(out.EvalErrors)
	return out, nil
}

func sortEvalErrors(errs []findings.EvalError) {
	slices.SortFunc(errs, func(a, b findings.EvalError) int {
		if c := strings.Compare(a.Resource, b.Resource); c != 0 {
			return c
		}
		return strings.Compare(a.Policy, b.Policy)
	})
}

// Evaluate evaluates resources already in memory — the ones that changed since the last
// scan, for the daemon — at time now. Resources are checked as a snapshot would be.
// Under a context that yields to urgent work (urgency.WithGate), it waits every few
// dozen resources while such work runs.
func (e *Engine) Evaluate(ctx context.Context, h snapshot.Header, now time.Time, resources []snapshot.Resource) (*Result, error) {
	out := &Result{Header: h, Now: now, ByType: map[string]int{}}
	ev := e.newEvaluation(ctx, 1, now)
	defer ev.close()
	snapInfo := snapshotTerm(h, now)
	// Each resource goes through the JSON a snapshot holds, and the scan's own parser and
	// converter: checked as reading it would check it, and judged exactly as `warden
	// scan` judges it in a file, in one encoding and one parse.
	p := snapshot.NewParser("evaluate")
	conv := newConverter()
	for i := range resources {
		if err := urgency.YieldEvery(ctx, i, yieldEvery); err != nil {
			return nil, err
		}
		res := resources[i]
		if !snapshot.KnownType(res.Type) {
			return nil, fmt.Errorf("evaluate resource %s: unknown resource type %q", res.UID, res.Type)
		}
		if res.Scope == "" {
			res.Scope = snapshot.DefaultScope(res.Type, res.Account, res.Region)
		}
		data, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("evaluate resource %s: %w", res.UID, err)
		}
		_, v, err := p.Parse(snapshot.Element{Line: 1, Data: data})
		if err != nil {
			return nil, fmt.Errorf("evaluate resource %s: %w", res.UID, err)
		}
		out.Resources++
		out.ByType[res.Type]++
		te := e.byType[res.Type]
		if te == nil {
			continue
		}
		fs, errs, err := ev.resource(ctx, 0, te, &res, inputOf(conv.term(v), snapInfo))
		if err != nil {
			return nil, err
		}
		out.Findings = append(out.Findings, fs...)
		out.EvalErrors = append(out.EvalErrors, errs...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	findings.Sort(out.Findings)
	sortEvalErrors(out.EvalErrors)
	return out, nil
}

// yieldEvery is how many resources Evaluate judges between its yields to urgent work
// (internal/urgency): a few milliseconds of a core. A sweep's first read of a large
// scope is its longest step on a core, and an event's refresh and fix, which go first
// everywhere else, waited for the cores behind it.
const yieldEvery = 64

// inputOf is what a policy sees as input: the resource and the snapshot it belongs to.
func inputOf(resource, snap *ast.Term) ast.Value {
	return ast.NewObject(
		[2]*ast.Term{ast.StringTerm("resource"), resource},
		[2]*ast.Term{ast.StringTerm("snapshot"), snap},
	)
}

// snapshotTerm is input.snapshot: what policies may know of the snapshot as a whole.
func snapshotTerm(h snapshot.Header, now time.Time) *ast.Term {
	accounts := make([]*ast.Term, 0, len(h.Accounts))
	for _, a := range h.Accounts {
		accounts = append(accounts, ast.StringTerm(a))
	}
	return ast.ObjectTerm(
		[2]*ast.Term{ast.StringTerm("accounts"), ast.ArrayTerm(accounts...)},
		[2]*ast.Term{ast.StringTerm("collected_at"), ast.StringTerm(now.UTC().Format(time.RFC3339))},
	)
}

// scopeUse is where a scope's first resource stands in the snapshot.
type scopeUse struct {
	index, line int
}

// checkScopes refuses duplicate scopes; resources whose scope the snapshot does not
// declare once it declares any, since a resource outside every scope could never be told
// apart from one whose scope failed; and resources of a failed scope, which by contract
// are unknown: collectors never write them, and evaluating them would store findings as
// open (and count them) for what was not read.
func checkScopes(name string, h snapshot.Header, used map[string]scopeUse) error {
	if len(h.Scopes) == 0 {
		return nil
	}
	ids := map[string]int{}
	for i, s := range h.Scopes {
		if _, ok := ids[s.ID]; ok {
			return fmt.Errorf("read snapshot %s: scopes[%d].id: duplicate scope %q", name, i, s.ID)
		}
		ids[s.ID] = i
	}
	var bad []string
	for sc := range used {
		if i, ok := ids[sc]; !ok || h.Scopes[i].Status == snapshot.ScopeFailed {
			bad = append(bad, sc)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.SortFunc(bad, func(a, b string) int { return used[a].index - used[b].index })
	u := used[bad[0]]
	i, declared := ids[bad[0]]
	err := &snapshot.Error{File: name, Line: u.line, Field: fmt.Sprintf("resources[%d].scope", u.index)}
	if !declared {
		err.Msg = fmt.Sprintf("scope %q is not declared in \"scopes\"", bad[0])
	} else {
		err.Msg = fmt.Sprintf("scope %q failed (scopes[%d].status): its resources are unknown, a snapshot must not list any", bad[0], i)
	}
	return err
}
