package config

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"1048576", 1 << 20, false},
		{"768MiB", 768 << 20, false},
		{"1.5GiB", 3 << 29, false},
		{" 900 MiB ", 900 << 20, false},
		{"900MB", 900e6, false},
		{"64KiB", 64 << 10, false},
		{"2kB", 2000, false},
		{"1TiB", 1 << 40, false},
		{"512B", 512, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"lots", 0, true},
		{"-1GiB", 0, true},
		{"1e9", 0, true},
		{"NaN", 0, true},
		{"Inf", 0, true},
		{"0x10", 0, true},
		{"1 PiB", 0, true},
		{"99999999999TiB", 0, true},
	} {
		got, err := ParseSize(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (error: %v)", c.in, got, err, c.want, c.err)
		}
		if err != nil && !strings.Contains(err.Error(), "768MiB") {
			t.Errorf("ParseSize(%q): %v; want an error with an example", c.in, err)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"768MiB", "1.5GiB", "900MB", "12", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d: a negative amount", s, n)
		}
	})
}
