// Package builtin assembles warden's registry of fixes: every remediator of
// remediators/aws, remediators/gcp and remediators/certs, registered by the action name
// of its Spec. It lives apart from package remediators, which the fix packages import.
package builtin

import (
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
)

// Registry registers every built-in fix with the default configuration. The fixes call
// AWS through s and Google through c; either may be nil, for planning (Targets needs no
// cloud) or when warden has no credentials for that cloud.
func Registry(s *awsapi.Sessions, c *gcpapi.Clients) (*remediators.Registry, error) {
	return New(Deps{AWS: s, GCP: c})
}
