package snapshot

import (
	"fmt"
	"strings"
)

// Error is a problem in a snapshot, located by file, line and field so that a person can
// find and fix it.
type Error struct {
	File   string // path of the snapshot, or "-" for standard input
	Line   int    // 1-based line, 0 when unknown
	Offset int64  // byte offset from the start of the input
	Field  string // e.g. resources[41].type; empty for syntax errors
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "read snapshot %s: ", e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	} else {
		fmt.Fprintf(&b, "offset %d: ", e.Offset)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}
