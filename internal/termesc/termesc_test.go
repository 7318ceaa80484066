package termesc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/warden-sec/warden/internal/termesc"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is unchanged", "arn:aws:iam::1:user/alice opens 0.0.0.0/0", "arn:aws:iam::1:user/alice opens 0.0.0.0/0"},
		{"printable unicode is unchanged", "ünïcödé 名前 ✓", "ünïcödé 名前 ✓"},
		{"backslashes are unchanged", `C:\path\x1b`, `C:\path\x1b`},
		{"ANSI escape", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"OSC window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\a`},
		{"C1 control (8-bit CSI)", "a\u009b2Jb", `a\u009b2Jb`},
		{"invalid UTF-8 byte", "a\x9b\xffb", `a\x9b\xffb`},
		{"newline and tab", "a\nb\tc\rd", `a\nb\tc\rd`},
		{"DEL and NUL", "a\x7fb\x00c", `a\x7fb\x00c`},
		{"bidi override", "evil\u202egpj.exe", `evil\u202egpj.exe`},
		{"line separator", "a\u2028b", `a\u2028b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := termesc.Escape(tc.in); got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestEscapeLines_keepsNewlinesAndTabs(t *testing.T) {
	in := "load policies:\n\tp.rego:3: bad \x1b[2J\xff"
	want := "load policies:\n\tp.rego:3: bad \\x1b[2J\\xff"
	if got := termesc.EscapeLines(in); got != want {
		t.Errorf("EscapeLines(%q) = %q, want %q", in, got, want)
	}
}

func TestEscapeJSON(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain JSON is unchanged", `{"a":"b ünï"}`, `{"a":"b ünï"}`},
		{"C1 control", "{\"a\":\"x\u009by\"}", `{"a":"x\u009by"}`},
		{"bidi override", "[\"evil\u202egpj\"]", `["evil\u202egpj"]`},
		{"DEL", "\"a\x7fb\"", `"a\u007fb"`},
		{"other E2 runes stay", `"a – b ✓"`, `"a – b ✓"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(termesc.EscapeJSON([]byte(tc.in)))
			if got != tc.want {
				t.Errorf("EscapeJSON(%q) = %q, want %q", tc.in, got, tc.want)
			}
			var a, b any
			if json.Unmarshal([]byte(tc.in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("EscapeJSON changed what %q means: %q", tc.in, got)
			}
		})
	}
}

// FuzzEscape: whatever a resource holds, the escaped text is valid UTF-8 without a rune
// a terminal would act on, and text that needs no escaping is left alone.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"plain", "a\x1b[2J", "\u009b\u202e", "\xff\xfe", "ünï\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{termesc.Escape(s), termesc.EscapeLines(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("Escape(%q) = %q: invalid UTF-8", s, out)
			}
			for _, r := range out {
				if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
					t.Fatalf("Escape(%q) = %q holds %U", s, out, r)
				}
			}
		}
		if strings.ContainsRune(termesc.Escape(s), '\n') {
			t.Fatalf("Escape(%q) keeps a newline", s)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		esc := termesc.EscapeJSON(b)
		var back string
		if err := json.Unmarshal(esc, &back); err != nil {
			t.Fatalf("EscapeJSON(%s) = %s: %v", b, esc, err)
		}
		var want string
		_ = json.Unmarshal(b, &want)
		if back != want {
			t.Fatalf("EscapeJSON changed %q into %q", want, back)
		}
	})
}

func TestWriteJSON_escapesWhatTheEncoderLeavesRaw(t *testing.T) {
	var b strings.Builder
	if err := termesc.WriteJSON(&b, map[string]string{"name": "a\u009bb\u202ec"}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "{\n  \"name\": \"a\\u009bb\\u202ec\"\n}\n"; got != want {
		t.Errorf("WriteJSON = %q, want %q", got, want)
	}
}
