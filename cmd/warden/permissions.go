package main

import (
	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/permissions"
	"github.com/warden-sec/warden/remediators/builtin"
)

func (a *app) permissionsCmd() *cobra.Command {
	var (
		out  string
		sel  permissions.Selection
		opts permissions.Options
	)
	cmd := &cobra.Command{
		Use:   "permissions [--role scanner|remediator|exporter|all] [--cloud aws|gcp|all] [--format json|yaml|cloudformation|terraform]",
		Short: "Print the least-privilege IAM policies and roles warden needs",
		Long: `Print the permissions warden itself needs, split by role and generated from the code
(each collector, remediator and export declares the permissions of the calls it makes, and a test
holds those declarations to the calls), so that they grant what warden calls and nothing
more.

Roles:
  scanner      read-only: every read of the collectors, for warden scan, collect and the
               daemon's scans, and the re-reads before and after a fix
  remediator   the calls of the enabled fixes only (--actions; default every registered
               one): their writes and the reads that find the target's current state.
               Grant it BESIDE the scanner's, to the principal that applies fixes.
  exporter     sending findings to Security Hub and Security Command Center (export:,
               warden report --to): grant it where the findings go

Documents (the file name --out writes each as):
  aws-scanner-policy.json        IAM policy for the role or user warden runs as: the reads,
                                 organizations:ListAccounts, and sts:AssumeRole on the
                                 member role (--org-role) for --aws-org scans
      aws iam create-policy --policy-name warden-scanner --policy-document file://aws-scanner-policy.json
      aws iam attach-role-policy --role-name WARDEN_ROLE --policy-arn arn:aws:iam::ACCOUNT:policy/warden-scanner
  aws-remediator-policy.json     IAM policy of the fixes (Secrets Manager only on the secrets
                                 of --rotation-secret-name)
      aws iam create-policy --policy-name warden-remediator --policy-document file://aws-remediator-policy.json
  aws-member-role-stackset.yaml  CloudFormation template of the role warden assumes in each
                                 member account: trusts WardenPrincipalArn only, carries the
                                 reads, and the fixes' permissions when Remediate=true. Deploy
                                 it to the organisation as a service-managed StackSet:
      aws cloudformation create-stack-set --stack-set-name warden-member-role \
        --template-body file://aws-member-role-stackset.yaml --capabilities CAPABILITY_NAMED_IAM \
        --permission-model SERVICE_MANAGED --auto-deployment Enabled=true,RetainStacksOnAccountRemoval=false \
        --parameters ParameterKey=WardenPrincipalArn,ParameterValue=arn:aws:iam::MGMT:role/warden
      aws cloudformation create-stack-instances --stack-set-name warden-member-role \
        --deployment-targets OrganizationalUnitIds=r-ROOT --regions us-east-1
    then scan with: warden scan --aws-org --aws-org-role WardenAccess (the role's name)
  gcp-scanner-role.yaml          GCP custom role of the collector's reads
  gcp-remediator-role.yaml       GCP custom role of the fixes
  aws-exporter-policy.json       IAM policy of the export to Security Hub
  gcp-exporter-role.yaml         GCP custom role of the export to Security Command Center,
                                 bound on the organization
      gcloud iam roles create warden_scanner --organization ORG_ID --file gcp-scanner-role.yaml
      gcloud organizations add-iam-policy-binding ORG_ID \
        --member serviceAccount:warden@P.iam.gserviceaccount.com --role organizations/ORG_ID/roles/warden_scanner
    Folder and organisation permissions (the policies of a project's ancestors) are only
    valid in a role created in the organisation; 'gcloud iam roles create warden_scanner
    --project P --file ...' works for one project once you remove them, and the ancestors'
    scopes are then reported as denied.
  --format terraform             the Terraform modules of deploy/terraform (aws-account,
                                 aws-organization, gcp): these documents, and the .tf that
                                 creates the roles and bindings from them
      warden permissions --format terraform --out ./terraform

One document is printed as is; several are printed one after the other, each under a
"# file: NAME" line; --out DIR writes each to DIR/NAME instead. docs/permissions.md says
more.`,
		Example: `  warden permissions --cloud aws --role scanner > aws-scanner-policy.json
  warden permissions --cloud aws --format cloudformation > aws-member-role-stackset.yaml
  warden permissions --cloud gcp --role remediator --actions gcp.iam.disable_service_account_key
  warden permissions --out ./iam`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Planning only: generating the documents calls no cloud.
			reg, err := builtin.Registry(nil, nil)
			if err != nil {
				return err
			}
			docs, err := permissions.Generate(reg, opts, sel)
			if err != nil {
				return usageErr(err)
			}
			return permissions.Print(a.stdout, out, docs)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sel.Role, "role", "all", "scanner, remediator, exporter or all")
	f.StringVar(&sel.Cloud, "cloud", "all", "aws, gcp or all")
	f.StringVarP(&sel.Format, "format", "f", "", "only documents of this format: json (AWS policies), cloudformation (the member role), yaml (GCP roles); terraform: the Terraform modules")
	f.StringSliceVar(&opts.Actions, "actions", nil, "the enabled fixes the remediator documents grant, comma-separated action names (default every registered one)")
	f.StringVar(&opts.OrgRole, "org-role", permissions.DefaultOrgRole, "name of the member-account role the stack set creates and warden assumes (--aws-org-role)")
	f.StringVar(&opts.RotationSecretName, "rotation-secret-name", "", "rotation.secret_name of the config, when changed: Secrets Manager is granted on the secrets it names")
	f.StringVarP(&out, "out", "o", "", "write each document to a file in this directory instead of printing")
	return cmd
}
