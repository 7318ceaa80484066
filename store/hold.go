package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
)

// holds are the in-process locks of a SQLite store (Hold).
type holds struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// Hold takes the lock of name until release is called, waiting while another holder
// has it or until ctx ends. It serializes work outside any transaction that must not
// interleave across workers or replicas: remediation holds a cloud target's lock from
// its drift re-check to its verification, so that two fixes of one resource (two
// settings of one password policy) never read-modify-write it at once. On PostgreSQL it
// is a session advisory lock on a connection of its own, shared by every process on the
// database and let go if the process dies; on SQLite, which one process writes, it is a
// lock of this Store. Take it before any transaction, never inside one.
func (s *Store) Hold(ctx context.Context, name string) (release func(), err error) {
	if s.d.keyLock == "" {
		return s.holds.take(ctx, name)
	}
	key := lockKey(s.d.schema, "hold", name)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("hold %s: %w", name, err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		conn.Close()
		return nil, fmt.Errorf("hold %s: %w", name, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// Closing the connection returns it to the pool with the lock still held
			// unless it is unlocked first; should the unlock fail, the connection is
			// discarded so that the session, and its lock, end.
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key); err != nil {
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
			conn.Close()
		})
	}, nil
}

// take waits for name's in-process lock.
func (h *holds) take(ctx context.Context, name string) (func(), error) {
	for {
		h.mu.Lock()
		if h.locks == nil {
			h.locks = map[string]chan struct{}{}
		}
		held, busy := h.locks[name]
		if !busy {
			done := make(chan struct{})
			h.locks[name] = done
			h.mu.Unlock()
			var once sync.Once
			return func() {
				once.Do(func() {
					h.mu.Lock()
					delete(h.locks, name)
					h.mu.Unlock()
					close(done)
				})
			}, nil
		}
		h.mu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return nil, fmt.Errorf("hold %s: %w", name, ctx.Err())
		}
	}
}
