package awsapi

import (
	"bytes"
	"strings"
	"testing"
)

func TestDigest_ignoresOnlyTheRequestID(t *testing.T) {
	iam := func(id, user string) []byte {
		return []byte(`<GetUserResponse><GetUserResult><User><UserName>` + user + `</UserName></User></GetUserResult><ResponseMetadata><RequestId>` + id + `</RequestId></ResponseMetadata></GetUserResponse>`)
	}
	ec2 := func(id, group string) []byte {
		return []byte(`<DescribeSecurityGroupsResponse><requestId>` + id + `</requestId><securityGroupInfo><item><groupId>` + group + `</groupId></item></securityGroupInfo></DescribeSecurityGroupsResponse>`)
	}
	tests := []struct {
		name string
		a, b []byte
		sa   int
		sb   int
		same bool
	}{
		{"IAM, another request id", iam("a-1", "alice"), iam("b-2", "alice"), 200, 200, true},
		{"IAM, another user", iam("a-1", "alice"), iam("a-1", "bob"), 200, 200, false},
		{"EC2, another request id", ec2("a-1", "sg-1"), ec2("b-22", "sg-1"), 200, 200, true},
		{"EC2, another group", ec2("a-1", "sg-1"), ec2("a-1", "sg-2"), 200, 200, false},
		{"another status", iam("a-1", "alice"), iam("a-1", "alice"), 200, 404, false},
		{"JSON", []byte(`{"CertificateSummaryList":[]}`), []byte(`{"CertificateSummaryList":[]}`), 200, 200, true},
		{"JSON, another body", []byte(`{"CertificateSummaryList":[]}`), []byte(`{"CertificateSummaryList":[{}]}`), 200, 200, false},
		// An element that holds markup is not a request id: what it holds counts.
		{"markup inside", []byte(`<RequestId><x>1</x></RequestId>`), []byte(`<RequestId><x>2</x></RequestId>`), 200, 200, false},
		{"unclosed", []byte(`<RequestId>1`), []byte(`<RequestId>2`), 200, 200, false},
		// Moving text across the element's boundary is a change.
		{"boundary", []byte(`a<RequestId>1</RequestId>bc`), []byte(`ab<RequestId>1</RequestId>c`), 200, 200, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := bytes.Equal(digest(tc.sa, tc.a), digest(tc.sb, tc.b)); got != tc.same {
				t.Fatalf("same digest: %v, want %v", got, tc.same)
			}
		})
	}
}

func TestSignedFor(t *testing.T) {
	tests := []struct {
		auth, service, region string
		ok                    bool
	}{
		{"AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=00", "iam", "us-east-1", true},
		{"AWS4-HMAC-SHA256 Credential=AKID/20261207/eu-west-1/ec2/aws4_request,SignedHeaders=host", "ec2", "eu-west-1", true},
		{"", "", "", false},
		{"Bearer x", "", "", false},
		{"AWS4-HMAC-SHA256 Credential=AKID/20261207//iam/aws4_request", "", "", false},
		{"AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/iam", "", "", false},
	}
	for _, tc := range tests {
		s, r, ok := signedFor(tc.auth)
		if s != tc.service || r != tc.region || ok != tc.ok {
			t.Errorf("signedFor(%q) = %q, %q, %v; want %q, %q, %v", tc.auth, s, r, ok, tc.service, tc.region, tc.ok)
		}
	}
}

// FuzzDecodeTape: a tape read back from the store is outside input; whatever it holds,
// decoding it is an error or a tape, never a panic.
func FuzzDecodeTape(f *testing.F) {
	r := &Recording{at: map[string]int{}}
	r.put(exchange{Service: "iam", Region: "us-east-1", Method: "POST", URL: "http://127.0.0.1/", Body: []byte("Action=ListUsers"), Answer: []byte{1}})
	tp, _ := r.Tape("tag")
	f.Add(tp)
	f.Add([]byte{})
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if tp, err := decodeTape(b); err == nil && (tp.V != tapeVersion || len(tp.Ex) == 0) {
			t.Fatalf("decoded a tape of version %d with %d exchanges", tp.V, len(tp.Ex))
		}
	})
}

// FuzzDigest: the request ids' removal never panics, and keeps every byte outside them.
func FuzzDigest(f *testing.F) {
	f.Add([]byte(`<a><RequestId>1</RequestId><requestId>2</requestId></a>`))
	f.Add([]byte(`<RequestId>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		parts := withoutRequestIDs(b)
		joined := bytes.Join(parts, nil)
		if len(joined) > len(b) || !strings.HasPrefix(string(b), string(parts[0])) {
			t.Fatalf("parts %q of %q", parts, b)
		}
		_ = digest(200, b)
	})
}
