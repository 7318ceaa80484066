package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits bound what one snapshot may hold, so that a hostile or broken input is refused
// with its line and field instead of exhausting memory or time. Zero fields take the
// defaults of DefaultLimits.
type Limits struct {
	// MaxValue is the largest single scalar (a string or number), in bytes.
	MaxValue int
	// MaxResource is the largest resource object, in bytes.
	MaxResource int
	// MaxHeaderValue is the largest header field value ("scopes" of a big organisation).
	MaxHeaderValue int
}

// DefaultLimits are generous for every resource a collector writes: a 1 MiB value, a 16 MiB
// resource and a 256 MiB header field.
func DefaultLimits() Limits {
	return Limits{MaxValue: 1 << 20, MaxResource: 16 << 20, MaxHeaderValue: 256 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxValue <= 0 {
		l.MaxValue = d.MaxValue
	}
	if l.MaxResource <= 0 {
		l.MaxResource = d.MaxResource
	}
	if l.MaxHeaderValue <= 0 {
		l.MaxHeaderValue = d.MaxHeaderValue
	}
	return l
}

// An Option changes how a Reader reads.
type Option func(*Reader)

// WithLimits replaces the default limits.
func WithLimits(l Limits) Option { return func(r *Reader) { r.limits = l.withDefaults() } }

// WithContext makes the reader stop with ctx's error as soon as ctx is done: every refill
// of its buffer checks it, and no value may grow past the limits between two refills.
func WithContext(ctx context.Context) Option { return func(r *Reader) { r.ctx = ctx } }

// Element is one resource of a snapshot as raw JSON, with where it stands in the input.
type Element struct {
	Index  int    // position in the resources array
	Line   int    // line of its first byte
	Offset int64  // byte offset of its first byte
	Data   []byte // the resource object; owned by the caller
}

// Reader streams a snapshot: the header fields are decoded as they come, and the resources
// are handed out one raw element at a time, so that a snapshot of a million resources is
// never held in memory whole. "version" must come before "resources"; "scopes" and the
// other header fields may come before or after.
type Reader struct {
	name   string
	src    io.Reader
	ctx    context.Context
	limits Limits

	buf  []byte
	pos  int   // next unread byte in buf
	end  int   // end of valid bytes in buf
	base int64 // input offset of buf[0]
	line int   // line at buf[pos]
	eof  bool

	header      Header
	sawVersion  bool
	started     bool // the top-level '{' was read
	needComma   bool // the next top-level key needs a ',' first
	inResources bool
	index       int
	done        bool
	seen        map[string]bool
	lines       map[string]int // line of each top-level field's key
}

// NewReader reads a snapshot from r; name (a path, or "-") is used in errors.
func NewReader(r io.Reader, name string, opts ...Option) *Reader {
	rd := &Reader{name: name, src: r, buf: make([]byte, 1<<20), line: 1, seen: map[string]bool{},
		ctx: context.Background(), limits: DefaultLimits(), lines: map[string]int{}}
	for _, o := range opts {
		o(rd)
	}
	return rd
}

// Header returns the header fields read so far; it is complete once Next returned io.EOF.
func (r *Reader) Header() Header { return r.header }

// HeaderLine is the line of a top-level field ("collected_at") read so far, or 0.
func (r *Reader) HeaderLine(field string) int { return r.lines[field] }

// Name is the snapshot's name as given to NewReader.
func (r *Reader) Name() string { return r.name }

// Next returns the next resource element, or io.EOF after the last one once the whole
// snapshot has been read and checked.
func (r *Reader) Next() (Element, error) {
	if r.done {
		return Element{}, io.EOF
	}
	for !r.inResources {
		if err := r.advance(); err != nil {
			if err == io.EOF {
				r.done = true
			}
			return Element{}, err
		}
		if r.done {
			return Element{}, io.EOF
		}
	}
	if err := r.skipSpace(); err != nil {
		return Element{}, err
	}
	c, err := r.peek()
	if err != nil {
		return Element{}, r.syntax("unexpected end of input in resources")
	}
	if c == ']' {
		r.pos++
		r.inResources = false
		r.needComma = true
		return r.Next()
	}
	if r.index > 0 {
		if c != ',' {
			return Element{}, r.syntax(fmt.Sprintf("expected ',' or ']' after resources[%d], found %q", r.index-1, c))
		}
		r.pos++
		if err := r.skipSpace(); err != nil {
			return Element{}, err
		}
		if c, err = r.peek(); err != nil {
			return Element{}, r.syntax("unexpected end of input in resources")
		}
	}
	if c != '{' {
		return Element{}, r.fieldErr(fmt.Sprintf("resources[%d]", r.index), fmt.Sprintf("expected a resource object, found %q", c))
	}
	el := Element{Index: r.index, Line: r.line, Offset: r.base + int64(r.pos)}
	raw, err := r.scanValue(r.limits.MaxResource)
	if err != nil {
		return Element{}, r.locateLimit(err, fmt.Sprintf("resources[%d]", r.index), "--max-resource-size")
	}
	el.Data = append([]byte(nil), raw...)
	r.index++
	return el, nil
}

// advance reads top-level keys until the resources array opens or the object closes.
func (r *Reader) advance() error {
	if err := r.skipSpace(); err != nil {
		return err
	}
	if !r.started {
		c, err := r.peek()
		if err != nil {
			return r.syntax("empty input: a snapshot is a JSON object")
		}
		if c != '{' {
			return r.syntax(fmt.Sprintf("a snapshot is a JSON object, found %q", c))
		}
		r.pos++
		r.started = true
		return nil
	}
	c, err := r.peek()
	if err != nil {
		return r.syntax("unexpected end of input: the snapshot object is not closed")
	}
	if c == '}' {
		r.pos++
		if err := r.skipSpace(); err != nil {
			return err
		}
		if _, err := r.peek(); err == nil {
			return r.syntax("unexpected data after the snapshot object")
		}
		return r.finish()
	}
	if r.needComma {
		if c != ',' {
			return r.syntax(fmt.Sprintf("expected ',' or '}', found %q", c))
		}
		r.pos++
		if err := r.skipSpace(); err != nil {
			return err
		}
	}
	keyLine := r.line
	rawKey, err := r.scanValue(r.limits.MaxValue)
	if err != nil {
		return r.locateLimit(err, "", "--max-value-size")
	}
	var key string
	if err := json.Unmarshal(rawKey, &key); err != nil {
		return &Error{File: r.name, Line: keyLine, Msg: fmt.Sprintf("expected a field name, found %s", truncate(rawKey))}
	}
	if err := r.skipSpace(); err != nil {
		return err
	}
	if c, err := r.peek(); err != nil || c != ':' {
		return r.syntax(fmt.Sprintf("expected ':' after %q", key))
	}
	r.pos++
	if err := r.skipSpace(); err != nil {
		return err
	}
	r.needComma = true
	if r.seen[key] {
		return &Error{File: r.name, Line: keyLine, Field: key, Msg: "appears twice"}
	}
	r.seen[key] = true
	r.lines[key] = keyLine
	if key == "collected_at" && r.seen["resources"] {
		// Ages are measured from collected_at, and resources are judged as they stream
		// past: a collected_at after them would come too late to be used.
		return &Error{File: r.name, Line: keyLine, Field: key, Msg: `comes after "resources": a snapshot must state when it was collected before its resources`}
	}
	if key == "resources" {
		if !r.sawVersion {
			return &Error{File: r.name, Line: keyLine, Field: "resources", Msg: `comes before "version": a snapshot must state its version first`}
		}
		if c, err := r.peek(); err != nil || c != '[' {
			return &Error{File: r.name, Line: r.line, Field: "resources", Msg: "must be an array"}
		}
		r.pos++
		r.inResources = true
		return nil
	}
	valLine := r.line
	raw, err := r.scanValue(r.limits.MaxHeaderValue)
	if err != nil {
		return r.locateLimit(err, key, "")
	}
	return r.headerField(key, raw, valLine)
}

func (r *Reader) headerField(key string, raw []byte, line int) error {
	fail := func(err error) error {
		return &Error{File: r.name, Line: line, Field: key, Msg: jsonMsg(err)}
	}
	if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
		if err := duplicateIn(r.name, key, line, raw); err != nil {
			return err
		}
	}
	switch key {
	case "version":
		if err := json.Unmarshal(raw, &r.header.Version); err != nil {
			return fail(err)
		}
		if r.header.Version != Version {
			return &Error{File: r.name, Line: line, Field: key, Msg: fmt.Sprintf("unsupported snapshot version %d (this warden reads version %d)", r.header.Version, Version)}
		}
		r.sawVersion = true
	case "collected_at":
		if err := json.Unmarshal(raw, &r.header.CollectedAt); err != nil {
			return fail(err)
		}
	case "source":
		if err := json.Unmarshal(raw, &r.header.Source); err != nil {
			return fail(err)
		}
	case "accounts":
		if err := json.Unmarshal(raw, &r.header.Accounts); err != nil {
			return fail(err)
		}
	case "scopes":
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r.header.Scopes); err != nil {
			return fail(err)
		}
		for i, s := range r.header.Scopes {
			if err := checkScope(s); err != nil {
				return &Error{File: r.name, Line: line, Field: fmt.Sprintf("scopes[%d]", i), Msg: err.Error()}
			}
		}
	default:
		msg := "unknown field"
		if s := Suggest(key, []string{"version", "collected_at", "source", "accounts", "scopes", "resources"}); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return &Error{File: r.name, Line: line, Field: key, Msg: msg}
	}
	return nil
}

func checkScope(s Scope) error {
	if s.ID == "" {
		return errors.New(`"id" is required`)
	}
	switch s.Status {
	case ScopeOK, ScopePartial, ScopeFailed:
		return nil
	case "":
		return fmt.Errorf("scope %q: \"status\" is required (ok, partial or failed)", s.ID)
	default:
		return fmt.Errorf("scope %q: unknown status %q (want ok, partial or failed)", s.ID, s.Status)
	}
}

func (r *Reader) finish() error {
	if !r.sawVersion {
		return &Error{File: r.name, Line: r.line, Field: "version", Msg: "is required"}
	}
	if !r.seen["resources"] {
		return &Error{File: r.name, Line: r.line, Field: "resources", Msg: "is required (an empty snapshot has \"resources\": [])"}
	}
	r.done = true
	return io.EOF
}

// skipSpace consumes white space, counting lines.
func (r *Reader) skipSpace() error {
	for {
		for r.pos < r.end {
			switch r.buf[r.pos] {
			case '\n':
				r.line++
			case ' ', '\t', '\r':
			default:
				return nil
			}
			r.pos++
		}
		if err := r.fill(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func (r *Reader) peek() (byte, error) {
	if r.pos >= r.end {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	return r.buf[r.pos], nil
}

// fill reads more input, keeping buf[pos:end]; io.EOF when there is none.
func (r *Reader) fill() error {
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("read snapshot %s: %w", r.name, err)
	}
	if r.eof {
		return io.EOF
	}
	if r.pos > 0 {
		n := copy(r.buf, r.buf[r.pos:r.end])
		r.base += int64(r.pos)
		r.end = n
		r.pos = 0
	}
	if r.end == len(r.buf) {
		r.buf = append(r.buf, make([]byte, len(r.buf))...)
	}
	n, err := r.src.Read(r.buf[r.end:])
	r.end += n
	if err == io.EOF {
		r.eof = true
		if n > 0 {
			return nil
		}
		return io.EOF
	}
	if err != nil {
		return fmt.Errorf("read snapshot %s: %w", r.name, err)
	}
	return nil
}

// limitErr says that a value under scan outgrew a limit; the caller names the field.
type limitErr struct {
	at        int // position in buf where the offending value starts
	startLine int // line of buf[r.pos], the start of the value under scan
	what      string
	size      int
	max       int
}

func (e *limitErr) Error() string {
	return fmt.Sprintf("%s is over %s (%s so far); refused", e.what, sizeText(e.max), sizeText(e.size))
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// scanValue consumes one JSON value of at most maxLen bytes and returns its bytes (valid
// until the next read). It checks only structure (brackets and strings) and the limits;
// the value itself is parsed later. Its work is linear in the value's length: every byte
// is looked at a bounded number of times, however long a string runs.
func (r *Reader) scanValue(maxLen int) ([]byte, error) {
	startLine := r.line
	maxScalar := r.limits.MaxValue
	i := r.pos // scan position; r.pos stays at the value's start while scanning
	depth, inString := 0, false
	first := true
	strOff := 0     // offset from r.pos of the open string's quote
	scalarOff := -1 // offset from r.pos where the current number or literal began
	qpos := -1      // position of the next '"' at or after i, or r.end when none is buffered
	for {
		for i < r.end {
			if inString {
				// Most bytes of a snapshot are inside strings: jump to the next quote,
				// escape or line break with vectorized searches. The quote's position is
				// kept while escapes are handled one by one, so that a long string full of
				// escapes is not searched again from each of them.
				if qpos < i {
					if q := bytes.IndexByte(r.buf[i:r.end], '"'); q >= 0 {
						qpos = i + q
					} else {
						qpos = r.end
					}
				}
				seg := r.buf[i:qpos]
				stop := qpos
				if bs := bytes.IndexByte(seg, '\\'); bs >= 0 {
					stop, seg = i+bs, seg[:bs]
				}
				if nl := bytes.IndexByte(seg, '\n'); nl >= 0 {
					stop = i + nl
				}
				i = stop
				if n := i - (r.pos + strOff); n > maxScalar {
					return nil, &limitErr{startLine: startLine, at: r.pos + strOff, what: "a string", size: n, max: maxScalar}
				}
				if i >= r.end {
					break
				}
				switch r.buf[i] {
				case '\\':
					i += 2
				case '"':
					inString = false
					i++
					if depth == 0 {
						return r.takeValue(i, maxLen, startLine)
					}
				case '\n':
					return nil, r.syntaxAt(r.base+int64(i), "line break inside a string")
				}
				continue
			}
			c := r.buf[i]
			switch c {
			case '"', '{', '[', '}', ']', '\n', ',', ' ', '\t', '\r', ':':
				if scalarOff >= 0 {
					if n := i - (r.pos + scalarOff); n > maxScalar {
						return nil, &limitErr{startLine: startLine, at: r.pos + scalarOff, what: "a value", size: n, max: maxScalar}
					}
					scalarOff = -1
				}
			default:
				if scalarOff < 0 {
					scalarOff = i - r.pos
				}
			}
			switch c {
			case '"':
				inString, strOff = true, i-r.pos
			case '{', '[':
				depth++
			case '}', ']':
				if depth == 0 {
					if first {
						return nil, r.syntaxAt(r.base+int64(i), fmt.Sprintf("unexpected %q", c))
					}
					return r.takeValue(i, maxLen, startLine)
				}
				depth--
				if depth == 0 {
					i++
					return r.takeValue(i, maxLen, startLine)
				}
			case '\n':
				if depth == 0 {
					return r.takeValue(i, maxLen, startLine)
				}
				r.line++
			case ',', ' ', '\t', '\r':
				if depth == 0 {
					if first {
						return nil, r.syntaxAt(r.base+int64(i), fmt.Sprintf("expected a value, found %q", c))
					}
					return r.takeValue(i, maxLen, startLine)
				}
			}
			first = false
			i++
		}
		// Out of input mid-value: keep what was scanned and read more, unless the value
		// has already outgrown what may be held. An escape at the very end leaves i one
		// past end: the escaped byte is skipped as soon as it arrives.
		off := i - r.pos
		if off > maxLen {
			return nil, &limitErr{startLine: startLine, at: r.pos, what: "the value", size: off, max: maxLen}
		}
		if inString {
			if n := r.end - (r.pos + strOff); n > maxScalar {
				return nil, &limitErr{startLine: startLine, at: r.pos + strOff, what: "a string", size: n, max: maxScalar}
			}
		} else if scalarOff >= 0 {
			if n := r.end - (r.pos + scalarOff); n > maxScalar {
				return nil, &limitErr{startLine: startLine, at: r.pos + scalarOff, what: "a value", size: n, max: maxScalar}
			}
		}
		if err := r.fill(); err != nil {
			if err == io.EOF {
				if depth == 0 && !inString && off > 0 {
					if scalarOff >= 0 && off-scalarOff > maxScalar {
						return nil, &limitErr{startLine: startLine, at: r.pos + scalarOff, what: "a value", size: off - scalarOff, max: maxScalar}
					}
					return r.takeValue(r.pos+off, maxLen, startLine)
				}
				return nil, r.syntaxAt(r.base+int64(r.end), fmt.Sprintf("unexpected end of input in a value that starts on line %d", startLine))
			}
			return nil, err
		}
		i = r.pos + off
		qpos = -1
	}
}

// pathAt names the innermost field open at the end of data, a prefix of one JSON value:
// ".attributes.access_keys[1].created". It runs only to locate an error.
func pathAt(data []byte) string {
	type frame struct {
		obj bool
		key string
		idx int
	}
	var st []frame
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(data) {
				i = j
				break
			}
			if n := len(st); n > 0 && st[n-1].obj && expectKey {
				var k string
				if json.Unmarshal(data[i:j+1], &k) != nil {
					k = string(data[i+1 : j])
				}
				st[n-1].key, expectKey = k, false
			}
			i = j
		case '{':
			st = append(st, frame{obj: true})
			expectKey = true
		case '[':
			st = append(st, frame{})
		case '}', ']':
			if len(st) > 0 {
				st = st[:len(st)-1]
			}
		case ',':
			if n := len(st); n > 0 {
				if st[n-1].obj {
					expectKey = true
				} else {
					st[n-1].idx++
				}
			}
		}
	}
	var b strings.Builder
	for _, f := range st {
		if f.obj {
			if f.key != "" {
				b.WriteString(".")
				b.WriteString(f.key)
			}
		} else {
			fmt.Fprintf(&b, "[%d]", f.idx)
		}
	}
	return b.String()
}

// locateLimit turns a limitErr from scanValue into an Error naming the line and field of
// the value that outgrew its limit; other errors pass through.
func (r *Reader) locateLimit(err error, field, flag string) error {
	var le *limitErr
	if !errors.As(err, &le) {
		return err
	}
	at := min(max(le.at, r.pos), r.end)
	path := field + pathAt(r.buf[r.pos:at])
	if le.at > r.pos || le.what != "the value" {
		flag = "--max-value-size"
	}
	msg := le.Error()
	if le.at == r.pos && le.what == "the value" && strings.HasPrefix(field, "resources[") {
		msg = strings.Replace(msg, "the value", "the resource", 1)
	}
	if flag != "" {
		msg += " (raise it with " + flag + " if the snapshot is trusted)"
	}
	line := le.startLine + bytes.Count(r.buf[r.pos:at], []byte{'\n'})
	return &Error{File: r.name, Line: line, Offset: r.base + int64(at), Field: strings.TrimPrefix(path, "."), Msg: msg}
}

// takeValue takes a scanned value that ends at end, unless it is longer than maxLen.
func (r *Reader) takeValue(end, maxLen, startLine int) ([]byte, error) {
	if n := end - r.pos; n > maxLen {
		return nil, &limitErr{startLine: startLine, at: r.pos, what: "the value", size: n, max: maxLen}
	}
	return r.take(end), nil
}

func (r *Reader) take(end int) []byte {
	v := r.buf[r.pos:end]
	r.pos = end
	return v
}

func (r *Reader) syntax(msg string) error {
	return &Error{File: r.name, Line: r.line, Offset: r.base + int64(r.pos), Msg: msg}
}

func (r *Reader) syntaxAt(off int64, msg string) error {
	return &Error{File: r.name, Line: r.line, Offset: off, Msg: msg}
}

func (r *Reader) fieldErr(field, msg string) error {
	return &Error{File: r.name, Line: r.line, Offset: r.base + int64(r.pos), Field: field, Msg: msg}
}

// jsonMsg turns an encoding/json error into a phrase about the value.
func jsonMsg(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s: expected %s, found %s", te.Field, te.Type, te.Value)
		}
		return fmt.Sprintf("expected %s, found %s", te.Type, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
