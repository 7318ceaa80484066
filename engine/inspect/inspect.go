// Package inspect describes loaded policies to the people who write and tune them: which
// policies there are (by framework, by resource type), the settings they read, and the
// results of their Rego unit tests, as `warden policy` prints them. Text from policy and
// config files is escaped for the terminal.
package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/termesc"
)

// Policies are the engine's policies mapped to framework and evaluated on resources of
// type typ; an empty framework or typ selects any.
func Policies(e *engine.Engine, framework, typ string) ([]*engine.Policy, error) {
	if framework != "" && !slices.Contains(engine.Frameworks, framework) {
		return nil, fmt.Errorf("unknown framework %q (want one of %s)", framework, strings.Join(engine.Frameworks, ", "))
	}
	var list []*engine.Policy
	for _, p := range e.Policies() {
		if framework != "" && len(p.Frameworks[framework]) == 0 {
			continue
		}
		if typ != "" && !slices.Contains(p.ResourceTypes, typ) {
			continue
		}
		list = append(list, p)
	}
	return list, nil
}

// PoliciesJSON writes the policies as a JSON array.
func PoliciesJSON(w io.Writer, list []*engine.Policy) error {
	if list == nil {
		list = []*engine.Policy{}
	}
	return writeJSON(w, list)
}

// PoliciesTable writes one row per policy: id, severity, title, resource types and the
// controls of each framework; then the count.
func PoliciesTable(w io.Writer, list []*engine.Policy) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSEVERITY\tTITLE\tRESOURCE TYPES\tFRAMEWORKS")
	for _, p := range list {
		var fws []string
		for _, fw := range engine.Frameworks {
			if c := p.Frameworks[fw]; len(c) > 0 {
				fws = append(fws, fw+" "+strings.Join(c, ","))
			}
		}
		// A user policy's metadata is text from a file: escaped for the terminal.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termesc.Escape(p.ID), p.Severity, termesc.Escape(p.Title), strings.Join(p.ResourceTypes, ","), termesc.Escape(strings.Join(fws, "; ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d policies\n", len(list))
	return nil
}

// Setting is a setting the policies read, with the policies (or library files) that
// read it and the value a config gives it.
type Setting struct {
	engine.Setting
	ReadBy []string `json:"read_by"`
	Value  any      `json:"value,omitempty"`
	Set    bool     `json:"set"`
}

// Settings are the settings the engine's policies read, with the values in effect
// (a config's settings:).
func Settings(e *engine.Engine, values map[string]any) []Setting {
	byFile := map[string]string{}
	for _, p := range e.Policies() {
		byFile[p.File] = p.ID
	}
	var rows []Setting
	for _, s := range e.SettingsSchema() {
		r := Setting{Setting: s}
		r.Value, r.Set = values[s.Name]
		for _, w := range s.Where {
			file, _, _ := strings.Cut(w, ":")
			by := file // a library file: the policies reach it through it
			if id, ok := byFile[file]; ok {
				by = id
			}
			if !slices.Contains(r.ReadBy, by) {
				r.ReadBy = append(r.ReadBy, by)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// SettingsJSON writes the settings as a JSON array.
func SettingsJSON(w io.Writer, rows []Setting) error {
	if rows == nil {
		rows = []Setting{}
	}
	return writeJSON(w, rows)
}

// SettingsTable writes one row per setting: its default, the value in effect and who
// reads it; then the count.
func SettingsTable(w io.Writer, rows []Setting) error {
	compact := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tDEFAULT\tIN EFFECT\tREAD BY")
	for _, r := range rows {
		effect := "(default)"
		if r.Set {
			effect = compact(r.Value)
		}
		// Names, defaults and values come from policy and config files: escaped for the
		// terminal.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termesc.Escape(r.Name), termesc.Escape(compact(r.Default)), termesc.Escape(effect), termesc.Escape(strings.Join(r.ReadBy, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d settings\n", len(rows))
	return nil
}

// writeJSON writes v indented, escaped for the terminal.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termesc.EscapeJSON(b), '\n'))
	return err
}
