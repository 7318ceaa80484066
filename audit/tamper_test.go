package audit_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store/storetest"
)

// tamperedLog is a log of 40 entries with stored checkpoints at 25 and 40 entries.
type tamperedLog struct {
	*fixture
	cp25, cp40 []byte
}

func TestVerify_namesFirstBadEntry(t *testing.T) {
	leaf := func(n int64) int64 { return tlog.StoredHashIndex(0, n) }
	tests := []struct {
		name    string
		tamper  func(t *testing.T, l *tamperedLog) (given [][]byte)
		seq     int64
		reason  string
		checkpt string
	}{
		{"edited actor", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `UPDATE audit_entries SET actor = 'mallory' WHERE seq = 12`)
			return nil
		}, 12, "does not hash to its stored leaf hash", ""},
		{"edited data", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `UPDATE audit_entries SET data = '{"n":13,"note":"x<y&z"}' WHERE seq = 12`)
			return nil
		}, 12, "does not hash", ""},
		{"data reformatted but equal as JSON", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `UPDATE audit_entries SET data = '{"note":"x<y&z", "n":12}' WHERE seq = 12`)
			return nil
		}, 12, "does not hash", ""},
		{"edited time", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `UPDATE audit_entries SET at = '2020-01-01T00:00:00Z' WHERE seq = 12`)
			return nil
		}, 12, "does not hash", ""},
		{"deleted entry", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `DELETE FROM audit_entries WHERE seq = 12`)
			return nil
		}, 12, "missing (deleted)", ""},
		{"deleted first entries", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `DELETE FROM audit_entries WHERE seq < 3`)
			return nil
		}, 0, "entries 0-2 are missing", ""},
		{"reordered entries", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `UPDATE audit_entries SET seq = -1 WHERE seq = 12`)
			l.exec(t, `UPDATE audit_entries SET seq = 12 WHERE seq = 20`)
			l.exec(t, `UPDATE audit_entries SET seq = 20 WHERE seq = -1`)
			return nil
		}, 12, "moved (reordered)", ""},
		{"truncated entries, hashes left", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `DELETE FROM audit_entries WHERE seq >= 35`)
			return nil
		}, 35, "holds 35 entries but its stored hashes cover 40: entries 35-39 were deleted (truncated)", ""},
		{"truncated entries and hashes: a stored checkpoint proves it", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `DELETE FROM audit_entries WHERE seq >= 35`)
			l.exec(t, `DELETE FROM audit_hashes WHERE idx >= ?`, leaf(35))
			return nil
		}, 35, "signed over 40 entries but the log holds 35", "stored checkpoint 2"},
		{"truncated entries, hashes and checkpoints: a checkpoint kept elsewhere proves it", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `DELETE FROM audit_entries WHERE seq >= 35`)
			l.exec(t, `DELETE FROM audit_hashes WHERE idx >= ?`, leaf(35))
			l.exec(t, `DELETE FROM audit_checkpoints WHERE size > 35`)
			return [][]byte{l.cp40}
		}, 35, "entries 35-39 were deleted (truncated)", "given checkpoint 1"},
		{"everything deleted: a checkpoint kept elsewhere proves it", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `DELETE FROM audit_entries`)
			l.exec(t, `DELETE FROM audit_hashes`)
			l.exec(t, `DELETE FROM audit_checkpoints`)
			return [][]byte{l.cp25}
		}, 0, "entries 0-24 were deleted", "given checkpoint 1"},
		{"edited stored leaf hash", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `UPDATE audit_hashes SET hash = (SELECT hash FROM audit_hashes WHERE idx = ?) WHERE idx = ?`, leaf(3), leaf(12))
			return nil
		}, 12, "does not hash to its stored leaf hash", ""},
		{"edited interior stored hash", func(t *testing.T, l *tamperedLog) [][]byte {
			// The node over entries 8-11 (level 2, node 2).
			l.exec(t, `UPDATE audit_hashes SET hash = (SELECT hash FROM audit_hashes WHERE idx = ?) WHERE idx = ?`, leaf(3), tlog.StoredHashIndex(2, 2))
			return nil
		}, 8, "over entries 8-11", ""},
		{"deleted stored hash", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `DELETE FROM audit_hashes WHERE idx = ?`, leaf(12))
			return nil
		}, 12, "missing", ""},
		{"entries and hashes rewritten together: checkpoints bound the damage", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `DELETE FROM audit_entries WHERE seq >= 30`)
			l.exec(t, `DELETE FROM audit_hashes WHERE idx >= ?`, leaf(30))
			l.appendN(t, 10, 10) // a consistent tree over different entries 30-39
			return nil
		}, 25, "an entry in 25-39 was rewritten", "stored checkpoint 2"},
		{"edited checkpoint text", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `UPDATE audit_checkpoints SET note = REPLACE(note, ?, ?) WHERE size = 25`, "\n25\n", "\n24\n")
			return nil
		}, -1, "signature does not verify", "stored checkpoint 1"},
		{"edited checkpoint size column", func(t *testing.T, l *tamperedLog) [][]byte {
			l.exec(t, `UPDATE audit_checkpoints SET size = 24 WHERE size = 25`)
			return nil
		}, -1, "the row was edited", "stored checkpoint 1"},
		{"checkpoint signed by another key", func(t *testing.T, l *tamperedLog) [][]byte {
			skey, _, _ := note.GenerateKey(rand.Reader, audit.KeyName)
			s, _, err := audit.ParseKey(skey)
			if err != nil {
				t.Fatal(err)
			}
			c, err := audit.OpenCheckpoint(l.cp40, l.verify)
			if err != nil {
				t.Fatal(err)
			}
			forged, err := note.Sign(&note.Note{Text: c.Text()}, s)
			if err != nil {
				t.Fatal(err)
			}
			return [][]byte{forged}
		}, -1, "signature does not verify", "given checkpoint 1"},
	}
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					l := &tamperedLog{fixture: newFixture(t, mk)}
					l.appendN(t, 25, 4)
					l.cp25 = l.checkpoint(t)
					l.appendN(t, 15, 4)
					l.cp40 = l.checkpoint(t)
					if _, err := l.log.Verify(context.Background(), l.verify, l.cp25, l.cp40); err != nil {
						t.Fatalf("before tampering: %v", err)
					}
					given := tt.tamper(t, l)
					rep, err := l.log.Verify(context.Background(), l.verify, given...)
					if !errors.Is(err, audit.ErrTampered) {
						t.Fatalf("Verify = %+v, %v; want ErrTampered", rep, err)
					}
					var te *audit.TamperError
					if !errors.As(err, &te) {
						t.Fatalf("Verify error %T is no *TamperError", err)
					}
					if te.Seq != tt.seq || !strings.Contains(te.Reason, tt.reason) || !strings.HasPrefix(te.Checkpoint, tt.checkpt) {
						t.Errorf("Verify: %v\nwant entry %d, a reason with %q, checkpoint %q", err, tt.seq, tt.reason, tt.checkpt)
					}
					t.Log(err)
					if len(rep.Problems) == 0 || rep.Problems[0] != te {
						t.Errorf("Report.Problems = %v, want the error first", rep.Problems)
					}
				})
			}
		})
	}
}

func TestVerify_refusesCheckpointOfAnotherLog(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			a, b := newFixture(t, mk), newFixture(t, mk)
			// Same key, same entries, same clock: only the log id differs.
			b.log = audit.New(b.st, audit.Options{Now: clock(), Signer: a.signer})
			a.appendN(t, 3, 3)
			b.appendN(t, 3, 3)
			_, err := a.log.Verify(context.Background(), a.verify, b.checkpoint(t))
			var te *audit.TamperError
			if !errors.As(err, &te) || !strings.Contains(te.Reason, "not this log") {
				t.Fatalf("Verify with another log's checkpoint = %v, want refused as another log's", err)
			}
		})
	}
}

func TestVerify_refusesCheckpointsWithoutVerifier(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"])
	f.appendN(t, 2, 2)
	if _, err := f.log.Verify(context.Background(), nil); err != nil {
		t.Fatalf("no checkpoints, no verifier: %v", err)
	}
	f.checkpoint(t)
	if _, err := f.log.Verify(context.Background(), nil); !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "no verifier key") {
		t.Fatalf("a checkpoint but no verifier: %v, want refused", err)
	}
}
