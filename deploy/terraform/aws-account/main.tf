# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.
#
# warden's identity in one AWS account: the scanner policy (every read of the collectors,
# and the organisation walk), the remediator policy (the calls of the fixes) when
# var.remediate, the exporter policy (sending findings to this account's Security Hub)
# when var.export, and the role warden runs as, carrying them. The policy documents are
# the files beside this one, which `warden permissions` prints as they are.

locals {
  scanner_policy    = file("${path.module}/aws-scanner-policy.json")
  remediator_policy = file("${path.module}/aws-remediator-policy.json")
  exporter_policy   = file("${path.module}/aws-exporter-policy.json")
}

resource "aws_iam_policy" "scanner" {
  name        = "${var.name_prefix}-scanner"
  description = "warden scanner: what warden's collectors read"
  policy      = local.scanner_policy
  tags        = var.tags
}

resource "aws_iam_policy" "remediator" {
  count       = var.remediate ? 1 : 0
  name        = "${var.name_prefix}-remediator"
  description = "warden remediator: what warden's fixes call, beside the scanner policy"
  policy      = local.remediator_policy
  tags        = var.tags
}

resource "aws_iam_policy" "exporter" {
  count       = var.export ? 1 : 0
  name        = "${var.name_prefix}-exporter"
  description = "warden exporter: sending findings to Security Hub"
  policy      = local.exporter_policy
  tags        = var.tags
}

resource "aws_iam_role" "warden" {
  count                = var.create_role ? 1 : 0
  name                 = var.name_prefix
  description          = "warden: scans (and, with remediate, fixes) this account"
  assume_role_policy   = var.assume_role_policy
  max_session_duration = 3600
  tags                 = var.tags

  lifecycle {
    precondition {
      condition     = var.assume_role_policy != null
      error_message = "assume_role_policy is required to create the role (or set create_role = false)."
    }
  }
}

resource "aws_iam_role_policy_attachment" "scanner" {
  count      = var.create_role ? 1 : 0
  role       = aws_iam_role.warden[0].name
  policy_arn = aws_iam_policy.scanner.arn
}

# The remediator policy goes beside the scanner's, never instead of it: warden re-reads
# each target through its collector before and after a fix.
resource "aws_iam_role_policy_attachment" "remediator" {
  count      = var.create_role && var.remediate ? 1 : 0
  role       = aws_iam_role.warden[0].name
  policy_arn = aws_iam_policy.remediator[0].arn
}

resource "aws_iam_role_policy_attachment" "exporter" {
  count      = var.create_role && var.export ? 1 : 0
  role       = aws_iam_role.warden[0].name
  policy_arn = aws_iam_policy.exporter[0].arn
}
