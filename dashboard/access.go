package dashboard

import (
	"net/http"

	"github.com/warden-sec/warden/access"
	"github.com/warden-sec/warden/internal/usage"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/store"
)

// accessData is the Access page: each IAM principal the daemon last read, its grants
// against its use, the surplus with its evidence and the fix that would close it.
type accessData struct {
	Principals []access.Principal
	// Surplus counts the principals with unused grants; NoData those without usage.
	Surplus, NoData int
	WindowDays      int
}

// accessPage shows what `warden access` shows, from the principals the daemon keeps
// (reconcile/state): without a daemon, or with usage off, it says how to get the data.
func (d *Dashboard) accessPage(w http.ResponseWriter, r *http.Request, p *Principal) {
	ctx := r.Context()
	window := usage.WindowDays(d.o.UnusedWindowDays)
	data := accessData{WindowDays: window}
	err := d.o.Store.Read(ctx, func(q *store.Reader) error {
		rs, err := state.ResourcesOfTypes(ctx, q, access.PrincipalTypes()...)
		if err != nil {
			return err
		}
		for _, res := range rs {
			pr, err := access.Judge(res, window, d.o.Fixes)
			if err != nil {
				return err
			}
			switch {
			case pr.Data == "none":
				data.NoData++
			case len(pr.Unused) > 0:
				data.Surplus++
			}
			data.Principals = append(data.Principals, pr)
		}
		return nil
	})
	if err != nil {
		d.failed(w, r, p, "read the principals", err)
		return
	}
	d.render(w, r, p, http.StatusOK, "access", "Access", data)
}
