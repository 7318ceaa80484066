// Package collectorstest holds the checks every scope collector's tests share.
package collectorstest

import (
	"context"
	"slices"
	"testing"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/snapshot"
)

// OnlyScopeDenied checks that, with the cloud denying what scope denied reads, c still
// lists that scope, reads it as failed with the denial counted and no resource, and reads
// every other scope it lists in full: the fault was the one scope's.
func OnlyScopeDenied(t *testing.T, c collectors.ScopeCollector, denied string) {
	t.Helper()
	ctx := context.Background()
	scopes, err := c.Scopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(scopes))
	for i, s := range scopes {
		ids[i] = s.ID
	}
	if !slices.Contains(ids, denied) {
		t.Fatalf("Scopes %v lack %s", ids, denied)
	}
	for _, s := range scopes {
		var sink collectors.MemorySink
		if err := c.CollectScope(ctx, s.ID, &sink); err != nil {
			t.Fatalf("CollectScope(%s): %v", s.ID, err)
		}
		if len(sink.Scopes) != 1 {
			t.Fatalf("CollectScope(%s) reported %d scopes, want its own", s.ID, len(sink.Scopes))
		}
		got := sink.Scopes[0]
		switch {
		case s.ID == denied:
			if got.Status != snapshot.ScopeFailed || got.AccessDenied == 0 || got.Resources != 0 || len(sink.Resources) != 0 {
				t.Errorf("denied scope = %+v with %d resources, want failed, denied counted, none", got, len(sink.Resources))
			}
		case got.Status != snapshot.ScopeOK:
			t.Errorf("scope %s = %+v, want ok: the fault was another scope's", s.ID, got)
		}
	}
}
