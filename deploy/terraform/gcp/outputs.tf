# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.

output "scanner_role" {
  description = "Full name of the scanner role (organizations/ORG/roles/ID or projects/PROJECT/roles/ID)."
  value       = local.role_names["scanner"]
}

output "remediator_role" {
  description = "Full name of the remediator role (null unless remediate)."
  value       = lookup(local.role_names, "remediator", null)
}

output "exporter_role" {
  description = "Full name of the exporter role, organizations/ORG/roles/ID (null unless export)."
  value       = one(google_organization_iam_custom_role.exporter[*].name)
}

output "in_organization" {
  description = "Whether the roles are defined in the organisation (with the folder and organisation permissions) rather than in the project."
  value       = local.in_org
}
