# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.

variable "name_prefix" {
  description = "Prefix of the names of the policies (PREFIX-scanner, PREFIX-remediator) and of the role warden runs as (PREFIX), in this account."
  type        = string
  default     = "warden"
}

variable "assume_role_policy" {
  description = "Trust policy (JSON) of the role warden runs as in this account (the management or delegated administrator account): who may act as warden. The member roles trust that role only."
  type        = string
}

variable "remediate" {
  description = "Also grant the calls of warden's fixes: to the role in this account, and to the member role in every member account (the stack set's Remediate parameter). false: warden can only read."
  type        = bool
  default     = false
}

variable "export" {
  description = "Also create the exporter policy (sending findings to Security Hub) for the role in this account: the account whose Security Hub takes the organisation's findings (the delegated administrator's, when Security Hub aggregates there)."
  type        = bool
  default     = false
}

variable "organizational_unit_ids" {
  description = "The organisation's root (r-...) or the organisational units (ou-...) whose accounts get the member role; accounts that join them later get it too."
  type        = list(string)
}

variable "stack_set_name" {
  description = "Name of the CloudFormation StackSet that creates the member role."
  type        = string
  default     = "warden-member-role"
}

variable "call_as" {
  description = "SELF when applied in the management account, DELEGATED_ADMIN in a delegated administrator account for CloudFormation StackSets."
  type        = string
  default     = "SELF"

  validation {
    condition     = contains(["SELF", "DELEGATED_ADMIN"], var.call_as)
    error_message = "call_as is SELF or DELEGATED_ADMIN."
  }
}

variable "tags" {
  description = "Tags of the policies, the role and the stack set (which passes them on to the member roles)."
  type        = map(string)
  default     = {}
}
