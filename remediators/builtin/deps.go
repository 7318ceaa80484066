package builtin

import (
	"slices"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	gcpfix "github.com/warden-sec/warden/remediators/gcp"
)

// Deps are what the built-in fixes call through and are configured by. Every field may
// be zero: a fix asked to apply without its cloud's clients returns an error.
type Deps struct {
	AWS *awsapi.Sessions
	GCP *gcpapi.Clients
	// Rotation configures aws.iam.rotate_access_key (the rotation: section).
	Rotation awsfix.RotationConfig
}

// New registers every built-in fix with its dependencies.
func New(d Deps) (*remediators.Registry, error) {
	return remediators.NewRegistry(slices.Concat(awsfix.All(d.AWS), gcpfix.All(d.GCP))...)
}
