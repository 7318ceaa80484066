package store

// Prepared is how many statements the transaction keeps prepared, for tests.
func (t *Tx) Prepared() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.stmts)
}
