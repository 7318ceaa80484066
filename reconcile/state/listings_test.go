package state_test

import (
	"slices"
	"testing"
	"time"

	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// A listing replaces its target's listed scopes and leaves the other targets'; each
// listing is read back by its id until it is a day old.
func TestListing(t *testing.T) {
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			st := storetest.Open(t, dsn(t))
			put := func(target string, scopes []string, l state.Listing, at time.Time) {
				t.Helper()
				if err := st.InTx(ctx, func(tx *store.Tx) error { return state.PutListing(ctx, tx, target, scopes, l, at) }); err != nil {
					t.Fatal(err)
				}
			}
			listed := func(target string) []string {
				t.Helper()
				var out []string
				if err := st.Read(ctx, func(q *store.Reader) error {
					var err error
					out, err = state.ListedScopes(ctx, q, target)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return out
			}
			listing := func(id string) (state.Listing, bool) {
				t.Helper()
				var (
					l  state.Listing
					ok bool
				)
				if err := st.Read(ctx, func(q *store.Reader) error {
					var err error
					l, ok, err = state.ListingOf(ctx, q, id)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return l, ok
			}

			if got := listed("aws"); len(got) != 0 {
				t.Fatalf("a target never listed has scopes %v", got)
			}
			if _, ok := listing("aws/1"); ok {
				t.Fatal("a listing never recorded was found")
			}
			put("aws", []string{"aws/2/iam", "aws/1/iam", "aws/1/ec2/us-east-1"}, state.Listing{ID: "aws/1", AccountsRef: "ref1"}, at)
			put("gcp", []string{"gcp/p1/iam"}, state.Listing{ID: "gcp/1", AccountsRef: "ref2"}, at)
			if got := listed("aws"); !slices.Equal(got, []string{"aws/1/ec2/us-east-1", "aws/1/iam", "aws/2/iam"}) {
				t.Errorf("ListedScopes(aws) = %v", got)
			}
			// Account 2 leaves, account 3 joins.
			put("aws", []string{"aws/1/iam", "aws/1/ec2/us-east-1", "aws/3/iam"},
				state.Listing{ID: "aws/2", AccountsRef: "ref3", Departed: []string{"aws/2/iam"}}, at.Add(time.Hour))
			if got := listed("aws"); !slices.Equal(got, []string{"aws/1/ec2/us-east-1", "aws/1/iam", "aws/3/iam"}) {
				t.Errorf("ListedScopes(aws) after account 2 left and 3 joined = %v", got)
			}
			if got := listed("gcp"); !slices.Equal(got, []string{"gcp/p1/iam"}) {
				t.Errorf("ListedScopes(gcp) = %v, want it untouched by aws's listing", got)
			}
			if l, ok := listing("aws/2"); !ok || l.AccountsRef != "ref3" || !slices.Equal(l.Departed, []string{"aws/2/iam"}) {
				t.Errorf("ListingOf(aws/2) = %+v, %v", l, ok)
			}
			if l, ok := listing("aws/1"); !ok || l.AccountsRef != "ref1" || len(l.Departed) != 0 {
				t.Errorf("ListingOf(aws/1) = %+v, %v", l, ok)
			}
			// A sweep that lists again (a retried job) keeps its first listing.
			put("aws", []string{"aws/1/iam"}, state.Listing{ID: "aws/2", AccountsRef: "ref4"}, at.Add(2*time.Hour))
			if l, ok := listing("aws/2"); !ok || l.AccountsRef != "ref3" || !slices.Equal(l.Departed, []string{"aws/2/iam"}) {
				t.Errorf("ListingOf(aws/2) listed again = %+v, %v; want the first listing kept", l, ok)
			}
			if got := listed("aws"); !slices.Equal(got, []string{"aws/1/iam"}) {
				t.Errorf("ListedScopes(aws) listed again = %v, want the last listing's", got)
			}
			// A day later the first listings are gone.
			put("aws", []string{"aws/1/iam"}, state.Listing{ID: "aws/3", AccountsRef: "ref4"}, at.Add(25*time.Hour))
			if _, ok := listing("aws/1"); ok {
				t.Error("a listing of a day ago is still kept")
			}
			if _, ok := listing("aws/3"); !ok {
				t.Error("the last listing is not kept")
			}
		})
	}
}
