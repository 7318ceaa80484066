package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// fuzzKey is a fixed signer key, so that the exports the fuzzer keeps in its corpus stay
// signed by the key the target verifies with, run after run.
func fuzzKey(tb testing.TB) (note.Signer, note.Verifier) {
	tb.Helper()
	skey, _, err := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)), audit.KeyName)
	if err != nil {
		tb.Fatal(err)
	}
	s, v, err := audit.ParseKey(skey)
	if err != nil {
		tb.Fatal(err)
	}
	return s, v
}

// fuzzExports builds a real log of n entries on SQLite (fixed clock, origin and key: the
// same bytes every run) and returns its exports against a checkpoint at every size in
// sizes, and the canonical records of its entries.
func fuzzExports(tb testing.TB, n int, sizes ...int) (exports [][]byte, records []string, v note.Verifier) {
	tb.Helper()
	signer, v := fuzzKey(tb)
	st := storetest.Open(tb, storetest.Backends(tb)["sqlite"](tb))
	l := audit.New(st, audit.Options{Now: clock(), Signer: signer, Origin: "warden.audit/fuzz"})
	ctx := context.Background()
	var cps [][]byte
	for k := 0; k < n; k++ {
		for _, s := range sizes {
			if s == k {
				cp, err := l.Checkpoint(ctx)
				if err != nil {
					tb.Fatal(err)
				}
				cps = append(cps, cp)
			}
		}
		err := st.InTx(ctx, func(tx *store.Tx) error {
			_, err := l.Append(ctx, tx, audit.Event{Actor: "bob", Kind: audit.KindActionApplied,
				Subject: fmt.Sprintf("action/%d", k), Data: map[string]any{"n": k, "note": "x<y&z\n\"é\""}})
			return err
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	last, err := l.Checkpoint(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	for _, cp := range append(cps, last) {
		var buf bytes.Buffer
		if err := l.Export(ctx, &buf, cp); err != nil {
			tb.Fatal(err)
		}
		exports = append(exports, buf.Bytes())
	}
	full := exports[len(exports)-1]
	for _, line := range strings.Split(strings.TrimSuffix(string(full), "\n"), "\n")[1:] {
		var ln audit.ExportLine
		if err := json.Unmarshal([]byte(line), &ln); err != nil {
			tb.Fatal(err)
		}
		records = append(records, ln.Record)
	}
	return exports, records, v
}

// exportRefusal is the shape of VerifyExport's refusals: each names the line (and entry)
// or says what is missing.
var exportRefusal = regexp.MustCompile(`^verify export: (empty|line \d+\b.*|it ends after \d+ entries but the checkpoint covers \d+): .*`)

// FuzzVerifyExport: an export given to 'warden audit verify --export' never panics the
// verifier; every refusal is ErrTampered and names the line or what is missing; and what
// it accepts holds exactly the log's own records, in order, as many as the signed
// checkpoint covers: nothing the fuzzer makes without the key passes for the log.
func FuzzVerifyExport(f *testing.F) {
	exports, records, v := fuzzExports(f, 9, 0, 1, 4)
	for _, e := range exports {
		f.Add(e)
	}
	full := exports[len(exports)-1]
	lines := strings.SplitAfter(string(full), "\n")
	f.Add([]byte(strings.Join(lines[:len(lines)-2], "")))                         // an entry left out at the end
	f.Add([]byte(lines[0] + strings.Join(lines[2:], "")))                         // the first entry left out
	f.Add([]byte(strings.Replace(string(full), `action/3`, `action/4`, 1)))       // a record edited
	f.Add([]byte(strings.Replace(string(full), `"seq":2,`, `"seq":2,"x":1,`, 1))) // a field added
	f.Add([]byte(""))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, export []byte) {
		err := audit.VerifyExport(bytes.NewReader(export), v)
		if err != nil {
			if !errors.Is(err, audit.ErrTampered) || !exportRefusal.MatchString(err.Error()) {
				t.Fatalf("refusal %q is not ErrTampered naming a line", err)
			}
			return
		}
		got := strings.Split(strings.TrimRight(string(export), "\n"), "\n")[1:]
		if len(got) > len(records) {
			t.Fatalf("accepted %d entries; the log has %d", len(got), len(records))
		}
		for i, line := range got {
			var ln audit.ExportLine
			if err := json.Unmarshal([]byte(line), &ln); err != nil || ln.Record != records[i] {
				t.Fatalf("accepted line %d holding %q (%v), not the log's entry %d", i+2, ln.Record, err, i)
			}
		}
	})
}

// FuzzParseCheckpoint: a checkpoint body (as 'warden audit verify --checkpoint' reads
// it, once its signature is checked) never panics the parser, and what it accepts is
// written back by Text to a body that parses to the same checkpoint.
func FuzzParseCheckpoint(f *testing.F) {
	exports, _, v := fuzzExports(f, 3, 0)
	for _, e := range exports {
		var hdr audit.ExportHeader
		first, _, _ := bytes.Cut(e, []byte("\n"))
		if err := json.Unmarshal(first, &hdr); err != nil {
			f.Fatal(err)
		}
		n, err := note.Open([]byte(hdr.Checkpoint), note.VerifierList(v))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(n.Text)
		f.Add(n.Text + "extension line\n")
	}
	for _, s := range []string{"", "\n", "o\n0\n\n", "o\n-1\nAAAA\n", "o\n01\n" + strings.Repeat("A", 43) + "=\n", "o\n9223372036854775808\nx\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := audit.ParseCheckpoint(text)
		if err != nil {
			return
		}
		if c.Origin == "" || strings.Contains(c.Origin, "\n") || c.Size < 0 {
			t.Fatalf("accepted %+v", c)
		}
		again, err := audit.ParseCheckpoint(c.Text())
		if err != nil || again != c {
			t.Fatalf("Text %q of an accepted checkpoint parses to %+v, %v; want %+v", c.Text(), again, err, c)
		}
		if !strings.HasPrefix(text, c.Text()) && !strings.ContainsAny(text, "\r") {
			t.Fatalf("accepted %q, whose first lines are not its Text %q", text, c.Text())
		}
	})
}

// FuzzParseKey: a key file or $WARDEN_AUDIT_KEY never panics ParseKey; a refusal never
// quotes the key; an accepted key signs notes its own verifier opens, and its verifier's
// text form reads back as the same verifier.
func FuzzParseKey(f *testing.F) {
	for _, seed := range []byte{1, 7, 42} {
		skey, vkey, err := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 64)), audit.KeyName)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(skey)
		f.Add("  " + skey + "\n")
		f.Add(vkey)
		f.Add(skey[:len(skey)-4])
	}
	f.Add("PRIVATE+KEY+a+00000000+AQ==")
	f.Fuzz(func(t *testing.T, text string) {
		signer, verifier, err := audit.ParseKey(text)
		if err != nil {
			parts := strings.SplitN(strings.TrimSpace(text), "+", 5)
			if secret := parts[len(parts)-1]; len(secret) >= 8 && strings.Contains(err.Error(), secret) {
				t.Fatalf("refusal %q quotes the key", err)
			}
			return
		}
		signed, err := note.Sign(&note.Note{Text: "fuzz\n"}, signer)
		if err != nil {
			t.Fatalf("sign with an accepted key: %v", err)
		}
		if _, err := note.Open(signed, note.VerifierList(verifier)); err != nil {
			t.Fatalf("the key's own verifier refuses its note: %v", err)
		}
		vkey, err := audit.VerifierKey(verifier)
		if err != nil {
			t.Fatal(err)
		}
		if secret := strings.SplitN(strings.TrimSpace(text), "+", 5)[4]; strings.Contains(vkey, secret) {
			t.Fatal("the verifier key holds the signer's secret")
		}
		back, err := note.NewVerifier(vkey)
		if err != nil || back.Name() != verifier.Name() || back.KeyHash() != verifier.KeyHash() {
			t.Fatalf("verifier key %q reads back as %v, %v", vkey, back, err)
		}
		if _, err := note.Open(signed, note.VerifierList(back)); err != nil {
			t.Fatalf("the verifier read back refuses the note: %v", err)
		}
	})
}
