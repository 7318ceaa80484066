package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Decisions are what a scan decided, whatever the engine's inside: its findings as
// sorted lines "policy\tresource\tfingerprint\tmessage", the form of the engine's decision
// tests (engine/decisions_test.go), so that a digest here and one there agree for the
// same snapshot and evaluation time.
type Decisions struct {
	Resources int      // resources the scan read
	Lines     []string // sorted
}

// Digest is "sha256:" and the hex SHA-256 of the lines, each ended by a newline.
func (d Decisions) Digest() string {
	h := sha256.New()
	for _, l := range d.Lines {
		io.WriteString(h, l)
		io.WriteString(h, "\n")
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Equal reports whether two scans decided the same.
func (d Decisions) Equal(o Decisions) bool { return slices.Equal(d.Lines, o.Lines) }

// Diff returns up to n lines of d that o lacks and up to n of o that d lacks.
func (d Decisions) Diff(o Decisions, n int) (onlyD, onlyO []string) {
	i, j := 0, 0
	for i < len(d.Lines) || j < len(o.Lines) {
		switch {
		case j == len(o.Lines) || i < len(d.Lines) && d.Lines[i] < o.Lines[j]:
			if len(onlyD) < n {
				onlyD = append(onlyD, d.Lines[i])
			}
			i++
		case i == len(d.Lines) || o.Lines[j] < d.Lines[i]:
			if len(onlyO) < n {
				onlyO = append(onlyO, o.Lines[j])
			}
			j++
		default:
			i++
			j++
		}
	}
	return onlyD, onlyO
}

// ReadReport reads the decisions of a `warden scan --format json` report. It streams the
// findings, so that a report of a million resources is never held as one document.
func ReadReport(r io.Reader) (Decisions, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return Decisions{}, err
	}
	var d Decisions
	sawSummary := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Decisions{}, err
		}
		switch tok {
		case "summary":
			var s struct {
				Resources int `json:"resources"`
			}
			if err := dec.Decode(&s); err != nil {
				return Decisions{}, fmt.Errorf("summary: %w", err)
			}
			d.Resources, sawSummary = s.Resources, true
		case "findings":
			if err := expectDelim(dec, '['); err != nil {
				return Decisions{}, fmt.Errorf("findings: %w", err)
			}
			for dec.More() {
				var f struct {
					Policy      string `json:"policy"`
					Resource    string `json:"resource"`
					Fingerprint string `json:"fingerprint"`
					Message     string `json:"message"`
				}
				if err := dec.Decode(&f); err != nil {
					return Decisions{}, fmt.Errorf("findings[%d]: %w", len(d.Lines), err)
				}
				d.Lines = append(d.Lines, strings.Join([]string{f.Policy, f.Resource, f.Fingerprint, f.Message}, "\t"))
			}
			if err := expectDelim(dec, ']'); err != nil {
				return Decisions{}, fmt.Errorf("findings: %w", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return Decisions{}, fmt.Errorf("%v: %w", tok, err)
			}
		}
	}
	if !sawSummary {
		return Decisions{}, fmt.Errorf("no summary: not a warden scan JSON report")
	}
	slices.Sort(d.Lines)
	return d, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("want %v, got %v", want, tok)
	}
	return nil
}
