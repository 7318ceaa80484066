package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/warden-sec/warden/internal/termesc"
)

// checkFormat refuses a --format that is none of want: bad input, exit 2.
func checkFormat(format string, want ...string) error {
	if slices.Contains(want, format) {
		return nil
	}
	return usageErr(fmt.Errorf("--format: unknown format %q (want %s)", format, strings.Join(want, " or ")))
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeList writes items as --format says: a JSON object holding them under key (a list,
// never null), its strings escaped for the terminal, or table's rendering of them.
func writeList[T any](w io.Writer, format, key string, items []T, table func(io.Writer, []T) error) error {
	if format != "json" {
		return table(w, items)
	}
	if items == nil {
		items = []T{}
	}
	return termesc.WriteJSON(w, map[string][]T{key: items})
}
