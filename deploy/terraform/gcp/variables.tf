# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.

variable "scope_type" {
  description = "What warden reads: a project, a folder or an organization; the roles are bound there."
  type        = string

  validation {
    condition     = contains(["project", "folder", "organization"], var.scope_type)
    error_message = "scope_type is project, folder or organization."
  }
}

variable "scope_id" {
  description = "The project ID, the folder (folders/NUMBER) or the organisation's number the roles are bound on."
  type        = string
}

variable "organization_id" {
  description = "Number of the organisation the custom roles are defined in; the scope's own for an organization, required for a folder. Left null for a project, the roles are defined in the project without the folder and organisation permissions (Google accepts those only in an organisation's role), and warden reports the project's ancestors as denied."
  type        = string
  default     = null
}

variable "members" {
  description = "Who acts as warden, e.g. serviceAccount:warden@PROJECT.iam.gserviceaccount.com (the account GKE Workload Identity maps warden's pod to)."
  type        = list(string)
}

variable "remediate" {
  description = "Also create the remediator role (the calls of warden's fixes) and bind it beside the scanner role. false: warden can only read."
  type        = bool
  default     = false
}

variable "export" {
  description = "Also create the exporter role (sending findings to Security Command Center: warden's export.scc, warden report --to scc), defined in and bound on the organisation (organization_id, or the scope's own)."
  type        = bool
  default     = false
}

variable "role_id_prefix" {
  description = "Prefix of the custom roles' IDs: PREFIX_scanner, PREFIX_remediator, PREFIX_exporter."
  type        = string
  default     = "warden"
}
