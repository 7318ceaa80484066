package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

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
	name string
	src  io.Reader

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
}

// NewReader reads a snapshot from r; name (a path, or "-") is used in errors.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, src: r, buf: make([]byte, 1<<20), line: 1, seen: map[string]bool{}}
}

// Header returns the header fields read so far; it is complete once Next returned io.EOF.
func (r *Reader) Header() Header { return r.header }

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
	raw, err := r.scanValue()
	if err != nil {
		return Element{}, err
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
	rawKey, err := r.scanValue()
	if err != nil {
		return err
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
	raw, err := r.scanValue()
	if err != nil {
		return err
	}
	return r.headerField(key, raw, valLine)
}

func (r *Reader) headerField(key string, raw []byte, line int) error {
	fail := func(err error) error {
		return &Error{File: r.name, Line: line, Field: key, Msg: jsonMsg(err)}
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

// scanValue consumes one JSON value and returns its bytes (valid until the next read).
// It checks only structure (brackets and strings); the value itself is parsed later.
func (r *Reader) scanValue() ([]byte, error) {
	startLine := r.line
	i := r.pos // scan position; r.pos stays at the value's start while scanning
	depth, inString := 0, false
	first := true
	for {
		for ; i < r.end; i++ {
			c := r.buf[i]
			if inString {
				// Most bytes of a snapshot are inside strings: jump to the next quote
				// with a vectorized search when no escape or line break precedes it.
				if q := bytes.IndexByte(r.buf[i:r.end], '"'); q > 0 {
					seg := r.buf[i : i+q]
					if bytes.IndexByte(seg, '\\') < 0 && bytes.IndexByte(seg, '\n') < 0 {
						i += q
						c = '"'
					}
				}
				switch c {
				case '\\':
					i++
				case '"':
					inString = false
					if depth == 0 {
						i++
						return r.take(i), nil
					}
				case '\n':
					r.line = startLine
					return nil, r.syntaxAt(r.base+int64(i), "line break inside a string")
				}
				continue
			}
			switch c {
			case '"':
				inString = true
			case '{', '[':
				depth++
			case '}', ']':
				if depth == 0 {
					if first {
						return nil, r.syntaxAt(r.base+int64(i), fmt.Sprintf("unexpected %q", c))
					}
					return r.take(i), nil
				}
				depth--
				if depth == 0 {
					i++
					return r.take(i), nil
				}
			case '\n':
				if depth == 0 {
					return r.take(i), nil
				}
				r.line++
			case ',', ' ', '\t', '\r':
				if depth == 0 {
					if first {
						return nil, r.syntaxAt(r.base+int64(i), fmt.Sprintf("expected a value, found %q", c))
					}
					return r.take(i), nil
				}
			}
			first = false
		}
		// Out of input mid-value: keep what was scanned and read more.
		// An escape at the very end leaves i one past end: the escaped byte is skipped
		// as soon as it arrives.
		off := i - r.pos
		if err := r.fill(); err != nil {
			if err == io.EOF {
				if depth == 0 && !inString && off > 0 {
					return r.take(r.pos + off), nil
				}
				return nil, r.syntaxAt(r.base+int64(r.end), fmt.Sprintf("unexpected end of input in a value that starts on line %d", startLine))
			}
			return nil, err
		}
		i = r.pos + off
	}
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
