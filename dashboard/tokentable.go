package dashboard

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/warden-sec/warden/internal/termesc"
)

// WriteTokens writes the tokens as `warden token list` prints them: one row each, never
// the token itself, names and creators escaped for the terminal; or "no tokens".
func WriteTokens(w io.Writer, list []Token) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no tokens")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tCREATED\tBY\tLAST USED\tREVOKED")
	for _, t := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, termesc.Escape(t.Name), t.RoleName, stamp(t.CreatedAt),
			termesc.Escape(t.CreatedBy), stamp(t.LastUsedAt), stamp(t.RevokedAt))
	}
	return tw.Flush()
}

// stamp is a time for a table: RFC 3339, or "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
