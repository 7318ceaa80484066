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
