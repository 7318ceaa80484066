package report

import "github.com/warden-sec/warden/internal/termesc"

// Escape is termesc.Escape, kept while cmd/warden moves to it.
//
// Deprecated: use termesc.Escape.
func Escape(s string) string { return termesc.Escape(s) }

// EscapeLines is termesc.EscapeLines, kept while cmd/warden moves to it.
//
// Deprecated: use termesc.EscapeLines.
func EscapeLines(s string) string { return termesc.EscapeLines(s) }

// EscapeJSON is termesc.EscapeJSON, kept while cmd/warden moves to it.
//
// Deprecated: use termesc.EscapeJSON.
func EscapeJSON(b []byte) []byte { return termesc.EscapeJSON(b) }
