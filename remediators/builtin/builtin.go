// Package builtin assembles warden's registry of fixes: every remediator of
// remediators/aws and remediators/gcp, registered by action name. It lives apart from
// package remediators, which the cloud packages import.
package builtin

import (
	"slices"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	gcpfix "github.com/warden-sec/warden/remediators/gcp"
)

// Registry registers every built-in fix. The fixes call AWS through s and Google through
// c; either may be nil, for planning (Targets needs no cloud) or when warden has no
// credentials for that cloud: a fix asked to apply without them returns an error.
func Registry(s *awsapi.Sessions, c *gcpapi.Clients) (*remediators.Registry, error) {
	return remediators.NewRegistry(slices.Concat(awsfix.All(s), gcpfix.All(c))...)
}
