package progress

import (
	"bytes"
	"strings"
	"testing"
)

func TestNew_drawsNothingBeyondATerminal(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, "collected")
	if p != nil {
		t.Fatal("a buffer is not a terminal, but a line was made for it")
	}
	// A nil line is what callers hold off a terminal: every method is safe on it.
	p.Update(1)
	p.UpdateWith(2, func() string { t.Error("more was asked for with no line to draw"); return "" })
	p.Done()
}

func TestLine_redrawsInPlaceAndClears(t *testing.T) {
	var buf bytes.Buffer
	p := &Line{w: &buf, label: "evaluated"}
	p.UpdateWith(42, func() string { return "3 scopes read" })
	p.Update(43) // within a tenth of a second: not drawn
	p.Done()
	got := buf.String()
	if !strings.HasPrefix(got, "\r\x1b[Kevaluated 42 resources (") || !strings.Contains(got, ", 3 scopes read") || strings.Contains(got, " 43 ") {
		t.Errorf("drawn %q", got)
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("the line was not cleared: %q", got)
	}
}
