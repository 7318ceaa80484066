package cloudsim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAWSRequest throws arbitrary Query and JSON requests at the simulator: whatever a
// client sends, it answers with an AWS error or a result, never a panic or a 5xx it did
// not mean to inject.
func FuzzAWSRequest(f *testing.F) {
	f.Add("iam", "Action=ListUsers&Version=2010-05-08&MaxItems=1", "")
	f.Add("iam", "Action=CreateUser&UserName=a&Version=2010-05-08", "")
	f.Add("iam", "Action=PutUserPolicy&UserName=a&PolicyName=p&PolicyDocument=%7B", "")
	f.Add("ec2", "Action=AuthorizeSecurityGroupIngress&GroupId=sg-1&IpPermissions.1.FromPort=x", "")
	f.Add("ec2", "Action=DescribeSecurityGroups&MaxResults=0&NextToken=zz", "")
	f.Add("sts", "Action=AssumeRole&RoleArn=arn:aws:iam::111111111111:role/r&RoleSessionName=s", "")
	f.Add("iam", "Action=GenerateServiceLastAccessedDetails&Arn=arn:aws:iam::111111111111:user/a&Granularity=ACTION_LEVEL", "")
	f.Add("iam", "Action=GetServiceLastAccessedDetails&JobId=00000000-0000-0000-0000-000000000000&MaxItems=1&Marker=x", "")
	f.Add("acm", `{"CertificateArn": 5}`, "CertificateManager.DescribeCertificate")
	f.Add("acm", `{"Certificate": "bm90IGEgY2VydA=="}`, "CertificateManager.ImportCertificate")
	f.Add("organizations", `{"MaxResults": -1}`, "AWSOrganizationsV20161128.ListAccounts")
	f.Add("secretsmanager", `{"Name": "a", "SecretString": "x", "ClientRequestToken": "00000000000000000000000000000001"}`, "secretsmanager.CreateSecret")
	f.Add("secretsmanager", `{"SecretId": "s", "VersionStage": "AWSCURRENT", "RemoveFromVersionId": "v1"}`, "secretsmanager.UpdateSecretVersionStage")
	f.Add("secretsmanager", `{"SecretId": "arn:aws:secretsmanager:us-east-1:111111111111:secret:s", "VersionStages": []}`, "secretsmanager.PutSecretValue")
	f.Fuzz(func(t *testing.T, service, body, target string) {
		s, err := New(&World{AWS: AWS{
			Organization: &Organization{ID: "o-abcdefghij", Management: "111111111111"},
			Accounts: []*Account{{ID: "111111111111", Users: []*User{{Name: "a"}},
				SecurityGroups: []*SecurityGroup{{ID: "sg-1", Name: "g", Region: "us-east-1"}},
				Secrets:        []*Secret{{Name: "s", Region: "us-east-1", String: "v"}}}},
		}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDFUZZ/20261202/us-east-1/"+service+"/aws4_request, SignedHeaders=host, Signature=0")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if target != "" {
			req.Header.Set("X-Amz-Target", target)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Errorf("%s %q: status %d: %s", service, body, rec.Code, rec.Body.String())
		}
	})
}
