package awsapi

import (
	"context"
	"io"
	"math/bits"
	"sync"

	"golang.org/x/sync/semaphore"
)

// DefaultReplayReads is Options.ReplayReads' default: the bytes of answers the replays of
// one Sessions read at once. At the start of an unchanged sweep of 500 accounts, 600
// reads with four requests each on their way got their first answers together: without
// a bound, their buffers (478 MB) were most of the replica's live heap.
const DefaultReplayReads = 64 << 20

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
//
// reading bounds the bytes of the answers being read at once (Options.ReplayReads): a
// read takes its share when it starts and gives it back (done) once its answer is
// compared and kept or given back, which never waits on another read.
type bodyPool struct {
	classes [bodyClasses]sync.Pool // of *[]byte
	reading *semaphore.Weighted    // nil: no bound
	limit   int64
}

func newBodyPool(reading int64) bodyPool {
	return bodyPool{reading: semaphore.NewWeighted(reading), limit: reading}
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
// (≥ 0). It first waits for its share of the bytes read at once (ctx ends the wait): the
// buffer's first size, or the whole bound for a larger one, so that an answer larger than
// the bound is read alone. held is that share, which the caller gives back with done
// once it has kept the answer or given its buffer back. On an error the buffer and the
// share are given back.
func (p *bodyPool) read(ctx context.Context, r io.Reader, length int64) (b []byte, held int64, err error) {
	n := 64 << 10
	if length >= 0 && length < 1<<maxBodyClass {
		n = int(length) + 1 // room to see the end without growing
	}
	if p.reading != nil {
		size := n
		if c, ok := bodyClass(n); ok {
			size = bodyClassSize(c)
		}
		held = min(int64(size), p.limit)
		if err := p.reading.Acquire(ctx, held); err != nil {
			return nil, 0, err
		}
	}
	b = p.get(n)
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
			return b, held, nil
		}
		if err != nil {
			p.put(b)
			p.done(held)
			return nil, 0, err
		}
	}
}

// done gives back a read's share of the bytes read at once (read's held).
func (p *bodyPool) done(held int64) {
	if p.reading != nil && held > 0 {
		p.reading.Release(held)
	}
}
