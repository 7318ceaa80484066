// Package events maps the cloud change events POST /v1/events receives to the resources
// they touched, which the daemon reads again alone, evaluates and, if the gates allow,
// remediates. It reads events; it calls no cloud.
//
// # What is accepted
//
// AWS CloudTrail records as EventBridge delivers them ("detail-type": "AWS API Call via
// CloudTrail", the record in "detail"), ACM's certificate events, GCP Cloud Audit Log
// entries as Pub/Sub push delivers them ({"message": {"data": base64(LogEntry)}}) or
// as a bare LogEntry, and, for replays, CloudTrail records and log files
// ({"Records": [...]}). A JSON array of events is accepted too. Parse tells the shapes
// apart; see Parser.Parse.
//
// # What is mapped
//
// AWS (AWSCalls lists them all), each to the resources whose attributes it changes:
//
//   - IAM users: CreateUser, DeleteUser, UpdateUser (the old name and the new),
//     TagUser, UntagUser; login profiles (Create, Update, DeleteLoginProfile,
//     ChangePassword) and MFA (EnableMFADevice, DeactivateMFADevice), to the user named
//     or else the caller, the root user included.
//   - Access keys: CreateAccessKey (the id from responseElements.accessKey),
//     UpdateAccessKey, DeleteAccessKey, to the key
//     (arn:aws:iam::ACCT:user/NAME/accesskey/AKIA…) and to its user, whose
//     access_keys list it is in. A root user's keys are a count on the root user.
//   - Groups, roles, their memberships and policies: Create/Delete/Update Group,
//     AddUserToGroup, RemoveUserFromGroup (the group and the user), Create/Delete/
//     Update Role, Create/DeleteServiceLinkedRole, UpdateRoleDescription,
//     UpdateAssumeRolePolicy (the trust policy), Tag/UntagRole; Attach/Detach User/
//     Group/RolePolicy (the principal and the managed policy, whose attachments
//     change); Put/Delete User/Group/RolePolicy (inline policies, attributes of the
//     principal).
//   - Managed policies: CreatePolicy, DeletePolicy, CreatePolicyVersion,
//     DeletePolicyVersion, SetDefaultPolicyVersion, Tag/UntagPolicy.
//   - Server certificates (Upload, Update, DeleteServerCertificate) and the account
//     password policy (Update, DeleteAccountPasswordPolicy).
//   - EC2 security groups: Authorize/Revoke SecurityGroup Ingress/Egress,
//     UpdateSecurityGroupRuleDescriptions Ingress/Egress, ModifySecurityGroupRules,
//     Create/DeleteSecurityGroup, and Create/DeleteTags on groups. A rule is an
//     attribute of its group: a rule change touches the group,
//     arn:aws:ec2:REGION:ACCT:security-group/sg-….
//   - ACM certificates: ImportCertificate, RequestCertificate, DeleteCertificate,
//     RenewCertificate, Add/RemoveTagsToCertificate, UpdateCertificateOptions, and
//     ACM's events Certificate Expired, Available, Renewal Action Required, Rotated,
//     Revoked.
//
// GCP (GCPCalls lists them all):
//
//   - SetIamPolicy on projects, folders and organizations (Resource Manager v1/v2 and
//     v3), to //cloudresourcemanager.googleapis.com/projects/P (folders/N,
//     organizations/N).
//   - Service accounts (google.iam.admin.v1 Create, Delete, Disable, Enable, Update,
//     Patch, UndeleteServiceAccount, SetIAMPolicy) and their keys (Create, Upload,
//     Delete, Disable, EnableServiceAccountKey), to
//     //iam.googleapis.com/projects/P/serviceAccounts/EMAIL[/keys/KEY]. Deleting an
//     account deletes its keys, whose uids begin with the account's.
//   - Compute Engine firewalls (insert, patch, update, delete, any API version) and
//     SSL certificates (insert, delete), to
//     //compute.googleapis.com/projects/P/global/firewalls/NAME. An operation is
//     logged when it begins and when it ends; both map.
//
// # What is not
//
// Read-only calls, calls that failed (a CloudTrail errorCode, an audit log status with
// a code), other services and methods, and events that are not API calls are
// ErrUnknown. Bodies warden cannot read (bad JSON, base64, a missing or mistyped field,
// an id that cannot be part of a uid) are ErrMalformed, naming the field. Status says
// what each is answered (both 400, as the daemon's issue asks, and why that is the
// right answer for both senders), and EventPatterns and LogFilter configure the senders
// to send only what is mapped. Not mapped, because warden has no resource for them or
// they change none of its attributes: instance profiles, permissions boundaries,
// signing certificates and SSH keys, virtual MFA devices before they are enabled, the
// GCP networks a firewall belongs to (collectors read them with the whole compute
// scope), project creation and deletion.
//
// # Denials
//
// A call refused for want of a permission changes nothing, and Parse answers it
// ErrUnknown as any failed call. Read (the daemon's reader) hands it over as a Denial
// instead, for the daemon to tell whether a right-sizing fix removed what was refused
// (reconcile/watch):
//
//   - CloudTrail records whose errorCode is AccessDenied, AccessDeniedException,
//     UnauthorizedOperation, Client.UnauthorizedOperation or UnauthorizedAccess, of any
//     service. The principal is the IAM user's ARN, or for an assumed role the role's
//     (userIdentity.sessionContext.sessionIssuer.arn): a session has what its role's
//     policies grant. Other callers (services, federated users, the root user) name no
//     principal a fix changes: they stay ErrUnknown. The action is the IAM action,
//     "svc:EventName", svc the first label of eventSource except where IAM's prefix
//     differs from the endpoint (iamPrefixes: monitoring is cloudwatch, email is ses,
//     streams.dynamodb is dynamodb, tagging is tag, runtime.sagemaker is sagemaker,
//     runtime.lex is lex); Lambda's event names lose their API version
//     (UpdateFunctionCode20150331v2 is lambda:UpdateFunctionCode).
//   - Audit log entries with status.code 7 (PERMISSION_DENIED) and a principalEmail. A
//     service account is //iam.googleapis.com/projects/P/serviceAccounts/EMAIL (P from
//     the email, else the entry's project); anyone else "user:EMAIL". What was denied
//     is each authorizationInfo permission with granted false, else the methodName.
//
// A principal that is there but no user's or role's ARN, or no email, is ErrMalformed.
//
// # When an event does not name its resource
//
// An event that says something changed in a scope without naming the resource well
// enough to read it alone (a security group named by groupName, request parameters
// CloudTrail omitted as too large, a service account named by its unique id only, the
// root user, which only a collection of the IAM scope reads) sets Change.WholeScope:
// the daemon collects Change.Scope. Absence is what clouds do; a field that is there but
// mistyped or not an id is ErrMalformed.
//
// IAM calls name users, groups, roles and server certificates by name, without the path
// that is part of their ARN. Unless the event carries the ARN (a create call's response,
// the caller's own ARN) or the path (a create call's request), the uid is built from
// the name alone and the Ref says ByName: see Ref.
package events
