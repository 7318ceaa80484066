package compliance

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteFrameworks writes a table of the embedded frameworks with their coverage: how
// many controls each has, and how many of them policies assess.
func WriteFrameworks(w io.Writer) error {
	fws, err := Load()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tVERSION\tCONTROLS\tAUTOMATED")
	for _, fw := range fws {
		automated := 0
		for _, c := range fw.Controls {
			if c.Assessment == Automated && len(c.Policies) > 0 {
				automated++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", fw.ID, fw.Name, fw.Version, len(fw.Controls), automated)
	}
	return tw.Flush()
}
