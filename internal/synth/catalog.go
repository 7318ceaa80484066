package synth

import "fmt"

// The fixed content that the realistic mode repeats: AWS-managed policies, the documents
// of Terraform and CloudFormation modules, security-group rule sets, firewall rules and
// IAM binding sets. Everything here is built once and never changed after init: the
// realistic mode shares these values between resources, and the none mode copies them
// before making them unique (vary).

// allow is an Allow statement of actions on resources (a string or a list each).
func allow(actions, resources any) map[string]any {
	return map[string]any{"Effect": "Allow", "Action": actions, "Resource": resources}
}

func strs(v ...string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

// service is one AWS service of the catalog: its action prefix, the word AWS's managed
// policy names use for it, and whether its FullAccess policy is clean. Services whose
// every action (svc:*) contains a privilege-escalation path (ec2, lambda, ssm, ecs…), or
// that a policy of the pack names (iam, sts, kms, organizations, cloudtrail), only get a
// ReadOnlyAccess policy, so that a clean draw never violates a policy.
type service struct {
	prefix, word string
	full         bool
}

var services = []service{
	{"s3", "S3", true}, {"dynamodb", "DynamoDB", true}, {"sqs", "SQS", true}, {"sns", "SNS", true},
	{"rds", "RDS", true}, {"elasticache", "ElastiCache", true}, {"redshift", "Redshift", true},
	{"kinesis", "Kinesis", true}, {"firehose", "KinesisFirehose", true}, {"athena", "Athena", true},
	{"route53", "Route53", true}, {"cloudfront", "CloudFront", true}, {"elasticloadbalancing", "ElasticLoadBalancing", true},
	{"autoscaling", "AutoScaling", true}, {"ecr", "EC2ContainerRegistry", true}, {"eks", "EKS", true},
	{"es", "OpenSearchService", true}, {"logs", "CloudWatchLogs", true}, {"cloudwatch", "CloudWatch", true},
	{"events", "EventBridge", true}, {"xray", "XRay", true}, {"secretsmanager", "SecretsManager", true},
	{"acm", "CertificateManager", true}, {"kafka", "MSK", true}, {"mq", "MQ", true}, {"glacier", "Glacier", true},
	{"backup", "Backup", true}, {"elasticfilesystem", "ElasticFileSystem", true}, {"fsx", "FSx", true},
	{"apigateway", "APIGateway", true}, {"appsync", "AppSync", true}, {"cognito-idp", "CognitoUserPools", true},
	{"ses", "SES", true}, {"workspaces", "WorkSpaces", true}, {"transfer", "Transfer", true},
	{"datasync", "DataSync", true}, {"dms", "DMS", true}, {"elasticmapreduce", "ElasticMapReduce", true},
	{"quicksight", "QuickSight", true}, {"config", "Config", true}, {"guardduty", "GuardDuty", true},
	{"inspector2", "Inspector2", true}, {"securityhub", "SecurityHub", true}, {"macie2", "Macie", true},
	{"wafv2", "WAFV2", true}, {"shield", "Shield", true}, {"codecommit", "CodeCommit", true},
	{"codepipeline", "CodePipeline", true}, {"codeartifact", "CodeArtifact", true}, {"servicecatalog", "ServiceCatalog", true},
	{"elasticbeanstalk", "ElasticBeanstalk", true}, {"lightsail", "Lightsail", true}, {"iot", "IoT", true},
	{"timestream", "Timestream", true}, {"neptune-db", "Neptune", true}, {"cassandra", "Keyspaces", true},
	{"memorydb", "MemoryDB", true}, {"qldb", "QLDB", true}, {"translate", "Translate", true},
	{"comprehend", "Comprehend", true}, {"rekognition", "Rekognition", true}, {"textract", "Textract", true},
	{"polly", "Polly", true}, {"transcribe", "Transcribe", true}, {"kendra", "Kendra", true},
	{"personalize", "Personalize", true}, {"forecast", "Forecast", true}, {"ram", "ResourceAccessManager", true},
	{"servicequotas", "ServiceQuotas", true}, {"health", "Health", true}, {"trustedadvisor", "TrustedAdvisor", true},
	{"tag", "ResourceGroupsTagging", true}, {"resource-groups", "ResourceGroups", true}, {"cloud9", "Cloud9", true},
	{"amplify", "Amplify", true}, {"globalaccelerator", "GlobalAccelerator", true}, {"directconnect", "DirectConnect", true},
	{"network-firewall", "NetworkFirewall", true}, {"route53resolver", "Route53Resolver", true}, {"bedrock", "Bedrock", true},
	{"ec2", "EC2", false}, {"lambda", "Lambda", false}, {"ecs", "ECS", false}, {"ssm", "SSM", false},
	{"cloudformation", "CloudFormation", false}, {"codebuild", "CodeBuild", false}, {"sagemaker", "SageMaker", false},
	{"glue", "Glue", false}, {"states", "StepFunctions", false}, {"batch", "Batch", false},
	{"codedeploy", "CodeDeploy", false}, {"apprunner", "AppRunner", false}, {"kms", "KMS", false},
	{"iam", "IAM", false}, {"organizations", "Organizations", false}, {"cloudtrail", "CloudTrail", false},
	{"sso", "SSO", false},
}

// managedPolicy is one AWS-managed policy: the same name and document in every account.
type managedPolicy struct {
	name string
	doc  map[string]any
}

// cleanManaged are the AWS-managed policies that violate no policy of the pack; badManaged
// those that do (drawn only for a resource meant to violate).
var cleanManaged, badManaged = managedCatalog()

func managedCatalog() (clean, bad []managedPolicy) {
	var readAll, viewAll, audit []string
	for _, s := range services {
		readAll = append(readAll, s.prefix+":Describe*", s.prefix+":Get*", s.prefix+":List*")
		viewAll = append(viewAll, s.prefix+":Describe*", s.prefix+":List*")
		audit = append(audit, s.prefix+":Describe*", s.prefix+":List*", s.prefix+":Get*Policy", s.prefix+":Get*Configuration")
	}
	clean = []managedPolicy{
		{"ReadOnlyAccess", doc(allow(strs(readAll...), "*"))},
		{"ViewOnlyAccess", doc(allow(strs(viewAll...), "*"))},
		{"SecurityAudit", doc(map[string]any{"Sid": "SecurityAuditReadOnly", "Effect": "Allow", "Action": strs(audit...), "Resource": "*"})},
		{"AWSLambdaBasicExecutionRole", doc(allow(strs("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"), "*"))},
		{"AWSLambdaVPCAccessExecutionRole", doc(allow(strs("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents",
			"ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DeleteNetworkInterface",
			"ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"), "*"))},
		{"AmazonECSTaskExecutionRolePolicy", doc(allow(strs("ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability",
			"ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage", "logs:CreateLogStream", "logs:PutLogEvents"), "*"))},
		{"AmazonSSMManagedInstanceCore", doc(
			allow(strs("ssm:DescribeAssociation", "ssm:GetDeployablePatchSnapshotForInstance", "ssm:GetDocument", "ssm:DescribeDocument",
				"ssm:GetManifest", "ssm:GetParameter", "ssm:GetParameters", "ssm:ListAssociations", "ssm:ListInstanceAssociations",
				"ssm:PutInventory", "ssm:PutComplianceItems", "ssm:PutConfigurePackageResult", "ssm:UpdateAssociationStatus",
				"ssm:UpdateInstanceAssociationStatus", "ssm:UpdateInstanceInformation"), "*"),
			allow(strs("ssmmessages:CreateControlChannel", "ssmmessages:CreateDataChannel", "ssmmessages:OpenControlChannel", "ssmmessages:OpenDataChannel"), "*"),
			allow(strs("ec2messages:AcknowledgeMessage", "ec2messages:DeleteMessage", "ec2messages:FailMessage", "ec2messages:GetEndpoint",
				"ec2messages:GetMessages", "ec2messages:SendReply"), "*"))},
		{"CloudWatchAgentServerPolicy", doc(
			allow(strs("cloudwatch:PutMetricData", "ec2:DescribeVolumes", "ec2:DescribeTags", "logs:PutLogEvents", "logs:DescribeLogStreams",
				"logs:DescribeLogGroups", "logs:CreateLogStream", "logs:CreateLogGroup"), "*"),
			allow("ssm:GetParameter", "arn:aws:ssm:*:*:parameter/AmazonCloudWatch-*"))},
		{"AWSXRayDaemonWriteAccess", doc(allow(strs("xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
			"xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries"), "*"))},
		{"AmazonEKSWorkerNodePolicy", doc(allow(strs("ec2:DescribeInstances", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups",
			"ec2:DescribeSubnets", "ec2:DescribeVolumes", "ec2:DescribeVolumesModifications", "ec2:DescribeVpcs", "eks:DescribeCluster",
			"eks-auth:AssumeRoleForPodIdentity"), "*"))},
		{"AmazonEKS_CNI_Policy", doc(
			allow(strs("ec2:AssignPrivateIpAddresses", "ec2:AttachNetworkInterface", "ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface",
				"ec2:DescribeInstances", "ec2:DescribeTags", "ec2:DescribeNetworkInterfaces", "ec2:DescribeInstanceTypes",
				"ec2:DetachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:UnassignPrivateIpAddresses"), "*"),
			allow("ec2:CreateTags", "arn:aws:ec2:*:*:network-interface/*"))},
		{"AmazonEC2ContainerRegistryReadOnly", doc(allow(strs("ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability",
			"ecr:GetDownloadUrlForLayer", "ecr:GetRepositoryPolicy", "ecr:DescribeRepositories", "ecr:ListImages", "ecr:DescribeImages",
			"ecr:BatchGetImage", "ecr:GetLifecyclePolicy", "ecr:GetLifecyclePolicyPreview", "ecr:ListTagsForResource",
			"ecr:DescribeImageScanFindings"), "*"))},
		{"AWSSupportAccess", doc(allow("support:*", "*"))},
		{"AWSBillingReadOnlyAccess", doc(allow(strs("aws-portal:View*", "billing:Get*", "billing:List*", "ce:Get*", "ce:Describe*",
			"ce:List*", "cur:Describe*", "pricing:Describe*", "pricing:Get*"), "*"))},
	}
	for _, s := range services {
		clean = append(clean, managedPolicy{"Amazon" + s.word + "ReadOnlyAccess",
			doc(allow(strs(s.prefix+":Describe*", s.prefix+":Get*", s.prefix+":List*"), "*"))})
		if s.full {
			clean = append(clean, managedPolicy{"Amazon" + s.word + "FullAccess",
				doc(allow(s.prefix+":*", "*"), allow("cloudwatch:GetMetricData", "*"))})
		}
	}
	bad = []managedPolicy{
		{"AdministratorAccess", doc(allow("*", "*"))},
		{"IAMFullAccess", doc(allow(strs("iam:*", "organizations:DescribeAccount", "organizations:DescribeOrganization",
			"organizations:DescribeOrganizationalUnit", "organizations:DescribePolicy", "organizations:ListChildren",
			"organizations:ListParents", "organizations:ListPoliciesForTarget", "organizations:ListRoots", "organizations:ListPolicies",
			"organizations:ListTargetsForPolicy"), "*"))},
		{"PowerUserAccess", doc(
			map[string]any{"Effect": "Allow", "NotAction": strs("iam:*", "organizations:*", "account:*"), "Resource": "*"},
			allow(strs("iam:CreateServiceLinkedRole", "iam:DeleteServiceLinkedRole", "iam:ListRoles", "organizations:DescribeOrganization",
				"account:ListRegions", "account:GetAccountInformation"), "*"))},
		{"AWSCloudShellFullAccess", doc(allow(strs("cloudshell:*", "s3:GetObject", "s3:PutObject"), "*"))},
	}
	return clean, bad
}

// template is a named document that a Terraform or CloudFormation module stamps out in
// every account it is applied to: the same statements under different names.
type template struct {
	name string
	doc  map[string]any
}

var customerTemplates = []template{
	{"artifacts-rw", doc(allow(strs("s3:GetObject", "s3:PutObject"), "arn:aws:s3:::example-org-artifacts/*"),
		allow("s3:ListBucket", "arn:aws:s3:::example-org-artifacts"))},
	{"sessions-table", doc(allow(strs("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"),
		strs("arn:aws:dynamodb:*:*:table/sessions", "arn:aws:dynamodb:*:*:table/sessions/index/*")))},
	{"jobs-consumer", doc(allow(strs("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"),
		"arn:aws:sqs:*:*:jobs-*"))},
	{"kms-decrypt-app", doc(map[string]any{"Effect": "Allow", "Action": strs("kms:Decrypt", "kms:GenerateDataKey"), "Resource": "arn:aws:kms:*:*:key/*",
		"Condition": map[string]any{"StringLike": map[string]any{"kms:ViaService": strs("s3.*.amazonaws.com", "secretsmanager.*.amazonaws.com")}}})},
	{"logs-writer", doc(allow(strs("logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"), "arn:aws:logs:*:*:log-group:/app/*"))},
	{"secrets-read", doc(allow(strs("secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"), "arn:aws:secretsmanager:*:*:secret:app/*"))},
	{"ecr-push", doc(allow("ecr:GetAuthorizationToken", "*"),
		allow(strs("ecr:BatchCheckLayerAvailability", "ecr:InitiateLayerUpload", "ecr:UploadLayerPart", "ecr:CompleteLayerUpload", "ecr:PutImage"),
			"arn:aws:ecr:*:*:repository/app-*"))},
	{"metrics-publisher", doc(map[string]any{"Effect": "Allow", "Action": "cloudwatch:PutMetricData", "Resource": "*",
		"Condition": map[string]any{"StringEquals": map[string]any{"cloudwatch:namespace": "App"}}})},
	{"alerts-publish", doc(allow("sns:Publish", "arn:aws:sns:*:*:alerts-*"))},
	{"params-read", doc(allow(strs("ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath"), "arn:aws:ssm:*:*:parameter/app/*"))},
	{"mail-send", doc(allow(strs("ses:SendEmail", "ses:SendRawEmail"), "arn:aws:ses:*:*:identity/example.com"))},
	{"athena-query", doc(allow(strs("athena:StartQueryExecution", "athena:GetQueryExecution", "athena:GetQueryResults"), "arn:aws:athena:*:*:workgroup/primary"),
		allow(strs("s3:GetObject", "s3:PutObject"), "arn:aws:s3:::example-org-athena-results/*"),
		allow(strs("glue:GetTable", "glue:GetDatabase", "glue:GetPartitions"), "*"))},
	{"firehose-put", doc(allow(strs("firehose:PutRecord", "firehose:PutRecordBatch"), "arn:aws:firehose:*:*:deliverystream/events"))},
	{"stream-consumer", doc(allow(strs("kinesis:GetRecords", "kinesis:GetShardIterator", "kinesis:DescribeStream", "kinesis:ListShards"),
		"arn:aws:kinesis:*:*:stream/events"))},
	{"cfn-deploy-bucket", doc(allow(strs("s3:GetObject", "s3:PutObject", "s3:ListBucket"),
		strs("arn:aws:s3:::cf-templates-example-org", "arn:aws:s3:::cf-templates-example-org/*")),
		allow(strs("cloudformation:DescribeStacks", "cloudformation:DescribeStackEvents", "cloudformation:GetTemplate"), "*"))},
	{"eks-describe", doc(allow(strs("eks:DescribeCluster", "eks:ListClusters"), "*"))},
	{"dns-records", doc(allow(strs("route53:ChangeResourceRecordSets", "route53:ListResourceRecordSets"), "arn:aws:route53:::hostedzone/Z0EXAMPLE1234"),
		allow("route53:GetChange", "arn:aws:route53:::change/*"))},
	{"backup-operator", doc(allow(strs("backup:StartBackupJob", "backup:DescribeBackupJob", "backup:ListRecoveryPointsByBackupVault"),
		"arn:aws:backup:*:*:backup-vault:default"))},
	{"tagging-read", doc(allow(strs("tag:GetResources", "tag:GetTagKeys", "tag:GetTagValues"), "*"))},
	{"xray-write", doc(allow(strs("xray:PutTraceSegments", "xray:PutTelemetryRecords"), "*"))},
}

// uniqueStatement is an Allow of one service's actions on resources named after the
// resource index i: no other resource gets the same statement.
func uniqueStatement(account string, i, k int) map[string]any {
	switch k % 4 {
	case 0:
		return allow(strs("s3:GetObject", "s3:PutObject"), fmt.Sprintf("arn:aws:s3:::%s-app-%d-%d/*", account, i, k))
	case 1:
		return allow(strs("dynamodb:GetItem", "dynamodb:Query"), fmt.Sprintf("arn:aws:dynamodb:us-east-1:%s:table/app-%d-%d", account, i, k))
	case 2:
		return allow(strs("sqs:SendMessage", "sqs:ReceiveMessage"), fmt.Sprintf("arn:aws:sqs:eu-west-1:%s:app-%d-%d", account, i, k))
	default:
		return allow("logs:PutLogEvents", fmt.Sprintf("arn:aws:logs:us-east-1:%s:log-group:/app/%d/%d:*", account, i, k))
	}
}

// ruleSpec is an ingress rule of a security-group template.
type ruleSpec struct {
	proto    string
	from, to int
	cidr     string
	desc     string
}

// sgTemplate is a security group that a module creates in every VPC it serves.
type sgTemplate struct {
	name, desc string
	ingress    []ruleSpec
}

var sgTemplates = []sgTemplate{
	{"web-tier", "web tier", []ruleSpec{{"tcp", 443, 443, "0.0.0.0/0", "HTTPS"}, {"tcp", 80, 80, "0.0.0.0/0", "HTTP redirect"}}},
	{"alb-public", "public load balancer", []ruleSpec{{"tcp", 443, 443, "0.0.0.0/0", "HTTPS"}, {"tcp", 443, 443, "::/0", "HTTPS v6"}}},
	{"alb-internal", "internal load balancer", []ruleSpec{{"tcp", 443, 443, "10.0.0.0/8", "HTTPS from the VPCs"}}},
	{"db-postgres", "database tier", []ruleSpec{{"tcp", 5432, 5432, "10.0.0.0/8", "PostgreSQL from the app tier"}}},
	{"db-mysql", "database tier", []ruleSpec{{"tcp", 3306, 3306, "10.0.0.0/8", "MySQL from the app tier"}}},
	{"cache-redis", "cache", []ruleSpec{{"tcp", 6379, 6379, "10.0.0.0/8", "Redis from the app tier"}}},
	{"bastion", "bastion host", []ruleSpec{{"tcp", 22, 22, "203.0.113.10/32", "SSH from the office"}}},
	{"app-tier", "application tier", []ruleSpec{{"tcp", 8080, 8080, "10.0.0.0/16", "from the load balancer"}}},
	{"efs-mount", "EFS mount targets", []ruleSpec{{"tcp", 2049, 2049, "10.0.0.0/8", "NFS"}}},
	{"eks-nodes", "EKS worker nodes", []ruleSpec{{"tcp", 10250, 10250, "10.0.0.0/16", "kubelet from the control plane"},
		{"tcp", 443, 443, "10.0.0.0/16", "webhooks"}, {"tcp", 30000, 32767, "10.0.0.0/8", "node ports"}}},
	{"monitoring", "Prometheus scraping", []ruleSpec{{"tcp", 9100, 9100, "10.0.0.0/8", "node exporter"}, {"tcp", 9090, 9090, "10.0.0.0/8", "Prometheus"}}},
	{"vpc-endpoints", "interface endpoints", []ruleSpec{{"tcp", 443, 443, "10.0.0.0/8", "HTTPS to AWS APIs"}}},
	{"kafka-brokers", "MSK brokers", []ruleSpec{{"tcp", 9092, 9094, "10.0.0.0/8", "Kafka clients"}}},
	{"search", "OpenSearch domain", []ruleSpec{{"tcp", 443, 443, "10.0.0.0/8", "HTTPS"}, {"tcp", 9200, 9200, "10.0.0.0/8", "REST"}}},
	{"smtp-relay", "mail relay", []ruleSpec{{"tcp", 587, 587, "10.0.0.0/8", "SMTP submission"}}},
}

// firewallSpec is a GCP firewall rule's content, without its name.
type firewallSpec struct {
	network  string
	priority int
	ranges   []string
	targets  []string
	allowed  []any
}

func fwAllow(proto string, ports ...string) map[string]any {
	if len(ports) == 0 {
		return map[string]any{"protocol": proto}
	}
	return map[string]any{"protocol": proto, "ports": strs(ports...)}
}

// defaultFirewalls are the rules GCP creates with a project's default network. Three of
// them violate a policy (SSH and RDP from anywhere, every instance open to ICMP): real
// projects have them, so the realistic mode does too.
var defaultFirewalls = []struct {
	name string
	spec firewallSpec
}{
	{"default-allow-ssh", firewallSpec{"default", 65534, []string{"0.0.0.0/0"}, nil, []any{fwAllow("tcp", "22")}}},
	{"default-allow-rdp", firewallSpec{"default", 65534, []string{"0.0.0.0/0"}, nil, []any{fwAllow("tcp", "3389")}}},
	{"default-allow-icmp", firewallSpec{"default", 65534, []string{"0.0.0.0/0"}, nil, []any{fwAllow("icmp")}}},
	{"default-allow-internal", firewallSpec{"default", 65534, []string{"10.128.0.0/9"}, nil,
		[]any{fwAllow("tcp", "0-65535"), fwAllow("udp", "0-65535"), fwAllow("icmp")}}},
}

var firewallTemplates = []struct {
	name string
	spec firewallSpec
}{
	{"allow-https", firewallSpec{"prod-vpc", 1000, []string{"0.0.0.0/0"}, []string{"web"}, []any{fwAllow("tcp", "443")}}},
	{"allow-http-https", firewallSpec{"prod-vpc", 1000, []string{"0.0.0.0/0"}, []string{"web"}, []any{fwAllow("tcp", "80", "443")}}},
	{"allow-health-checks", firewallSpec{"prod-vpc", 1000, []string{"35.191.0.0/16", "130.211.0.0/22"}, []string{"lb-backend"},
		[]any{fwAllow("tcp", "80", "443", "8080")}}},
	{"allow-iap-ssh", firewallSpec{"prod-vpc", 1000, []string{"35.235.240.0/20"}, nil, []any{fwAllow("tcp", "22")}}},
	{"allow-internal-app", firewallSpec{"prod-vpc", 1000, []string{"10.0.0.0/8"}, []string{"app"}, []any{fwAllow("tcp", "8080-8090")}}},
	{"allow-internal-db", firewallSpec{"prod-vpc", 1000, []string{"10.0.0.0/8"}, []string{"db"}, []any{fwAllow("tcp", "5432")}}},
	{"allow-gke-master", firewallSpec{"prod-vpc", 1000, []string{"172.16.0.0/28"}, []string{"gke-node"}, []any{fwAllow("tcp", "443", "10250")}}},
	{"allow-internal-all", firewallSpec{"prod-vpc", 1000, []string{"10.128.0.0/9"}, []string{"internal"},
		[]any{fwAllow("tcp", "0-65535"), fwAllow("udp", "0-65535"), fwAllow("icmp")}}},
	{"allow-redis-internal", firewallSpec{"prod-vpc", 1000, []string{"10.0.0.0/8"}, []string{"cache"}, []any{fwAllow("tcp", "6379")}}},
	{"allow-vpn", firewallSpec{"prod-vpc", 900, []string{"192.168.0.0/16"}, nil, []any{fwAllow("tcp"), fwAllow("udp"), fwAllow("icmp")}}},
	{"allow-prometheus", firewallSpec{"prod-vpc", 1000, []string{"10.0.0.0/8"}, []string{"monitored"}, []any{fwAllow("tcp", "9090", "9100")}}},
	{"allow-ssh-office", firewallSpec{"prod-vpc", 1000, []string{"198.51.100.0/28"}, []string{"ssh"}, []any{fwAllow("tcp", "22")}}},
}

func binding(role string, members ...string) map[string]any {
	return map[string]any{"role": role, "members": strs(members...), "condition": nil}
}

// bindingTemplates are the project IAM policies an organisation's project factory
// writes: the same bindings in every project of a kind.
var bindingTemplates = [][]any{
	{binding("roles/viewer", "group:eng@example.com"), binding("roles/storage.objectViewer", "serviceAccount:ci@org-ci.iam.gserviceaccount.com")},
	{binding("roles/viewer", "group:eng@example.com"), binding("roles/logging.viewer", "group:sre@example.com"),
		binding("roles/monitoring.viewer", "group:sre@example.com")},
	{binding("roles/cloudsql.client", "serviceAccount:app@org-apps.iam.gserviceaccount.com"), binding("roles/viewer", "group:data@example.com")},
	{binding("roles/bigquery.dataViewer", "group:analysts@example.com"), binding("roles/bigquery.jobUser", "group:analysts@example.com")},
	{binding("roles/container.developer", "group:platform@example.com"), binding("roles/viewer", "group:eng@example.com")},
	{binding("roles/browser", "domain:example.com"), binding("roles/viewer", "group:eng@example.com")},
}
