package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxValue bounds one value of a config, in bytes: a path, a DSN, a template, an id is
// far shorter, so that a value over it is a mistake (a file pasted in), not a setting.
const MaxValue = 4 << 10

// boolKeys are the keys of the sections config decodes itself whose values are booleans.
// (dashboard.enabled judges its own.)
var boolKeys = []string{"serve.allow_remote", "targets.aws.org", "daemon.dry_run"}

// yamlBoolWords are the YAML 1.1 booleans the decoder still takes into a bool, although
// YAML 1.2 reads them (and every quoted word) as strings.
var yamlBoolWords = []string{"y", "yes", "n", "no", "on", "off"}

// scalarProblems judges every value of the document alone: no value over MaxValue, and
// a boolean written as one (true or false), not as the words "yes", "no", "on" or "off".
func scalarProblems(root *yaml.Node, file string) []*Error {
	if len(root.Content) != 1 {
		return nil
	}
	var errs []*Error
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				if path != "" {
					key = path + "." + key
				}
				walk(n.Content[i+1], key)
			}
		case yaml.SequenceNode:
			for i, it := range n.Content {
				walk(it, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			if len(n.Value) > MaxValue {
				errs = append(errs, &Error{File: file, Line: n.Line, Field: path,
					Msg: fmt.Sprintf("%d bytes: a value holds at most %d (4 KiB)", len(n.Value), MaxValue)})
			}
			if slices.Contains(boolKeys, path) && n.ShortTag() != "!!bool" && slices.Contains(yamlBoolWords, strings.ToLower(n.Value)) {
				want := "true"
				if slices.Contains([]string{"n", "no", "off"}, strings.ToLower(n.Value)) {
					want = "false"
				}
				errs = append(errs, &Error{File: file, Line: n.Line, Field: path,
					Msg: fmt.Sprintf("%q is a string, not a boolean: write %s (a YAML boolean is true or false)", n.Value, want)})
			}
		}
	}
	walk(root.Content[0], "")
	return errs
}
