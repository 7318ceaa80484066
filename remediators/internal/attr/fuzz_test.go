package attr

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// decodeNumbers decodes JSON as a snapshot file is read: numbers as json.Number.
func decodeNumbers(b []byte) (any, error) {
	var v any
	err := Decode(b, &v)
	return v, err
}

// FuzzCanonical: the canonical JSON of before-states, which drift checks compare byte for
// byte, is valid JSON, a fixed point (canonical of canonical is itself), keeps the value,
// and gives the same bytes whether the value came from a snapshot file (json.Number) or
// from a collector (float64), for numbers as warden writes them.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"role":"ops","principal":"*","document":{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}}`,
		`{"group":"sg-1","rule":{"protocol":"tcp","from_port":22,"to_port":22,"cidr":"0.0.0.0/0"}}`,
		`{"resource":"projects/acme-prod-4821","role":"roles/editor","member":"user:a@x","condition":null}`,
		`[1e3, -0, 0.1, 12345678901234567890, "<&>", "\u2028", "\ud800"]`, `"x"`, `null`, `{"a":{"b":[{}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeNumbers(b)
		if err != nil {
			return
		}
		c1, err := Canonical(v)
		if err != nil {
			t.Fatalf("Canonical of decoded JSON %q: %v", b, err)
		}
		if !json.Valid(c1) || bytes.HasSuffix(c1, []byte("\n")) {
			t.Fatalf("Canonical(%q) = %q: not one line of JSON", b, c1)
		}
		back, err := decodeNumbers(c1)
		if err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("Canonical(%q) = %q, which reads back as %#v, not %#v (%v)", b, c1, back, v, err)
		}
		if c2, err := Canonical(back); err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("canonical of canonical %q is %q (%v)", c1, c2, err)
		}
		// The same value from a collector: float64 numbers, written as warden writes them.
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			return // a number float64 cannot hold: never a collector's value
		}
		written, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		fromFile, err := decodeNumbers(written)
		if err != nil {
			t.Fatal(err)
		}
		cf, err1 := Canonical(fromFile)
		cg, err2 := Canonical(g)
		if err1 != nil || err2 != nil || !bytes.Equal(cf, cg) {
			t.Fatalf("one value, two canonical forms: %q from the file, %q from the collector (%v %v)", cf, cg, err1, err2)
		}
	})
}
