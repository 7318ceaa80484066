package awsapi

import (
	"io"
	"math/bits"
	"sync"
)

// Classes of the answer buffers a bodyPool keeps: 4 KiB, then four to each doubling
// (5, 6, 7, 8 KiB, 10, 12, 14, 16 KiB, …) up to 16 MiB.
const (
	minBodyClass = 12 // 4 KiB
	maxBodyClass = 24 // 16 MiB
	bodyClasses  = 1 + 4*(maxBodyClass-minBodyClass)
)

// bodyPool keeps the buffers replays read answers into. An unchanged sweep reads
// hundreds of megabytes of answers only to digest them: allocating each buffer anew
// cleared it and gave the GC all of it to sweep (a third of a replay's CPU). Buffers are
// kept by size class, a quarter of a doubling apart: with classes a power of two apart,
// an IAM answer of 65 KB took a 128 KiB buffer, and the buffers of the answers on their
// way were half empty (at 500 accounts, 160 MB of them in an unchanged sweep's heap).
// Larger answers are allocated and dropped.
type bodyPool struct {
	classes [bodyClasses]sync.Pool // of *[]byte
}

// bodyClass is the size class holding n bytes, and whether there is one.
func bodyClass(n int) (int, bool) {
	if n <= 1<<minBodyClass {
		return 0, true
	}
	m := n - 1
	k := bits.Len(uint(m)) - 1 // 1<<k <= m < 1<<(k+1)
	j := (m >> (k - 2)) & 3    // m < 1<<k + (j+1)<<(k-2)
	c := 4*(k-minBodyClass) + j + 1
	return c, c < bodyClasses
}

// bodyClassSize is the capacity of class c's buffers.
func bodyClassSize(c int) int {
	if c == 0 {
		return 1 << minBodyClass
	}
	k, j := minBodyClass+(c-1)/4, (c-1)%4
	return 1<<k + (j+1)<<(k-2)
}

// get is an empty buffer of at least n bytes' capacity.
func (p *bodyPool) get(n int) []byte {
	c, ok := bodyClass(n)
	if !ok {
		return make([]byte, 0, n)
	}
	if b, _ := p.classes[c].Get().(*[]byte); b != nil {
		return (*b)[:0]
	}
	return make([]byte, 0, bodyClassSize(c))
}

// put gives a buffer of get's back. Buffers of other capacities are dropped.
func (p *bodyPool) put(b []byte) {
	c, ok := bodyClass(cap(b))
	if !ok || cap(b) != bodyClassSize(c) {
		return
	}
	p.classes[c].Put(&b)
}

// read reads r to its end into a buffer of the pool's, sized by length when it is known
// (≥ 0). On an error the buffer is given back.
func (p *bodyPool) read(r io.Reader, length int64) ([]byte, error) {
	n := 64 << 10
	if length >= 0 && length < 1<<maxBodyClass {
		n = int(length) + 1 // room to see the end without growing
	}
	b := p.get(n)
	for {
		if len(b) == cap(b) {
			nb := p.get(2 * cap(b))
			nb = append(nb, b...)
			p.put(b)
			b = nb
		}
		k, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			p.put(b)
			return nil, err
		}
	}
}
