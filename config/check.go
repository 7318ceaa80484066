package config

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/suggest"
)

// Levels of a Problem.
const (
	// LevelError is a problem warden refuses the config for, or one that makes a part of
	// it fail (a secret it needs and cannot read).
	LevelError = "error"
	// LevelWarning is something warden accepts but should not have to (a secret file
	// others may read).
	LevelWarning = "warning"
)

// Problem is one thing wrong with a config file or with a secret it relies on.
type Problem struct {
	File string `json:"file"`
	// Line is 1-based; 0 when the problem has no line (a secret outside the config).
	Line int `json:"line,omitempty"`
	// Field is the key the problem is about ("gates.quorum.critical"), when it is known
	// apart from Message.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// Level is LevelError or LevelWarning.
	Level string `json:"level"`
}

// String is the problem as "file:line: field: message", with "warning: " before the
// message of a warning.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Level == LevelWarning {
		b.WriteString("warning: ")
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Report is what Check found: every problem, sorted by line, and where each secret
// would come from.
type Report struct {
	File     string    `json:"file"`
	Problems []Problem `json:"problems"`
	// Secrets are left out when the file could not be read as YAML, or when
	// CheckOptions.SkipSecrets says so.
	Secrets []SecretSource `json:"secrets,omitempty"`
}

// OK reports whether no problem is an error (warnings do not count).
func (r Report) OK() bool {
	return !slices.ContainsFunc(r.Problems, func(p Problem) bool { return p.Level == LevelError })
}

// CheckOptions say what Check compares the config with.
type CheckOptions struct {
	// PolicyDirs are policy directories besides the built-in pack and the config's
	// policies: (as --policies adds them): settings they read are known settings.
	PolicyDirs []string
	// NoBuiltin leaves the built-in pack out of the policies settings are judged
	// against.
	NoBuiltin bool
	// SkipSettings leaves the settings unjudged: no policy is compiled.
	SkipSettings bool
	// SkipSecrets leaves the secrets out: for a config checked away from where warden
	// runs (a pull request's CI).
	SkipSecrets bool
	// AuditKeyFile is the checkpoint signing key file to look at (default
	// audit.DefaultKeyPath, where warden audit checkpoint creates it).
	AuditKeyFile string
}

// Check reads the config file at path once and reports every problem it can find: a
// YAML syntax error (then nothing more, as nothing after it can be read), unknown keys,
// wrong types and bad values in every section, each section judged even when another
// has problems; settings against the policies' defaults; and, for each secret, where it
// would come from (the environment or a file) and whether warden would accept it. No
// secret's value is ever part of the report.
func Check(ctx context.Context, path string, opts CheckOptions) Report {
	data, err := os.ReadFile(path)
	if err != nil {
		return Report{File: path, Problems: []Problem{{File: path, Level: LevelError, Message: fmt.Sprintf("cannot read it: %v", err)}}}
	}
	return CheckData(ctx, data, path, opts)
}

// CheckData is Check of a config already read: file names it in the report.
func CheckData(ctx context.Context, data []byte, file string, opts CheckOptions) Report {
	r := Report{File: file, Problems: []Problem{}}
	c, keyLines := r.decode(data, file)
	if c != nil {
		// What warden serve refuses at its start, judged here too.
		r.addErrors(c.serveProblems(""))
	}
	if c != nil && !opts.SkipSettings {
		r.checkSettings(ctx, c, keyLines, opts)
	}
	if c != nil && !opts.SkipSecrets {
		(&secretChecker{r: &r, keyLines: keyLines, auditKey: opts.AuditKeyFile}).check(c)
	}
	for i, p := range r.Problems {
		if p.Field == "" && p.Line > 0 {
			// A decoder's message ("cannot unmarshal !!str into int") names no key: the
			// key on that line is the one.
			if k := keyAt(keyLines, p.Line); k != "" && !strings.Contains(p.Message, k) {
				r.Problems[i].Field = k
			}
		}
	}
	slices.SortStableFunc(r.Problems, func(a, b Problem) int {
		if (a.Line == 0) != (b.Line == 0) {
			return cmp.Compare(b.Line, a.Line) // lineless last
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
	})
	r.Problems = slices.Compact(r.Problems)
	return r
}

func (r *Report) addErrors(errs []*Error) {
	for _, e := range errs {
		r.Problems = append(r.Problems, Problem{File: e.File, Line: e.Line, Field: e.Field, Message: e.Msg, Level: LevelError})
	}
}

// decode reads the config, section by section when the whole does not decode, so that
// one section's problem hides no other's. It returns the config made of the sections
// that decoded (nil when the YAML is unreadable) and the line of every key, by dotted
// path ("slack.bot_token_file").
func (r *Report) decode(data []byte, file string) (*Config, map[string]int) {
	c, errs, decoded := parse(data, file, parseOptions{})
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		if decoded {
			// Blank space, which parse takes for an empty config.
			return c, map[string]int{}
		}
		// A syntax error: nothing after it can be read.
		r.addErrors([]*Error{yamlError(file, err)})
		return nil, nil
	}
	keyLines := map[string]int{}
	if len(root.Content) == 1 {
		walked := map[string]int{}
		walkLines(root.Content[0], "", walked)
		for k, l := range walked {
			keyLines[strings.TrimPrefix(k, ".")] = l
		}
	}
	if decoded {
		r.addErrors(errs)
		return c, keyLines
	}
	lines := strings.SplitAfter(string(data), "\n")
	spans, ok := topSpans(&root, lines)
	if !ok || otherBreaks(data) {
		// Not a block mapping of keys on lines of their own, or anchors shared between
		// sections: the decoder's first problem is all that can be said.
		r.addErrors(errs)
		return nil, keyLines
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first yaml.Node
	if dec.Decode(&first) == nil {
		if e := secondDocument(dec, file); e != nil {
			r.addErrors([]*Error{e})
		}
	}
	// Each section alone, from a copy of the file with every other line blank, so that
	// lines stay where they are.
	keep := make([]bool, len(spans))
	seen := map[string]int{}
	for i, sp := range spans {
		switch l, dup := seen[sp.key]; {
		case dup:
			r.addErrors([]*Error{{File: file, Line: sp.from, Field: sp.key, Msg: fmt.Sprintf("given twice (also line %d)", l)}})
			continue
		case !slices.Contains(topKeys, sp.key):
			msg := "unknown key (known: " + strings.Join(topKeys, ", ") + ")"
			if s := suggest.Closest(sp.key, topKeys); s != "" {
				msg = fmt.Sprintf("unknown key (did you mean %q?)", s)
			}
			r.addErrors([]*Error{{File: file, Line: sp.from, Field: sp.key, Msg: msg}})
			seen[sp.key] = sp.from
			continue
		}
		seen[sp.key] = sp.from
		one := make([]bool, len(spans))
		one[i] = true
		if _, errs, ok := parse(blankExcept(lines, spans, one), file, parseOptions{skipQuorum: true, keepGoing: true}); !ok {
			r.addErrors(errs)
			if !slices.Contains(reportsAll, sp.key) {
				// A section that validates itself stops at its first problem: each of
				// its keys alone says the others'.
				r.addErrors(keyByKey(lines, sp, root.Content[0].Content[2*i+1], file))
			}
			continue
		}
		keep[i] = true
	}
	// The quorum is judged with the approvers of gates:, slack: and identities:; with
	// one of them refused, it would be judged wrong.
	skipQuorum := false
	for i, sp := range spans {
		if !keep[i] && slices.Contains([]string{"gates", "slack", "identities"}, sp.key) {
			skipQuorum = true
		}
	}
	c, errs, decoded = parse(blankExcept(lines, spans, keep), file, parseOptions{skipQuorum: skipQuorum})
	r.addErrors(errs)
	if !decoded {
		return nil, keyLines
	}
	return c, keyLines
}

// span is the lines of one top-level key and its value, 1-based and inclusive.
type span struct {
	key      string
	from, to int
}

// topSpans splits a document's top-level block mapping into its keys' spans of lines.
// ok is false when it cannot be split that way: not a block mapping, two keys on one
// line, or aliases (an alias refers to an anchor that may be in another section).
func topSpans(root *yaml.Node, lines []string) (spans []span, ok bool) {
	if len(root.Content) != 1 {
		return nil, false
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode || m.Style&yaml.FlowStyle != 0 || len(m.Content) == 0 || hasAlias(m) {
		return nil, false
	}
	// The document ends at a "---" or "..." line after its first key, or at the end.
	end := len(lines)
	for i := m.Content[0].Line; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r\n")
		if l == "---" || l == "..." || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "... ") {
			end = i // lines[i] is line i+1: the document ends on line i
			break
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if len(spans) > 0 {
			prev := &spans[len(spans)-1]
			if k.Line <= prev.from {
				return nil, false
			}
			prev.to = k.Line - 1
		}
		spans = append(spans, span{key: k.Value, from: k.Line, to: end})
	}
	return spans, true
}

// otherBreaks reports whether YAML sees line breaks in data other than "\n" (a lone
// "\r", NEL, LS, PS): its lines would then not be the lines split on "\n".
func otherBreaks(data []byte) bool {
	return bytes.Contains(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r")) ||
		bytes.Contains(data, []byte("\u0085")) || bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029"))
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	return slices.ContainsFunc(n.Content, hasAlias)
}

// blankExcept is the file with every line outside the kept spans made empty.
func blankExcept(lines []string, spans []span, keep []bool) []byte {
	kept := make([]bool, len(lines)+1) // by 1-based line
	for i, sp := range spans {
		for n := sp.from; keep[i] && n <= sp.to && n < len(kept); n++ {
			kept[n] = true
		}
	}
	var b bytes.Buffer
	for i, l := range lines {
		switch {
		case kept[i+1]:
			b.WriteString(l)
		case strings.HasSuffix(l, "\n"):
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// keyAt is the path of the key on a line, or "".
func keyAt(keyLines map[string]int, line int) string {
	best := ""
	better := func(k string) bool {
		// A key rather than a list item ({regions: [a, b]} puts them on one line), then
		// the innermost ({a: {b: 1}} puts both keys on one line).
		if item, bestItem := strings.HasSuffix(k, "]"), strings.HasSuffix(best, "]"); best != "" && item != bestItem {
			return !item
		}
		return len(k) > len(best) || (len(k) == len(best) && k < best)
	}
	for k, l := range keyLines {
		if l == line && better(k) {
			best = k
		}
	}
	return best
}

// checkSettings judges the settings against the policies that read them: the built-in
// pack, the config's policies: directories and opts.PolicyDirs, as warden scan does.
func (r *Report) checkSettings(ctx context.Context, c *Config, keyLines map[string]int, opts CheckOptions) {
	sources := []engine.Source{engine.Builtin()}
	if opts.NoBuiltin {
		sources = []engine.Source{engine.BuiltinLibrary()}
	}
	for i, dir := range append(slices.Clone(c.Policies), opts.PolicyDirs...) {
		field, line := "--policies", 0
		if i < len(c.Policies) {
			field, line = fmt.Sprintf("policies[%d]", i), keyLines[fmt.Sprintf("policies[%d]", i)]
		}
		st, err := os.Stat(dir)
		switch {
		case err != nil:
			r.Problems = append(r.Problems, Problem{File: c.File, Line: line, Field: field, Level: LevelError, Message: fmt.Sprintf("%q: no such directory", dir)})
			continue
		case !st.IsDir():
			r.Problems = append(r.Problems, Problem{File: c.File, Line: line, Field: field, Level: LevelError, Message: fmt.Sprintf("%q: not a directory", dir)})
			continue
		}
		sources = append(sources, engine.Source{FS: os.DirFS(dir), Prefix: dir})
	}
	if len(sources) == 1 && opts.NoBuiltin {
		return
	}
	eng, err := engine.New(ctx, engine.Config{Sources: sources})
	if err != nil {
		r.Problems = append(r.Problems, Problem{File: c.File, Line: keyLines["policies"], Field: "policies", Level: LevelError,
			Message: "the policies do not load, so the settings cannot be judged: " + err.Error()})
		return
	}
	for _, se := range eng.CheckSettings(c.Settings) {
		e := c.SettingError(se.Name, se.Path, se.Msg)
		r.Problems = append(r.Problems, Problem{File: e.File, Line: e.Line, Field: "settings." + se.Path, Message: se.Msg, Level: LevelError})
	}
}

// reportsAll are the sections that report every problem they have themselves: reading
// one of their keys alone, without the others it is judged with (gates.quorum without
// gates.auto), would only add false problems.
var reportsAll = []string{"gates", "certs", "slack", "identities", "reports", "export"}

// keyByKey parses a refused section one key at a time (the section's line and that
// key's lines, every other line blank) and returns the problems each key has alone,
// about that key and within its lines: a problem of the section as a whole (a key it
// requires, which a key alone lacks) is the whole section's to report.
func keyByKey(lines []string, sp span, section *yaml.Node, file string) []*Error {
	if section.Kind != yaml.MappingNode || section.Style&yaml.FlowStyle != 0 || len(section.Content) < 4 || hasAlias(section) {
		return nil
	}
	var out []*Error
	for i := 0; i+1 < len(section.Content); i += 2 {
		from, to := section.Content[i].Line, sp.to
		if i+2 < len(section.Content) {
			to = section.Content[i+2].Line - 1
		}
		if from <= sp.from || to < from {
			return nil // keys sharing lines: they cannot be told apart
		}
		var b bytes.Buffer
		for n, l := range lines {
			switch {
			case n+1 == sp.from || (n+1 >= from && n+1 <= to):
				b.WriteString(l)
			case strings.HasSuffix(l, "\n"):
				b.WriteByte('\n')
			}
		}
		_, errs, _ := parse(b.Bytes(), file, parseOptions{skipQuorum: true, keepGoing: true})
		own := sp.key + "." + section.Content[i].Value
		for _, e := range errs {
			if e.Line >= from && e.Line <= to && (e.Field == own || strings.HasPrefix(e.Field, own+".") || strings.HasPrefix(e.Field, own+"[")) {
				out = append(out, e)
			}
		}
	}
	return out
}
