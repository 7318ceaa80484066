package awsapi

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestBodyPool_read(t *testing.T) {
	var p bodyPool
	for _, c := range []struct {
		name   string
		size   int
		known  bool                      // the length is announced
		reader func(io.Reader) io.Reader // how the answer arrives
	}{
		{"empty", 0, true, nil},
		{"empty, length unknown", 0, false, nil},
		{"a byte at a time", 5000, false, iotest.OneByteReader},
		{"one class exactly", 4096, true, nil},
		{"one past a class", 4097, true, iotest.HalfReader},
		{"growing from 64 KiB", 300 << 10, false, iotest.HalfReader},
		{"larger than the classes", 17 << 20, true, nil},
		{"larger than the classes, length unknown", 17 << 20, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := bytes.Repeat([]byte("<RoleName>r</RoleName>"), c.size/22+1)[:c.size]
			var r io.Reader = bytes.NewReader(want)
			if c.reader != nil {
				r = c.reader(r)
			}
			length := int64(-1)
			if c.known {
				length = int64(c.size)
			}
			for range 2 { // the second from a buffer given back
				got, err := p.read(r, length)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("read %d bytes, %v; want %d bytes", len(got), err, len(want))
				}
				p.put(got)
				r = bytes.NewReader(want)
			}
		})
	}
}

func TestBodyPool_readError(t *testing.T) {
	var p bodyPool
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(make([]byte, 10000)), iotest.ErrReader(boom))
	if b, err := p.read(r, -1); !errors.Is(err, boom) || b != nil {
		t.Errorf("read: %d bytes, %v; want nothing and the reader's error", len(b), err)
	}
}

func TestBodyClass(t *testing.T) {
	for _, c := range []struct {
		n     int
		class int
		ok    bool
	}{
		{0, 0, true}, {4096, 0, true}, {4097, 1, true}, {5120, 1, true}, {5121, 2, true},
		{8192, 4, true}, {8193, 5, true}, {66561, 17, true}, {16 << 20, 48, true}, {16<<20 + 1, 49, false},
	} {
		if class, ok := bodyClass(c.n); class != c.class || ok != c.ok {
			t.Errorf("bodyClass(%d) = %d, %v; want %d, %v", c.n, class, ok, c.class, c.ok)
		}
	}
	// Every size gets the smallest class that holds it, and no class wastes more than a
	// fifth of its buffer.
	for n := 1; n <= 16<<20; n += 1 + n/97 {
		c, ok := bodyClass(n)
		if !ok {
			t.Fatalf("bodyClass(%d): no class", n)
		}
		size := bodyClassSize(c)
		if size < n || (c > 0 && bodyClassSize(c-1) >= n) {
			t.Fatalf("bodyClass(%d) = %d of %d bytes: not the smallest class that holds it", n, c, size)
		}
		if n > 4096 && float64(size-n) > 0.2*float64(size) {
			t.Fatalf("bodyClass(%d): a buffer of %d bytes wastes more than a fifth", n, size)
		}
	}
	var p bodyPool
	// A buffer not of a class's capacity is not kept.
	p.put(make([]byte, 0, 5000))
	if b := p.get(5000); cap(b) != 5120 {
		t.Errorf("get(5000) has capacity %d, want its class's 5120", cap(b))
	}
}
