package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/warden-sec/warden/store"
)

// ErrTampered is what every *TamperError is (errors.Is): the log is not what was written.
var ErrTampered = errors.New("audit log tampered")

// TamperError says what is wrong with a log, starting from its first bad entry.
type TamperError struct {
	// Seq is the first bad entry, or -1 when the problem is no entry's (a checkpoint
	// whose signature fails names none).
	Seq int64
	// Checkpoint names the checkpoint that showed the problem ("stored checkpoint 3",
	// "given checkpoint 1"), or is empty.
	Checkpoint string
	// Reason says what is wrong.
	Reason string
}

// Error names the first bad entry and what is wrong with it.
func (e *TamperError) Error() string {
	where := "audit log"
	if e.Seq >= 0 {
		where = fmt.Sprintf("audit log: entry %d", e.Seq)
	}
	if e.Checkpoint != "" {
		where += " (" + e.Checkpoint + ")"
	}
	return where + ": " + e.Reason
}

// Is makes every TamperError an ErrTampered.
func (e *TamperError) Is(target error) bool { return target == ErrTampered }

// Report sums up a verification.
type Report struct {
	// Origin is the log's name, as its checkpoints' first line; empty until the first
	// checkpoint is signed.
	Origin string
	// Entries is how many entries were checked: the log's size when it verified.
	Entries int64
	// Root is the tree hash of those entries.
	Root tlog.Hash
	// Checkpoints is how many stored checkpoints were checked; Given how many given ones.
	Checkpoints, Given int
	// Problems lists what was found wrong, the first bad entry first; the error Verify
	// returns is Problems[0].
	Problems []*TamperError
}

// verifyChunk is how many entries Verify reads per query: large enough that queries
// cost little, small enough that memory stays flat.
const verifyChunk = 16384

// storedCheckpoint is one row of audit_checkpoints.
type storedCheckpoint struct {
	id         int64
	size       int64
	root, at   string
	signedNote string
}

// Verify recomputes every leaf hash from the stored entries and every tree hash from
// the leaves, checks them against the stored hashes, checks every stored checkpoint's
// signature with v and its consistency with the log (tlog.ProveTree, tlog.CheckTree),
// and does the same for the extra checkpoints given (signed notes, such as a copy kept
// elsewhere). An edit, deletion, reordering or truncation is a *TamperError (errors.Is
// ErrTampered) naming the first bad entry and what is wrong; any other error means the
// log could not be read. Entries are streamed: memory stays flat with the log's size.
// v may be nil only when there is no checkpoint to check.
func (l *Log) Verify(ctx context.Context, v note.Verifier, extra ...[]byte) (Report, error) {
	var rep Report
	err := l.st.Read(ctx, func(r *store.Reader) error {
		// Checkpoints first: one signed after this read covers entries the bounds
		// below may not, but none read here can cover more than they do.
		cps, err := readCheckpoints(ctx, r)
		if err != nil {
			return err
		}
		if rep.Origin, err = l.originRead(ctx, r); err != nil {
			return err
		}
		var maxSeq, maxIdx int64
		// One statement, so that both bounds come from one snapshot of the database.
		if err := r.QueryRowContext(ctx, `SELECT (SELECT COALESCE(MAX(seq), -1) FROM audit_entries), (SELECT COALESCE(MAX(idx), -1) FROM audit_hashes)`).Scan(&maxSeq, &maxIdx); err != nil {
			return fmt.Errorf("read the log's size: %w", err)
		}
		n := maxSeq + 1
		rep.Entries = n
		t := &treeCheck{}
		if p, err := t.run(ctx, r, n); err != nil || p != nil {
			if p != nil {
				rep.Problems = append(rep.Problems, p)
			}
			return err
		}
		rep.Root = t.root()
		if want := tlog.StoredHashCount(n); maxIdx+1 > want {
			covered := n
			for tlog.StoredHashCount(covered) < maxIdx+1 {
				covered++
			}
			rep.Problems = append(rep.Problems, &TamperError{Seq: n, Reason: fmt.Sprintf(
				"the log holds %d entries but its stored hashes cover %d: entries %d-%d were deleted (truncated)", n, covered, n, covered-1)})
			return nil
		}
		// The stored hashes are now known to match the entries, so proofs read from them
		// are proofs about the entries.
		cc := checkpointCheck{v: v, origin: rep.Origin, n: n, root: rep.Root, hr: hashReader(ctx, r)}
		for _, c := range cps {
			label := fmt.Sprintf("stored checkpoint %d, signed %s", c.id, c.at)
			if cp, ok := cc.check(label, []byte(c.signedNote)); ok && (c.size != cp.Size || c.root != cp.Root.String()) {
				cc.problems = append(cc.problems, &TamperError{Seq: -1, Checkpoint: label,
					Reason: fmt.Sprintf("its size or root column (%d, %s) differs from its signed text (%d, %s): the row was edited", c.size, c.root, cp.Size, cp.Root)})
			}
			rep.Checkpoints++
		}
		for i, signed := range extra {
			cc.check(fmt.Sprintf("given checkpoint %d", i+1), signed)
			rep.Given++
		}
		rep.Problems = append(rep.Problems, cc.finish()...)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("verify audit log: %w", err)
	}
	if len(rep.Problems) > 0 {
		return rep, rep.Problems[0]
	}
	return rep, nil
}

// firstEntryFirst orders problems so that the one naming the lowest entry comes first,
// then those naming none, each group in the order found.
func firstEntryFirst(ps []*TamperError) []*TamperError {
	out := make([]*TamperError, 0, len(ps))
	best := -1
	for i, p := range ps {
		if p.Seq >= 0 && (best < 0 || p.Seq < ps[best].Seq) {
			best = i
		}
	}
	if best >= 0 {
		out = append(out, ps[best])
	}
	for i, p := range ps {
		if i != best {
			out = append(out, p)
		}
	}
	return out
}

// checkpointCheck checks signed checkpoints against a log of n entries whose stored
// hashes are verified and whose tree hash is root.
type checkpointCheck struct {
	v      note.Verifier
	origin string
	n      int64
	root   tlog.Hash
	hr     tlog.HashReader

	problems []*TamperError
	// rewritten are the problems of checkpoints whose tree is no prefix of the log's,
	// with the size each signed; intact the sizes of those whose tree is.
	rewritten map[*TamperError]int64
	intact    []int64
}

// check checks one signed checkpoint, recording any problem; it returns the checkpoint
// and whether its signature verified and its text parsed.
func (cc *checkpointCheck) check(label string, signed []byte) (Checkpoint, bool) {
	bad := func(seq int64, format string, args ...any) *TamperError {
		p := &TamperError{Seq: seq, Checkpoint: label, Reason: fmt.Sprintf(format, args...)}
		cc.problems = append(cc.problems, p)
		return p
	}
	if cc.v == nil {
		bad(-1, "no verifier key to check its signature with")
		return Checkpoint{}, false
	}
	nt, err := note.Open(signed, note.VerifierList(cc.v))
	if err != nil {
		bad(-1, "its signature does not verify with key %s: %v", cc.v.Name(), err)
		return Checkpoint{}, false
	}
	c, err := ParseCheckpoint(nt.Text)
	if err != nil {
		bad(-1, "%v", err)
		return Checkpoint{}, false
	}
	switch {
	case cc.origin == "":
		bad(-1, "it is for log %q, but this log has no log id (it never had an entry, or its audit_meta row was deleted)", c.Origin)
	case c.Origin != cc.origin:
		bad(-1, "it is for log %q, not this log (%q)", c.Origin, cc.origin)
	case c.Size > cc.n:
		bad(cc.n, "it was signed over %d entries but the log holds %d: entries %d-%d were deleted (truncated)", c.Size, cc.n, cc.n, c.Size-1)
	default:
		var err error
		switch {
		case c.Size == 0:
			// A checkpoint of the empty log proves nothing about the entries since; its
			// root is the empty tree's.
			if empty, _ := tlog.TreeHash(0, nil); c.Root != empty {
				err = errors.New("root hash of the empty log differs")
			}
		case c.Size == cc.n:
			if c.Root != cc.root {
				err = errors.New("root hash differs")
			}
		default:
			var proof tlog.TreeProof
			if proof, err = tlog.ProveTree(cc.n, c.Size, cc.hr); err == nil {
				err = tlog.CheckTree(proof, cc.n, cc.root, c.Size, c.Root)
			}
		}
		if err != nil {
			p := bad(0, "the log's first %d entries no longer hash to the root it signed (%v)", c.Size, err)
			if cc.rewritten == nil {
				cc.rewritten = map[*TamperError]int64{}
			}
			cc.rewritten[p] = c.Size
		} else {
			cc.intact = append(cc.intact, c.Size)
		}
	}
	return c, true
}

// finish returns the problems found, the one naming the lowest entry first. A
// rewritten prefix names the first entry no intact checkpoint vouches for: entries and
// stored hashes rewritten together leave nothing finer to go on.
func (cc *checkpointCheck) finish() []*TamperError {
	for p, size := range cc.rewritten {
		var from int64
		for _, s := range cc.intact {
			if s < size && s > from {
				from = s
			}
		}
		p.Seq = from
		p.Reason += fmt.Sprintf(": an entry in %d-%d was rewritten, and the stored hashes with it", from, size-1)
	}
	return firstEntryFirst(cc.problems)
}

// readCheckpoints reads every stored checkpoint, oldest first.
func readCheckpoints(ctx context.Context, r *store.Reader) ([]storedCheckpoint, error) {
	rows, err := r.QueryContext(ctx, `SELECT id, size, root, created_at, note FROM audit_checkpoints ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	var out []storedCheckpoint
	for rows.Next() {
		var c storedCheckpoint
		if err := rows.Scan(&c.id, &c.size, &c.root, &c.at, &c.signedNote); err != nil {
			return nil, fmt.Errorf("read checkpoints: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	return out, nil
}

// treeCheck rebuilds the tree from the entries, one leaf at a time, keeping only the
// roots of its complete subtrees (at most log₂ n hashes).
type treeCheck struct {
	// frontier holds the roots of the complete subtrees, largest (leftmost) first.
	frontier []tlog.Hash
	// stored holds one chunk's stored hashes, from index base; have says which exist.
	stored []tlog.Hash
	have   []bool
	base   int64
	rec    []byte
}

// run checks entries 0..n-1 and their stored hashes, chunk by chunk, and returns the
// first problem found.
func (t *treeCheck) run(ctx context.Context, r *store.Reader, n int64) (*TamperError, error) {
	for lo := int64(0); lo < n; lo += verifyChunk {
		hi := min(lo+verifyChunk, n)
		if err := t.loadHashes(ctx, r, tlog.StoredHashIndex(0, lo), tlog.StoredHashIndex(0, hi)); err != nil {
			return nil, err
		}
		if p, err := t.entries(ctx, r, lo, hi); err != nil || p != nil {
			return p, err
		}
	}
	return nil, nil
}

// loadHashes reads the stored hashes with index in [from, to).
func (t *treeCheck) loadHashes(ctx context.Context, r *store.Reader, from, to int64) error {
	size := int(to - from)
	t.base = from
	t.stored = append(t.stored[:0], make([]tlog.Hash, size)...)
	t.have = append(t.have[:0], make([]bool, size)...)
	rows, err := r.QueryContext(ctx, `SELECT idx, hash FROM audit_hashes WHERE idx >= ? AND idx < ? ORDER BY idx`, from, to)
	if err != nil {
		return fmt.Errorf("read stored hashes %d-%d: %w", from, to-1, err)
	}
	defer rows.Close()
	var idx int64
	var raw sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&idx, &raw); err != nil {
			return fmt.Errorf("read stored hashes %d-%d: %w", from, to-1, err)
		}
		// A hash of the wrong length stays absent: it matches nothing.
		if len(raw) == tlog.HashSize {
			t.stored[idx-from] = tlog.Hash(raw)
			t.have[idx-from] = true
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read stored hashes %d-%d: %w", from, to-1, err)
	}
	return nil
}

// entries checks entries [lo, hi) against the loaded stored hashes.
func (t *treeCheck) entries(ctx context.Context, r *store.Reader, lo, hi int64) (*TamperError, error) {
	rows, err := r.QueryContext(ctx, `SELECT seq, at, actor, kind, subject, data FROM audit_entries WHERE seq >= ? AND seq < ? ORDER BY seq`, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("read entries %d-%d: %w", lo, hi-1, err)
	}
	defer rows.Close()
	next := lo
	var seq int64
	var at, actor, kind, subject, data sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&seq, &at, &actor, &kind, &subject, &data); err != nil {
			return nil, fmt.Errorf("read entry %d: %w", next, err)
		}
		if seq != next {
			return missing(next, seq), nil
		}
		t.rec = appendRecord(t.rec[:0], seq, at, actor, kind, subject, data)
		if p := t.add(seq, tlog.RecordHash(t.rec)); p != nil {
			return p, nil
		}
		next++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read entries %d-%d: %w", lo, hi-1, err)
	}
	if next < hi {
		return missing(next, hi), nil
	}
	return nil, nil
}

// missing reports entry seq absent, the next stored one being next.
func missing(seq, next int64) *TamperError {
	if next == seq+1 {
		return &TamperError{Seq: seq, Reason: "the entry is missing (deleted)"}
	}
	return &TamperError{Seq: seq, Reason: fmt.Sprintf("entries %d-%d are missing (deleted)", seq, next-1)}
}

// add adds leaf n with hash leaf to the tree and checks every hash its append stored,
// in tlog.StoredHashes's order: the leaf, then each subtree it completes.
func (t *treeCheck) add(n int64, leaf tlog.Hash) *TamperError {
	idx := tlog.StoredHashIndex(0, n)
	if p := t.compare(idx, 0, n, leaf); p != nil {
		return p
	}
	h := leaf
	for level := 0; n>>level&1 == 1; level++ {
		top := len(t.frontier) - 1
		h = tlog.NodeHash(t.frontier[top], h)
		t.frontier = t.frontier[:top]
		idx++
		if p := t.compare(idx, level+1, n, h); p != nil {
			return p
		}
	}
	t.frontier = append(t.frontier, h)
	return nil
}

// compare checks the stored hash at idx, of the node at level completed by leaf n.
func (t *treeCheck) compare(idx int64, level int, n int64, want tlog.Hash) *TamperError {
	i := idx - t.base
	first := n >> level << level
	if i < 0 || i >= int64(len(t.stored)) || !t.have[i] {
		if level == 0 {
			return &TamperError{Seq: n, Reason: fmt.Sprintf("its stored leaf hash (index %d) is missing", idx)}
		}
		return &TamperError{Seq: first, Reason: fmt.Sprintf("the stored hash over entries %d-%d (index %d, level %d) is missing", first, n, idx, level)}
	}
	if t.stored[i] == want {
		return nil
	}
	if level == 0 {
		return &TamperError{Seq: n, Reason: "the entry does not hash to its stored leaf hash: it was edited or moved (reordered), or its stored hash was"}
	}
	return &TamperError{Seq: first, Reason: fmt.Sprintf("the stored hash over entries %d-%d (index %d, level %d) does not match them: the tree's hashes were edited", first, n, idx, level)}
}

// root is the tree hash of the leaves added: the complete subtrees folded from the right.
func (t *treeCheck) root() tlog.Hash {
	if len(t.frontier) == 0 {
		h, _ := tlog.TreeHash(0, nil)
		return h
	}
	h := t.frontier[len(t.frontier)-1]
	for i := len(t.frontier) - 2; i >= 0; i-- {
		h = tlog.NodeHash(t.frontier[i], h)
	}
	return h
}
