# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.
#
# warden's identities in an AWS organisation: in this account (the management or a
# delegated administrator account) the role warden runs as, from ../aws-account; in every
# member account under var.organizational_unit_ids the member role warden assumes, created
# by a service-managed CloudFormation StackSet from the template beside this file, which
# `warden permissions --format cloudformation` prints as it is. The member role trusts the
# role of this account only.

locals {
  template = file("${path.module}/aws-member-role-stackset.yaml")
  # The member role's name is the one the scanner policy lets warden assume
  # (sts:AssumeRole on arn:aws:iam::*:role/NAME): the template's default, generated with it.
  member_role_name = yamldecode(local.template).Parameters.RoleName.Default
}

module "account" {
  source = "../aws-account"

  name_prefix        = var.name_prefix
  create_role        = true
  assume_role_policy = var.assume_role_policy
  remediate          = var.remediate
  export             = var.export
  tags               = var.tags
}

resource "aws_cloudformation_stack_set" "member" {
  name             = var.stack_set_name
  description      = "warden member role: read-only access for warden's scans and, with Remediate=true, its fixes"
  permission_model = "SERVICE_MANAGED"
  call_as          = var.call_as
  capabilities     = ["CAPABILITY_NAMED_IAM"]
  template_body    = local.template
  tags             = var.tags

  # The provider asks for every parameter of the template, defaults included.
  parameters = {
    WardenPrincipalArn = module.account.role_arn
    RoleName           = local.member_role_name
    Remediate          = var.remediate ? "true" : "false"
  }

  auto_deployment {
    enabled                          = true
    retain_stacks_on_account_removal = false
  }

  lifecycle {
    # AWS sets it for a service-managed stack set; providers before the fix of
    # hashicorp/terraform-provider-aws#23464 then plan a change on every run.
    ignore_changes = [administration_role_arn]
  }
}

# One instance per account, in the provider's region: the role is global, and a second
# region would collide on its name.
resource "aws_cloudformation_stack_set_instance" "member" {
  stack_set_name = aws_cloudformation_stack_set.member.name
  call_as        = var.call_as

  deployment_targets {
    organizational_unit_ids = var.organizational_unit_ids
  }
}
