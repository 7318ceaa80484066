package findings_test

import (
	"encoding/json"
	"testing"

	"github.com/warden-sec/warden/findings"
)

func TestValidText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"valid text is unchanged", "arn:aws:iam::1:user/ünï", "arn:aws:iam::1:user/ünï"},
		{"each invalid byte becomes U+FFFD", "a\xff\xfeb", "a\ufffd\ufffdb"},
		{"truncated sequence", "T\xe2\x82", "T\ufffd\ufffd"},
		{"NUL", "a\x00b", "a\ufffdb"},
		{"control characters stay (they are valid text)", "a\x1b[2J", "a\x1b[2J"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := findings.ValidText(tc.in); got != tc.want {
				t.Errorf("ValidText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// Text cleaned by ValidText equals text that went through encoding/json, so that values
// stored as columns and values decoded from stored JSON can be compared.
func TestValidText_agreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{"a\xff\xfeb", "T\xe2\x82", "\xc3(", "ok"} {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON string
		if err := json.Unmarshal(b, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if got := findings.ValidText(in); got != viaJSON {
			t.Errorf("ValidText(%q) = %q, encoding/json gives %q", in, got, viaJSON)
		}
	}
}
