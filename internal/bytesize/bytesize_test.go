package bytesize

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"1048576", 1 << 20, false},
		{"512KiB", 512 << 10, false},
		{"16MiB", 16 << 20, false},
		{"2GiB", 2 << 30, false},
		{"1MB", 1e6, false},
		{"0", 0, true},
		{"-1", 0, true},
		{"lots", 0, true},
		{"1.5MiB", 0, true},
		{"99999999999GiB", 0, true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestFormat_isReadBackByParse(t *testing.T) {
	for _, n := range []int64{1, 1000, 1 << 10, 3 << 20, 5 << 30, 1<<20 + 1} {
		got, err := Parse(Format(n))
		if err != nil || got != n {
			t.Errorf("Parse(Format(%d) = %q) = %d, %v", n, Format(n), got, err)
		}
	}
	if got := Format(16 << 20); got != "16MiB" {
		t.Errorf("Format(16 MiB) = %q", got)
	}
}

// A Flag is set as Parse reads and shown as Format writes; a bad size leaves it as it was.
func TestFlag(t *testing.T) {
	f := Flag(1 << 20)
	if f.String() != Format(1<<20) || f.Type() != "size" {
		t.Errorf("String %q, Type %q", f.String(), f.Type())
	}
	if err := f.Set("16MiB"); err != nil || f != 16<<20 || f.Int() != 16<<20 {
		t.Errorf("Set 16MiB: %d, %v", f, err)
	}
	if err := f.Set("big"); err == nil || f != 16<<20 {
		t.Errorf("Set big: %d, %v; want an error and the value kept", f, err)
	}
}
