package state_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// TestPutMany_asOneByOne saves resources and findings in batches of sizes around the
// statements' row counts, a uid and a fingerprint given twice among them, and reads
// back what saving them one by one leaves: every row, the later of each pair.
func TestPutMany_asOneByOne(t *testing.T) {
	at := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	for name, dsn := range storetest.Backends(t) {
		for _, n := range []int{0, 1, 399, 400, 401, 1001} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				st := storetest.Open(t, dsn(t))
				const scope = "aws/1/iam"
				var ws []state.ResourceWrite
				var fss []state.Finding
				for i := range n {
					uid := fmt.Sprintf("arn:aws:iam::1:user/u%04d", i)
					ws = append(ws, state.ResourceWrite{Resource: snapshot.Resource{UID: uid, Type: "aws.iam.user", Scope: scope},
						Data: []byte(fmt.Sprintf(`{"uid":%q,"type":"aws.iam.user","n":%d}`, uid, i)), Hash: fmt.Sprint("h", i)})
					fss = append(fss, state.Finding{Finding: findings.Finding{Fingerprint: fmt.Sprint("fp-", i), Policy: "P",
						Severity: findings.High, Scope: scope, Resource: uid}, Status: findings.StatusOpen, OpenedAt: at, SeenAt: at})
				}
				if n > 0 {
					again := ws[0]
					again.Hash, again.Data = "later", []byte(`{"uid":"`+again.Resource.UID+`","type":"aws.iam.user","later":true}`)
					ws = append(ws, again)
					later := fss[0]
					later.Status = findings.StatusUnknown
					fss = append(fss, later)
				}
				err := st.InTx(ctx, func(tx *store.Tx) error {
					if err := state.PutResources(ctx, tx, scope, ws, at); err != nil {
						return err
					}
					return state.PutFindings(ctx, tx, fss)
				})
				if err != nil {
					t.Fatal(err)
				}
				var hashes map[string]string
				var active map[string]state.Finding
				if err := st.Read(ctx, func(q *store.Reader) error {
					var err error
					if hashes, err = state.ResourceHashes(ctx, q, scope); err != nil {
						return err
					}
					active, err = state.ActiveFindings(ctx, q, scope, "", nil)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if len(hashes) != n {
					t.Fatalf("%d resources stored, want %d", len(hashes), n)
				}
				for i, w := range ws[:n] {
					want := fmt.Sprint("h", i)
					if i == 0 {
						want = "later"
					}
					if hashes[w.Resource.UID] != want {
						t.Errorf("%s: hash %q, want %q", w.Resource.UID, hashes[w.Resource.UID], want)
					}
				}
				if len(active) != n {
					t.Fatalf("%d findings stored, want %d", len(active), n)
				}
				for i := range n {
					fp := fmt.Sprint("fp-", i)
					want := findings.StatusOpen
					if i == 0 {
						want = findings.StatusUnknown
					}
					if got := active[fp]; got.Status != want || got.Finding.Resource != fss[i].Finding.Resource || !got.OpenedAt.Equal(at) {
						t.Errorf("%s: %+v, want status %s on %s opened %v", fp, got, want, fss[i].Finding.Resource, at)
					}
				}
			})
		}
	}
}
