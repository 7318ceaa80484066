package awsapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"
)

func TestBodyPool_read(t *testing.T) {
	p := newBodyPool(DefaultReplayReads)
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
				got, held, err := p.read(t.Context(), r, length)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("read %d bytes, %v; want %d bytes", len(got), err, len(want))
				}
				p.put(got)
				p.done(held)
				r = bytes.NewReader(want)
			}
		})
	}
}

func TestBodyPool_readError(t *testing.T) {
	p := newBodyPool(64 << 10)
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(make([]byte, 10000)), iotest.ErrReader(boom))
	if b, held, err := p.read(t.Context(), r, -1); !errors.Is(err, boom) || b != nil || held != 0 {
		t.Errorf("read: %d bytes (%d held), %v; want nothing and the reader's error", len(b), held, err)
	}
	// Its share was given back: the whole bound can be taken again.
	if !p.reading.TryAcquire(64 << 10) {
		t.Error("a failed read kept its share of the bytes read at once")
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

func TestBodyPool_readsAtOnceAreBounded(t *testing.T) {
	p := newBodyPool(8 << 10)
	answer := func(n int) io.Reader { return bytes.NewReader(make([]byte, n)) }
	first, held, err := p.read(t.Context(), answer(5000), 5000)
	if err != nil || held != 5120 {
		t.Fatalf("first read: %d held, %v; want its class's 5120 bytes", held, err)
	}
	// A second answer of that size would pass the bound: it waits for the first.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if b, _, err := p.read(ctx, answer(5000), 5000); !errors.Is(err, context.DeadlineExceeded) || b != nil {
		t.Fatalf("second read while the first holds its share: %d bytes, %v; want it to wait", len(b), err)
	}
	got := make(chan error, 1)
	go func() {
		b, held, err := p.read(t.Context(), answer(5000), 5000)
		if err == nil {
			p.put(b)
			p.done(held)
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second read did not wait for the first: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	p.put(first)
	p.done(held) // the first answer compared: the second goes on
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// An answer larger than the bound is read alone, holding the whole bound.
	big, held, err := p.read(t.Context(), answer(100<<10), 100<<10)
	if err != nil || len(big) != 100<<10 || held != 8<<10 {
		t.Fatalf("an answer larger than the bound: %d bytes, %d held, %v", len(big), held, err)
	}
	if p.reading.TryAcquire(1) {
		t.Error("a read went on beside an answer holding the whole bound")
	}
	p.done(held)
}
