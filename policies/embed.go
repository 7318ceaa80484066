// Package policies embeds warden's built-in Rego policy pack: every policy of the catalog,
// the shared library under lib/, and their tests.
package policies

import "embed"

// FS holds the pack's .rego files, tests included, at their paths under policies/.
//
//go:embed lib aws gcp certs
var FS embed.FS
