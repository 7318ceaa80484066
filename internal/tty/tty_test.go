package tty

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Buffers, pipes and files are no terminal: no colour in a report written to them, no
// question asked of them.
func TestColourAndInput_noTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if Colour(&bytes.Buffer{}) || Colour(w) {
		t.Error("a buffer or a pipe takes colour")
	}
	if Input(strings.NewReader("y\n")) || Input(r) {
		t.Error("a string or a pipe is a person typing")
	}
}
