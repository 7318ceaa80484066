// Package report renders scan results, one writer per format: table for people, JSON for
// tools (the contract of DESIGN.md), SARIF for code-scanning dashboards. Every writer
// takes the scan's result (scan.Result) as it is: the result is the one model of what a
// scan found, and a format only decides how to print it.
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/warden-sec/warden/scan"
)

// Writer renders a scan's result in one format.
type Writer interface {
	Write(w io.Writer, r *scan.Result) error
}

// Formats lists the format names New accepts.
var Formats = []string{"table", "json", "sarif"}

// New returns the writer for a format; color applies to the table only.
func New(format string, color bool) (Writer, error) {
	switch strings.ToLower(format) {
	case "table", "":
		return &Table{Color: color}, nil
	case "json":
		return JSON{}, nil
	case "sarif":
		return SARIF{}, nil
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}
