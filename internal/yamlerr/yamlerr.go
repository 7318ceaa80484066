// Package yamlerr is the error of a config section that validates itself as it is read
// from YAML (gates:, slack:, certs:): the field that is wrong and its line, so that the
// config package can place it in the file.
package yamlerr

import "fmt"

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
