package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/export"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
)

// Reports is the reports: section: the compliance reports warden serve writes on its own,
// every Every, keeping the last Keep of each framework and format.
//
//	reports:
//	  frameworks: [cis-aws-3.0, soc2]       # warden report --list
//	  formats: [html, json, ocsf]           # html, csv, json, sarif, ocsf
//	  destination: s3://acme-audit/warden   # or a directory: /var/lib/warden/reports
//	  region: eu-west-1                     # the bucket's (default: the AWS configuration's)
//	  keep: 10                              # reports kept per framework and format
//	  every: 24h
//
// Absent, no reports are written on a schedule. Validated as it is read: every error
// names the field and its line.
type Reports struct {
	Frameworks  []string
	Formats     []string
	Destination string
	// Region is the S3 bucket's region; empty takes the AWS configuration's.
	Region string
	Keep   int
	Every  time.Duration
}

// Defaults of the reports: section.
const (
	DefaultReportsKeep  = export.DefaultKeep
	DefaultReportsEvery = 24 * time.Hour
	// MinReportsEvery is the shortest schedule: each run gathers the evidence of every
	// framework from the whole history.
	MinReportsEvery = time.Minute
)

var reportsKeys = []string{"frameworks", "formats", "destination", "region", "keep", "every"}

func reportsError(line int, field, msg string) *yamlerr.Error {
	return &yamlerr.Error{Section: "reports", Line: line, Field: field, Msg: msg}
}

// UnmarshalYAML reads the reports: section and checks it: frameworks against the
// embedded ones, formats against the report writers, the destination's form, keep and
// every. Unknown keys are errors, so that a typo does not leave a report unwritten. It
// reports every problem of the section (errors.Join of *yamlerr.Error, in the order of
// the file), not only the first.
func (r *Reports) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return reportsError(n.Line, "", "want a mapping with keys "+strings.Join(reportsKeys, ", "))
	}
	out := Reports{Keep: DefaultReportsKeep, Every: DefaultReportsEvery}
	seen := map[string]int{}
	// settled are the keys whose problem is reported already (a wrong value, or a
	// misspelt key that suggests them): "required" would only repeat it.
	settled := map[string]bool{}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if l, ok := seen[k.Value]; ok {
			errs = append(errs, reportsError(k.Line, k.Value, fmt.Sprintf("given twice (also line %d)", l)))
			continue
		}
		seen[k.Value] = k.Line
		var err *yamlerr.Error
		switch k.Value {
		case "frameworks":
			out.Frameworks, err = reportList(k.Value, v, frameworkChecker())
		case "formats":
			out.Formats, err = reportList(k.Value, v, checkFormat)
		case "destination":
			if out.Destination, err = reportScalar(k.Value, v); err == nil {
				if _, perr := export.ParseDestination(out.Destination); perr != nil {
					err = reportsError(v.Line, k.Value, perr.Error())
				}
			}
		case "region":
			if out.Region, err = reportScalar(k.Value, v); err == nil && !validRegion(out.Region) {
				err = reportsError(v.Line, k.Value, fmt.Sprintf("%q is not an AWS region (eu-west-1, us-east-1, …)", out.Region))
			}
		case "keep":
			n, perr := strconv.Atoi(v.Value)
			switch {
			case v.Kind != yaml.ScalarNode || perr != nil:
				err = reportsError(v.Line, k.Value, fmt.Sprintf("%q: want a whole number of reports (default %d)", v.Value, DefaultReportsKeep))
			case n < 1:
				err = reportsError(v.Line, k.Value, fmt.Sprintf("%d: keep at least 1 report of each framework and format (default %d)", n, DefaultReportsKeep))
			}
			out.Keep = n
		case "every":
			d, perr := time.ParseDuration(v.Value)
			switch {
			case v.Kind != yaml.ScalarNode || perr != nil:
				err = reportsError(v.Line, k.Value, fmt.Sprintf("%q: want a duration (24h, 6h, 90m)", v.Value))
			case d < MinReportsEvery:
				err = reportsError(v.Line, k.Value, fmt.Sprintf("%v: want at least %v between runs", d, MinReportsEvery))
			}
			out.Every = d
		default:
			msg := fmt.Sprintf("unknown key (known: %s)", strings.Join(reportsKeys, ", "))
			if s := suggest.Closest(k.Value, reportsKeys); s != "" {
				msg = fmt.Sprintf("unknown key (did you mean %q?)", s)
				settled[s] = true
			}
			err = reportsError(k.Line, k.Value, msg)
		}
		if err != nil {
			settled[k.Value] = true
			errs = append(errs, err)
		}
	}
	for _, req := range []struct {
		key string
		ok  bool
		msg string
	}{
		{"frameworks", len(out.Frameworks) > 0, "name at least one framework (warden report --list shows them)"},
		{"formats", len(out.Formats) > 0, "name at least one format (" + strings.Join(render.Formats(), ", ") + ")"},
		{"destination", out.Destination != "", "required: a directory, or s3://bucket/prefix"},
	} {
		if !req.ok && !settled[req.key] {
			line := seen[req.key]
			if line == 0 {
				line = n.Line
			}
			errs = append(errs, reportsError(line, req.key, req.msg))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	*r = out
	return nil
}

func reportScalar(field string, v *yaml.Node) (string, *yamlerr.Error) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", reportsError(v.Line, field, "want a string")
	}
	return strings.TrimSpace(v.Value), nil
}

// reportList reads a list of names, each checked by check, with the line of the item
// that is wrong; a name given twice is an error too.
func reportList(field string, v *yaml.Node, check func(string) string) ([]string, *yamlerr.Error) {
	if v.Kind != yaml.SequenceNode {
		return nil, reportsError(v.Line, field, "want a list, e.g. ["+map[string]string{"frameworks": "cis-aws-3.0, soc2", "formats": "html, json"}[field]+"]")
	}
	var out []string
	for i, item := range v.Content {
		where := fmt.Sprintf("%s[%d]", field, i)
		if item.Kind != yaml.ScalarNode {
			return nil, reportsError(item.Line, where, "want a name")
		}
		name := strings.TrimSpace(item.Value)
		if msg := check(name); msg != "" {
			return nil, reportsError(item.Line, where, msg)
		}
		if slices.Contains(out, name) {
			return nil, reportsError(item.Line, where, fmt.Sprintf("%q is listed twice", name))
		}
		out = append(out, name)
	}
	return out, nil
}

// frameworkChecker returns a function that says what is wrong with a framework id, or
// "": the embedded frameworks are loaded once for the whole list, not once per id.
func frameworkChecker() func(id string) string {
	fws, err := compliance.Load()
	ids := make([]string, len(fws))
	for i, f := range fws {
		ids[i] = f.ID
	}
	return func(id string) string {
		if err != nil {
			return err.Error()
		}
		if slices.Contains(ids, id) {
			return ""
		}
		msg := fmt.Sprintf("unknown framework %q", id)
		if s := suggest.Closest(id, ids); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return msg + "; known: " + strings.Join(ids, ", ")
	}
}

// checkFormat says what is wrong with a format name, or "". Names are lower-case, as the
// files are named.
func checkFormat(name string) string {
	if _, err := render.New(name); err != nil {
		return err.Error()
	}
	if name != strings.ToLower(name) {
		return fmt.Sprintf("%q: write format names in lower case (%q)", name, strings.ToLower(name))
	}
	return ""
}

// validRegion accepts the shape of AWS region names: lower-case words and digits joined
// by hyphens (eu-west-1, us-gov-west-1, ap-southeast-5).
func validRegion(s string) bool {
	parts := strings.Split(s, "-")
	if len(parts) < 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
			return false
		}
	}
	return true
}
