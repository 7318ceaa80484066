package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"
)

// typeSchemas is read only after package initialisation.
var typeSchemas = schemas()

// schemaErr is a value that does not fit its schema, with the path to it.
type schemaErr struct {
	path []string // keys, and "[i]" for array elements, innermost first
	msg  string
	dup  bool // path's last key appears twice: locate the second one
}

func (e *schemaErr) at(seg string) *schemaErr {
	e.path = append(e.path, seg)
	return e
}

// outward returns the path outermost first.
func (e *schemaErr) outward() []string {
	out := slices.Clone(e.path)
	slices.Reverse(out)
	return out
}

// pathString renders a path (outermost first) as "attributes.access_keys[1].created".
func pathString(path []string) string {
	var b strings.Builder
	for _, s := range path {
		if !strings.HasPrefix(s, "[") && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// checker validates parsed values; its scratch space is reused from one call to the next.
type checker struct {
	keys [][]byte
	// latest is the latest time a past event may carry (collected_at plus a day of clock
	// skew); zero when the snapshot has no collected_at.
	latest time.Time
}

// checkAttributes checks a resource's attributes against its type's schema.
func (c *checker) checkAttributes(typ string, v *fastjson.Value) *schemaErr {
	s := typeSchemas[typ]
	if s == nil {
		return nil
	}
	if v == nil || v.Type() == fastjson.TypeNull {
		v = emptyObject
	}
	if err := c.check(v, s); err != nil {
		return err.at("attributes")
	}
	return nil
}

var emptyObject = fastjson.MustParse(`{}`)

func (c *checker) check(v *fastjson.Value, s *spec) *schemaErr {
	t := v.Type()
	switch s.kind {
	case kString:
		if t != fastjson.TypeString {
			return mismatch("a string", v)
		}
	case kEnum:
		if t != fastjson.TypeString {
			return mismatch("a string", v)
		}
		if !slices.Contains(s.enum, string(v.GetStringBytes())) {
			return &schemaErr{msg: fmt.Sprintf("%s is not one of %s", quoteValue(v), oneOf(s.enum))}
		}
	case kBool:
		if t != fastjson.TypeTrue && t != fastjson.TypeFalse {
			return mismatch("true or false", v)
		}
	case kInt:
		if t != fastjson.TypeNumber {
			return mismatch("an integer", v)
		}
		n, err := v.Int64()
		if err != nil {
			return &schemaErr{msg: fmt.Sprintf("expected an integer, found %s", quoteValue(v))}
		}
		if n < s.min || n > s.max {
			return &schemaErr{msg: fmt.Sprintf("%d is outside %d-%d", n, s.min, s.max)}
		}
	case kTime, kPastTime:
		if t != fastjson.TypeString {
			return mismatch("an RFC 3339 time such as \"2026-11-30T12:00:00Z\"", v)
		}
		at, err := checkTime(v.GetStringBytes())
		if err != "" {
			return &schemaErr{msg: err}
		}
		if s.kind == kPastTime && !c.latest.IsZero() && at.After(c.latest) {
			// A key created after the snapshot was taken would look young to every age
			// check: the snapshot contradicts itself.
			return &schemaErr{msg: fmt.Sprintf("%q is after the snapshot's collected_at (%s): an event cannot postdate its observation",
				truncate(v.GetStringBytes()), c.latest.Add(-ClockSkew).UTC().Format(time.RFC3339))}
		}
	case kProtocol:
		switch t {
		case fastjson.TypeString:
			if !protocolText(v.GetStringBytes()) {
				return &schemaErr{msg: fmt.Sprintf("%s is not a protocol: a name such as \"tcp\" or \"all\", or a number 0-255 without leading zeros (\"-1\" for all)", quoteValue(v))}
			}
		case fastjson.TypeNumber:
			if n, err := v.Int64(); err != nil || n < -1 || n > 255 {
				return &schemaErr{msg: fmt.Sprintf("%s is not a protocol number (-1 or 0-255)", v)}
			}
		default:
			return mismatch("a protocol name or number", v)
		}
	case kArray:
		if t != fastjson.TypeArray {
			return mismatch("a list", v)
		}
		for i, e := range v.GetArray() {
			if err := c.check(e, s.elem); err != nil {
				return err.at("[" + strconv.Itoa(i) + "]")
			}
		}
	case kObject:
		if err := c.checkObject(v, s); err != nil {
			return err
		}
		if s.check != nil {
			return s.check(v)
		}
	case kDocument:
		if t != fastjson.TypeObject {
			return mismatch("an object", v)
		}
		return c.checkDuplicates(v)
	}
	return nil
}

func (c *checker) checkObject(v *fastjson.Value, s *spec) *schemaErr {
	obj, err := v.Object()
	if err != nil {
		return mismatch("an object", v)
	}
	if dup := c.duplicateKey(obj); dup != "" {
		return &schemaErr{path: []string{dup}, msg: "appears twice in one object", dup: true}
	}
	var ferr *schemaErr
	seen := 0
	obj.Visit(func(k []byte, fv *fastjson.Value) {
		if ferr != nil {
			return
		}
		i := slices.IndexFunc(s.fields, func(f field) bool { return f.name == string(k) })
		if i < 0 {
			msg := "unknown field"
			if sug := Suggest(string(k), fieldNames(s)); sug != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sug)
			}
			ferr = &schemaErr{path: []string{string(k)}, msg: msg}
			return
		}
		f := s.fields[i]
		if f.required {
			seen++
		}
		if fv.Type() == fastjson.TypeNull && !f.required {
			return
		}
		if fv.Type() == fastjson.TypeNull {
			ferr = &schemaErr{path: []string{f.name}, msg: "is required and may not be null"}
			return
		}
		if err := c.check(fv, f.spec); err != nil {
			ferr = err.at(f.name)
		}
	})
	if ferr != nil {
		return ferr
	}
	if seen < requiredCount(s) {
		for _, f := range s.fields {
			if f.required && obj.Get(f.name) == nil {
				return &schemaErr{msg: fmt.Sprintf("%q is required", f.name)}
			}
		}
	}
	return nil
}

// protocolText accepts a protocol name (letters, digits, '-', as AWS and GCP write them)
// or a decimal number without leading zeros: " tcp" or "06" would match no policy's
// protocol and so skip the rule.
func protocolText(b []byte) bool {
	if len(b) == 0 || len(b) > 32 {
		return false
	}
	if string(b) == "-1" {
		return true
	}
	if b[0] >= '0' && b[0] <= '9' {
		n, err := strconv.Atoi(string(b))
		return err == nil && n <= 255 && (b[0] != '0' || len(b) == 1)
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// portOrder refuses a security-group rule whose from_port is above its to_port: no port
// is in such a range, so every port policy would skip the rule.
func portOrder(v *fastjson.Value) *schemaErr {
	switch strings.ToLower(string(v.GetStringBytes("protocol"))) {
	case "tcp", "udp", "sctp", "6", "17", "132":
	default:
		return nil // ICMP rules carry a type and a code in these fields, in any order
	}
	from, to := v.GetInt64("from_port"), v.GetInt64("to_port")
	if from > to {
		return &schemaErr{path: []string{"from_port"}, msg: fmt.Sprintf("%d is above to_port %d: the range holds no port", from, to)}
	}
	return nil
}

// checkDuplicates walks a free-form value for objects with a key twice: whichever copy a
// reader keeps, the other one would be silently lost.
func (c *checker) checkDuplicates(v *fastjson.Value) *schemaErr {
	switch v.Type() {
	case fastjson.TypeObject:
		obj, _ := v.Object()
		if dup := c.duplicateKey(obj); dup != "" {
			return &schemaErr{path: []string{dup}, msg: "appears twice in one object", dup: true}
		}
		var ferr *schemaErr
		obj.Visit(func(k []byte, fv *fastjson.Value) {
			if ferr == nil {
				if err := c.checkDuplicates(fv); err != nil {
					ferr = err.at(string(k))
				}
			}
		})
		return ferr
	case fastjson.TypeArray:
		for i, e := range v.GetArray() {
			if err := c.checkDuplicates(e); err != nil {
				return err.at("[" + strconv.Itoa(i) + "]")
			}
		}
	}
	return nil
}

// duplicateKey returns a key that obj holds twice, or "".
func (c *checker) duplicateKey(obj *fastjson.Object) string {
	if obj.Len() < 2 {
		return ""
	}
	c.keys = c.keys[:0]
	dup := ""
	obj.Visit(func(k []byte, _ *fastjson.Value) {
		if dup != "" {
			return
		}
		for _, prev := range c.keys {
			if bytes.Equal(prev, k) {
				dup = string(k)
				return
			}
		}
		c.keys = append(c.keys, k)
	})
	return dup
}

func requiredCount(s *spec) int {
	n := 0
	for _, f := range s.fields {
		if f.required {
			n++
		}
	}
	return n
}

func fieldNames(s *spec) []string {
	out := make([]string, len(s.fields))
	for i, f := range s.fields {
		out[i] = f.name
	}
	return out
}

// checkTime accepts RFC 3339 times from 1970 on; it returns the time, or what is wrong.
func checkTime(b []byte) (time.Time, string) {
	t, err := time.Parse(time.RFC3339, string(b))
	if err != nil {
		return t, fmt.Sprintf("%q is not an RFC 3339 time such as \"2026-11-30T12:00:00Z\"", truncate(b))
	}
	if t.Year() < 1970 {
		return t, fmt.Sprintf("%q is before 1970: not a time a cloud records", truncate(b))
	}
	return t, ""
}

// ClockSkew is how far a recorded time may run ahead of the snapshot's collected_at (or a
// snapshot's collected_at ahead of the clock) before the snapshot is refused.
const ClockSkew = 24 * time.Hour

// SetCollectedAt makes the parser refuse times of past events (a key's creation, its last
// use) later than collected_at plus ClockSkew; a zero time turns the check off.
func (p *Parser) SetCollectedAt(t time.Time) {
	if t.IsZero() {
		p.c.latest = time.Time{}
		return
	}
	p.c.latest = t.Add(ClockSkew)
}

func mismatch(want string, v *fastjson.Value) *schemaErr {
	return &schemaErr{msg: fmt.Sprintf("expected %s, found %s", want, describe(v))}
}

func describe(v *fastjson.Value) string {
	switch v.Type() {
	case fastjson.TypeString:
		return "the string " + quoteValue(v)
	case fastjson.TypeNumber:
		return "the number " + truncate([]byte(v.String()))
	case fastjson.TypeTrue, fastjson.TypeFalse:
		return v.String()
	case fastjson.TypeNull:
		return "null"
	case fastjson.TypeArray:
		return "a list"
	}
	return "an object"
}

func quoteValue(v *fastjson.Value) string {
	if v.Type() == fastjson.TypeString {
		return strconv.Quote(truncate(v.GetStringBytes()))
	}
	return truncate([]byte(v.String()))
}

func oneOf(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// locate returns the byte offset in data (one JSON object) of the key at the end of path,
// or of the value it names when the last segment is an index; the second occurrence of
// the last key when second is set. It runs only to place an error on its line.
func locate(data []byte, path []string, second bool) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	best := 0
	var walk func(path []string) bool
	walk = func(path []string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		d, ok := tok.(json.Delim)
		if !ok || len(path) == 0 {
			return ok && len(path) == 0
		}
		seg := path[0]
		if d == '[' {
			idx, err := strconv.Atoi(strings.Trim(seg, "[]"))
			if err != nil {
				return false
			}
			for i := 0; dec.More(); i++ {
				if i == idx {
					best = int(dec.InputOffset())
					for best < len(data) && strings.IndexByte(" \t\r\n,", data[best]) >= 0 {
						best++
					}
					if len(path) == 1 {
						return true
					}
					return walk(path[1:])
				}
				if !skip(dec) {
					return false
				}
			}
			return false
		}
		found := 0
		for dec.More() {
			start := int(dec.InputOffset())
			for start < len(data) && strings.IndexByte(" \t\r\n,", data[start]) >= 0 {
				start++
			}
			kt, err := dec.Token()
			if err != nil {
				return false
			}
			if k, _ := kt.(string); k == seg {
				found++
				if len(path) == 1 && (!second || found == 2) {
					best = start
					return true
				}
				if len(path) > 1 {
					best = start
					return walk(path[1:])
				}
			}
			if !skip(dec) {
				return false
			}
		}
		return false
	}
	walk(path)
	return best
}

// skip consumes one value from dec.
func skip(dec *json.Decoder) bool {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err == io.EOF && depth == 0
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return true
		}
	}
}

// HasSchema reports whether typ has an attribute schema.
func HasSchema(typ string) bool { return typeSchemas[typ] != nil }

// duplicateIn checks a header value for objects with a key twice, returning the located
// error or nil.
func duplicateIn(file, field string, line int, raw []byte) error {
	v, err := fastjson.ParseBytes(raw)
	if err != nil {
		return nil // the typed decoding that follows reports it
	}
	var c checker
	serr := c.checkDuplicates(v)
	if serr == nil {
		return nil
	}
	path := serr.outward()
	if off := locate(raw, path, serr.dup); off > 0 {
		line += bytes.Count(raw[:min(off, len(raw))], []byte{'\n'})
	}
	ps := pathString(path)
	if !strings.HasPrefix(ps, "[") {
		ps = "." + ps
	}
	return &Error{File: file, Line: line, Field: field + ps, Msg: serr.msg}
}

// Validate checks one resource against the resource model and its type's attribute
// schema, as reading it from a snapshot would: collectors' tests use it to show that what
// they write is what the reader accepts.
func Validate(r Resource) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("validate %s: %w", r.UID, err)
	}
	_, _, err = NewParser("resource " + r.UID).Parse(Element{Line: 1, Data: data})
	return err
}
