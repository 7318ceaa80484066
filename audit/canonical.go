package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// CanonicalRecord returns the canonical JSON of an entry, the bytes its leaf hash
// covers: {"actor":…,"data":…,"kind":…,"seq":…,"subject":…,"time":…}, keys in that
// (sorted) order, no whitespace. at is the entry's time as RFC 3339 in UTC (Go's
// time.RFC3339Nano: up to nine fractional digits, trailing zeros dropped); data must
// already be canonical JSON (as [Entry.Data] is) and is copied verbatim. Strings are
// escaped as RFC 8785 does: \" \\ \b \f \n \r \t, other control characters as \u00XX,
// everything else as is.
func CanonicalRecord(seq int64, at, actor, kind, subject string, data []byte) []byte {
	return appendRecord(nil, seq, at, actor, kind, subject, data)
}

// appendRecord appends the canonical record to buf; Append, Verify and Export share it
// so that the three can never disagree on the bytes.
// Verify passes the columns as the database's bytes, the others as strings.
func appendRecord[S ~string | ~[]byte](buf []byte, seq int64, at, actor, kind, subject S, data []byte) []byte {
	buf = append(buf, `{"actor":`...)
	buf = appendString(buf, actor)
	buf = append(buf, `,"data":`...)
	if len(data) == 0 {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, data...)
	}
	buf = append(buf, `,"kind":`...)
	buf = appendString(buf, kind)
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, `,"subject":`...)
	buf = appendString(buf, subject)
	buf = append(buf, `,"time":`...)
	buf = appendString(buf, at)
	return append(buf, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as RFC 8785 does.
func appendString[S ~string | ~[]byte](buf []byte, s S) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// canonicalData encodes v as canonical JSON: encoding/json's encoding of v, then object
// keys sorted by their UTF-8 bytes, no insignificant whitespace, numbers kept as
// encoding/json wrote them (for a float64 that is the shortest round-tripping form, as
// in RFC 8785), strings escaped as [appendString] does. A json.RawMessage is
// canonicalized the same way, so that equal data always hashes the same.
func canonicalData(v any) (json.RawMessage, error) {
	return canonicalDataWith(v, "")
}

// canonicalDataWith is canonicalData with the correlation id added to the data: under
// "correlation" in an object, or as the object {"correlation": id} for no data. Data of
// another shape, or that names its own correlation, is kept as it is.
func canonicalDataWith(v any, correlation string) (json.RawMessage, error) {
	if out, ok := canonicalStrings(v, correlation); ok {
		return out, nil
	}
	return canonicalRoundTrip(v, correlation)
}

// canonicalRoundTrip is canonicalDataWith for any data: encoded by encoding/json, decoded
// again, and written canonically.
func canonicalRoundTrip(v any, correlation string) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode data: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("decode data: %w", err)
	}
	if correlation != "" {
		switch t := tree.(type) {
		case nil:
			tree = map[string]any{"correlation": correlation}
		case map[string]any:
			if _, ok := t["correlation"]; !ok {
				t["correlation"] = correlation
			}
		}
	}
	return appendCanonical(make([]byte, 0, len(raw)+len(correlation)+20), tree), nil
}

// canonicalStrings is canonicalDataWith for the data most events carry, an object of
// valid UTF-8 strings (a finding's scope, policy, resource, …), without the round trip
// through encoding/json: the same bytes, since encoding/json gives such strings back as
// they were. A scope's first read records an event for each of thousands of findings in
// the transaction that holds SQLite's writer. It reports false for any other data.
func canonicalStrings(v any, correlation string) (json.RawMessage, bool) {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return nil, false
	}
	size := 2
	for k, x := range m {
		s, ok := x.(string)
		if !ok || !utf8.ValidString(k) || !utf8.ValidString(s) {
			return nil, false
		}
		size += len(k) + len(s) + 6
	}
	if _, named := m["correlation"]; correlation != "" && !named {
		m = maps.Clone(m)
		m["correlation"] = correlation
		size += len(correlation) + len(`,"correlation":""`)
	}
	return appendCanonical(make([]byte, 0, size), m), true
}

// appendCanonical appends the canonical JSON of a value decoded with UseNumber.
func appendCanonical(buf []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		return strconv.AppendBool(buf, v)
	case json.Number:
		return append(buf, v...)
	case string:
		// Decoded JSON text is valid UTF-8: encoding/json replaced anything else.
		return appendString(buf, v)
	case []any:
		buf = append(buf, '[')
		for i, e := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendCanonical(buf, e)
		}
		return append(buf, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, k)
			buf = append(buf, ':')
			buf = appendCanonical(buf, v[k])
		}
		return append(buf, '}')
	}
	// encoding/json decodes into the types above only; should that change, its own
	// encoding is still deterministic.
	b, _ := json.Marshal(v)
	return append(buf, b...)
}
