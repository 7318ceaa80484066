package golden

import "testing"

func TestFirstDiff(t *testing.T) {
	tests := []struct {
		a, b       string
		line       int
		gotA, gotB string
	}{
		{"x\ny\n", "x\nz\n", 2, "y", "z"},
		{"x\n", "x\ny\n", 2, "", "y"},
		{"x\ny", "x\n", 2, "y", ""},
		{"a", "b", 1, "a", "b"},
		{"x\nlast", "x", 2, "last", "(end of file)"},
	}
	for _, tt := range tests {
		n, a, b := firstDiff(tt.a, tt.b)
		if n != tt.line || a != tt.gotA || b != tt.gotB {
			t.Errorf("firstDiff(%q, %q) = %d %q %q, want %d %q %q", tt.a, tt.b, n, a, b, tt.line, tt.gotA, tt.gotB)
		}
	}
}
