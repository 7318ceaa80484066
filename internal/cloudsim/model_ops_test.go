package cloudsim

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"time"
)

const modelTrust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111111111111:root"},"Action":"sts:AssumeRole"}]}`
const modelPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`

func (m *modelSuite) iam() {
	q := func(action, wantErr string, kv ...string) []byte {
		return m.query("iam", "us-east-1", action, wantErr, kv...)
	}
	var mfaUser, mfaSerial string
	m.sim.Do(func(w *World) {
		for _, u := range w.AWS.Accounts[0].Users {
			if len(u.MFADevices) > 0 && mfaUser == "" {
				mfaUser, mfaSerial = u.Name, u.MFADevices[0].Serial
			}
		}
	})
	u, g, r := "UserName", "GroupName", "RoleName"
	q("CreateUser", "", u, "mt-user", "Path", "/mt/", "Tags.member.1.Key", "team", "Tags.member.1.Value", "models")
	q("CreateUser", "EntityAlreadyExists", u, "mt-user")
	q("GetUser", "", u, "mt-user")
	// Empty lists first: IAM answers them as empty elements, which the models require.
	for _, op := range []string{"ListGroupsForUser", "ListAccessKeys", "ListAttachedUserPolicies", "ListUserPolicies", "ListMFADevices", "ListUserTags"} {
		q(op, "", u, "mt-user")
	}
	q("ListPolicies", "", "Scope", "Local", "PathPrefix", "/none/")
	q("ListUsers", "", "PathPrefix", "/none/")
	q("ListRoles", "", "PathPrefix", "/none/")
	q("ListGroups", "", "PathPrefix", "/none/")
	q("GetUser", "NoSuchEntity", u, "nobody")
	q("ListUsers", "")
	q("TagUser", "", u, "mt-user", "Tags.member.1.Key", "k", "Tags.member.1.Value", "v")
	q("ListUserTags", "", u, "mt-user")
	q("UntagUser", "", u, "mt-user", "TagKeys.member.1", "k")
	q("CreateGroup", "", g, "mt-group")
	q("GetGroup", "", g, "mt-group")
	q("ListAttachedGroupPolicies", "", g, "mt-group")
	q("ListGroupPolicies", "", g, "mt-group")
	q("ListGroups", "")
	q("AddUserToGroup", "", g, "mt-group", u, "mt-user")
	q("ListGroupsForUser", "", u, "mt-user")
	key := xmlText(m.t, q("CreateAccessKey", "", u, "mt-user"), "AccessKeyId")
	q("ListAccessKeys", "", u, "mt-user")
	q("UpdateAccessKey", "", u, "mt-user", "AccessKeyId", key, "Status", "Inactive")
	q("GetAccessKeyLastUsed", "", "AccessKeyId", key)
	q("CreateLoginProfile", "", u, "mt-user", "Password", "Correct-Horse-9-Battery")
	q("GetLoginProfile", "", u, "mt-user")
	q("DeleteLoginProfile", "", u, "mt-user")
	q("ListMFADevices", "", u, mfaUser)
	q("DeactivateMFADevice", "", u, mfaUser, "SerialNumber", mfaSerial)
	q("ListVirtualMFADevices", "")
	q("ListSAMLProviders", "")
	q("ListAccountAliases", "")

	roleArn := xmlText(m.t, q("CreateRole", "", r, "mt-role", "AssumeRolePolicyDocument", modelTrust, "Description", "model test"), "Arn")
	q("GetRole", "", r, "mt-role")
	q("ListRoles", "")
	q("UpdateAssumeRolePolicy", "", r, "mt-role", "PolicyDocument", modelTrust)
	q("TagRole", "", r, "mt-role", "Tags.member.1.Key", "k", "Tags.member.1.Value", "v")
	q("ListRoleTags", "", r, "mt-role")
	q("ListAttachedRolePolicies", "", r, "mt-role")
	q("ListRolePolicies", "", r, "mt-role")
	q("UntagRole", "", r, "mt-role", "TagKeys.member.1", "k")
	q("ListInstanceProfilesForRole", "", r, "mt-role")

	arn := xmlText(m.t, q("CreatePolicy", "", "PolicyName", "mt-policy", "PolicyDocument", modelPolicy), "Arn")
	q("GetPolicy", "", "PolicyArn", arn)
	q("ListPolicies", "", "Scope", "Local")
	q("CreatePolicyVersion", "", "PolicyArn", arn, "PolicyDocument", modelPolicy)
	q("GetPolicyVersion", "", "PolicyArn", arn, "VersionId", "v1")
	q("ListPolicyVersions", "", "PolicyArn", arn)
	q("SetDefaultPolicyVersion", "", "PolicyArn", arn, "VersionId", "v2")
	q("DeletePolicyVersion", "", "PolicyArn", arn, "VersionId", "v1")
	for _, e := range []struct{ kind, param, name string }{{"User", u, "mt-user"}, {"Role", r, "mt-role"}, {"Group", g, "mt-group"}} {
		q("Attach"+e.kind+"Policy", "", e.param, e.name, "PolicyArn", arn)
		q("ListAttached"+e.kind+"Policies", "", e.param, e.name)
		q("Put"+e.kind+"Policy", "", e.param, e.name, "PolicyName", "mt-inline", "PolicyDocument", modelPolicy)
		q("Get"+e.kind+"Policy", "", e.param, e.name, "PolicyName", "mt-inline")
		q("List"+e.kind+"Policies", "", e.param, e.name)
	}
	q("ListEntitiesForPolicy", "", "PolicyArn", arn)
	// Access Advisor, while mt-role holds the policy (s3:GetObject, tracked at action level):
	// the first read of a job answers IN_PROGRESS, the next ones the report, by pages.
	for _, gran := range []string{"SERVICE_LEVEL", "ACTION_LEVEL"} {
		job := xmlText(m.t, q("GenerateServiceLastAccessedDetails", "", "Arn", roleArn, "Granularity", gran), "JobId")
		q("GetServiceLastAccessedDetails", "", "JobId", job)
		q("GetServiceLastAccessedDetails", "", "JobId", job, "MaxItems", "1")
	}
	q("GenerateServiceLastAccessedDetails", "NoSuchEntity", "Arn", roleArn+"-none")
	q("GenerateServiceLastAccessedDetails", "InvalidInput", "Arn", roleArn, "Granularity", "FULL")
	q("GetServiceLastAccessedDetails", "NoSuchEntity", "JobId", "00000000-0000-0000-0000-000000000000")
	q("GetAccountAuthorizationDetails", "")
	for _, e := range []struct{ kind, param, name string }{{"User", u, "mt-user"}, {"Role", r, "mt-role"}, {"Group", g, "mt-group"}} {
		q("Detach"+e.kind+"Policy", "", e.param, e.name, "PolicyArn", arn)
		q("Delete"+e.kind+"Policy", "", e.param, e.name, "PolicyName", "mt-inline")
	}
	q("DeletePolicy", "", "PolicyArn", arn)

	q("GenerateCredentialReport", "")
	q("GetCredentialReport", "")
	q("GetAccountSummary", "")
	q("GetAccountPasswordPolicy", "")
	q("UpdateAccountPasswordPolicy", "", "MinimumPasswordLength", "14", "RequireSymbols", "true")
	q("DeleteAccountPasswordPolicy", "")
	q("GetAccountPasswordPolicy", "NoSuchEntity")

	cert, key2 := testCertPEM(m.t, "mt.example")
	q("UploadServerCertificate", "", "ServerCertificateName", "mt-cert", "CertificateBody", cert, "PrivateKey", key2)
	q("ListServerCertificates", "")
	q("GetServerCertificate", "", "ServerCertificateName", "mt-cert")
	q("DeleteServerCertificate", "", "ServerCertificateName", "mt-cert")

	m.sts()                                         // AssumeRole needs mt-role
	q("DeleteUser", "DeleteConflict", u, "mt-user") // still in its group, with a key
	q("DeleteGroup", "NoSuchEntity", g, "mt-none")
	q("CreateRole", "EntityAlreadyExists", r, "mt-role", "AssumeRolePolicyDocument", modelTrust)
	q("RemoveUserFromGroup", "", g, "mt-group", u, "mt-user")
	q("DeleteAccessKey", "", u, "mt-user", "AccessKeyId", key)
	q("DeleteGroup", "", g, "mt-group")
	q("DeleteRole", "", r, "mt-role")
	q("DeleteUser", "", u, "mt-user")
}

func (m *modelSuite) sts() {
	if m.ok["sts:AssumeRole"] > 0 {
		return
	}
	m.query("sts", "us-east-1", "GetCallerIdentity", "")
	m.query("sts", "us-east-1", "AssumeRole", "", "RoleArn", "arn:aws:iam::111111111111:role/mt-role", "RoleSessionName", "model-test")
}

func (m *modelSuite) ec2() {
	const region = "eu-west-1"
	q := func(action, wantErr string, kv ...string) []byte {
		return m.query("ec2", region, action, wantErr, kv...)
	}
	var vpc string
	m.sim.Do(func(w *World) {
		for _, sg := range w.AWS.Accounts[0].SecurityGroups {
			if sg.Region == region && sg.VPC != "" {
				vpc = sg.VPC
			}
		}
	})
	q("DescribeRegions", "")
	q("DescribeSecurityGroups", "")
	q("DescribeSecurityGroups", "InvalidGroup.NotFound", "GroupId.1", "sg-0000000000000000f")
	q("DescribeSecurityGroupRules", "")
	q("DescribeNetworkInterfaces", "", "MaxResults", "5")
	q("DescribeNetworkInterfaces", "", "Filter.1.Name", "interface-type", "Filter.1.Value.1", "lambda")
	q("DescribeNetworkInterfaces", "InvalidNetworkInterfaceID.NotFound", "NetworkInterfaceId.1", "eni-0000000000000000f")
	id := xmlText(m.t, q("CreateSecurityGroup", "", "GroupName", "mt-sg", "GroupDescription", "model test", "VpcId", vpc), "groupId")
	perm := []string{"GroupId", id, "IpPermissions.1.IpProtocol", "tcp", "IpPermissions.1.FromPort", "22", "IpPermissions.1.ToPort", "22",
		"IpPermissions.1.IpRanges.1.CidrIp", "10.0.0.0/8"}
	q("AuthorizeSecurityGroupIngress", "", perm...)
	q("AuthorizeSecurityGroupEgress", "", perm...)
	q("DescribeSecurityGroupRules", "", "Filter.1.Name", "group-id", "Filter.1.Value.1", id)
	q("RevokeSecurityGroupIngress", "", perm...)
	q("RevokeSecurityGroupEgress", "", perm...)
	q("CreateTags", "", "ResourceId.1", id, "Tag.1.Key", "team", "Tag.1.Value", "models")
	q("DeleteTags", "", "ResourceId.1", id, "Tag.1.Key", "team")
	q("DeleteSecurityGroup", "", "GroupId", id)
}

func (m *modelSuite) acm() {
	const region = "us-east-1"
	c := func(action, wantErr string, req any) map[string]any {
		return m.jsonCall("acm", region, action, wantErr, req)
	}
	list := c("ListCertificates", "", map[string]any{"Includes": map[string]any{"keyTypes": []string{"RSA_2048", "EC_prime256v1"}}})
	var issued string
	if summaries, _ := list["CertificateSummaryList"].([]any); len(summaries) > 0 {
		for _, s := range summaries {
			if s, _ := s.(map[string]any); s["Type"] == "AMAZON_ISSUED" && issued == "" {
				issued, _ = s["CertificateArn"].(string)
			}
		}
	}
	cert, key := testCertPEM(m.t, "mt.acme.example")
	imp := c("ImportCertificate", "", map[string]any{"Certificate": base64.StdEncoding.EncodeToString([]byte(cert)),
		"PrivateKey": base64.StdEncoding.EncodeToString([]byte(key)), "Tags": []map[string]string{{"Key": "team", "Value": "models"}}})
	arn, _ := imp["CertificateArn"].(string)
	for _, a := range []string{arn, issued} {
		c("DescribeCertificate", "", map[string]string{"CertificateArn": a})
		c("GetCertificate", "", map[string]string{"CertificateArn": a})
	}
	c("DescribeCertificate", "ResourceNotFoundException", map[string]string{"CertificateArn": "arn:aws:acm:us-east-1:111111111111:certificate/00000000-0000-0000-0000-000000000000"})
	c("ListTagsForCertificate", "", map[string]string{"CertificateArn": arn})
	c("AddTagsToCertificate", "", map[string]any{"CertificateArn": arn, "Tags": []map[string]string{{"Key": "k", "Value": "v"}}})
	c("RemoveTagsFromCertificate", "", map[string]any{"CertificateArn": arn, "Tags": []map[string]string{{"Key": "k", "Value": "v"}}})
	c("UpdateCertificateOptions", "", map[string]any{"CertificateArn": issued, "Options": map[string]string{"CertificateTransparencyLoggingPreference": "DISABLED"}})
	c("RenewCertificate", "", map[string]string{"CertificateArn": issued})
	c("DeleteCertificate", "", map[string]string{"CertificateArn": arn})
}

func (m *modelSuite) organizations() {
	c := func(action, wantErr string, req any) map[string]any {
		return m.jsonCall("organizations", "us-east-1", action, wantErr, req)
	}
	c("DescribeOrganization", "", map[string]any{})
	c("ListAccounts", "", map[string]any{})
	c("DescribeAccount", "", map[string]string{"AccountId": "111111111111"})
	c("DescribeAccount", "AccountNotFoundException", map[string]string{"AccountId": "999999999999"})
	c("ListRoots", "", map[string]any{})
}

func (m *modelSuite) secretsManager() {
	c := func(action, wantErr string, req any) map[string]any {
		return m.jsonCall("secretsmanager", "eu-west-1", action, wantErr, req)
	}
	created := c("CreateSecret", "", map[string]any{"Name": "mt/secret", "SecretString": "one", "Tags": []map[string]string{{"Key": "team", "Value": "models"}}})
	id, _ := created["ARN"].(string)
	first, _ := created["VersionId"].(string)
	put := c("PutSecretValue", "", map[string]any{"SecretId": id, "SecretString": "two"})
	second, _ := put["VersionId"].(string)
	c("GetSecretValue", "", map[string]string{"SecretId": id})
	c("GetSecretValue", "ResourceNotFoundException", map[string]string{"SecretId": "mt/none"})
	c("DescribeSecret", "", map[string]string{"SecretId": id})
	c("CreateSecret", "ResourceExistsException", map[string]any{"Name": "mt/secret", "SecretString": "again"})
	c("ListSecrets", "", map[string]any{})
	c("ListSecretVersionIds", "", map[string]any{"SecretId": id, "IncludeDeprecated": true})
	c("UpdateSecretVersionStage", "", map[string]string{"SecretId": id, "VersionStage": "AWSCURRENT", "MoveToVersionId": first, "RemoveFromVersionId": second})
	c("TagResource", "", map[string]any{"SecretId": id, "Tags": []map[string]string{{"Key": "k", "Value": "v"}}})
	c("UntagResource", "", map[string]any{"SecretId": id, "TagKeys": []string{"k"}})
	c("DeleteSecret", "", map[string]any{"SecretId": id, "RecoveryWindowInDays": 7})
	c("RestoreSecret", "", map[string]string{"SecretId": id})
}

func (m *modelSuite) s3Ops() {
	m.s3("ListBuckets", http.MethodGet, "/", "", "")
	m.s3("CreateBucket", http.MethodPut, "/mt-model-bucket", "", "")
	m.s3("HeadBucket", http.MethodHead, "/mt-model-bucket", "", "")
	m.s3("HeadBucket", http.MethodHead, "/mt-no-such-bucket", "404", "")
	m.s3("PutObject", http.MethodPut, "/mt-model-bucket/a/b.txt", "", "hello", "Content-Type", "text/plain")
	m.s3("ListObjectsV2", http.MethodGet, "/mt-model-bucket?list-type=2", "", "")
	m.s3("ListObjectsV2", http.MethodGet, "/mt-model-bucket?list-type=2&prefix=a/&delimiter=/", "", "")
	m.s3("GetObject", http.MethodGet, "/mt-model-bucket/a/b.txt", "", "")
	m.s3("GetObject", http.MethodGet, "/mt-model-bucket/none", "NoSuchKey", "")
	m.s3("HeadObject", http.MethodHead, "/mt-model-bucket/a/b.txt", "", "")
	m.s3("DeleteObject", http.MethodDelete, "/mt-model-bucket/a/b.txt", "", "")
	m.s3("ListObjectsV2", http.MethodGet, "/mt-no-such-bucket?list-type=2", "NoSuchBucket", "")
}

func (m *modelSuite) gcpOps() {
	var project, pool, provider string
	var org string
	m.sim.Do(func(w *World) {
		org = w.GCP.Organizations[0].ID
		for _, p := range w.GCP.Projects {
			if len(p.WorkloadIdentityPools) > 0 && len(p.WorkloadIdentityPools[0].Providers) > 0 {
				project, pool, provider = p.ID, p.WorkloadIdentityPools[0].ID, p.WorkloadIdentityPools[0].Providers[0].ID
			}
		}
		if project == "" {
			project = w.GCP.Projects[0].ID
		}
	})
	crm := "cloudresourcemanager."
	m.rest(crm+"projects.get", http.MethodGet, "/v3/projects/"+project, 0, nil)
	m.rest(crm+"projects.get", http.MethodGet, "/v3/projects/no-such-project", http.StatusForbidden, nil)
	m.rest(crm+"projects.list", http.MethodGet, "/v3/projects?parent=organizations/"+org, 0, nil)
	m.rest(crm+"projects.search", http.MethodGet, "/v3/projects:search", 0, nil)
	pol := m.rest(crm+"projects.getIamPolicy", http.MethodPost, "/v3/projects/"+project+":getIamPolicy", 0, map[string]any{})
	m.rest(crm+"projects.setIamPolicy", http.MethodPost, "/v3/projects/"+project+":setIamPolicy", 0, map[string]any{"policy": pol})
	m.rest(crm+"organizations.get", http.MethodGet, "/v3/organizations/"+org, 0, nil)
	pol = m.rest(crm+"organizations.getIamPolicy", http.MethodPost, "/v3/organizations/"+org+":getIamPolicy", 0, map[string]any{})
	m.rest(crm+"organizations.setIamPolicy", http.MethodPost, "/v3/organizations/"+org+":setIamPolicy", 0, map[string]any{"policy": pol})
	m.rest(crm+"folders.get", http.MethodGet, "/v3/folders/907531", 0, nil)
	pol = m.rest(crm+"folders.getIamPolicy", http.MethodPost, "/v3/folders/907531:getIamPolicy", 0, map[string]any{})
	m.rest(crm+"folders.setIamPolicy", http.MethodPost, "/v3/folders/907531:setIamPolicy", 0, map[string]any{"policy": pol})

	g := "/compute/v1/projects/" + project + "/global/"
	m.rest("compute.firewalls.list", http.MethodGet, g+"firewalls", 0, nil)
	fw := map[string]any{"name": "mt-fw", "network": "global/networks/default", "direction": "INGRESS", "priority": 1000,
		"sourceRanges": []string{"10.0.0.0/8"}, "allowed": []map[string]any{{"IPProtocol": "tcp", "ports": []string{"22"}}}}
	op := m.rest("compute.firewalls.insert", http.MethodPost, g+"firewalls", 0, fw)
	m.rest("compute.firewalls.insert", http.MethodPost, g+"firewalls", http.StatusConflict, fw)
	m.rest("compute.firewalls.get", http.MethodGet, g+"firewalls/mt-fw", 0, nil)
	m.rest("compute.firewalls.get", http.MethodGet, g+"firewalls/mt-none", http.StatusNotFound, nil)
	m.rest("compute.firewalls.patch", http.MethodPatch, g+"firewalls/mt-fw", 0, map[string]any{"sourceRanges": []string{"10.1.0.0/16"}})
	fw["sourceRanges"] = []string{"10.2.0.0/16"}
	m.rest("compute.firewalls.update", http.MethodPut, g+"firewalls/mt-fw", 0, fw)
	if name, _ := op["name"].(string); name != "" {
		m.rest("compute.globalOperations.get", http.MethodGet, g+"operations/"+name, 0, nil)
	}
	m.rest("compute.firewalls.delete", http.MethodDelete, g+"firewalls/mt-fw", 0, nil)
	nets := m.rest("compute.networks.list", http.MethodGet, g+"networks", 0, nil)
	if items, _ := nets["items"].([]any); len(items) > 0 {
		name, _ := items[0].(map[string]any)["name"].(string)
		m.rest("compute.networks.get", http.MethodGet, g+"networks/"+name, 0, nil)
	}
	m.rest("compute.instances.aggregatedList", http.MethodGet, "/compute/v1/projects/"+project+"/aggregated/instances", 0, nil)
	m.rest("compute.instances.list", http.MethodGet, "/compute/v1/projects/"+project+"/zones/europe-west1-b/instances", 0, nil)
	m.rest("compute.projects.get", http.MethodGet, "/compute/v1/projects/"+project, 0, nil)
	cert, key := testCertPEM(m.t, "mt.acme.example")
	m.rest("compute.sslCertificates.list", http.MethodGet, g+"sslCertificates", 0, nil)
	m.rest("compute.sslCertificates.insert", http.MethodPost, g+"sslCertificates", 0, map[string]any{"name": "mt-cert", "certificate": cert, "privateKey": key})
	m.rest("compute.sslCertificates.get", http.MethodGet, g+"sslCertificates/mt-cert", 0, nil)
	m.rest("compute.sslCertificates.delete", http.MethodDelete, g+"sslCertificates/mt-cert", 0, nil)

	base := "/v1/projects/" + project + "/locations/global/workloadIdentityPools"
	pools := "iam.projects.locations.workloadIdentityPools."
	m.rest(pools+"list", http.MethodGet, base, 0, nil)
	m.rest(pools+"get", http.MethodGet, base+"/"+pool, 0, nil)
	m.rest(pools+"providers.list", http.MethodGet, base+"/"+pool+"/providers", 0, nil)
	m.rest(pools+"providers.get", http.MethodGet, base+"/"+pool+"/providers/"+provider, 0, nil)

	// Authentication activities: give one account and one key a last authentication, so
	// that the answers carry an activity of each type.
	var saName, keyName string
	m.sim.Do(func(w *World) {
		for _, p := range w.GCP.Projects {
			if p.ID != project {
				continue
			}
			at := m.sim.now().Add(-48 * time.Hour)
			for _, sa := range p.ServiceAccounts {
				if saName == "" {
					sa.LastAuthenticated, saName = &at, sa.Email
				}
				if keyName == "" && len(sa.Keys) > 0 {
					sa.Keys[0].LastAuthenticated, keyName = &at, sa.Email+"/keys/"+sa.Keys[0].ID
				}
			}
		}
	})
	acts := "/v1/projects/" + project + "/locations/global/activityTypes/"
	pa := "policyanalyzer.projects.locations.activityTypes.activities.query"
	for _, typ := range []string{"serviceAccountLastAuthentication", "serviceAccountKeyLastAuthentication"} {
		res := m.rest(pa, http.MethodGet, acts+typ+"/activities:query", 0, nil)
		if list, _ := res["activities"].([]any); saName != "" && keyName != "" && len(list) == 0 {
			m.t.Errorf("%s: no activity: %v", typ, res)
		}
	}
	m.rest(pa, http.MethodGet, acts+"serviceAccountLastAuthentication/activities:query?pageSize=1&filter="+
		url.QueryEscape(`activities.full_resource_name="//iam.googleapis.com/projects/`+project+`/serviceAccounts/`+saName+`"`), 0, nil)
	m.rest(pa, http.MethodGet, "/v1/projects/no-such-project/locations/global/activityTypes/serviceAccountLastAuthentication/activities:query", http.StatusForbidden, nil)
	m.rest(pa, http.MethodGet, acts+"nope/activities:query", http.StatusBadRequest, nil)

}

// pages asks for one item at a time, so that the answers carry their continuation
// (Marker, NextToken, nextToken, nextPageToken).
func (m *modelSuite) pages() {
	for _, op := range []string{"ListUsers", "ListRoles", "ListPolicies", "ListGroups"} {
		m.query("iam", "us-east-1", op, "", "MaxItems", "1")
	}
	m.query("iam", "us-east-1", "GetAccountAuthorizationDetails", "", "MaxItems", "1")
	m.query("ec2", "eu-west-1", "DescribeSecurityGroups", "", "MaxResults", "5")
	m.query("ec2", "eu-west-1", "DescribeSecurityGroupRules", "", "MaxResults", "5")
	m.jsonCall("acm", "us-east-1", "ListCertificates", "", map[string]any{"MaxItems": 1})
	m.jsonCall("organizations", "us-east-1", "ListAccounts", "", map[string]any{"MaxResults": 1})
	m.jsonCall("secretsmanager", "eu-west-1", "ListSecrets", "", map[string]any{"MaxResults": 1})
	m.s3("ListObjectsV2", http.MethodGet, "/mt-model-bucket?list-type=2&max-keys=1", "", "")
	var project string
	m.sim.Do(func(w *World) { project = w.GCP.Projects[0].ID })
	m.rest("compute.firewalls.list", http.MethodGet, "/compute/v1/projects/"+project+"/global/firewalls?maxResults=1", 0, nil)
	m.rest("cloudresourcemanager.projects.search", http.MethodGet, "/v3/projects:search?pageSize=1", 0, nil)
}

// faults injects throttling, outages and denials on every call, and checks that each
// service answers them with codes its model (or AWS's common errors) names.
func (m *modelSuite) faults() {
	var project string
	m.sim.Do(func(w *World) { project = w.GCP.Projects[0].ID })
	for _, f := range []Fault{{ThrottleRate: 1}, {ErrorRate: 1}, {AccessDenied: true}} {
		if err := m.sim.SetFaults([]Fault{f}, nil); err != nil {
			m.t.Fatal(err)
		}
		m.query("iam", "us-east-1", "ListUsers", "*")
		m.query("sts", "us-east-1", "GetCallerIdentity", "*")
		m.query("ec2", "eu-west-1", "DescribeSecurityGroups", "*")
		m.jsonCall("acm", "us-east-1", "ListCertificates", "*", map[string]any{})
		m.jsonCall("acm", "us-east-1", "DescribeCertificate", "*", map[string]string{"CertificateArn": "arn:aws:acm:us-east-1:111111111111:certificate/x"})
		m.jsonCall("organizations", "us-east-1", "ListAccounts", "*", map[string]any{})
		m.jsonCall("secretsmanager", "eu-west-1", "GetSecretValue", "*", map[string]string{"SecretId": "mt/secret"})
		m.s3("ListBuckets", http.MethodGet, "/", "*", "")
		m.rest("cloudresourcemanager.projects.get", http.MethodGet, "/v3/projects/"+project, -1, nil)
		m.rest("compute.firewalls.list", http.MethodGet, "/compute/v1/projects/"+project+"/global/firewalls", -1, nil)
	}
	if err := m.sim.SetFaults(nil, nil); err != nil {
		m.t.Fatal(err)
	}
}
