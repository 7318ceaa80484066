// Package snapshot defines warden's resource model and its versioned, streamable snapshot
// format: what collectors write and what the engine reads.
package snapshot

import (
	"strings"
	"time"
)

// Version is the snapshot format version this package reads and writes.
const Version = 1

// Resource is one normalized cloud resource. Attributes hold the type-specific fields of
// docs/resources.md, as decoded JSON values.
type Resource struct {
	UID        string            `json:"uid"`
	Type       string            `json:"type"`
	Name       string            `json:"name,omitempty"`
	Account    string            `json:"account,omitempty"`
	Region     string            `json:"region,omitempty"`
	Scope      string            `json:"scope,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
	Attributes map[string]any    `json:"attributes,omitempty"`
}

// Scope status values.
const (
	ScopeOK      = "ok"
	ScopePartial = "partial"
	ScopeFailed  = "failed"
)

// Scope is one unit of collection (a service of an account, in a region) and how reading it
// went. Resources of a scope that is not ok are unknown, never deleted.
type Scope struct {
	ID           string `json:"id"`
	Provider     string `json:"provider,omitempty"`
	Account      string `json:"account,omitempty"`
	Service      string `json:"service,omitempty"`
	Region       string `json:"region,omitempty"`
	Status       string `json:"status"`
	Error        string `json:"error,omitempty"`
	AccessDenied int    `json:"access_denied,omitempty"`
	Throttled    int    `json:"throttled,omitempty"`
	Resources    int    `json:"resources,omitempty"`
	// Calls is the number of API calls (attempts, retries included) the scope took.
	Calls int `json:"calls,omitempty"`
}

// Complete reports whether the scope was read in full, so that the absence of a resource
// in it means the resource is gone.
func (s Scope) Complete() bool { return s.Status == ScopeOK }

// Header is everything in a snapshot but its resources.
type Header struct {
	Version     int       `json:"version"`
	CollectedAt time.Time `json:"collected_at"`
	Source      string    `json:"source,omitempty"`
	// Accounts lists the AWS accounts and GCP projects the snapshot covers; policies treat
	// them as known (e.g. trusted cross-account principals).
	Accounts []string `json:"accounts,omitempty"`
	Scopes   []Scope  `json:"scopes,omitempty"`
}

// ScopeByID returns the header's scope with the given id.
func (h *Header) ScopeByID(id string) (Scope, bool) {
	for _, s := range h.Scopes {
		if s.ID == id {
			return s, true
		}
	}
	return Scope{}, false
}

// DefaultScope derives the scope id of a resource that does not name one:
// provider/account/service, plus the region for regional resources.
func DefaultScope(typ, account, region string) string {
	parts := strings.SplitN(typ, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	if parts[0] == "tls" {
		return "tls/" + account
	}
	id := parts[0] + "/" + account + "/" + parts[1]
	if region != "" && region != "global" {
		id += "/" + region
	}
	return id
}
