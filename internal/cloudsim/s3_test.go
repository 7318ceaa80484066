package cloudsim

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

const (
	s3TestAcct  = "111111111111"
	s3OtherAcct = "222222222222"
)

var s3TestNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// s3TestWorld is two accounts: acme-reports (us-east-1) and acme-eu (eu-west-1) belong to
// the caller's account; partner-drop belongs to the other and is shared with the caller;
// partner-private is not.
func s3TestWorld() *World {
	return &World{AWS: AWS{
		Accounts: []*Account{{ID: s3TestAcct}, {ID: s3OtherAcct}},
		S3: S3{Buckets: []*Bucket{
			{Name: "acme-reports", Account: s3TestAcct},
			{Name: "acme-eu", Account: s3TestAcct, Region: "eu-west-1"},
			{Name: "partner-drop", Account: s3OtherAcct, SharedWith: []string{s3TestAcct}},
			{Name: "partner-private", Account: s3OtherAcct},
		}},
	}}
}

// s3Client is the official S3 client against the simulator, path-style as warden's is,
// with the checksums the standard configuration turns on (a bare aws.Config leaves them
// unset, and the SDK then sends none).
func s3Client(cfg aws.Config, optFns ...func(*s3.Options)) *s3.Client {
	return s3.NewFromConfig(cfg, append([]func(*s3.Options){func(o *s3.Options) {
		o.UsePathStyle = true
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported
	}}, optFns...)...)
}

// s3WantErr checks an SDK error's code and HTTP status.
func s3WantErr(t *testing.T, err error, code string, status int) {
	t.Helper()
	if got := sdkErrCode(err); got != code {
		t.Fatalf("error %v (code %q), want %s", err, got, code)
	}
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != status {
		t.Fatalf("error %v: want HTTP status %d", err, status)
	}
}

func storedBody(sim *Sim, bucket, key string) (string, bool) {
	var body string
	var ok bool
	sim.Do(func(w *World) {
		for _, b := range w.AWS.S3.Buckets {
			if o := b.Objects[key]; b.Name == bucket && o != nil {
				body, ok = o.Body, true
			}
		}
	})
	return body, ok
}

func TestS3_putGetHeadDelete(t *testing.T) {
	sim, cfg := sdkSim(t, s3TestWorld(), Options{Now: func() time.Time { return s3TestNow }})
	c := s3Client(cfg)
	ctx := context.Background()

	hb, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("acme-reports")})
	if err != nil || aws.ToString(hb.BucketRegion) != "us-east-1" {
		t.Fatalf("HeadBucket: %+v, %v", hb, err)
	}
	body := []byte("<!doctype html><title>CIS AWS 3.0</title>\n" + strings.Repeat("<p>control</p>\n", 500))
	sum := md5.Sum(body)
	wantETag := `"` + hex.EncodeToString(sum[:]) + `"`
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("cis-aws-3.0/cis-aws-3.0-20261202T120000Z.html"),
		Body: bytes.NewReader(body), ContentType: aws.String("text/html; charset=utf-8"), Metadata: map[string]string{"framework": "cis-aws-3.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(put.ETag) != wantETag {
		t.Errorf("PutObject ETag %s, want the MD5 hex quoted: %s", aws.ToString(put.ETag), wantETag)
	}
	h := crc32.NewIEEE()
	h.Write(body)
	crc := base64.StdEncoding.EncodeToString(h.Sum(nil))
	if aws.ToString(put.ChecksumCRC32) != crc {
		t.Errorf("PutObject CRC32 %q, want %q (the SDK's default checksum, verified and kept)", aws.ToString(put.ChecksumCRC32), crc)
	}

	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("cis-aws-3.0/cis-aws-3.0-20261202T120000Z.html"),
		ChecksumMode: s3types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(get.Body) // the SDK verifies the body against the CRC32 here
	get.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) {
		t.Errorf("GetObject returned %d bytes, want exactly the %d put", len(got), len(body))
	}
	if aws.ToString(get.ContentType) != "text/html; charset=utf-8" || aws.ToString(get.ETag) != wantETag ||
		aws.ToInt64(get.ContentLength) != int64(len(body)) || get.Metadata["framework"] != "cis-aws-3.0" ||
		aws.ToString(get.ChecksumCRC32) != crc || !aws.ToTime(get.LastModified).Equal(s3TestNow) {
		t.Errorf("GetObject: type %q, ETag %s, length %d, metadata %v, CRC32 %q, modified %v",
			aws.ToString(get.ContentType), aws.ToString(get.ETag), aws.ToInt64(get.ContentLength), get.Metadata, aws.ToString(get.ChecksumCRC32), get.LastModified)
	}
	if stored, _ := storedBody(sim, "acme-reports", "cis-aws-3.0/cis-aws-3.0-20261202T120000Z.html"); stored != string(body) {
		t.Errorf("the simulator holds %d bytes, want the %d put", len(stored), len(body))
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("cis-aws-3.0/cis-aws-3.0-20261202T120000Z.html")})
	if err != nil || aws.ToInt64(head.ContentLength) != int64(len(body)) || aws.ToString(head.ETag) != wantETag {
		t.Fatalf("HeadObject: %+v, %v", head, err)
	}
	if w := sim.Writes(); w["s3:PutObject"] != 1 || w["s3:HeadObject"] != 0 || w["s3:HeadBucket"] != 0 || w["s3:GetObject"] != 0 {
		t.Errorf("writes %v: want PutObject alone", w)
	}

	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("cis-aws-3.0/cis-aws-3.0-20261202T120000Z.html")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("cis-aws-3.0/cis-aws-3.0-20261202T120000Z.html")})
	var nsk *s3types.NoSuchKey
	if !errors.As(err, &nsk) {
		t.Fatalf("GetObject after DeleteObject: %v, want NoSuchKey", err)
	}
	s3WantErr(t, err, "NoSuchKey", 404)
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("cis-aws-3.0/cis-aws-3.0-20261202T120000Z.html")})
	s3WantErr(t, err, "NotFound", 404)
	// Deleting what is not there succeeds, as in S3.
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("never-was")}); err != nil {
		t.Errorf("DeleteObject of a missing key: %v", err)
	}
}

func TestS3_listObjectsV2(t *testing.T) {
	sim, cfg := sdkSim(t, s3TestWorld(), Options{Now: func() time.Time { return s3TestNow }})
	c := s3Client(cfg)
	ctx := context.Background()
	keys := []string{"soc2/soc2-3.json", "cis/cis-2.json", "cis/cis-1.json", "cis/old/cis-0.json", "readme.txt", "cis/cis-3.json", "Z-upper", "cis/é.json"}
	for _, k := range keys {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(in *s3.ListObjectsV2Input) (got []string, pages int) {
		t.Helper()
		in.Bucket = aws.String("acme-reports")
		p := s3.NewListObjectsV2Paginator(c, in)
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if n := len(out.Contents) + len(out.CommonPrefixes); aws.ToInt32(out.KeyCount) != int32(n) {
				t.Errorf("KeyCount %d, want %d", aws.ToInt32(out.KeyCount), n)
			}
			for _, o := range out.Contents {
				got = append(got, aws.ToString(o.Key))
				if aws.ToInt64(o.Size) != int64(len(aws.ToString(o.Key))) || aws.ToString(o.ETag) == "" || o.StorageClass != s3types.ObjectStorageClassStandard {
					t.Errorf("entry %+v", o)
				}
			}
			for _, cp := range out.CommonPrefixes {
				got = append(got, aws.ToString(cp.Prefix))
			}
		}
		return got, pages
	}
	sorted := slices.Sorted(slices.Values(keys))
	if got, pages := list(&s3.ListObjectsV2Input{MaxKeys: aws.Int32(3)}); !slices.Equal(got, sorted) || pages != 3 {
		t.Errorf("every key, 3 a page: %v in %d pages, want %v in 3", got, pages, sorted)
	}
	if got, _ := list(&s3.ListObjectsV2Input{Prefix: aws.String("cis/cis-")}); !slices.Equal(got, []string{"cis/cis-1.json", "cis/cis-2.json", "cis/cis-3.json"}) {
		t.Errorf("prefix cis/cis-: %v", got)
	}
	if got, pages := list(&s3.ListObjectsV2Input{Prefix: aws.String("cis/"), Delimiter: aws.String("/"), MaxKeys: aws.Int32(1)}); !slices.Equal(got, []string{"cis/cis-1.json", "cis/cis-2.json", "cis/cis-3.json", "cis/old/", "cis/é.json"}) || pages != 5 {
		t.Errorf("cis/ by /, one a page: %v in %d pages", got, pages)
	}
	if got, _ := list(&s3.ListObjectsV2Input{Delimiter: aws.String("/")}); !slices.Equal(got, []string{"Z-upper", "readme.txt", "cis/", "soc2/"}) {
		t.Errorf("top level by /: %v", got)
	}
	if got, _ := list(&s3.ListObjectsV2Input{StartAfter: aws.String("cis/old/cis-0.json")}); !slices.Equal(got, []string{"cis/é.json", "readme.txt", "soc2/soc2-3.json"}) {
		t.Errorf("after cis/old/cis-0.json: %v", got)
	}
	_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("acme-reports"), ContinuationToken: aws.String("!!not-a-token")})
	s3WantErr(t, err, "InvalidArgument", 400)
	if n := sim.Calls()["s3:ListObjectsV2"].Calls; n < 10 {
		t.Errorf("%d ListObjectsV2 calls counted", n)
	}
}

func TestS3_errors(t *testing.T) {
	sim, cfg := sdkSim(t, s3TestWorld(), Options{})
	c := s3Client(cfg)
	ctx := context.Background()
	put := func(bucket string, optFns ...func(*s3.Options)) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("v")}, optFns...)
		return err
	}

	s3WantErr(t, put("no-such-bucket"), "NoSuchBucket", 404)
	_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("no-such-bucket")})
	var nsb *s3types.NoSuchBucket
	if !errors.As(err, &nsb) || !strings.Contains(err.Error(), "The specified bucket does not exist") {
		t.Fatalf("ListObjectsV2 of a missing bucket: %v, want NoSuchBucket", err)
	}
	s3WantErr(t, err, "NoSuchBucket", 404)
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("no-such-bucket")})
	s3WantErr(t, err, "NotFound", 404)

	// Another account's bucket: denied unless shared with the caller.
	s3WantErr(t, put("partner-private"), "AccessDenied", 403)
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("partner-private")})
	s3WantErr(t, err, "Forbidden", 403)
	if err := put("partner-drop"); err != nil {
		t.Errorf("PutObject into a bucket shared with the caller: %v", err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("partner-drop"), Key: aws.String("k"), Body: strings.NewReader("v"),
		ExpectedBucketOwner: aws.String(s3TestAcct)})
	s3WantErr(t, err, "AccessDenied", 403)

	// Signed for the wrong region.
	err = put("acme-eu")
	s3WantErr(t, err, "AuthorizationHeaderMalformed", 400)
	if !strings.Contains(err.Error(), "expecting 'eu-west-1'") {
		t.Errorf("wrong region: %v, want it to name the bucket's", err)
	}
	if err := put("acme-eu", func(o *s3.Options) { o.Region = "eu-west-1" }); err != nil {
		t.Errorf("PutObject signed for the bucket's region: %v", err)
	}

	// The world denies writes.
	if err := sim.SetFaults([]Fault{{Service: "s3", Writes: true, AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	s3WantErr(t, put("acme-reports"), "AccessDenied", 403)
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("acme-reports")}); err != nil {
		t.Errorf("a read while writes are denied: %v", err)
	}
	if st := sim.Calls()["s3:PutObject"]; st.AccessDenied != 1 {
		t.Errorf("PutObject stats %+v: want one denied", st)
	}
}

func TestS3_createAndListBuckets(t *testing.T) {
	_, cfg := sdkSim(t, s3TestWorld(), Options{Now: func() time.Time { return s3TestNow }})
	c := s3Client(cfg)
	ctx := context.Background()
	for range 2 { // us-east-1 answers the owner's repeated creation with success
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("acme-new")}); err != nil {
			t.Fatal(err)
		}
	}
	eu := func(o *s3.Options) { o.Region = "eu-west-1" }
	in := &s3.CreateBucketInput{Bucket: aws.String("acme-new-eu"),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraintEuWest1}}
	if _, err := c.CreateBucket(ctx, in, eu); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateBucket(ctx, in, eu)
	s3WantErr(t, err, "BucketAlreadyOwnedByYou", 409)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("partner-private")})
	s3WantErr(t, err, "BucketAlreadyExists", 409)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("somewhere-else")}, eu)
	s3WantErr(t, err, "IllegalLocationConstraintException", 400)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("no_underscores")})
	s3WantErr(t, err, "InvalidBucketName", 400)

	hb, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("acme-new-eu")}, eu)
	if err != nil || aws.ToString(hb.BucketRegion) != "eu-west-1" {
		t.Fatalf("HeadBucket of the new eu bucket: %+v, %v", hb, err)
	}
	out, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range out.Buckets {
		names = append(names, aws.ToString(b.Name)+"@"+aws.ToString(b.BucketRegion))
	}
	if want := []string{"acme-eu@eu-west-1", "acme-new@us-east-1", "acme-new-eu@eu-west-1", "acme-reports@us-east-1"}; !slices.Equal(names, want) {
		t.Errorf("ListBuckets: %v, want the caller's own %v", names, want)
	}
}

// recorder keeps the headers of the uploads a handler serves.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []http.Header
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Header.Clone())
		rec.mu.Unlock()
	}
	rec.next.ServeHTTP(w, r)
}

// Over TLS the SDK streams uploads in aws-chunked framing with a trailing CRC32: the
// simulator keeps the object's bytes, never the framing.
func TestS3_awsChunkedUploadOverTLS(t *testing.T) {
	sim, err := New(s3TestWorld(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{next: sim.Handler()}
	srv := httptest.NewTLSServer(rec)
	t.Cleanup(srv.Close)
	c := s3Client(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), HTTPClient: srv.Client(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSIM", "secret", "")})
	ctx := context.Background()
	body := bytes.Repeat([]byte("0123456789abcdef\r\n0\r\n"), 10000) // framing-like bytes inside the object
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("big.csv"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	if len(rec.seen) != 1 || !strings.Contains(rec.seen[0].Get("Content-Encoding"), "aws-chunked") || rec.seen[0].Get("X-Amz-Trailer") == "" {
		t.Fatalf("upload headers %v: the SDK did not stream aws-chunked with a trailer, the test proves nothing", rec.seen)
	}
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("acme-reports"), Key: aws.String("big.csv"), ChecksumMode: s3types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(get.Body)
	get.Body.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetObject: %d bytes, %v; want exactly the %d put", len(got), err, len(body))
	}
	if stored, _ := storedBody(sim, "acme-reports", "big.csv"); stored != string(body) {
		t.Errorf("the simulator holds %d bytes, want the %d put", len(stored), len(body))
	}
}

// rawPut sends a PUT signed with a key the simulator does not know (so not checked), with
// the given headers and body, and returns the status and body of the answer.
func rawPut(t *testing.T, url, key string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url+"/acme-reports/"+key, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDRAW/20261202/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00")
	req.Header.Set("X-Amz-Date", "20261202T120000Z")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestS3_payloadFramingAndChecksums(t *testing.T) {
	sim, srv := startSim(t, s3TestWorld(), Options{})
	crc := func(s string) string {
		h := crc32.NewIEEE()
		h.Write([]byte(s))
		return base64.StdEncoding.EncodeToString(h.Sum(nil))
	}
	chunked := map[string]string{"Content-Encoding": "aws-chunked", "X-Amz-Content-Sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
		"X-Amz-Trailer": "x-amz-checksum-crc32", "X-Amz-Decoded-Content-Length": "11"}
	for _, c := range []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
		code   string // the error code, or the object's content when status is 200
	}{
		{"chunks and a trailer", chunked, "5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:" + crc("hello world") + "\r\n\r\n", 200, "hello world"},
		{"signed chunks", map[string]string{"X-Amz-Content-Sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "Content-Encoding": "aws-chunked"},
			"5;chunk-signature=ab12\r\nhello\r\n0;chunk-signature=cd34\r\n\r\n", 200, "hello"},
		{"trailer checksum wrong", chunked, "5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:" + crc("hello") + "\r\n\r\n", 400, "BadDigest"},
		{"trailer missing", chunked, "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", 400, "MalformedTrailerError"},
		{"decoded length wrong", chunked, "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:" + crc("hello") + "\r\n\r\n", 400, "IncompleteBody"},
		{"chunk cut short", chunked, "a\r\nhello", 400, "IncompleteBody"},
		{"chunk size not hex", chunked, "zz\r\nhello\r\n0\r\n\r\n", 400, "InvalidChunkSizeError"},
		{"header checksum", map[string]string{"X-Amz-Checksum-Crc32": crc("plain")}, "plain", 200, "plain"},
		{"header checksum wrong", map[string]string{"X-Amz-Checksum-Crc32": crc("other")}, "plain", 400, "BadDigest"},
		{"two checksums", map[string]string{"X-Amz-Checksum-Crc32": crc("plain"), "X-Amz-Checksum-Sha1": "x"}, "plain", 400, "InvalidRequest"},
		{"content-md5 wrong", map[string]string{"Content-Md5": base64.StdEncoding.EncodeToString(make([]byte, 16))}, "plain", 400, "BadDigest"},
		{"payload hash wrong", map[string]string{"X-Amz-Content-Sha256": strings.Repeat("0", 64)}, "plain", 400, "XAmzContentSHA256Mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := strings.ReplaceAll(c.name, " ", "-")
			status, answer := rawPut(t, srv.URL, key, c.hdr, c.body)
			if status != c.status {
				t.Fatalf("status %d (%s), want %d", status, answer, c.status)
			}
			stored, ok := storedBody(sim, "acme-reports", key)
			if c.status == 200 {
				if stored != c.code {
					t.Errorf("stored %q, want %q", stored, c.code)
				}
				return
			}
			if !strings.Contains(answer, "<Code>"+c.code+"</Code>") || !strings.Contains(answer, "<RequestId>") {
				t.Errorf("answer %s, want an S3 error document with code %s", answer, c.code)
			}
			if ok {
				t.Errorf("a refused upload was stored: %q", stored)
			}
		})
	}
}

// A key the simulator knows the secret of must sign S3 requests with it, over S3's own
// canonical path (encoded once), with keys that need encoding too.
func TestS3_signatureOfKnownKeys(t *testing.T) {
	w := s3TestWorld()
	w.AWS.Accounts[0].Users = []*User{{Name: "reporter", AccessKeys: []*AccessKey{{ID: "AKIAREPORTER0000001", Secret: "right-secret"}}}}
	_, srv := startSim(t, w, Options{})
	client := func(secret string) *s3.Client {
		return s3Client(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
			Credentials: credentials.NewStaticCredentialsProvider("AKIAREPORTER0000001", secret, "")})
	}
	ctx := context.Background()
	key := aws.String("reports/a b+c(1)~é=!.json")
	if _, err := client("right-secret").PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acme-reports"), Key: key, Body: strings.NewReader("{}")}); err != nil {
		t.Fatalf("PutObject signed with the key's secret: %v", err)
	}
	if _, err := client("right-secret").GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("acme-reports"), Key: key}); err != nil {
		t.Fatalf("GetObject signed with the key's secret: %v", err)
	}
	_, err := client("wrong-secret").PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acme-reports"), Key: key, Body: strings.NewReader("{}")})
	s3WantErr(t, err, "SignatureDoesNotMatch", 403)
}

func TestS3_world(t *testing.T) {
	w, err := ParseWorld([]byte(`aws:
  accounts: [{id: "111111111111"}]
  s3:
    buckets:
      - {name: acme-reports, account: "111111111111", region: eu-west-1}
      - name: acme-seeded
        account: "111111111111"
        objects:
          hello.txt: {body: "hello", content_type: text/plain}
`))
	if err != nil {
		t.Fatal(err)
	}
	if b := w.AWS.S3.Buckets; len(b) != 2 || b[0].Region != "eu-west-1" || b[1].Objects["hello.txt"].Body != "hello" {
		t.Fatalf("buckets %+v", b)
	}
	_, cfg := sdkSim(t, w, Options{})
	get, err := s3Client(cfg).GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("acme-seeded"), Key: aws.String("hello.txt")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(get.Body)
	get.Body.Close()
	if string(b) != "hello" || aws.ToString(get.ContentType) != "text/plain" || aws.ToString(get.ETag) != `"5d41402abc4b2a76b9719d911017c592"` {
		t.Errorf("seeded object: %q, %s, %s", b, aws.ToString(get.ContentType), aws.ToString(get.ETag))
	}
	for _, c := range []struct{ yaml, want string }{
		{`{name: acme, account: "999999999999"}`, `aws.s3.buckets[0] (acme).account: "999999999999" is not one of aws.accounts`},
		{`{name: Acme_Reports, account: "111111111111"}`, `aws.s3.buckets[0].name: "Acme_Reports" is not a valid bucket name`},
		{`{name: acme, account: "111111111111", shared_with: ["42"]}`, `shared_with[0]: "42" is not a 12-digit account id`},
		{`{name: acme, account: "111111111111"}, {name: acme, account: "111111111111"}`, `aws.s3.buckets[1].name: bucket acme appears twice`},
		{`{name: acme, acount: "111111111111"}`, `field acount not found`},
	} {
		_, err := ParseWorld([]byte(`aws: {accounts: [{id: "111111111111"}], s3: {buckets: [` + c.yaml + `]}}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
}

func TestS3_checksumAlgorithms(t *testing.T) {
	check := []byte("123456789")
	for alg, want := range map[string]uint64{"CRC32": 0xCBF43926, "CRC32C": 0xE3069283, "CRC64NVME": 0xAE8B14860A799888} {
		raw, _ := base64.StdEncoding.DecodeString(checksum(alg, check))
		var got uint64
		for _, b := range raw {
			got = got<<8 | uint64(b)
		}
		if got != want {
			t.Errorf("%s of %q = %#x, want the catalogue's check value %#x", alg, check, got, want)
		}
	}
	if checksum("SHA256", nil) != "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" {
		t.Errorf("SHA256 of nothing = %s", checksum("SHA256", nil))
	}
	if fmt.Sprint(ValidBucketName("192.168.1.1"), ValidBucketName("a.b-c"), ValidBucketName("ab"), ValidBucketName("-ab")) != "false true false false" {
		t.Error("ValidBucketName")
	}
}

// FuzzS3Request throws arbitrary S3 requests at the simulator: it answers each with an
// S3 error or a result, never a panic or a 5xx it did not mean.
func FuzzS3Request(f *testing.F) {
	f.Add("PUT", "/acme-reports/a/b.json", "", "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n", "aws-chunked")
	f.Add("GET", "/acme-reports", "list-type=2&max-keys=-1&continuation-token=%%", "", "")
	f.Add("GET", "/acme-reports", "list-type=2&delimiter=/&prefix=a&start-after=a/", "", "")
	f.Add("PUT", "/new-bucket", "", "<CreateBucketConfiguration><LocationConstraint>", "")
	f.Add("HEAD", "/partner-private/k", "", "", "")
	f.Add("DELETE", "/acme-reports/", "acl", "", "")
	f.Fuzz(func(t *testing.T, method, path, query, body, encoding string) {
		s, err := New(s3TestWorld(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(method, "http://sim"+path+"?"+query, strings.NewReader(body))
		if err != nil || !strings.HasPrefix(path, "/") {
			t.Skip()
		}
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDFUZZ/20261202/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0")
		req.Header.Set("Content-Encoding", encoding)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Errorf("%s %s?%s: status %d: %s", method, path, query, rec.Code, rec.Body.String())
		}
	})
}

// FuzzDecodeAWSChunked: any bytes framed in chunks of any size come back exactly, with
// their trailer; anything else is refused without a panic.
func FuzzDecodeAWSChunked(f *testing.F) {
	f.Add([]byte("hello world"), uint16(5), []byte("5\r\nhello\r\n0\r\n\r\n"))
	f.Add([]byte("\r\n0\r\n"), uint16(1), []byte("ffffffff\r\n"))
	f.Fuzz(func(t *testing.T, data []byte, size uint16, junk []byte) {
		if _, _, e := decodeAWSChunked(junk); e != nil && e.Status != http.StatusBadRequest {
			t.Errorf("junk %q: %v", junk, e)
		}
		n := max(int(size), 1)
		var framed bytes.Buffer
		for rest := data; len(rest) > 0; rest = rest[min(n, len(rest)):] {
			fmt.Fprintf(&framed, "%x;chunk-signature=00\r\n%s\r\n", min(n, len(rest)), rest[:min(n, len(rest))])
		}
		framed.WriteString("0\r\nx-amz-checksum-crc32:" + checksum("CRC32", data) + "\r\n\r\n")
		got, trailers, e := decodeAWSChunked(framed.Bytes())
		if e != nil || !bytes.Equal(got, data) || trailers["x-amz-checksum-crc32"] != checksum("CRC32", data) {
			t.Errorf("%q in chunks of %d: %q, %v, %v", data, n, got, trailers, e)
		}
	})
}
