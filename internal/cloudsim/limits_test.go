package cloudsim

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// oversized is a request body just over the simulator's limit.
const oversized = maxRequestBody + 1<<20

// padded returns prefix followed by filler up to oversized bytes: a request that, cut at
// the limit, would still parse as the prefix and run.
func padded(prefix string) []byte {
	b := make([]byte, oversized)
	copy(b, prefix)
	for i := len(prefix); i < len(b); i++ {
		b[i] = 'a'
	}
	return b
}

// onlyReader hides a body's length, so that the client sends it chunked and the
// simulator finds out it is too large only while reading it.
type onlyReader struct{ io.Reader }

func TestHandler_refusesOversizedBodyWithoutExecuting(t *testing.T) {
	awsAuth := func(service string) string {
		return "AWS4-HMAC-SHA256 Credential=AKIDSIM/20261202/us-east-1/" + service + "/aws4_request, SignedHeaders=host, Signature=0"
	}
	tests := []struct {
		name    string
		path    string
		header  map[string]string
		body    []byte
		chunked bool
		// check reads the error body in the protocol's shape.
		check func(t *testing.T, h http.Header, body []byte)
		// untouched reports whether the world still lacks what the request would create.
		untouched func(w *World) bool
	}{
		{
			name:   "AWS Query (IAM)",
			path:   "/",
			header: map[string]string{"Authorization": awsAuth("iam"), "Content-Type": "application/x-www-form-urlencoded"},
			body:   padded("Action=CreateUser&UserName=evil&Version=2010-05-08&Padding="),
			check:  checkQueryError("ErrorResponse"),
			untouched: func(w *World) bool {
				return !strings.Contains(mustJSON(w.AWS.Accounts), `"evil"`)
			},
		},
		{
			name:    "AWS Query (IAM), chunked",
			path:    "/",
			header:  map[string]string{"Authorization": awsAuth("iam"), "Content-Type": "application/x-www-form-urlencoded"},
			body:    padded("Action=CreateUser&UserName=evil&Version=2010-05-08&Padding="),
			chunked: true,
			check:   checkQueryError("ErrorResponse"),
			untouched: func(w *World) bool {
				return !strings.Contains(mustJSON(w.AWS.Accounts), `"evil"`)
			},
		},
		{
			name:   "AWS Query (EC2)",
			path:   "/",
			header: map[string]string{"Authorization": awsAuth("ec2"), "Content-Type": "application/x-www-form-urlencoded"},
			body:   padded("Action=CreateSecurityGroup&GroupName=evil&GroupDescription=d&Version=2016-11-15&Padding="),
			check:  checkQueryError("Response"),
			untouched: func(w *World) bool {
				return !strings.Contains(mustJSON(w.AWS.Accounts), `"evil"`)
			},
		},
		{
			name:    "AWS JSON (ACM), chunked",
			path:    "/",
			header:  map[string]string{"Authorization": awsAuth("acm"), "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "CertificateManager.ImportCertificate"},
			body:    padded(`{"Certificate":"`),
			chunked: true,
			check:   checkAWSJSONError,
			untouched: func(w *World) bool {
				n := 0
				for _, a := range w.AWS.Accounts {
					n += len(a.Certificates)
				}
				return n == 0
			},
		},
		{
			name:   "GCP REST (Compute)",
			path:   "/compute/v1/projects/acme-prod/global/firewalls",
			header: map[string]string{"Content-Type": "application/json"},
			body:   padded(`{"name":"evil","allowed":[{"IPProtocol":"tcp"}],"sourceRanges":["0.0.0.0/0"],"description":"`),
			check:  checkGCPError,
			untouched: func(w *World) bool {
				return findFirewall(w.GCP.Projects[0], "evil") == nil
			},
		},
		{
			name:    "GCP REST (Compute), chunked",
			path:    "/compute/v1/projects/acme-prod/global/firewalls",
			header:  map[string]string{"Content-Type": "application/json"},
			body:    padded(`{"name":"evil","allowed":[{"IPProtocol":"tcp"}],"sourceRanges":["0.0.0.0/0"],"description":"`),
			chunked: true,
			check:   checkGCPError,
			untouched: func(w *World) bool {
				return findFirewall(w.GCP.Projects[0], "evil") == nil
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &World{AWS: AWS{Accounts: []*Account{{ID: "111111111111"}}},
				GCP: GCP{Projects: []*Project{{ID: "acme-prod", Number: "111111111111"}}}}
			sim, srv := startGCP(t, w)
			var body io.Reader = bytes.NewReader(tt.body)
			if tt.chunked {
				body = onlyReader{body}
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL+tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d (%.300s), want 413", resp.StatusCode, got)
			}
			tt.check(t, resp.Header, got)
			sim.Do(func(w *World) {
				if !tt.untouched(w) {
					t.Error("the oversized request changed the world")
				}
			})
			for k, c := range sim.Calls() {
				if strings.Contains(k, "Create") || strings.Contains(k, "Import") || strings.Contains(k, "Insert") {
					t.Errorf("the oversized request was admitted as a call: %s %+v", k, c)
				}
			}
		})
	}
}

// TestHandler_oversizedBodyThroughSDK sends an oversized IAM call with the real SDK: it
// gets the protocol's error, with status 413, and the policy is not created.
func TestHandler_oversizedBodyThroughSDK(t *testing.T) {
	sim, cfg := sdkSim(t, &World{AWS: AWS{Accounts: []*Account{{ID: "111111111111"}}}}, Options{})
	cfg.RetryMaxAttempts = 1
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*","Sid":"` +
		strings.Repeat("a", oversized) + `"}]}`
	_, err := iam.NewFromConfig(cfg).CreatePolicy(context.Background(), &iam.CreatePolicyInput{
		PolicyName: aws.String("huge"), PolicyDocument: aws.String(doc)})
	iamWantErr(t, err, "RequestEntityTooLarge", http.StatusRequestEntityTooLarge)
	sim.Do(func(w *World) {
		if n := len(w.AWS.Accounts[0].Policies); n != 0 {
			t.Errorf("%d policies created by a refused request", n)
		}
	})
}

// TestHandler_acceptsBodyAtLimit keeps the limit from refusing what fits.
func TestHandler_acceptsBodyAtLimit(t *testing.T) {
	sim, srv := startGCP(t, &World{AWS: AWS{Accounts: []*Account{{ID: "111111111111"}}}})
	prefix := "Action=CreateUser&UserName=fits&Version=2010-05-08&Padding="
	body := padded(prefix)[:maxRequestBody]
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDSIM/20261202/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a body of exactly %d bytes: status %d: %.300s", maxRequestBody, resp.StatusCode, got)
	}
	sim.Do(func(w *World) {
		if !strings.Contains(mustJSON(w.AWS.Accounts), `"fits"`) {
			t.Error("user not created")
		}
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// checkQueryError expects an AWS Query error document with the given root element
// (ErrorResponse for IAM and STS, Response for EC2).
func checkQueryError(root string) func(t *testing.T, h http.Header, body []byte) {
	return func(t *testing.T, h http.Header, body []byte) {
		t.Helper()
		var doc struct {
			XMLName xml.Name
			Code    string `xml:"Error>Code"`
			EC2Code string `xml:"Errors>Error>Code"`
			Message string `xml:"Error>Message"`
		}
		if err := xml.Unmarshal(body, &doc); err != nil {
			t.Fatalf("error body %q is not XML: %v", body, err)
		}
		if doc.XMLName.Local != root || doc.Code+doc.EC2Code != "RequestEntityTooLarge" {
			t.Errorf("error body %s, want <%s> with code RequestEntityTooLarge", body, root)
		}
		if !strings.Contains(string(body), strconv.Itoa(maxRequestBody)) {
			t.Errorf("error body %s does not say the limit", body)
		}
	}
}

func checkAWSJSONError(t *testing.T, h http.Header, body []byte) {
	t.Helper()
	var doc struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.Type != "RequestEntityTooLargeException" || doc.Message == "" {
		t.Errorf("error body %s (%v), want an AWS JSON error RequestEntityTooLargeException", body, err)
	}
	if h.Get("X-Amzn-Errortype") != "RequestEntityTooLargeException" {
		t.Errorf("X-Amzn-Errortype = %q", h.Get("X-Amzn-Errortype"))
	}
}

func checkGCPError(t *testing.T, h http.Header, body []byte) {
	t.Helper()
	var doc struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Errors  []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.Error.Code != 413 || len(doc.Error.Errors) != 1 || doc.Error.Errors[0].Reason == "" {
		t.Errorf("error body %s (%v), want a Google JSON error with code 413", body, err)
	}
}

// TestGRPC_refusesOversizedMessage documents the gRPC side of the limit: the gRPC
// server refuses a message over its 4 MiB default with ResourceExhausted, before any
// handler runs.
func TestGRPC_refusesOversizedMessage(t *testing.T) {
	ctx := context.Background()
	sim, srv := startGCP(t, gcpTestWorld())
	c, err := admin.NewIamClient(ctx, option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/acme-dev", AccountId: "huge-account",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: strings.Repeat("a", 5<<20)}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("error %v, want ResourceExhausted", err)
	}
	sim.Do(func(w *World) {
		for _, p := range w.GCP.Projects {
			for _, sa := range p.ServiceAccounts {
				if strings.HasPrefix(sa.Email, "huge-account@") {
					t.Errorf("created %s from a refused message", sa.Email)
				}
			}
		}
	})
}
