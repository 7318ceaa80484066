// Package terraform holds the Terraform modules of warden's own identities: aws-account,
// aws-organization and gcp, and their README. Their .tf files and README are written
// here, once; the policy documents beside them are what `warden permissions` prints,
// generated from the collectors', remediators' and sinks' declared calls
// (permissions.Terraform writes both, `warden permissions --format terraform`).
// deploy's tests parse the modules with HashiCorp's HCL library and hold them to those
// documents.
package terraform

import "embed"

// Modules are the modules' own files (each module's .tf, and README.md at the root),
// without the generated documents.
//
//go:embed README.md aws-account/*.tf aws-organization/*.tf gcp/*.tf
var Modules embed.FS
