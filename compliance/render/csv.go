package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/warden-sec/warden/compliance"
)

// CSV writes one row per control and finding of its evidence (RFC 4180, CRLF line ends,
// a header row first), and one row for a control without evidence, so that a spreadsheet
// filtered on a control shows everything about it. The evidence column says how the
// finding counts: failing, unknown (carried over unjudged) or waived. A failing finding
// with waiver columns filled had its waiver expire by the report's time.
//
// Cells starting with = + - @, a tab or a carriage return get a leading ', so that a
// resource name or a waiver reason cannot run as a formula in a spreadsheet (CSV
// injection).
type CSV struct{}

// csvHeader names the columns; the tests and the documentation rely on this order.
var csvHeader = []string{
	"control_id", "control_title", "family", "family_title", "status", "reason",
	"evidence", "policy", "resource", "account", "region", "severity", "finding_message",
	"waiver_owner", "waiver_reason", "waiver_expires", "fingerprint",
}

// Write implements Writer.
func (CSV) Write(w io.Writer, d *compliance.Document) error {
	if err := check(d); err != nil {
		return fmt.Errorf("write compliance CSV: %w", err)
	}
	titles := map[string]string{}
	for _, f := range d.Report.Families {
		titles[f.ID] = f.Title
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("write compliance CSV header: %w", err)
	}
	for i := range d.Report.Controls {
		c := &d.Report.Controls[i]
		control := []string{c.ID, c.Title, c.Family, titles[c.Family], string(c.Status), c.Reason}
		ev := evidenceOf(c)
		if len(ev) == 0 {
			// No finding: the row names the policies that check the control, if any.
			row := append(control, "", strings.Join(c.Policies, " "), "", "", "", "", "", "", "", "", "")
			if err := cw.Write(guardRow(row)); err != nil {
				return fmt.Errorf("write compliance CSV row of control %s: %w", c.ID, err)
			}
			continue
		}
		for _, e := range ev {
			f := e.Finding
			var owner, reason, expires string
			if f.Waiver != nil {
				owner, reason = f.Waiver.Owner, f.Waiver.Reason
				expires = f.Waiver.Expires.UTC().Format(time.RFC3339)
			}
			row := append(control[:len(control):len(control)], e.Kind, f.Policy, f.Resource, f.Account, f.Region,
				f.Severity.String(), f.Message, owner, reason, expires, f.Fingerprint)
			if err := cw.Write(guardRow(row)); err != nil {
				return fmt.Errorf("write compliance CSV row of control %s, finding %s: %w", c.ID, f.Fingerprint, err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write compliance CSV: %w", err)
	}
	return nil
}

// guardRow defuses, in place, every cell a spreadsheet would read as a formula.
func guardRow(row []string) []string {
	for i, cell := range row {
		row[i] = guardCell(cell)
	}
	return row
}

// guardCell prefixes a cell that a spreadsheet would evaluate with a ', which makes it
// text (OWASP's advice for CSV injection). A cell starting with - is defused too: "-2+3"
// is a formula in most spreadsheets, and no value warden writes is a negative number.
func guardCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}
