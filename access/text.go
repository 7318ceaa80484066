package access

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/warden-sec/warden/internal/termesc"
)

// WriteText writes each principal: granted against used, every unused service or action
// with its evidence, and the fixes that would close the surplus; principals without
// surplus take one line. now dates the data's age.
func WriteText(w io.Writer, ps []Principal, now time.Time) error {
	var surplus, none int
	for _, p := range ps {
		head := fmt.Sprintf("%s %s", strings.TrimPrefix(p.Type, "aws.iam."), termesc.Escape(p.UID))
		switch {
		case p.Data == "none":
			none++
			fmt.Fprintf(w, "%s: no usage data (targets.aws.usage is off, or it was not read)\n", head)
			continue
		case p.Data != "complete":
			fmt.Fprintf(w, "%s: %s (counted as used)\n", head, termesc.Escape(p.Data))
			continue
		}
		age := ""
		if d := now.Sub(p.AsOf); d >= 24*time.Hour {
			age = fmt.Sprintf(", %d days old", int(d.Hours()/24))
		}
		if p.UnusedOnly {
			fmt.Fprintf(w, "%s: IAM Access Analyzer's findings, which list only what is unused (data as of %s%s)\n", head, p.AsOf.Format(time.DateOnly), age)
		} else {
			fmt.Fprintf(w, "%s: uses %d of %d services granted (data as of %s%s)\n", head, len(p.Used), p.Granted, p.AsOf.Format(time.DateOnly), age)
		}
		if len(p.Unused) == 0 {
			continue
		}
		surplus++
		for _, it := range p.Unused {
			fmt.Fprintf(w, "  unused  %s: %s\n", termesc.Escape(it.Permission), termesc.Escape(it.Evidence))
		}
		for _, f := range p.Fixes {
			fmt.Fprintf(w, "  fix     %s on %s removes %s\n", f.Remediator, termesc.Escape(f.Part), termesc.Escape(strings.Join(f.Removes, ", ")))
		}
		if len(p.Fixes) == 0 {
			fmt.Fprintln(w, "  fix     none automated: the grants come from managed policies or patterns the data cannot narrow")
		}
	}
	_, err := fmt.Fprintf(w, "\n%d principals, %d with unused grants, %d without usage data\n", len(ps), surplus, none)
	return err
}

// WriteJSON writes the principals as a JSON document {"principals": [...]}.
func WriteJSON(w io.Writer, ps []Principal) error {
	if ps == nil {
		ps = []Principal{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Principals []Principal `json:"principals"`
	}{ps})
}
