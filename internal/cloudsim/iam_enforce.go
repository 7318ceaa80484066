package cloudsim

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// IAM enforcement. When Options.EnforceIAM or the world's aws.enforce_iam is set, every
// AWS call signed by a world user's access key or by a role session is authorized before
// its handler runs, against the principal's identity policies (iam_eval.go): a user's
// inline and attached managed policies and those of its groups; a role's inline and
// attached policies. The root user and keys the simulator does not know are not
// restricted. A refused call is answered as the service answers AccessDenied, counted as
// denied, and not recorded as used (recordAccess records successes only); so after a
// policy is narrowed, the calls it still grants succeed and the others are refused at once.
//
// AWS-managed policies a world does not spell out hold a placeholder document that grants
// sts:GetCallerIdentity only (awsPlaceholderDoc): a principal with ReadOnlyAccess attached
// but not written out can do nothing else. A world that needs one spells it out as a
// policy with aws_managed: true and its document (AdministratorAccess: Action "*").
//
// sts:GetCallerIdentity is never refused, as in AWS. Not modelled: resource-based
// policies (bucket policies; trust policies: AssumeRole checks only the caller's identity
// policies), permissions boundaries, session policies and SCPs.

// enforcing tells whether calls are authorized. s.mu is held.
func (s *Sim) enforcing() bool { return s.enforceIAM || s.world.AWS.EnforceIAM }

// subject is the principal a call acts as, with what its policies are evaluated on.
type subject struct {
	arn     string // the caller's ARN: the user's, or the role session's
	account *Account
	docs    []Doc
	context map[string]string // condition keys and policy variables, lower-cased
}

// subjectOf finds the user or role session behind the call's access key, or nil for the
// root user and unknown keys (identify recorded no user or role for them). A user or role
// gone since identify, or a session whose role is gone, has no policies left. s.mu is held.
func (s *Sim) subjectOf(c *call) *subject {
	if c.usedBy == nil {
		return nil
	}
	ctx := map[string]string{"aws:requestedregion": c.signRegion}
	if c.Service == "iam" || c.signRegion == "" {
		ctx["aws:requestedregion"] = "us-east-1"
	}
	gone := &subject{arn: c.Principal, account: &Account{ID: c.Account}, context: ctx}
	if se, ok := s.sessions[c.akid]; ok {
		a := s.worldAccount(se.Account)
		if se.role == nil || a == nil {
			return gone
		}
		sub := &subject{arn: se.ARN, account: a, context: ctx}
		if findRole(a, se.role.Name) == se.role {
			sub.docs = s.entityDocs(a, se.role.AttachedPolicies, se.role.InlinePolicies)
		}
		sessionName := se.ARN[strings.LastIndex(se.ARN, "/")+1:]
		ctx["aws:principalarn"] = roleARN(a.ID, se.role)
		ctx["aws:principaltype"] = "AssumedRole"
		ctx["aws:userid"] = se.role.ID + ":" + sessionName
		ctx["aws:principalaccount"] = a.ID
		return sub
	}
	a, u, k := s.keyOf(c.akid)
	if k == nil {
		return gone
	}
	docs := s.entityDocs(a, u.AttachedPolicies, u.InlinePolicies)
	for _, name := range u.Groups {
		if g := findGroup(a, name); g != nil {
			docs = append(docs, s.entityDocs(a, g.AttachedPolicies, g.InlinePolicies)...)
		}
	}
	arn := userARN(a.ID, u)
	ctx["aws:principalarn"], ctx["aws:principaltype"] = arn, "User"
	ctx["aws:username"], ctx["aws:userid"], ctx["aws:principalaccount"] = u.Name, u.ID, a.ID
	return &subject{arn: arn, account: a, docs: docs, context: ctx}
}

// authorize decides a call about to be served; resource names what it acts on in the
// subject's account. A refusal is the call's answer. s.mu is held.
func (s *Sim) authorize(c *call, resource func(a *Account) string) *apiError {
	if !s.enforcing() || c.authErr != nil || (c.Service == "sts" && c.Action == "GetCallerIdentity") {
		return nil
	}
	sub := s.subjectOf(c)
	if sub == nil {
		return nil
	}
	action := c.Service + ":" + iamActionOf(c.Service, c.Action)
	req := authzRequest{Action: action, Resource: resource(sub.account), Context: sub.context}
	d := evalIdentity(parseStatements(sub.docs), req)
	if d == allowed {
		return nil
	}
	s.faultMu.Lock()
	if st := s.calls[c.Service+":"+c.Action]; st != nil {
		st.AccessDenied++
	}
	s.faultMu.Unlock()
	return &apiError{Kind: kindDenied, Message: deniedMessage(c.Service, sub.arn, action, req.Resource, d)}
}

// deniedMessage is AWS's message for a call its identity policies refuse. S3 quotes the
// resource; EC2 prefixes its UnauthorizedOperation sentence.
func deniedMessage(service, principal, action, resource string, d authzDecision) string {
	if service == "s3" {
		resource = `"` + resource + `"`
	}
	why := "because no identity-based policy allows the " + action + " action"
	if d == explicitDeny {
		why = "with an explicit deny in an identity-based policy"
	}
	msg := fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", principal, action, resource, why)
	if service == "ec2" {
		msg = "You are not authorized to perform this operation. " + msg
	}
	return msg
}

// Resources. Where the simulator can name what an operation acts on, the request's
// resource is that ARN; elsewhere it is "*", which only a Resource of "*" grants:
//   - S3: the bucket (CreateBucket, HeadBucket, ListObjectsV2) or the object
//     (arn:aws:s3:::bucket/key); ListBuckets is "*".
//   - IAM: the user, role or group the call names (UserName, RoleName, GroupName; a
//     user's own key and MFA calls without UserName act on the caller, and
//     GetAccessKeyLastUsed on the key's user), the policy
//     (PolicyArn; CreatePolicy: the new one's), the entity of
//     GenerateServiceLastAccessedDetails, the server certificate; ListUsers, ListRoles,
//     ListGroups and ListPolicies act on the path they list (arn:aws:iam::ACCT:user/, as
//     AWS names it). Account-wide calls (GetAccountSummary, credential reports,
//     GetAccountAuthorizationDetails, password policy, virtual MFA, SAML providers,
//     aliases, GetServiceLastAccessedDetails, ListServerCertificates) are "*".
//   - STS: AssumeRole acts on the role (RoleArn).
//   - EC2: calls naming one security group (GroupId, or CreateTags/DeleteTags on one
//     sg-) act on arn:aws:ec2:REGION:ACCT:security-group/ID; the others, Describe* and
//     CreateSecurityGroup included, are "*".
//   - ACM: the certificate of CertificateArn; Secrets Manager: the secret of SecretId
//     (its full ARN when it exists in the account and region, the ARN given otherwise);
//     ListCertificates, ImportCertificate, CreateSecret, ListSecrets, a SecretId naming
//     no secret, and every Organizations call are "*".
//   - Security Hub: BatchImportFindings acts on the product ARN of its first finding, the
//     others on the hub, arn:aws:securityhub:REGION:ACCT:hub/default (securityhub.go).

// s3Resource is the ARN an S3 operation acts on.
func s3Resource(op s3Op) string {
	switch {
	case op.Bucket == "":
		return "*"
	case op.Key == "":
		return "arn:aws:s3:::" + op.Bucket
	}
	return "arn:aws:s3:::" + op.Bucket + "/" + op.Key
}

// callerActs are the IAM operations that act on the calling user when UserName is left out.
var callerActs = map[string]bool{
	"GetUser": true, "ListAccessKeys": true, "CreateAccessKey": true, "UpdateAccessKey": true,
	"DeleteAccessKey": true, "ListMFADevices": true, "GetLoginProfile": true, "ListGroupsForUser": true,
}

// iamLists are the IAM list operations and the resource type whose path they list.
var iamLists = map[string]string{"ListUsers": "user", "ListRoles": "role", "ListGroups": "group", "ListPolicies": "policy"}

// queryResource is the ARN a Query call (IAM, STS, EC2) acts on.
func (s *Sim) queryResource(c *call, f url.Values) func(a *Account) string {
	return func(a *Account) string {
		switch c.Service {
		case "iam":
			return s.iamResource(a, c, f)
		case "sts":
			if c.Action == "AssumeRole" && f.Get("RoleArn") != "" {
				return f.Get("RoleArn")
			}
		case "ec2":
			id := f.Get("GroupId")
			if id == "" && (c.Action == "CreateTags" || c.Action == "DeleteTags") && f.Get("ResourceId.2") == "" {
				id = f.Get("ResourceId.1")
			}
			if strings.HasPrefix(id, "sg-") {
				return "arn:aws:ec2:" + c.Region + ":" + a.ID + ":security-group/" + id
			}
		}
		return "*"
	}
}

// iamResource is the ARN an IAM call acts on.
func (s *Sim) iamResource(a *Account, c *call, f url.Values) string {
	prefix := "arn:aws:iam::" + a.ID + ":"
	pathOf := func(p string) string { return orPath(or(f.Get("Path"), p)) }
	if kind, ok := iamLists[c.Action]; ok {
		return prefix + kind + orPath(f.Get("PathPrefix"))
	}
	if name := f.Get("GroupName"); name != "" && strings.Contains(c.Action, "Group") && c.Action != "ListGroupsForUser" {
		if g := findGroup(a, name); g != nil {
			return groupARN(a.ID, g)
		}
		return prefix + "group" + pathOf("") + name
	}
	if name := f.Get("RoleName"); name != "" {
		if r := findRole(a, name); r != nil {
			return roleARN(a.ID, r)
		}
		return prefix + "role" + pathOf("") + name
	}
	if name := f.Get("UserName"); name != "" {
		if u := findUser(a, name); u != nil {
			return userARN(a.ID, u)
		}
		return prefix + "user" + pathOf("") + name
	}
	if callerActs[c.Action] && strings.HasPrefix(c.Principal, prefix+"user/") {
		return c.Principal
	}
	if c.Action == "GetAccessKeyLastUsed" {
		if ka, u, k := s.keyOf(f.Get("AccessKeyId")); k != nil && ka == a {
			return userARN(a.ID, u)
		}
	}
	switch {
	case f.Get("PolicyArn") != "":
		return f.Get("PolicyArn")
	case c.Action == "CreatePolicy" && f.Get("PolicyName") != "":
		return prefix + "policy" + pathOf("") + f.Get("PolicyName")
	case c.Action == "GenerateServiceLastAccessedDetails" && f.Get("Arn") != "":
		return f.Get("Arn")
	case f.Get("ServerCertificateName") != "":
		return prefix + "server-certificate" + pathOf("") + f.Get("ServerCertificateName")
	}
	return "*"
}

// jsonResource is the ARN a JSON call (ACM, Secrets Manager, Organizations) acts on.
func (s *Sim) jsonResource(c *call, body []byte) func(a *Account) string {
	return func(a *Account) string {
		var in struct {
			CertificateArn string
			SecretId       string
		}
		if json.Unmarshal(body, &in) != nil {
			return "*"
		}
		switch {
		case c.Service == "acm" && in.CertificateArn != "":
			return in.CertificateArn
		case c.Service == "secretsmanager" && in.SecretId != "":
			return secretResource(a, c.Region, in.SecretId)
		}
		return "*"
	}
}

// secretResource is the ARN of the secret a SecretId names (a name, a full ARN, or an ARN
// without its suffix): the secret's own when it exists, else the ARN given, else "*".
func secretResource(a *Account, region, id string) string {
	for _, sec := range a.Secrets {
		if sec.Region != region {
			continue
		}
		arn := secretARN(a, sec)
		if sec.Name == id || arn == id || strings.TrimSuffix(arn, "-"+sec.Suffix) == id {
			return arn
		}
	}
	if strings.HasPrefix(id, "arn:") {
		return id
	}
	return "*"
}
