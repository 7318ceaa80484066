package remediate

import (
	"bytes"
	"encoding/json"
)

// compact is b without insignificant space and with sorted keys, or b itself when it is
// not JSON: the form before-states are compared and keyed in.
func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := jsonCompact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// jsonCompact writes src re-encoded through encoding/json, numbers kept as written.
func jsonCompact(dst *bytes.Buffer, src []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dst.Write(b)
	return nil
}
