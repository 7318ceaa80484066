package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/scan"
)

// JSON writes the result as the finding JSON of DESIGN.md: scan, summary, findings[],
// expired_waivers, incomplete_scopes and eval_errors, in that order. The document is
// built here field by field, not by encoding the result whole, so what else the result
// carries for later steps (its header, its collection) never leaks into the contract;
// testdata/report.json.golden pins it. Findings are encoded one at a time, so that a
// report of a hundred thousand findings is never held in memory as one document.
type JSON struct{}

// Write implements Writer.
func (JSON) Write(w io.Writer, r *scan.Result) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	// Empty lists are written as [], not null, so that consumers need no special case.
	fields := []struct {
		name string
		v    any
	}{
		{"scan", r.Scan},
		{"summary", r.Summary},
		{"findings", nil},
		{"expired_waivers", nonNil(r.ExpiredWaivers)},
		{"incomplete_scopes", nonNil(r.IncompleteScopes)},
		{"eval_errors", nonNil(r.EvalErrors)},
	}
	bw.WriteString("{\n")
	for i, f := range fields {
		bw.WriteString(`  "` + f.name + `": `)
		if f.name == "findings" {
			if err := writeFindings(bw, r.Findings); err != nil {
				return err
			}
		} else if err := writeIndented(bw, f.v); err != nil {
			return err
		}
		if i < len(fields)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// findingsChunk is how many findings one encoder turns into bytes at a time: big enough
// that the hand-offs cost nothing, small enough that what waits to be written stays small.
const findingsChunk = 512

// writeFindings writes fs as a JSON array, one finding at a time, in order. Encoding is
// most of a big report's cost (a scan of a million resources writes hundreds of thousands
// of findings after every worker has finished), so chunks are encoded on every core while
// the finished ones are written; at most two chunks per core wait at once.
func writeFindings(w *bufio.Writer, fs []findings.Finding) error {
	if len(fs) == 0 {
		w.WriteString("[]")
		return nil
	}
	w.WriteString("[\n")
	workers := min(runtime.GOMAXPROCS(0), (len(fs)+findingsChunk-1)/findingsChunk)
	type encoded struct {
		b   []byte
		err error
	}
	// A chunk is started only once it has a place in pending, which holds two per core:
	// that bounds both the encoders at work and the bytes waiting to be written.
	pending := make(chan chan encoded, 2*workers)
	done := make(chan struct{})
	go func() {
		defer close(pending)
		for lo := 0; lo < len(fs); lo += findingsChunk {
			out := make(chan encoded, 1)
			select {
			case pending <- out:
			case <-done:
				return
			}
			go func(lo, hi int) {
				b, err := encodeFindings(fs[lo:hi], hi == len(fs))
				out <- encoded{b, err}
			}(lo, min(lo+findingsChunk, len(fs)))
		}
	}()
	var err error
	for out := range pending {
		e := <-out
		if err == nil && e.err != nil {
			err = e.err
			close(done) // the chunks already started finish into their buffers
		}
		if err == nil {
			w.Write(e.b)
		}
	}
	if err != nil {
		return err
	}
	w.WriteString("  ]")
	return nil
}

// encodeFindings is the lines of fs in the findings array; last says that fs ends it.
func encodeFindings(fs []findings.Finding, last bool) ([]byte, error) {
	var buf bytes.Buffer
	for i := range fs {
		b, err := json.MarshalIndent(&fs[i], "    ", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode finding %s of %s: %w", fs[i].Policy, fs[i].Resource, err)
		}
		buf.WriteString("    ")
		buf.Write(termesc.EscapeJSON(b))
		if !last || i < len(fs)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

func writeIndented(w *bufio.Writer, v any) error {
	b, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(termesc.EscapeJSON(bytes.TrimSpace(b)))
	return err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
