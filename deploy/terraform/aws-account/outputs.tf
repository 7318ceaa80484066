# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.

output "role_arn" {
  description = "ARN of the role warden runs as (null without create_role): the WardenPrincipalArn member roles trust."
  value       = one(aws_iam_role.warden[*].arn)
}

output "role_name" {
  description = "Name of the role warden runs as (null without create_role)."
  value       = one(aws_iam_role.warden[*].name)
}

output "scanner_policy_arn" {
  description = "ARN of the scanner policy."
  value       = aws_iam_policy.scanner.arn
}

output "remediator_policy_arn" {
  description = "ARN of the remediator policy (null unless remediate)."
  value       = one(aws_iam_policy.remediator[*].arn)
}

output "exporter_policy_arn" {
  description = "ARN of the exporter policy (null unless export)."
  value       = one(aws_iam_policy.exporter[*].arn)
}
