# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.
#
# warden's identity on Google Cloud: the custom roles of its scans and (with
# var.remediate) its fixes, defined in the organisation or the project, and bound to
# var.members on the project, folder or organisation warden reads; with var.export, the
# role of the export to Security Command Center, defined in and bound on the
# organisation, where SCC keeps its sources. The roles' title, description and
# permissions are the files beside this one, which `warden permissions` prints as they
# are.

locals {
  roles = {
    scanner    = yamldecode(file("${path.module}/gcp-scanner-role.yaml"))
    remediator = yamldecode(file("${path.module}/gcp-remediator-role.yaml"))
  }
  exporter = yamldecode(file("${path.module}/gcp-exporter-role.yaml"))
  enabled  = { for k, r in local.roles : k => r if k == "scanner" || var.remediate }
  role_org = var.scope_type == "organization" ? var.scope_id : var.organization_id
  in_org   = local.role_org != null
  # Google accepts folder and organisation permissions only in an organisation's role.
  project_permissions = {
    for k, r in local.enabled : k => [
      for p in r.includedPermissions : p
      if !startswith(p, "resourcemanager.folders.") && !startswith(p, "resourcemanager.organizations.")
    ]
  }
}

resource "google_organization_iam_custom_role" "warden" {
  for_each    = { for k, r in local.enabled : k => r if local.in_org }
  org_id      = local.role_org
  role_id     = "${var.role_id_prefix}_${each.key}"
  title       = each.value.title
  description = each.value.description
  stage       = each.value.stage
  permissions = each.value.includedPermissions
}

resource "google_project_iam_custom_role" "warden" {
  for_each    = { for k, r in local.enabled : k => r if !local.in_org }
  project     = var.scope_id
  role_id     = "${var.role_id_prefix}_${each.key}"
  title       = each.value.title
  description = each.value.description
  stage       = each.value.stage
  permissions = local.project_permissions[each.key]

  lifecycle {
    precondition {
      condition     = var.scope_type == "project"
      error_message = "A folder's roles are defined in its organisation: set organization_id."
    }
  }
}

locals {
  role_names = merge(
    { for k, r in google_organization_iam_custom_role.warden : k => r.name },
    { for k, r in google_project_iam_custom_role.warden : k => r.name },
  )
  # Every member gets every enabled role: the remediator beside the scanner, never
  # instead of it (warden re-reads each target before and after a fix).
  bindings = {
    for pair in setproduct(keys(local.enabled), var.members) : "${pair[0]} ${pair[1]}" => {
      role   = pair[0]
      member = pair[1]
    }
  }
}

resource "google_project_iam_member" "warden" {
  for_each = { for k, b in local.bindings : k => b if var.scope_type == "project" }
  project  = var.scope_id
  role     = local.role_names[each.value.role]
  member   = each.value.member
}

resource "google_folder_iam_member" "warden" {
  for_each = { for k, b in local.bindings : k => b if var.scope_type == "folder" }
  folder   = var.scope_id
  role     = local.role_names[each.value.role]
  member   = each.value.member
}

resource "google_organization_iam_member" "warden" {
  for_each = { for k, b in local.bindings : k => b if var.scope_type == "organization" }
  org_id   = var.scope_id
  role     = local.role_names[each.value.role]
  member   = each.value.member
}

# Security Command Center keeps sources and findings in the organisation: its role is the
# organisation's, bound there, whatever warden reads.
resource "google_organization_iam_custom_role" "exporter" {
  count       = var.export ? 1 : 0
  org_id      = local.role_org
  role_id     = "${var.role_id_prefix}_exporter"
  title       = local.exporter.title
  description = local.exporter.description
  stage       = local.exporter.stage
  permissions = local.exporter.includedPermissions

  lifecycle {
    precondition {
      condition     = local.in_org
      error_message = "Security Command Center's findings live in an organisation: set organization_id to export."
    }
  }
}

resource "google_organization_iam_member" "exporter" {
  for_each = { for m in var.members : m => m if var.export }
  org_id   = local.role_org
  role     = google_organization_iam_custom_role.exporter[0].name
  member   = each.value
}
