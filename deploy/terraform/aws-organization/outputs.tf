# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.

output "role_arn" {
  description = "ARN of the role warden runs as, in this account: the only principal the member roles trust."
  value       = module.account.role_arn
}

output "member_role_name" {
  description = "Name of the role warden assumes in each member account: run warden with --aws-org --aws-org-role set to it."
  value       = local.member_role_name
}

output "scanner_policy_arn" {
  description = "ARN of the scanner policy in this account."
  value       = module.account.scanner_policy_arn
}

output "remediator_policy_arn" {
  description = "ARN of the remediator policy in this account (null unless remediate)."
  value       = module.account.remediator_policy_arn
}

output "exporter_policy_arn" {
  description = "ARN of the exporter policy in this account (null unless export)."
  value       = module.account.exporter_policy_arn
}

output "stack_set_arn" {
  description = "ARN of the StackSet that creates the member roles."
  value       = aws_cloudformation_stack_set.member.arn
}
