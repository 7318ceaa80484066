package state_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

func TestAccountList(t *testing.T) {
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			st := storetest.Open(t, dsn(t))
			put := func(accounts []string) string {
				t.Helper()
				var digest string
				if err := st.InTx(ctx, func(tx *store.Tx) error {
					var err error
					digest, err = state.PutAccountList(ctx, tx, accounts, at)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return digest
			}
			a := put([]string{"222222222222", "111111111111", "acme-prod", "111111111111"})
			// The same accounts in another order, kept again: the same digest, one row.
			if b := put([]string{"acme-prod", "222222222222", "111111111111"}); b != a || a == "" {
				t.Fatalf("digests %q and %q of the same accounts", a, b)
			}
			if c := put([]string{"111111111111"}); c == a {
				t.Fatal("another list has the same digest")
			}
			if d := put(nil); d != "" {
				t.Fatalf("an empty list has digest %q, want none", d)
			}
			var got []string
			if err := st.Read(ctx, func(q *store.Reader) error {
				var err error
				got, err = state.AccountList(ctx, q, a)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if want := []string{"111111111111", "222222222222", "acme-prod"}; !slices.Equal(got, want) {
				t.Fatalf("list %v, want %v", got, want)
			}
			// A digest no list has, and a list edited in place, are errors, never an
			// empty or other list.
			for _, tc := range []struct{ name, digest, edit, want string }{
				{"unknown", strings.Repeat("0", 64), "", "no such list"},
				{"edited", a, `["111111111111"]`, "do not match"},
			} {
				if tc.edit != "" {
					if err := st.InTx(ctx, func(tx *store.Tx) error {
						_, err := tx.ExecContext(ctx, `UPDATE account_lists SET accounts = ? WHERE digest = ?`, tc.edit, tc.digest)
						return err
					}); err != nil {
						t.Fatal(err)
					}
				}
				err := st.Read(ctx, func(q *store.Reader) error {
					_, err := state.AccountList(ctx, q, tc.digest)
					return err
				})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
				}
			}
		})
	}
}
