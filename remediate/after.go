package remediate

import "strings"

// After says in a word what a fix by remediator leaves in place of the part, for the
// plan's table and the approval channels' messages alike.
func After(remediator string) string {
	switch {
	case strings.Contains(remediator, "deactivate"), strings.Contains(remediator, "disable"):
		return "disabled"
	case strings.Contains(remediator, "revoke"):
		return "revoked"
	case strings.Contains(remediator, "detach"):
		return "detached (inline: deleted)"
	case strings.Contains(remediator, "delete"):
		return "deleted"
	case strings.Contains(remediator, "remove"):
		return "removed"
	case strings.Contains(remediator, "replace_managed"):
		return "replaced by a policy of the services used (below)"
	case strings.Contains(remediator, "rightsize"):
		return "narrowed to what was used (below)"
	case strings.Contains(remediator, "rotate"):
		return "rotated (a new key stored, the old one deactivated after the grace period)"
	case strings.Contains(remediator, "renew"):
		return "renewed"
	case strings.Contains(remediator, "set_"), strings.Contains(remediator, "update"):
		return "rewritten to the fixed value"
	}
	return "fixed"
}
