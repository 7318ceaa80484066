package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store/storetest"
)

func TestExport_verifiesStandalone(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, mk)
			ctx := context.Background()
			f.appendN(t, 45, 10)
			cp := f.checkpoint(t)
			f.appendN(t, 5, 5) // after the checkpoint: not in the export
			var buf bytes.Buffer
			if err := f.log.Export(ctx, &buf, cp); err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(buf.String(), "\n"); lines != 46 {
				t.Errorf("export has %d lines, want a header and 45 entries", lines)
			}
			if err := audit.VerifyExport(bytes.NewReader(buf.Bytes()), f.verify); err != nil {
				t.Fatalf("VerifyExport: %v", err)
			}
			// nil: against the latest stored checkpoint.
			latest := f.checkpoint(t)
			var all bytes.Buffer
			if err := f.log.Export(ctx, &all, nil); err != nil {
				t.Fatal(err)
			}
			var hdr audit.ExportHeader
			first, _, _ := strings.Cut(all.String(), "\n")
			if err := json.Unmarshal([]byte(first), &hdr); err != nil || hdr.Checkpoint != string(latest) {
				t.Errorf("export header %q (%v), want the latest checkpoint", first, err)
			}
			if err := audit.VerifyExport(&all, f.verify); err != nil {
				t.Fatalf("VerifyExport of the latest: %v", err)
			}
		})
	}
}

func TestExport_refusesCheckpointNotOfThisLog(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"])
	g := newFixture(t, storetest.Backends(t)["sqlite"])
	f.appendN(t, 4, 4)
	g.appendN(t, 4, 4)
	if err := f.log.Export(context.Background(), &bytes.Buffer{}, nil); err == nil {
		t.Error("Export without any checkpoint succeeded")
	}
	if err := f.log.Export(context.Background(), &bytes.Buffer{}, g.checkpoint(t)); err == nil || !strings.Contains(err.Error(), "not this log") {
		t.Errorf("Export against another log's checkpoint = %v, want refused", err)
	}
}

func TestVerifyExport_refusesTamperedExport(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"])
	f.appendN(t, 20, 20)
	var buf bytes.Buffer
	if err := f.log.Export(context.Background(), &buf, f.checkpoint(t)); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n")
	edit := func(i int, fn func(l *audit.ExportLine)) []string {
		out := slices.Clone(lines)
		var l audit.ExportLine
		if err := json.Unmarshal([]byte(out[i]), &l); err != nil {
			t.Fatal(err)
		}
		fn(&l)
		b, _ := json.Marshal(l)
		out[i] = string(b) + "\n"
		return out
	}
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"edited record", edit(8, func(l *audit.ExportLine) { l.Record = strings.Replace(l.Record, "bob", "eve", 1) }), "line 9 (entry 7): its record does not hash"},
		{"edited record with its leaf hash", edit(8, func(l *audit.ExportLine) {
			l.Record = strings.Replace(l.Record, "bob", "eve", 1)
			l.LeafHash = audit.Entry{}.LeafHash()
		}), "line 9 (entry 7): its record does not hash"},
		{"record of another entry", edit(8, func(l *audit.ExportLine) {
			var o audit.ExportLine
			json.Unmarshal([]byte(lines[9]), &o)
			l.Record, l.LeafHash, l.Proof = o.Record, o.LeafHash, o.Proof
		}), "its record is not entry 7"},
		{"edited proof", edit(3, func(l *audit.ExportLine) { l.Proof[0] = l.LeafHash }), "line 4 (entry 2): its inclusion proof"},
		{"dropped line", slices.Delete(slices.Clone(lines), 5, 6), "line 6 (entry 4): holds entry 5"},
		{"swapped lines", func() []string {
			out := slices.Clone(lines)
			out[4], out[5] = out[5], out[4]
			return out
		}(), "line 5 (entry 3): holds entry 4"},
		{"truncated", lines[:15], "ends after 14 entries but the checkpoint covers 20"},
		{"edited checkpoint", func() []string {
			out := slices.Clone(lines)
			out[0] = strings.Replace(out[0], `\n20\n`, `\n19\n`, 1)
			return out
		}(), "line 1"},
		{"not an export", []string{"hello\n"}, "line 1 is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := audit.VerifyExport(strings.NewReader(strings.Join(tt.lines, "")), f.verify)
			if !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("VerifyExport = %v, want ErrTampered with %q", err, tt.want)
			}
		})
	}
	other := newFixture(t, storetest.Backends(t)["sqlite"])
	if err := audit.VerifyExport(strings.NewReader(buf.String()), other.verify); !errors.Is(err, audit.ErrTampered) {
		t.Errorf("VerifyExport with another key = %v, want refused", err)
	}
}

func TestExportTo_signsACheckpointNowAndWritesTheFileWhole(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"])
	ctx := context.Background()
	f.appendN(t, 7, 7)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := f.log.ExportTo(ctx, io.Discard, path, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != 8 {
		t.Errorf("export has %d lines, want a header and every one of the 7 entries", lines)
	}
	if err := audit.VerifyExport(bytes.NewReader(b), f.verify); err != nil {
		t.Fatalf("VerifyExport: %v", err)
	}
	// Against a given checkpoint, to w: what it covers, nothing signed.
	cp := f.checkpoint(t)
	f.appendN(t, 3, 3)
	var buf bytes.Buffer
	if err := f.log.ExportTo(ctx, &buf, "", cp); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 8 {
		t.Errorf("export against the given checkpoint has %d lines, want 8", lines)
	}
}
