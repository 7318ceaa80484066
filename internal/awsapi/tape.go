package awsapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/zeebo/blake3"

	"github.com/warden-sec/warden/internal/backoff"
	"github.com/warden-sec/warden/internal/urgency"
)

// A tape is the record of one read: every request it sent, in the order it sent them,
// each with a digest of the answer it got (a retried request once, with its last
// answer). It is what lets an unchanged scope cost its reads and nothing more: sending
// the tape's requests again (Account.Replay) and getting the same answers proves that
// the read would see what it saw, without decoding a byte of it.
//
// Why the same answers are the same read: a request depends only on the answers the
// read had received before it was sent (and on what the tape's tag names: the
// collector's configuration, version and day), and those come before it on the tape.
// The replay sends each request only after every earlier one was answered as on the
// tape, and stops at the first that was not; so every request it sends is one the read
// would send, and when none differs the read would get, in its own order, exactly the
// tape's answers. A digest covers an answer's status and whole body except its request
// id (which AWS draws anew each time); anything else that differs is a change, and the
// scope is read as usual.

// tapeVersion is the encoding's version: a tape of another is not replayed. Version 2
// digests answers with BLAKE3 (version 1: SHA-256), so a scope whose tape is of version 1
// is read in full once, and recorded anew.
const tapeVersion = 2

// tape is a recorded read, encoded by Recording.Tape.
type tape struct {
	V   int        `json:"v"`
	Tag string     `json:"tag"`
	Ex  []exchange `json:"ex"`
}

// exchange is one request of a tape and the digest of its answer. Service and Region
// are those it was signed for; Header holds its headers but those of signing and the
// SDK's bookkeeping, which differ each time and mean nothing to AWS's answer.
type exchange struct {
	Service string      `json:"s"`
	Region  string      `json:"r"`
	Method  string      `json:"m"`
	URL     string      `json:"u"`
	Host    string      `json:"host,omitempty"`
	Header  [][2]string `json:"h,omitempty"`
	Body    []byte      `json:"b,omitempty"`
	Answer  []byte      `json:"a"`
}

// key identifies the request, whatever its signature.
func (e *exchange) key() string {
	var b strings.Builder
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.URL)
	b.WriteByte(' ')
	b.WriteString(e.Host)
	for _, h := range e.Header {
		b.WriteByte('\n')
		b.WriteString(h[0])
		b.WriteByte(':')
		b.WriteString(h[1])
	}
	b.WriteString("\n\n")
	b.Write(e.Body)
	return b.String()
}

// unsignedHeaders are the request headers a tape does not keep: the signature's, and
// those the SDK sets anew for every attempt. Canonical form.
var unsignedHeaders = []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-Sha256",
	"User-Agent", "X-Amz-User-Agent", "Amz-Sdk-Invocation-Id", "Amz-Sdk-Request", "Content-Length"}

// answer is one answer kept to be served again: a replay's, given to the read that
// follows a replay which found a change, so that no request is sent twice.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// Recording records the requests of a read made under its context (Record), for a
// tape, and serves the answers a replay already got. It is safe for concurrent use.
type Recording struct {
	mu     sync.Mutex
	ex     []exchange
	at     map[string]int // key → index in ex
	served map[string][]answer
	// why says why the read cannot be replayed ("" if it can): a request the tape
	// cannot send again.
	why string
	// servedN counts the answers taken from a replay instead of asked for.
	servedN int
}

type recordingKey struct{}

// Record returns a context under which every AWS call of these sessions is recorded in
// the returned Recording; the answers of replayed (nil for none) are served in place of
// asking AWS again the same request.
func Record(ctx context.Context, replayed *Replayed) (context.Context, *Recording) {
	r := &Recording{at: map[string]int{}, served: map[string][]answer{}}
	if replayed != nil {
		for k, as := range replayed.answers {
			r.served[k] = slices.Clone(as)
		}
	}
	return context.WithValue(ctx, recordingKey{}, r), r
}

func recordingOf(ctx context.Context) *Recording {
	r, _ := ctx.Value(recordingKey{}).(*Recording)
	return r
}

// Tape encodes what was recorded, under tag (what the read depended on besides its
// answers: its configuration, the code's version, the day). It is nil when the read
// cannot be replayed, with the reason.
func (r *Recording) Tape(tag string) ([]byte, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.why != "" {
		return nil, r.why
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(tape{V: tapeVersion, Tag: tag, Ex: r.ex}); err != nil {
		return nil, "encode: " + err.Error()
	}
	if err := zw.Close(); err != nil {
		return nil, "encode: " + err.Error()
	}
	return buf.Bytes(), ""
}

// unreplayable marks the read as one a tape cannot replay.
func (r *Recording) unreplayable(why string) {
	r.mu.Lock()
	if r.why == "" {
		r.why = why
	}
	r.mu.Unlock()
}

// take returns an answer to serve for key, if a replay got one.
func (r *Recording) take(key string) (answer, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	as := r.served[key]
	if len(as) == 0 {
		return answer{}, false
	}
	r.served[key] = as[1:]
	r.servedN++
	return as[0], true
}

// Served counts the answers the read took from the replay instead of asking again: the
// calls a read's counters count that AWS did not answer anew.
func (r *Recording) Served() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.servedN
}

// put records the exchange; a request sent again (a retry, a poll) keeps its first
// place and takes its last answer.
func (r *Recording) put(e exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := e.key()
	if i, ok := r.at[k]; ok {
		r.ex[i].Answer = e.Answer
		return
	}
	r.at[k] = len(r.ex)
	r.ex = append(r.ex, e)
}

// recordingClient is the sessions' HTTP client: it passes every request through, except
// under a Recording's context, where it records it and serves a replay's answer.
type recordingClient struct{ inner aws.HTTPClient }

func (c recordingClient) Do(req *http.Request) (*http.Response, error) {
	rec := recordingOf(req.Context())
	if rec == nil {
		return c.inner.Do(req)
	}
	e, err := exchangeOf(req)
	if err != nil {
		rec.unreplayable(err.Error())
		return c.inner.Do(req)
	}
	k := e.key()
	if a, ok := rec.take(k); ok {
		e.Answer = digest(a.status, a.body)
		rec.put(e)
		return a.response(req), nil
	}
	resp, err := c.inner.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := readBody(resp.Body, resp.ContentLength)
	_ = resp.Body.Close()
	if err != nil {
		// The SDK sees the failed read as it would have, and retries it.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		rec.unreplayable("an answer could not be read")
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	e.Answer = digest(resp.StatusCode, body)
	rec.put(e)
	return resp, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// exchangeOf reads a signed request into an exchange (no answer yet), leaving its body
// to be sent.
func exchangeOf(req *http.Request) (exchange, error) {
	service, region, ok := signedFor(req.Header.Get("Authorization"))
	if !ok {
		return exchange{}, errors.New("a request not signed with SigV4")
	}
	e := exchange{Service: service, Region: region, Method: req.Method, URL: req.URL.String()}
	if req.Host != "" && req.Host != req.URL.Host {
		e.Host = req.Host
	}
	for name, vs := range req.Header {
		if slices.Contains(unsignedHeaders, name) {
			continue
		}
		for _, v := range vs {
			e.Header = append(e.Header, [2]string{name, v})
		}
	}
	slices.SortFunc(e.Header, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return exchange{}, fmt.Errorf("a request body that could not be read: %w", err)
		}
		e.Body = body
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return e, nil
}

// signedFor reads the service and region of a SigV4 Authorization header
// ("AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/iam/aws4_request, …").
func signedFor(auth string) (service, region string, ok bool) {
	_, cred, found := strings.Cut(auth, "Credential=")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || !found {
		return "", "", false
	}
	cred, _, _ = strings.Cut(cred, ",")
	f := strings.Split(cred, "/")
	if len(f) != 5 || f[4] != "aws4_request" || f[2] == "" || f[3] == "" {
		return "", "", false
	}
	return f[3], f[2], true
}

// digest is the digest of an answer: its status and its body without its request id.
//
// It is BLAKE3 (256 bits), a cryptographic hash: whoever can change what a scope's
// calls answer (anyone who can write to the account) must not be able to make a changed
// answer look unchanged, which a checksum such as xxHash would allow. An unchanged sweep
// digests every byte it reads (about 2.4 GB at 500 accounts), and on this project's
// machine BLAKE3 digests answers of 16 KiB and more about twice as fast as SHA-256 with
// the CPU's SHA instructions (BENCHMARKS.md, "A cheaper digest").
func digest(status int, body []byte) []byte {
	h := blake3.New()
	_, _ = h.Write([]byte(strconv.Itoa(status)))
	_, _ = h.Write([]byte{0})
	for _, part := range withoutRequestIDs(body) {
		_, _ = h.Write(part)
	}
	return h.Sum(nil)
}

// requestIDTail ends both of the XML elements AWS's query protocols put the request id
// in (IAM, STS: RequestId; EC2: requestId; JSON protocols carry it in a header only).
// It starts with a letter rare in XML, so that looking for it is quick.
var requestIDTail = []byte("questId>")

// withoutRequestIDs is body in parts, without the text of its request id elements: of
// every <RequestId>…</RequestId> or <requestId>…</requestId> whose text holds no markup,
// left to right.
func withoutRequestIDs(body []byte) [][]byte {
	var parts [][]byte
	rest, from := body, 0 // rest is what is not yet a part; from, where to look in it
	for {
		k := bytes.Index(rest[from:], requestIDTail)
		if k < 0 {
			break
		}
		k += from
		start := k + len(requestIDTail)
		if k < 3 || rest[k-3] != '<' || rest[k-1] != 'e' || (rest[k-2] != 'R' && rest[k-2] != 'r') {
			from = start // a closing tag, or another element
			continue
		}
		closing := []byte{'<', '/', rest[k-2], 'e'}
		closing = append(closing, requestIDTail...)
		j := bytes.IndexByte(rest[start:], '<')
		if j < 0 {
			break
		}
		if !bytes.HasPrefix(rest[start+j:], closing) {
			from = start // its text holds markup: not a request id
			continue
		}
		parts = append(parts, rest[:start])
		rest, from = rest[start+j:], len(closing)
	}
	return append(parts, rest)
}

// readBody reads an answer's body whole, in one allocation when its length is known.
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length < 0 || length > 256<<20 {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, length+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// response is the answer as an HTTP response to req.
func (a answer) response(req *http.Request) *http.Response {
	return &http.Response{
		Status:        strconv.Itoa(a.status) + " " + http.StatusText(a.status),
		StatusCode:    a.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        a.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(a.body)),
		ContentLength: int64(len(a.body)),
		Request:       req,
	}
}

// Replayed is what a replay found: whether every answer was as on the tape, and the
// answers it got, which the read that follows a change takes instead of asking again
// (Record).
type Replayed struct {
	// Same is true when every request was answered as on the tape: the read would see
	// what it saw.
	Same bool
	// Calls is the number of requests sent; Throttled, those of them AWS refused for
	// their rate, each sent again.
	Calls, Throttled int
	// Why says why the replay stopped short of Same: the first request answered
	// differently, or why the tape could not be replayed at all.
	Why string
	// Refused says the tape held a request the replay may not send (Replay): nothing
	// was sent. A tape warden recorded never is; one that is was altered in the store.
	Refused bool
	answers map[string][]answer
	kept    int64     // bytes of answers kept, of s's budget
	s       *Sessions // whose budget
}

// Release gives the answers' share of the budget back (Options.ReplayKeeps), once the read
// that follows the replay is done with them. A nil Replayed releases nothing.
func (r *Replayed) Release() {
	if r == nil || r.s == nil {
		return
	}
	if r.Same {
		// No read took the answers: their buffers go back to the pool. After a change,
		// the read's SDK clients took them, and they are left to the GC.
		for _, as := range r.answers {
			for _, a := range as {
				r.s.bodies.put(a.body)
			}
		}
	}
	r.s.kept.Add(-r.kept)
	r.kept, r.answers = 0, nil
}

// DefaultReplayKeeps is Options.ReplayKeeps' default: the bytes of answers the replays
// of one Sessions keep, together, for the reads that follow a change (Record). A replay
// waits on its account's token buckets most of its time, and hundreds may run at once.
// An answer beyond it is not kept, and that read asks for it again; a replay gives its
// share back with Release.
const DefaultReplayKeeps = 64 << 20

// Replay sends a tape's requests again, in its order and four at a time (replayWindow),
// signed anew with the account's credentials and paced by its token buckets, and
// compares each answer with the tape's; it stops at the first that differs or fails,
// having sent at most three requests beyond it. The answers it got are kept,
// within Options.ReplayKeeps. A tape of another tag or version is not replayed (Same
// false, no call). The error is only the context's.
//
// A tape comes back from the store, so it is checked before anything is sent: every
// request must be a GET or POST of one of the operations allowed (the caller's reads:
// "iam:GetAccountAuthorizationDetails"), to the endpoint the sessions call (Options'
// Endpoint, else AWS's own domains), or nothing is sent and Refused says why. A tape
// altered to make warden sign anything else, or send it elsewhere, is never replayed.
func (a *Account) Replay(ctx context.Context, tp []byte, tag string, allowed []string) (_ *Replayed, err error) {
	out := &Replayed{answers: map[string][]answer{}, s: a.s}
	defer func() {
		if err != nil {
			out.Release()
		}
	}()
	t, err := decodeTape(tp)
	switch {
	case err != nil:
		out.Why = err.Error()
		return out, nil
	case t.Tag != tag:
		out.Why = "the tape was recorded under another tag"
		return out, nil
	}
	for i := range t.Ex {
		if why := a.s.refuse(&t.Ex[i], allowed); why != "" {
			out.Why, out.Refused = fmt.Sprintf("request %d of the tape: %s", i+1, why), true
			return out, nil
		}
	}
	// The replay's own requests are not a read's: they are neither recorded nor served.
	ctx = context.WithValue(ctx, recordingKey{}, (*Recording)(nil))
	signer := v4.NewSigner()
	inner := a.cfg.HTTPClient
	if rc, ok := inner.(recordingClient); ok {
		inner = rc.inner
	}
	// Up to replayWindow requests are on their way at once, each waiting for the bucket
	// in turn, while the answers are compared in the tape's order.
	waits, cancel := context.WithCancel(ctx)
	defer cancel()
	asked := make([]chan askedOnce, len(t.Ex))
	sent := 0
	ask := func() {
		if sent == len(t.Ex) {
			return
		}
		c := make(chan askedOnce, 1)
		asked[sent] = c
		go func(e *exchange) { c <- a.askOnce(ctx, waits, inner, signer, e) }(&t.Ex[sent])
		sent++
	}
	for range replayWindow {
		ask()
	}
	// keep keeps an answer askOnce kept within the budget, for the read that follows a
	// change.
	keep := func(e *exchange, r askedOnce) {
		if !r.kept {
			return
		}
		out.kept += int64(len(r.body))
		k := e.key()
		out.answers[k] = append(out.answers[k], answer{status: r.resp.StatusCode, header: r.resp.Header, body: r.body})
	}
	// stop ends the replay at answer i: the requests after it that still wait for their
	// turn are called off. Those already sent are answered, counted, and their answers
	// kept, so that the read does not ask them again.
	stop := func(i int) {
		cancel()
		for j := i + 1; j < sent; j++ {
			r := <-asked[j]
			out.Calls += r.calls
			out.Throttled += r.throttled
			keep(&t.Ex[j], r)
		}
	}
	for i := range t.Ex {
		r := <-asked[i]
		ask()
		out.Calls += r.calls
		out.Throttled += r.throttled
		if r.err != nil {
			stop(i)
			return nil, r.err
		}
		if r.why != "" {
			stop(i)
			out.Why = fmt.Sprintf("request %d of %d: %s", i+1, len(t.Ex), r.why)
			return out, nil
		}
		e := &t.Ex[i]
		keep(e, r)
		if !r.same {
			stop(i)
			out.Why = fmt.Sprintf("answer %d of %d (%s) differs", i+1, len(t.Ex), e.operation())
			return out, nil
		}
	}
	out.Same = true
	return out, nil
}

// replayWindow is how many of a tape's requests a replay has on their way at once. The
// bucket paces them all the same; while one is answered, the next wait for their tokens.
// A replay that asked one at a time lost the bucket's pace whenever an answer took longer
// than the bucket's interval (100 ms at IAM's 10 calls a second; a page of
// GetAccountAuthorizationDetails can take longer): at 200 ms a call, an unchanged sweep of
// 20 accounts took 13.1 s, 2.1× the floor of its calls; four at a time, 6.7 s (1.08×).
const replayWindow = 4

// askedOnce is one request of a tape, asked (askOnce).
type askedOnce struct {
	resp *http.Response
	same bool   // answered as recorded
	kept bool   // the answer was kept within the budget (Options.ReplayKeeps)
	body []byte // the answer, if kept
	why  string
	err  error

	calls, throttled int
}

// askOnce sends one request of a tape (replayOne), and again after the SDK's backoff
// while AWS refuses it for its rate, at most MaxAttempts times: a throttled call says
// nothing of the scope, and a read would retry it the same way, rather than the whole
// scope being read for it. It compares the answer with the tape's at once, and keeps it
// only within the budget: answers that wait for the replay to compare those before them
// hold no buffer beyond it.
//
// The request waits for its turn under waits, a context of ctx the replay ends when it
// stops short; once sent, it is answered under ctx. A request called off before it was
// sent is waits' error.
func (a *Account) askOnce(ctx, waits context.Context, inner aws.HTTPClient, signer *v4.Signer, e *exchange) (r askedOnce) {
	for attempt := 1; ; attempt++ {
		var held int64
		r.resp, r.body, held, r.why, r.err = a.replayOne(ctx, waits, inner, signer, e, &r.calls)
		if r.err != nil || r.why != "" {
			return r
		}
		if attempt >= a.s.opts.MaxAttempts || !throttledAnswer(r.resp.StatusCode, r.resp.Header, r.body) {
			r.same = bytes.Equal(digest(r.resp.StatusCode, r.body), e.Answer)
			if n := int64(len(r.body)); a.s.kept.Add(n) <= a.s.opts.ReplayKeeps {
				r.kept = true // within the budget of kept answers from now on
			} else {
				a.s.kept.Add(-n)
				a.s.bodies.put(r.body)
				r.body = nil
			}
			a.s.bodies.done(held)
			return r
		}
		a.s.bodies.put(r.body)
		a.s.bodies.done(held)
		r.body = nil
		r.throttled++
		select {
		case <-time.After(backoff.FullJitter(a.s.opts.BaseBackoff, a.s.opts.MaxBackoff, attempt)):
		case <-waits.Done():
			r.err = waits.Err()
			return r
		}
	}
}

// replayOne sends one request of a tape, signed anew and paced by the account's bucket,
// and reads its answer, counting it in calls once it is sent. why says why the request
// could not be sent or its answer read (the replay stops there); the error is only the
// contexts': it waits for its turn under waits, and is sent and answered under ctx.
func (a *Account) replayOne(ctx, waits context.Context, inner aws.HTTPClient, signer *v4.Signer, e *exchange, calls *int) (resp *http.Response, body []byte, held int64, why string, err error) {
	if err := urgency.Yield(waits); err != nil {
		return nil, nil, 0, "", err
	}
	if err := a.limiter(e.Service).Wait(waits); err != nil {
		return nil, nil, 0, "", err
	}
	if err := waits.Err(); err != nil {
		return nil, nil, 0, "", err
	}
	req, err := e.request(ctx)
	if err != nil {
		return nil, nil, 0, err.Error(), nil
	}
	// The credentials are taken at each request, as the SDK's clients take them: a
	// session renewed during a long replay signs the requests after it.
	creds, err := a.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, 0, "", ctx.Err()
		}
		return nil, nil, 0, "no credentials: " + Redact(err).Error(), nil
	}
	sum := sha256.Sum256(e.Body)
	if err := signer.SignHTTP(ctx, creds, req, fmt.Sprintf("%x", sum), e.Service, e.Region, time.Now()); err != nil {
		return nil, nil, 0, "sign: " + err.Error(), nil
	}
	*calls++
	resp, err = inner.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, 0, "", ctx.Err()
		}
		return nil, nil, 0, fmt.Sprintf("failed: %v", Redact(err)), nil
	}
	body, held, err = a.s.bodies.read(ctx, resp.Body, resp.ContentLength)
	_ = resp.Body.Close()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, 0, "", ctx.Err()
		}
		return nil, nil, 0, fmt.Sprintf("its answer could not be read: %v", err), nil
	}
	return resp, body, held, "", nil
}

// throttledAnswer reports whether an answer is AWS refusing the call for its rate: its
// error code (the JSON protocols' X-Amzn-ErrorType or __type, the query protocols'
// <Code>) is one the SDK's retryer takes for throttling.
func throttledAnswer(status int, h http.Header, body []byte) bool {
	if status < 400 {
		return false
	}
	code := ""
	if t := h.Get("X-Amzn-Errortype"); t != "" {
		code, _, _ = strings.Cut(t, ":")
	} else if i := bytes.Index(body, []byte("<Code>")); i >= 0 {
		rest := body[i+len("<Code>"):]
		if j := bytes.Index(rest, []byte("</Code>")); j >= 0 {
			code = string(rest[:j])
		}
	} else {
		var v struct {
			Type string `json:"__type"`
		}
		if json.Unmarshal(body, &v) == nil {
			code = v.Type[strings.LastIndexByte(v.Type, '#')+1:]
		}
	}
	_, ok := retry.DefaultThrottleErrorCodes[code]
	return ok
}

// operation names the exchange's call for a person: "iam:GetAccountAuthorizationDetails"
// (the query protocols' Action, the JSON protocols' target), else its service.
func (e *exchange) operation() string {
	for _, h := range e.Header {
		if h[0] == "X-Amz-Target" {
			if _, op, ok := strings.Cut(h[1], "."); ok {
				return e.Service + ":" + op
			}
		}
	}
	if form, err := url.ParseQuery(string(e.Body)); err == nil && form.Get("Action") != "" {
		return e.Service + ":" + form.Get("Action")
	}
	return e.Service
}

// refuse says why the exchange may not be replayed ("" if it may): a method other than
// GET or POST, an operation not allowed, or a host the sessions do not call.
func (s *Sessions) refuse(e *exchange, allowed []string) string {
	if e.Method != http.MethodGet && e.Method != http.MethodPost {
		return "method " + e.Method
	}
	if op := e.operation(); !slices.Contains(allowed, op) {
		return "operation " + op + " is not one of the reads allowed"
	}
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "not an HTTP URL"
	}
	// The reads replayed (the query protocols' and JSON's) all go to "/", saying what
	// they do in their body: nothing else may ride along in the URL.
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "a URL other than the endpoint's root"
	}
	if form, err := url.ParseQuery(string(e.Body)); err == nil && len(form["Action"]) > 1 {
		return "more than one Action"
	}
	host := u.Hostname()
	if e.Host != "" {
		host = e.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
	}
	if endpoint := s.Endpoint(); endpoint != "" {
		if ep, err := url.Parse(endpoint); err == nil && strings.EqualFold(ep.Hostname(), host) {
			return ""
		}
		return "host " + host + " is not the endpoint configured"
	}
	if u.Scheme != "https" {
		return "plain HTTP to AWS"
	}
	for _, domain := range []string{".amazonaws.com", ".amazonaws.com.cn", ".api.aws"} {
		if strings.HasSuffix(strings.ToLower(host), domain) {
			return ""
		}
	}
	return "host " + host + " is not AWS's"
}

// request is the exchange's request, unsigned.
func (e *exchange) request(ctx context.Context) (*http.Request, error) {
	var body io.Reader = http.NoBody
	if len(e.Body) > 0 {
		body = bytes.NewReader(e.Body)
	}
	req, err := http.NewRequestWithContext(ctx, e.Method, e.URL, body)
	if err != nil {
		return nil, fmt.Errorf("rebuild request %s %s: %w", e.Method, e.URL, err)
	}
	for _, h := range e.Header {
		req.Header.Add(h[0], h[1])
	}
	if e.Host != "" {
		req.Host = e.Host
	}
	return req, nil
}

// decodeTape reads a tape Recording.Tape encoded.
func decodeTape(b []byte) (*tape, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read the tape: %w", err)
	}
	var t tape
	if err := json.NewDecoder(zr).Decode(&t); err != nil {
		return nil, fmt.Errorf("read the tape: %w", err)
	}
	if t.V != tapeVersion {
		return nil, fmt.Errorf("a tape of version %d, not %d", t.V, tapeVersion)
	}
	if len(t.Ex) == 0 {
		return nil, errors.New("an empty tape")
	}
	return &t, nil
}
