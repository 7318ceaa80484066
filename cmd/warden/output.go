package main

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/warden-sec/warden/internal/termesc"
)

// writeEscapedJSON writes v as indented JSON whose strings cannot drive a terminal:
// control characters in what clouds, configs and the environment gave are escaped.
func writeEscapedJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termesc.EscapeJSON(buf.Bytes()))
	return err
}
