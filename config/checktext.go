package config

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints the report for a person, as warden config check does: the problems,
// one a line, a summary line, then where each secret comes from. escape makes the text
// the config and the files quote safe for a terminal (nil: printed as is).
func (r Report) WriteText(w io.Writer, escape func(string) string) error {
	if escape == nil {
		escape = func(s string) string { return s }
	}
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString(escape(p.String()) + "\n")
	}
	errs, warns := 0, 0
	for _, p := range r.Problems {
		if p.Level == LevelWarning {
			warns++
		} else {
			errs++
		}
	}
	switch {
	case errs == 0 && warns == 0:
		fmt.Fprintf(&b, "%s: no problems\n", r.File)
	default:
		fmt.Fprintf(&b, "%s: %s, %s\n", r.File, plural(errs, "problem"), plural(warns, "warning"))
	}
	if len(r.Secrets) > 0 {
		b.WriteString("\nsecrets (never shown):\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, s := range r.Secrets {
			mark := "ok"
			if !s.OK {
				mark = "PROBLEM"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, mark, escape(secretWhere(s)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// secretWhere says where a secret was found, in words.
func secretWhere(s SecretSource) string {
	var where string
	switch s.From {
	case FromEnv:
		where = "from $" + s.Env + " (set)"
	case FromFile:
		where = "from file " + s.File
		if s.Field != "" && s.Line > 0 {
			where += fmt.Sprintf(" (%s, line %d)", s.Field, s.Line)
		}
		if s.Mode != "" {
			where += ", mode " + s.Mode
		}
	default:
		if s.Note != "" {
			return s.Note
		}
		return "none"
	}
	if s.Note != "" {
		where += ": " + s.Note
	}
	return where
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
