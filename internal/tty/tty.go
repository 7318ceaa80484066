// Package tty says whether warden's standard streams are terminals: an output that
// takes colour, an input a person types into.
package tty

import (
	"io"
	"os"

	"golang.org/x/term"
)

// Colour reports whether w is a terminal that takes colour: not when NO_COLOR is set.
func Colour(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
}

// Input reports whether r is a terminal a person types into.
func Input(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Width is the number of columns of w when it is a terminal whose size can be read; ok
// is false otherwise (a file, a pipe, a buffer).
func Width(w io.Writer) (cols int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil || cols <= 0 {
		return 0, false
	}
	return cols, true
}
