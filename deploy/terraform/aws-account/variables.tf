# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.

variable "name_prefix" {
  description = "Prefix of the names of the policies (PREFIX-scanner, PREFIX-remediator, PREFIX-exporter) and of the role (PREFIX)."
  type        = string
  default     = "warden"
}

variable "create_role" {
  description = "Create the role warden runs as, with the policies attached. false: only the policies are created; attach them (outputs scanner_policy_arn, remediator_policy_arn, exporter_policy_arn) to a principal of your own."
  type        = bool
  default     = true
}

variable "assume_role_policy" {
  description = "Trust policy (JSON) of the role warden runs as: who may act as warden (an EKS service account through IRSA or Pod Identity, an ECS task, an EC2 instance). Required with create_role."
  type        = string
  default     = null
}

variable "remediate" {
  description = "Also create the remediator policy (the calls of warden's fixes) and attach it beside the scanner policy. false: warden can only read."
  type        = bool
  default     = false
}

variable "export" {
  description = "Also create the exporter policy (sending findings to Security Hub: warden's export.securityhub, warden report --to securityhub) and attach it to the role. Create it in the account whose Security Hub takes the findings."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Tags of the policies and the role."
  type        = map(string)
  default     = {}
}
