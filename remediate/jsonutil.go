package remediate

import (
	"bytes"
	"encoding/json"
)

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
