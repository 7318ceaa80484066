package show

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/warden-sec/warden/internal/tty"
)

// DefaultWidth is the width a table fits when its output is not a terminal (a pipe, a
// file) and all of it was not asked for.
const DefaultWidth = 100

// TableWidth is the width a table written to w fits: all of it (0) when wide, else the
// terminal's columns, else DefaultWidth.
func TableWidth(w io.Writer, wide bool) int {
	if wide {
		return 0
	}
	if cols, ok := tty.Width(w); ok {
		return cols
	}
	return DefaultWidth
}

// clip is how a column's cells are cut to fit.
type clip int

const (
	clipNever  clip = iota
	clipRight       // keep the start: "bob approved, car…"
	clipLeft        // keep the end, where a uid names its resource: "…role/deploy"
	clipMiddle      // keep both ends: "ingress/tc…/0.0.0.0/0"
)

// column is one column of a fitted table: how it is cut, and how narrow it may become.
type column struct {
	how clip
	min int
}

// padding is the space between two columns, as the tables' tabwriters put it.
const padding = 2

// fit narrows the columns that may be cut until rows (the header first) fit width
// columns, cutting the widest first; a cell is never cut below its column's min. It
// reports whether the rows fit.
func fit(rows [][]string, cols []column, width int) bool {
	widths := make([]int, len(cols))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := func() int {
		n := padding * (len(widths) - 1)
		for _, w := range widths {
			n += w
		}
		return n
	}
	for over := total() - width; over > 0; over-- {
		best := -1
		for i, c := range cols {
			floor := max(c.min, 2, utf8.RuneCountInString(rows[0][i])) // never below the heading
			if c.how != clipNever && widths[i] > floor && (best < 0 || widths[i] > widths[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		widths[best]--
	}
	for _, r := range rows[1:] {
		for i, c := range r {
			r[i] = cut(c, widths[i], cols[i].how)
		}
	}
	return total() <= width
}

// cut shortens s to n characters with "…" where cols say.
func cut(s string, n int, how clip) string {
	rs := []rune(s)
	if len(rs) <= n || how == clipNever || n < 2 {
		return s
	}
	switch how {
	case clipLeft:
		return "…" + string(rs[len(rs)-(n-1):])
	case clipMiddle:
		head := (n - 1) / 2
		tail := n - 1 - head
		return string(rs[:head]) + "…" + string(rs[len(rs)-tail:])
	}
	return string(rs[:n-1]) + "…"
}

// tabbed joins each row's cells with tabs, for a tabwriter.
func tabbed(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "\t"))
		b.WriteByte('\n')
	}
	return b.String()
}

// aligned pads each row's cells to its column's width, padding apart, as a tabwriter
// would; the last cell is not padded.
func aligned(rows [][]string) []string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	out := make([]string, len(rows))
	for j, r := range rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+padding))
			}
		}
		out[j] = b.String()
	}
	return out
}
