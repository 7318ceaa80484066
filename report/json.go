package report

import (
	"encoding/json"
	"io"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
)

// JSON writes the report as the finding JSON of DESIGN.md: findings[], summary and scan.
type JSON struct{}

// Write implements Writer.
func (JSON) Write(w io.Writer, r *Report) error {
	out := *r
	// Empty lists are written as [], not null, so that consumers need no special case.
	if out.Findings == nil {
		out.Findings = []findings.Finding{}
	}
	if out.ExpiredWaivers == nil {
		out.ExpiredWaivers = []ExpiredWaiver{}
	}
	if out.IncompleteScopes == nil {
		out.IncompleteScopes = []snapshot.Scope{}
	}
	if out.EvalErrors == nil {
		out.EvalErrors = []findings.EvalError{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
