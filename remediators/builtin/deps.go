package builtin

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/remediators/certs"
	gcpfix "github.com/warden-sec/warden/remediators/gcp"
	"github.com/warden-sec/warden/store"
)

// Deps are what the built-in fixes call through and are configured by. Every field may
// be zero: a fix asked to apply without its cloud's clients returns an error.
type Deps struct {
	AWS *awsapi.Sessions
	GCP *gcpapi.Clients
	// Rotation configures aws.iam.rotate_access_key (the rotation: section).
	Rotation awsfix.RotationConfig
	// Certs configures certs.renew (the certs: section; nil: planning only), which keeps
	// the material it replaces, encrypted, in Store.
	Certs  *certs.Config
	Store  *store.Store
	Logger *slog.Logger
}

// New registers every built-in fix with its dependencies.
func New(d Deps) (*remediators.Registry, error) {
	renew, err := certs.New(d.Certs, d.Store, d.AWS, certs.Options{Logger: d.Logger})
	if err != nil {
		return nil, fmt.Errorf("certs.renew: %w", err)
	}
	return remediators.NewRegistry(slices.Concat(awsfix.All(d.AWS), gcpfix.All(d.GCP),
		[]remediators.Remediator{awsfix.NewRotateAccessKey(d.AWS, d.Rotation), renew})...)
}
