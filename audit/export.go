package audit

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/store"
)

// ExportFormat names the export's layout, in its first line.
const ExportFormat = "warden-audit-export/1"

// ExportHeader is an export's first line: the signed checkpoint every proof is against.
type ExportHeader struct {
	Format string `json:"format"`
	// Checkpoint is the signed note (C2SP tlog-checkpoint).
	Checkpoint string `json:"checkpoint"`
}

// ExportLine is one entry of an export: its canonical record (the exact bytes the leaf
// hash covers, as a JSON string), its leaf hash and its inclusion proof (RFC 6962 audit
// path, tlog.RecordProof) in the tree of the header's checkpoint.
type ExportLine struct {
	Seq      int64       `json:"seq"`
	Record   string      `json:"record"`
	LeafHash tlog.Hash   `json:"leaf_hash"`
	Proof    []tlog.Hash `json:"proof"`
}

// exportChunk is how many entries Export reads per query.
const exportChunk = 1 << 14

// ExportTo writes the export (Export) against checkpoint, or against one signed now
// when checkpoint is nil, so that the export holds every entry (this needs the log's
// Signer): to the file path, whole or not at all, or to w when path is empty.
func (l *Log) ExportTo(ctx context.Context, w io.Writer, path string, checkpoint []byte) error {
	if checkpoint == nil {
		var err error
		if checkpoint, err = l.Checkpoint(ctx); err != nil {
			return err
		}
	}
	if path == "" {
		return l.Export(ctx, w, checkpoint)
	}
	return atomicfile.Write(path, func(f io.Writer) error {
		bw := bufio.NewWriter(f)
		if err := l.Export(ctx, bw, checkpoint); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// Export writes the log as JSON Lines: an ExportHeader holding checkpoint (a signed
// checkpoint of this log; nil means the latest stored one), then one ExportLine per
// entry the checkpoint covers, in seq order. Anyone holding the verifier key can check
// it with VerifyExport, without warden's database. The checkpoint must match this log.
func (l *Log) Export(ctx context.Context, w io.Writer, checkpoint []byte) error {
	if checkpoint == nil {
		var err error
		if checkpoint, err = l.LatestCheckpoint(ctx); err != nil {
			return fmt.Errorf("export audit log: %w", err)
		}
		if checkpoint == nil {
			return errors.New("export audit log: no checkpoint was ever signed ('warden audit checkpoint' signs one)")
		}
	}
	c, err := parseSigned(checkpoint)
	if err != nil {
		return fmt.Errorf("export audit log: the checkpoint: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	err = l.st.Read(ctx, func(r *store.Reader) error {
		origin, err := l.originRead(ctx, r)
		if err != nil {
			return err
		}
		if c.Origin != origin {
			return fmt.Errorf("the checkpoint is for log %q, not this log (%q)", c.Origin, origin)
		}
		hr := &exportHashes{ctx: ctx, r: r, cache: map[int64]tlog.Hash{}}
		root, err := tlog.TreeHash(c.Size, hr)
		if err != nil {
			return fmt.Errorf("tree hash of %d entries: %w", c.Size, err)
		}
		if root != c.Root {
			return fmt.Errorf("the checkpoint's root for %d entries is not this log's ('warden audit verify' says why)", c.Size)
		}
		enc := json.NewEncoder(bw)
		if err := enc.Encode(ExportHeader{Format: ExportFormat, Checkpoint: string(checkpoint)}); err != nil {
			return err
		}
		for lo := int64(0); lo < c.Size; lo += exportChunk {
			hi := min(lo+exportChunk, c.Size)
			if err := hr.load(tlog.StoredHashIndex(0, lo), tlog.StoredHashIndex(0, hi)); err != nil {
				return err
			}
			lines, err := exportEntries(ctx, r, lo, hi)
			if err != nil {
				return err
			}
			for i := range lines {
				ln := &lines[i]
				ln.LeafHash = tlog.RecordHash([]byte(ln.Record))
				if ln.Proof, err = tlog.ProveRecord(c.Size, ln.Seq, hr); err != nil {
					return fmt.Errorf("prove entry %d: %w", ln.Seq, err)
				}
				if err := enc.Encode(ln); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("export audit log: %w", err)
	}
	return nil
}

// exportEntries reads entries [lo, hi) as export lines without hashes or proofs.
func exportEntries(ctx context.Context, r *store.Reader, lo, hi int64) ([]ExportLine, error) {
	rows, err := r.QueryContext(ctx, `SELECT seq, at, actor, kind, subject, data FROM audit_entries WHERE seq >= ? AND seq < ? ORDER BY seq`, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("read entries %d-%d: %w", lo, hi-1, err)
	}
	defer rows.Close()
	out := make([]ExportLine, 0, hi-lo)
	var seq int64
	var at, actor, kind, subject, data sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&seq, &at, &actor, &kind, &subject, &data); err != nil {
			return nil, fmt.Errorf("read entry %d: %w", lo+int64(len(out)), err)
		}
		if want := lo + int64(len(out)); seq != want {
			return nil, fmt.Errorf("entry %d is missing ('warden audit verify' says more)", want)
		}
		out = append(out, ExportLine{Seq: seq, Record: string(appendRecord(nil, seq, at, actor, kind, subject, data))})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read entries %d-%d: %w", lo, hi-1, err)
	}
	if int64(len(out)) != hi-lo {
		return nil, fmt.Errorf("entry %d is missing ('warden audit verify' says more)", lo+int64(len(out)))
	}
	return out, nil
}

// exportHashes serves the proofs of one chunk of entries: the chunk's own stored hashes
// are read in one query, the few above it one by one and kept.
type exportHashes struct {
	ctx   context.Context
	r     *store.Reader
	base  int64
	chunk []tlog.Hash
	have  []bool
	cache map[int64]tlog.Hash
}

// load reads the stored hashes with index in [from, to).
func (h *exportHashes) load(from, to int64) error {
	t := treeCheck{}
	if err := t.loadHashes(h.ctx, h.r, from, to); err != nil {
		return err
	}
	h.base, h.chunk, h.have = from, t.stored, t.have
	return nil
}

// ReadHashes implements tlog.HashReader.
func (h *exportHashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	var need []int64
	for i, x := range indexes {
		if j := x - h.base; j >= 0 && j < int64(len(h.chunk)) && h.have[j] {
			out[i] = h.chunk[j]
		} else if c, ok := h.cache[x]; ok {
			out[i] = c
		} else {
			need = append(need, x)
		}
	}
	if len(need) == 0 {
		return out, nil
	}
	got, err := readHashes(h.ctx, h.r, need)
	if err != nil {
		return nil, err
	}
	for i, x := range need {
		h.cache[x] = got[i]
	}
	for i, x := range indexes {
		if c, ok := h.cache[x]; ok {
			out[i] = c
		}
	}
	return out, nil
}

// VerifyExport checks an export as a third party can, with nothing but the verifier
// key: the checkpoint's signature, then for every line that its record hashes to its
// leaf hash, that the record is the entry it says it is, and that its inclusion proof
// leads to the checkpoint's root; and that the export holds every entry the checkpoint
// covers, in order. A bad export is an error wrapping ErrTampered that names the line
// and the entry.
func VerifyExport(r io.Reader, v note.Verifier) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return fmt.Errorf("verify export: %w", err)
		}
		return fmt.Errorf("verify export: empty: %w", ErrTampered)
	}
	var hdr ExportHeader
	if err := json.Unmarshal(sc.Bytes(), &hdr); err != nil || hdr.Format != ExportFormat {
		return fmt.Errorf("verify export: line 1 is not a %s header: %w", ExportFormat, ErrTampered)
	}
	c, err := OpenCheckpoint([]byte(hdr.Checkpoint), v)
	if err != nil {
		return fmt.Errorf("verify export: line 1: %v: %w", err, ErrTampered)
	}
	line := 1
	var seq int64
	for sc.Scan() {
		line++
		bad := func(format string, args ...any) error {
			return fmt.Errorf("verify export: line %d (entry %d): %s: %w", line, seq, fmt.Sprintf(format, args...), ErrTampered)
		}
		var ln ExportLine
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ln); err != nil {
			return bad("not an export line: %v", err)
		}
		if ln.Seq != seq {
			return bad("holds entry %d: entries are out of order or missing", ln.Seq)
		}
		if seq >= c.Size {
			return bad("the checkpoint covers only %d entries", c.Size)
		}
		rec := []byte(ln.Record)
		if tlog.RecordHash(rec) != ln.LeafHash {
			return bad("its record does not hash to its leaf hash")
		}
		var fields struct {
			Seq *int64 `json:"seq"`
		}
		if err := json.Unmarshal(rec, &fields); err != nil || fields.Seq == nil || *fields.Seq != seq {
			return bad("its record is not entry %d", seq)
		}
		if err := tlog.CheckRecord(ln.Proof, c.Size, c.Root, seq, ln.LeafHash); err != nil {
			return bad("its inclusion proof does not lead to the checkpoint's root: %v", err)
		}
		seq++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("verify export: line %d: %w", line+1, err)
	}
	if seq != c.Size {
		return fmt.Errorf("verify export: it ends after %d entries but the checkpoint covers %d: %w", seq, c.Size, ErrTampered)
	}
	return nil
}
