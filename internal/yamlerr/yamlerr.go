// Package yamlerr is the error of a config section that validates itself as it is read
// from YAML (gates:, slack:, certs:): the field that is wrong and its line, so that the
// config package can place it in the file.
package yamlerr

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Error is a problem with a field of a config section. Line is the field's line in the
// YAML it was read from, or 0 for a config built in Go.
type Error struct {
	// Section is the top-level key the section is read from ("gates"); empty where Field
	// names the key from the top itself ("identities.alice.slack").
	Section string
	Line    int
	// Field is the key below Section ("quorum.critical"); empty for the section as a
	// whole.
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Detail())
	}
	return e.Detail()
}

// Detail is the error without its line: the field and what is wrong with it, for callers
// that place the line themselves ("gates.quorum.critical: …").
func (e *Error) Detail() string {
	where := e.Section
	if e.Field != "" {
		if where != "" {
			where += "."
		}
		where += e.Field
	}
	return where + ": " + e.Msg
}

// Join is the error of a section's problems, in their order: nil for none, the *Error
// itself for one (what a section that stops at its first problem returns), and
// errors.Join of them all for more, so that the config can report every one.
func Join(errs []*Error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}

// Merge is the problems found reading a section followed by those found judging what
// was read, less the latter about a field related to one that could not be read (the
// same field, one within it or one it is within): a value left unread is not judged
// again ("auto[0]: unknown risk" says it; "auto[0]: listed twice" would only repeat it).
func Merge(read, judged []*Error) []*Error {
	out := slices.Clone(read)
	for _, j := range judged {
		if !slices.ContainsFunc(read, func(r *Error) bool { return related(r.Section, r.Field, j.Section, j.Field) }) {
			out = append(out, j)
		}
	}
	return out
}

// related reports whether two fields of a section are the same or one is within the
// other; a field of "" is the whole section.
func related(sa, a, sb, b string) bool {
	if sa != sb {
		return false
	}
	within := func(inner, outer string) bool {
		return outer == "" || inner == outer || strings.HasPrefix(inner, outer+".") || strings.HasPrefix(inner, outer+"[")
	}
	return within(a, b) || within(b, a)
}

// Errors lists the *Error problems in err, in order: each of an errors.Join (nested or
// not), or err itself; nil when err holds none.
func Errors(err error) []*Error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Error
		for _, e := range j.Unwrap() {
			out = append(out, Errors(e)...)
		}
		return out
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return []*Error{e}
	}
	return nil
}
