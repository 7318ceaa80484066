// Package termesc makes text that came from outside (resources, policies, files, API
// answers) safe to print on a terminal, as plain text or inside JSON: whatever a uid
// holds, it cannot clear the screen, retitle the window, fake a line or reverse what is
// shown. Every writer that prints such text (scan reports, compliance exports, the CLI)
// escapes it here, so that they all escape the same runes the same way.
package termesc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes a string that came from a resource, a policy or a file safe to print on a
// terminal. Control characters (C0, DEL, C1), invalid UTF-8 and the characters that
// reorder or break lines (bidi overrides, U+2028, U+2029) are written as Go escapes
// (\x1b, \u009b, \xff, \u202e), so that a uid cannot clear the screen, retitle the
// window, fake a line or reverse what is shown. Everything else, backslashes included,
// is left as it is: ordinary text reads the same.
func Escape(s string) string { return escape(s, false) }

// EscapeLines is Escape for multi-line text such as error messages: newlines and tabs
// are kept, everything else is escaped as Escape does.
func EscapeLines(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if isSafe(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case unsafeRune(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isSafe is the fast path: most strings are printable ASCII or valid, harmless UTF-8.
func isSafe(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return safeUnicode(s[i:], keepLines)
		}
		if c < 0x20 || c == 0x7f {
			if keepLines && (c == '\n' || c == '\t') {
				continue
			}
			return false
		}
	}
	return true
}

func safeUnicode(s string, keepLines bool) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if keepLines && (r == '\n' || r == '\t') {
			continue
		}
		if unsafeRune(r) {
			return false
		}
	}
	return true
}

// unsafeRune reports whether a terminal could act on r instead of showing it.
func unsafeRune(r rune) bool {
	if unicode.IsControl(r) { // C0, DEL and C1
		return true
	}
	switch {
	case r == '\u061c', r == '\u200e', r == '\u200f': // bidi marks
		return true
	case r >= '\u202a' && r <= '\u202e': // bidi embeddings and overrides
		return true
	case r >= '\u2066' && r <= '\u2069': // bidi isolates
		return true
	case r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	}
	return false
}

// EscapeJSON rewrites, in JSON made by encoding/json, the characters it leaves raw in
// strings that a terminal could act on (DEL, C1 controls, bidi formatting) as \u
// escapes, so that a report piped to a terminal cannot drive it either; the JSON means
// the same. encoding/json already escapes C0 controls, U+2028 and U+2029, and writes
// invalid UTF-8 as U+FFFD. Outside strings encoding/json writes only ASCII, so every
// rune rewritten here is inside a string.
func EscapeJSON(b []byte) []byte {
	// Every such rune but DEL starts with one of these bytes in UTF-8: the fast path.
	if bytes.IndexByte(b, 0x7f) < 0 && bytes.IndexByte(b, 0xc2) < 0 && bytes.IndexByte(b, 0xd8) < 0 && bytes.IndexByte(b, 0xe2) < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if size > 0 && r != utf8.RuneError && unsafeRune(r) && r >= 0x7f {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// WriteJSON writes v as indented JSON whose strings cannot drive a terminal: control
// characters in what clouds, configs and the environment gave are escaped (EscapeJSON).
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(EscapeJSON(buf.Bytes()))
	return err
}
