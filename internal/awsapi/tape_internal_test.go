package awsapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
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
	f.Add([]byte(`<RequestId>a<RequestId>b</RequestId>c</requestId><requestId>d</requestId>`))
	f.Add([]byte(`x</RequestId><RequestId></RequestId><reRequestId>q</RequestId>`))
	// The plain statement of what is taken out: every such element's text, leftmost first.
	ids := regexp.MustCompile(`<RequestId>[^<]*</RequestId>|<requestId>[^<]*</requestId>`)
	f.Fuzz(func(t *testing.T, b []byte) {
		parts := withoutRequestIDs(b)
		want := ids.ReplaceAllFunc(b, func(m []byte) []byte {
			if m[1] == 'R' {
				return []byte("<RequestId></RequestId>")
			}
			return []byte("<requestId></requestId>")
		})
		if joined := bytes.Join(parts, nil); !bytes.Equal(joined, want) {
			t.Fatalf("without request ids %q is %q, want %q", b, joined, want)
		}
		_ = digest(200, b)
	})
}

// TestReplay_refusesATapeItDidNotRecord: a tape comes back from the store; one that
// holds a request warden's read would not make (another operation, method or host) is
// refused whole, before anything is signed or sent.
func TestReplay_refusesATapeItDidNotRecord(t *testing.T) {
	ctx := context.Background()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
	s, err := NewSessions(ctx, Options{Endpoint: "http://127.0.0.1:1", AWS: &cfg, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	list := exchange{Service: "iam", Region: "us-east-1", Method: "POST", URL: "http://127.0.0.1:1/",
		Header: [][2]string{{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}},
		Body:   []byte("Action=ListUsers&Version=2010-05-08"), Answer: []byte{1}}
	allowed := []string{"iam:ListUsers"}
	tests := []struct {
		name    string
		change  func(e *exchange)
		refused bool
	}{
		{"a read allowed, to the endpoint", func(*exchange) {}, false},
		{"another operation", func(e *exchange) { e.Body = []byte("Action=DeleteUser&UserName=alice&Version=2010-05-08") }, true},
		{"another method", func(e *exchange) { e.Method = "DELETE" }, true},
		{"another host", func(e *exchange) { e.URL = "http://attacker.example/" }, true},
		{"an action in the URL", func(e *exchange) { e.URL = "http://127.0.0.1:1/?Action=DeleteUser&UserName=alice" }, true},
		{"another path", func(e *exchange) { e.URL = "http://127.0.0.1:1/admin" }, true},
		{"two actions", func(e *exchange) { e.Body = []byte("Action=ListUsers&Action=DeleteUser&Version=2010-05-08") }, true},
		{"another Host header", func(e *exchange) { e.Host = "attacker.example:80" }, true},
		{"a JSON target not allowed", func(e *exchange) {
			e.Header = append(e.Header, [2]string{"X-Amz-Target", "CertificateManager.DeleteCertificate"})
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := list
			e.Header = slices.Clone(list.Header)
			tc.change(&e)
			r := &Recording{at: map[string]int{}}
			r.put(e)
			tp, why := r.Tape("tag")
			if why != "" {
				t.Fatal(why)
			}
			out, err := s.self.Replay(ctx, tp, "tag", allowed)
			if err != nil {
				t.Fatal(err)
			}
			if out.Refused != tc.refused || out.Same {
				t.Fatalf("refused %v, same %v (%s); want refused %v", out.Refused, out.Same, out.Why, tc.refused)
			}
			if tc.refused && out.Calls != 0 {
				t.Fatalf("a refused tape made %d calls", out.Calls)
			}
		})
	}
}

// A replay has replayWindow requests on their way at once, never more, while it compares
// the answers in the tape's order: slow answers do not hold the next requests back. It
// stops at the first answer that differs, having sent at most replayWindow-1 more, and
// counts every request it sent.
func TestReplay_requestsOnTheirWay(t *testing.T) {
	ctx := context.Background()
	var (
		mu             sync.Mutex
		inFlight, most int
		served         int
		changed        = -1 // the page whose answer is not the tape's
	)
	page := func(i int, changed bool) []byte {
		if changed {
			return fmt.Appendf(nil, "<ListUsersResponse><Users>page %d, changed</Users></ListUsersResponse>", i)
		}
		return fmt.Appendf(nil, "<ListUsersResponse><Users>page %d</Users></ListUsersResponse>", i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		served++
		most = max(most, inFlight)
		mu.Unlock()
		_ = r.ParseForm()
		i, _ := strconv.Atoi(r.PostForm.Get("Marker"))
		time.Sleep(30 * time.Millisecond) // a slow answer
		mu.Lock()
		inFlight--
		c := i == changed
		mu.Unlock()
		w.Write(page(i, c))
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
	s, err := NewSessions(ctx, Options{Endpoint: srv.URL, AWS: &cfg, MaxAttempts: 1, RateLimits: map[string]float64{"iam": 1000}})
	if err != nil {
		t.Fatal(err)
	}
	const pages = 8
	r := &Recording{at: map[string]int{}}
	for i := range pages {
		r.put(exchange{Service: "iam", Region: "us-east-1", Method: "POST", URL: srv.URL + "/",
			Header: [][2]string{{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}},
			Body:   fmt.Appendf(nil, "Action=ListUsers&Marker=%d&Version=2010-05-08", i), Answer: digest(200, page(i, false))})
	}
	tp, why := r.Tape("tag")
	if why != "" {
		t.Fatal(why)
	}
	allowed := []string{"iam:ListUsers"}
	tests := []struct {
		name    string
		changed int
		same    bool
		most    int // calls sent at most
		why     string
	}{
		{"unchanged", -1, true, pages, ""},
		{"the third page changed", 2, false, 2 + replayWindow, "answer 3 of 8 (iam:ListUsers) differs"},
		{"the last page changed", pages - 1, false, pages, "answer 8 of 8 (iam:ListUsers) differs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			changed, served, most = tc.changed, 0, 0
			mu.Unlock()
			out, err := s.self.Replay(ctx, tp, "tag", allowed)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			mu.Lock()
			defer mu.Unlock()
			if out.Same != tc.same || out.Why != tc.why {
				t.Fatalf("same %v (%q), want %v (%q)", out.Same, out.Why, tc.same, tc.why)
			}
			if out.Calls != served || served > tc.most || served < tc.changed+1 {
				t.Errorf("the replay counts %d calls, the server served %d; want at most %d", out.Calls, served, tc.most)
			}
			if most != replayWindow {
				t.Errorf("%d requests were on their way at once at most, want %d", most, replayWindow)
			}
		})
	}
	// With room to read one answer at a time, the replays still end, and give their
	// shares of the bound back: reading an answer never waits for another.
	one, err := NewSessions(ctx, Options{Endpoint: srv.URL, AWS: &cfg, MaxAttempts: 1, RateLimits: map[string]float64{"iam": 1000}, ReplayReads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		mu.Lock()
		changed = tc.changed
		mu.Unlock()
		out, err := one.self.Replay(ctx, tp, "tag", allowed)
		if err != nil {
			t.Fatal(err)
		}
		if out.Same != tc.same || out.Why != tc.why {
			t.Errorf("%s, one answer read at a time: same %v (%q), want %v (%q)", tc.name, out.Same, out.Why, tc.same, tc.why)
		}
		out.Release()
	}
	if !one.bodies.reading.TryAcquire(1) {
		t.Error("the replays kept a share of the bytes read at once")
	}
}

// BenchmarkDigest measures the digest of an IAM answer of each size an unchanged sweep
// reads (a page of GetAccountAuthorizationDetails is tens of kilobytes), against
// SHA-256, the digest of tapes of version 1.
func BenchmarkDigest(b *testing.B) {
	for _, size := range []int{2 << 10, 16 << 10, 64 << 10, 1 << 20} {
		var body bytes.Buffer
		body.WriteString(`<GetAccountAuthorizationDetailsResponse><GetAccountAuthorizationDetailsResult><RoleDetailList>`)
		for body.Len() < size-200 {
			fmt.Fprintf(&body, `<member><RoleName>role-%d</RoleName><Arn>arn:aws:iam::123456789012:role/role-%[1]d</Arn></member>`, body.Len())
		}
		body.WriteString(`</RoleDetailList></GetAccountAuthorizationDetailsResult><ResponseMetadata><RequestId>4f1a0c2e-52a3-4b8e-9a51-0c2f4d0b7e11</RequestId></ResponseMetadata></GetAccountAuthorizationDetailsResponse>`)
		p := body.Bytes()
		b.Run(fmt.Sprintf("blake3/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				digest(200, p)
			}
		})
		b.Run(fmt.Sprintf("sha256/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				h := sha256.New()
				for _, part := range withoutRequestIDs(p) {
					h.Write(part)
				}
				h.Sum(nil)
			}
		})
	}
}

// A throttled answer is told from the others by its error code, in each protocol's
// place for it; an answer that succeeded is never one, whatever its body holds.
func TestThrottledAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		body   string
		want   bool
	}{
		{"IAM, query protocol", 400, nil, `<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error></ErrorResponse>`, true},
		{"EC2", 503, nil, `<Response><Errors><Error><Code>RequestLimitExceeded</Code></Error></Errors><RequestID>x</RequestID></Response>`, true},
		{"JSON, header", 400, http.Header{"X-Amzn-Errortype": {"ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.availability/"}}, `{}`, true},
		{"JSON, body", 400, nil, `{"__type":"com.amazonaws.acm#ThrottlingException","message":"Rate exceeded"}`, true},
		{"denied", 403, nil, `<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>`, false},
		{"JSON denied", 400, nil, `{"__type":"AccessDeniedException"}`, false},
		{"a 5xx without a code", 500, nil, `internal error`, false},
		{"a success that names the code", 200, nil, `<Description><Code>Throttling</Code></Description>`, false},
	} {
		if got := throttledAnswer(tc.status, tc.header, []byte(tc.body)); got != tc.want {
			t.Errorf("%s: throttledAnswer = %v, want %v", tc.name, got, tc.want)
		}
	}
}
