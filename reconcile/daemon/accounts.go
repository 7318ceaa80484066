package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/store"
)

// accountLists are the organisation's account lists this process kept or read, by
// digest (state.PutAccountList): a sweep's thousands of jobs name one list, read once.
type accountLists struct {
	mu    sync.Mutex
	lists map[string][]string
}

// maxAccountLists bounds the lists a process remembers; lists change only when accounts
// join or leave.
const maxAccountLists = 64

func (l *accountLists) get(digest string) ([]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.lists[digest]
	return a, ok
}

func (l *accountLists) put(digest string, accounts []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lists == nil || len(l.lists) >= maxAccountLists {
		l.lists = map[string][]string{}
	}
	l.lists[digest] = accounts
}

// accountsRef keeps accounts once and returns the digest jobs name them by ("" for
// none).
func (d *Daemon) accountsRef(ctx context.Context, accounts []string) (string, error) {
	digest := state.AccountListDigest(accounts)
	if digest == "" {
		return "", nil
	}
	if _, ok := d.lists.get(digest); ok {
		return digest, nil
	}
	err := d.o.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := state.PutAccountList(ctx, tx, accounts, time.Now())
		return err
	})
	if err != nil {
		return "", err
	}
	d.lists.put(digest, accounts)
	return digest, nil
}

// accountsOf is the accounts a job evaluates with: the list ref names, else listed.
func (d *Daemon) accountsOf(ctx context.Context, listed []string, ref string) ([]string, error) {
	if ref == "" {
		return listed, nil
	}
	if a, ok := d.lists.get(ref); ok {
		return a, nil
	}
	var a []string
	err := d.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		a, err = state.AccountList(ctx, q, ref)
		return err
	})
	if err != nil {
		return nil, err
	}
	d.lists.put(ref, a)
	return a, nil
}
