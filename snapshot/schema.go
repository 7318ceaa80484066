package snapshot

import "github.com/valyala/fastjson"

// The attribute schema of every resource type, as docs/resources.md describes it. A
// snapshot is checked against it when read, so that a value a policy cannot judge (a time
// that is not a time, a port that is not a port, a flag that is a string) is refused with
// its line and field instead of quietly making a finding vanish.
//
// Required fields are the ones a policy decides on and every collector writes; the
// others may be absent or null. Unknown fields are refused: a misspelt "mfa_actve" would
// otherwise leave "mfa_active" unset.

// kind is the JSON shape a value must have.
type kind uint8

const (
	kString   kind = iota
	kEnum          // a string from a fixed set
	kBool          // true or false
	kInt           // an integer within [min, max]
	kTime          // an RFC 3339 time
	kPastTime      // an RFC 3339 time of something that happened: not after collected_at
	kArray         // every element of elem
	kObject        // the fields of fields; no others
	kDocument      // any JSON object (an IAM policy document); keys checked for duplicates only
	kProtocol      // a protocol name or IANA number: a string, or an integer 0-255
)

// spec is the schema of one value.
type spec struct {
	kind     kind
	enum     []string
	min, max int64
	elem     *spec
	fields   []field
	check    func(*fastjson.Value) *schemaErr // a check across the fields of an object
}

// field is one named member of an object.
type field struct {
	name     string
	spec     *spec
	required bool
}

func str() *spec                     { return &spec{kind: kString} }
func enum(v ...string) *spec         { return &spec{kind: kEnum, enum: v} }
func boolean() *spec                 { return &spec{kind: kBool} }
func integer(lo, hi int64) *spec     { return &spec{kind: kInt, min: lo, max: hi} }
func count() *spec                   { return integer(0, 1<<53) }
func timestamp() *spec               { return &spec{kind: kTime} }
func pastTime() *spec                { return &spec{kind: kPastTime} }
func list(e *spec) *spec             { return &spec{kind: kArray, elem: e} }
func names() *spec                   { return list(str()) }
func document() *spec                { return &spec{kind: kDocument} }
func object(f ...field) *spec        { return &spec{kind: kObject, fields: f} }
func req(name string, s *spec) field { return field{name: name, spec: s, required: true} }
func opt(name string, s *spec) field { return field{name: name, spec: s} }

// port is a port number; -1 stands for every port (AWS "all protocols").
func port() *spec { return integer(-1, 65535) }

// usageSpec is attributes.usage of a user, role or group: the services its policies grant
// and when each (and, tracked per action, each action) was last used, as of the job's
// completion. A job that failed (complete false) may carry no times and no services.
func usageSpec() *spec {
	lastUsed := func(name string) []field {
		return []field{req(name, str()), opt("last_used", pastTime()), opt("region", str())}
	}
	return object(
		req("source", str()), opt("granularity", enum("action", "service")),
		opt("as_of", pastTime()), opt("tracked_since", pastTime()),
		req("complete", boolean()), opt("error", str()),
		// What services lists: every service granted (Access Advisor, the default), or
		// only what went unused for more than window_days (IAM Access Analyzer's
		// unused-access findings, from the analyzer named).
		opt("listed", enum("granted", "unused")), opt("window_days", integer(1, 365)), opt("analyzer", str()),
		// A customer-managed policy's usage is its principals' (collectors/aws,
		// usage_policy.go): aggregated, and who it speaks for.
		opt("aggregated", boolean()),
		opt("principals", list(object(
			req("arn", str()), req("type", enum("aws.iam.user", "aws.iam.group", "aws.iam.role")), opt("name", str()),
			opt("created", pastTime()), opt("path", str()), opt("service_linked", boolean()),
			opt("least_privilege_tag", str()),
		))),
		opt("services", list(object(append(lastUsed("service"),
			opt("name", str()),
			opt("actions", list(object(lastUsed("action")...))),
		)...))),
	)
}

func certificateSpec() *spec {
	return object(
		opt("subject", str()), opt("issuer", str()), opt("serial", str()),
		req("not_before", timestamp()), req("not_after", timestamp()),
		opt("dns_names", names()),
		req("key_algorithm", str()), req("key_size", integer(0, 1<<20)),
		req("signature_algorithm", str()),
		opt("self_signed", boolean()), opt("is_ca", boolean()),
	)
}

func attachedSpec() *spec { return object(req("arn", str()), opt("name", str())) }

func inlineSpec() *spec { return object(req("name", str()), req("document", document())) }

func sgRuleSpec() *spec {
	return object(
		req("id", str()), // the uid of the rule: findings and fixes name it
		opt("direction", enum("ingress", "egress")),
		req("protocol", &spec{kind: kProtocol}),
		req("from_port", port()), req("to_port", port()),
		opt("cidr", str()), opt("source_group", str()), opt("description", str()),
	).with(portOrder)
}

// with adds a check across an object's fields.
func (s *spec) with(check func(*fastjson.Value) *schemaErr) *spec {
	s.check = check
	return s
}

func bindingsSpec() *spec {
	return list(object(
		req("role", str()),
		req("members", names()),
		opt("condition", object(opt("title", str()), opt("expression", str()), opt("description", str()))),
	))
}

func firewallEntrySpec() *spec {
	return list(object(req("protocol", &spec{kind: kProtocol}), opt("ports", names())))
}

// schemas is the attribute schema of each known type, keyed like knownTypes.
func schemas() map[string]*spec {
	// A principal's last-accessed data (IAM Access Advisor) rides with its policies;
	// absent when not read, which no policy may read as "unused".
	iamPolicies := []field{opt("attached_policies", list(attachedSpec())), opt("inline_policies", list(inlineSpec())), opt("usage", usageSpec())}
	return map[string]*spec{
		"aws.iam.root_user": object(
			req("mfa_active", boolean()), req("access_keys_active", integer(0, 2)),
			opt("password_last_used", pastTime()),
			// Absent when never used, or the credential report was not read.
			opt("access_keys_last_used", pastTime()),
			// Absent when MFA is off or the virtual devices could not be listed.
			opt("virtual_mfa", boolean()),
			// From the credential report, absent when it was not read: the report numbers
			// root's keys (slot) and gives no id.
			opt("access_keys", list(object(
				req("slot", enum("1", "2")), req("status", enum("Active", "Inactive")),
				req("created", pastTime()), opt("last_used", pastTime()),
			))),
		),
		"aws.iam.account": object(
			req("support_roles", names()), req("security_audit_roles", names()),
			opt("saml_providers", names()), opt("alias", str()),
		),
		"aws.iam.password_policy": object(
			req("exists", boolean()),
			opt("minimum_password_length", integer(0, 128)), opt("password_reuse_prevention", integer(0, 24)),
			opt("require_symbols", boolean()), opt("require_numbers", boolean()),
			opt("require_uppercase_characters", boolean()), opt("require_lowercase_characters", boolean()),
			opt("allow_users_to_change_password", boolean()), opt("max_password_age", integer(0, 1095)),
			opt("hard_expiry", boolean()),
		),
		"aws.iam.user": object(append([]field{
			opt("user_id", str()), opt("path", str()), opt("created", pastTime()),
			// From the credential report: absent when it could not be read, and the
			// scope is then partial, so what they would decide stays unknown.
			opt("password_enabled", boolean()), opt("password_last_used", pastTime()),
			opt("password_last_changed", pastTime()), opt("mfa_active", boolean()),
			opt("access_keys", list(object(
				req("id", str()), req("status", enum("Active", "Inactive")),
				req("created", pastTime()), opt("last_used", pastTime()),
			))),
			opt("groups", names()),
			// Absent when not read (the virtual devices or the user's devices could not
			// be listed): unknown, never "no device".
			opt("mfa_devices", list(object(
				req("serial", str()), req("type", enum("virtual", "hardware")), opt("enabled", pastTime()),
			))),
		}, iamPolicies...)...),
		"aws.iam.group": object(append([]field{
			opt("path", str()), opt("created", pastTime()), opt("members", names()),
		}, iamPolicies...)...),
		"aws.iam.role": object(append([]field{
			opt("path", str()), opt("role_id", str()), opt("created", pastTime()),
			req("assume_role_policy", document()), opt("last_used", pastTime()),
			opt("last_used_region", str()), opt("service_linked", boolean()),
			opt("max_session_duration", integer(0, 43200)),
		}, iamPolicies...)...),
		"aws.iam.policy": object(
			opt("policy_id", str()), opt("path", str()), opt("aws_managed", boolean()),
			opt("attachment_count", count()), opt("default_version_id", str()),
			opt("created", pastTime()), opt("updated", pastTime()),
			req("document", document()),
			opt("attached_to", object(opt("users", names()), opt("groups", names()), opt("roles", names()))),
			opt("usage", usageSpec()),
		),
		"aws.iam.access_key": object(
			opt("access_key_id", str()), opt("user_name", str()), opt("user_arn", str()),
			req("status", enum("Active", "Inactive")), req("created", pastTime()),
			opt("last_used", pastTime()), opt("last_used_service", str()), opt("last_used_region", str()),
		),
		"aws.iam.server_certificate": object(
			opt("server_certificate_id", str()), opt("path", str()), opt("upload_date", pastTime()),
			opt("certificate", certificateSpec()), // absent when its body could not be read
		),
		"aws.ec2.security_group": object(
			opt("group_id", str()), opt("group_name", str()), opt("vpc_id", str()), opt("description", str()),
			opt("is_default", boolean()), opt("ingress", list(sgRuleSpec())), opt("egress", list(sgRuleSpec())),
			opt("attachments", sgAttachmentsSpec()), opt("attached", boolean()), opt("referenced_by", names()),
		),
		"aws.acm.certificate": object(
			opt("domain_name", str()), opt("subject_alternative_names", names()),
			req("status", str()), opt("cert_type", enum("AMAZON_ISSUED", "IMPORTED", "PRIVATE")),
			opt("in_use_by", names()), opt("renewal_eligibility", str()),
			opt("renewal_status", enum("", "PENDING_AUTO_RENEWAL", "PENDING_VALIDATION", "SUCCESS", "FAILED")),
			opt("renewal_failure_reason", str()),
			opt("transparency_logging", enum("ENABLED", "DISABLED")),
			opt("certificate", certificateSpec()), // absent or null while ACM holds no body (pending validation)
		),
		"gcp.project.iam_policy": object(
			opt("project_id", str()), opt("project_number", str()), opt("organization_domain", str()),
			opt("etag", str()), req("bindings", bindingsSpec()), opt("audit_configs", auditConfigsSpec()),
			// The IAM recommender's ACTIVE recommendations (issue 29), when asked for; the
			// error instead when they could not be read.
			opt("recommendations", list(recommendationSpec())), opt("recommendations_error", str()),
		),
		"gcp.folder.iam_policy": object(
			opt("folder_id", str()), opt("display_name", str()), opt("parent", str()),
			opt("etag", str()), req("bindings", bindingsSpec()), opt("audit_configs", auditConfigsSpec()),
		),
		"gcp.organization.iam_policy": object(
			opt("organization_id", str()), opt("domain", str()),
			opt("etag", str()), req("bindings", bindingsSpec()), opt("audit_configs", auditConfigsSpec()),
		),
		"gcp.iam.service_account": object(
			req("email", str()), opt("unique_id", str()), opt("display_name", str()),
			opt("disabled", boolean()), opt("default_compute", boolean()),
			// The Policy Analyzer's last authentication (issue 29), when asked for: null when
			// none since last_authenticated_since (null when Google gave no period);
			// absent: unknown.
			opt("last_authenticated", pastTime()), opt("last_authenticated_since", pastTime()),
		),
		"gcp.iam.service_account_key": object(
			opt("key_id", str()), opt("service_account", str()),
			req("key_type", enum("USER_MANAGED", "SYSTEM_MANAGED")),
			req("valid_after", pastTime()), opt("valid_before", timestamp()),
			opt("disabled", boolean()), opt("key_algorithm", str()),
			opt("last_authenticated", pastTime()), opt("last_authenticated_since", pastTime()),
		),
		"gcp.compute.firewall": object(
			opt("network", str()), req("direction", enum("INGRESS", "EGRESS")),
			opt("disabled", boolean()), opt("priority", integer(0, 65535)),
			opt("source_ranges", names()), opt("source_tags", names()), opt("target_tags", names()), opt("target_service_accounts", names()),
			opt("allowed", firewallEntrySpec()), opt("denied", firewallEntrySpec()),
			opt("targets", firewallTargetsSpec()),
		),
		"gcp.compute.network": object(
			opt("auto_create_subnetworks", boolean()), opt("firewalls", names()),
			opt("mode", enum("auto", "custom", "legacy")),
		),
		"gcp.iam.workload_identity_provider": object(
			req("pool", str()), opt("pool_disabled", boolean()), opt("disabled", boolean()),
			opt("state", str()), req("attribute_condition", str()),
			opt("protocol", enum("oidc", "aws", "saml", "x509")), opt("issuer_uri", str()),
			opt("allowed_audiences", names()), opt("aws_account_id", str()),
			opt("attribute_mapping", document()),
		),
		"gcp.compute.ssl_certificate": object(
			opt("cert_type", enum("SELF_MANAGED", "MANAGED")), opt("managed_status", str()),
			opt("certificate", certificateSpec()), // absent or null before a managed certificate is issued
		),
		"tls.endpoint": object(
			req("host", str()), req("port", integer(1, 65535)), opt("sni", str()),
			req("reachable", boolean()), opt("error", str()),
			opt("certificate", certificateSpec()), opt("chain", list(certificateSpec())),
			opt("trusted", boolean()), opt("verify_error", str()), opt("hostname_match", boolean()),
			opt("protocols", list(enum("SSL3.0", "TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3"))), opt("min_protocol", str()),
		),
	}
}

// auditConfigsSpec is a GCP IAM policy's auditConfigs.
// recommendationSpec is one IAM recommender recommendation on a project's policy: remove
// role from member, or replace it with new_roles, from the permissions used in 90 days.
func recommendationSpec() *spec {
	return object(
		req("name", str()), opt("etag", str()), req("state", str()),
		req("subtype", str()), req("member", str()), req("role", str()), req("new_roles", names()),
		opt("description", str()), opt("last_refresh", timestamp()),
		opt("exercised_permissions", count()), opt("inferred_permissions", count()), opt("total_permissions", count()),
	)
}

func auditConfigsSpec() *spec {
	return list(object(req("service", str()), opt("audit_log_configs", list(object(
		req("log_type", enum("ADMIN_READ", "DATA_READ", "DATA_WRITE", "LOG_TYPE_UNSPECIFIED")),
		opt("exempted_members", names()),
	)))))
}

// sgAttachmentsSpec is a security group's attachments: how many network interfaces use it
// and what they serve (the kinds collectors/aws names), or, when they could not be read,
// complete false and why.
func sgAttachmentsSpec() *spec {
	var kinds []field
	for _, k := range []string{"ec2_instance", "lambda", "elb", "rds", "elasticache", "redshift", "nat_gateway", "vpc_endpoint", "detached", "other"} {
		kinds = append(kinds, opt(k, count()))
	}
	return object(req("complete", boolean()), opt("error", str()), opt("count", count()), opt("kinds", object(kinds...)))
}

// firewallTargetsSpec is what a GCP firewall rule applies to among its project's
// instances: how many, and a sample of their names, or, when the instances could not be
// read, known false and why.
func firewallTargetsSpec() *spec {
	return object(req("known", boolean()), opt("error", str()), opt("instances", count()), opt("sample", names()))
}
