package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/warden-sec/warden/internal/awsapi"
)

// Destination is where reports are written: a directory, or an S3 bucket and a key
// prefix.
type Destination struct {
	// Dir is the directory (cleaned), when the destination is not S3.
	Dir string
	// Bucket and Prefix (without leading or trailing slash; may be empty) locate the
	// reports in S3.
	Bucket, Prefix string
}

// IsS3 reports whether the destination is an S3 bucket.
func (d Destination) IsS3() bool { return d.Bucket != "" }

// String is the destination as it is written in the config.
func (d Destination) String() string {
	if !d.IsS3() {
		return d.Dir
	}
	return "s3://" + path.Join(d.Bucket, d.Prefix)
}

var (
	schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)
	// bucketRe is S3's rule for bucket names (3-63 lower-case letters, digits, dots and
	// hyphens, a letter or digit at each end); dotted names shaped like IP addresses and
	// ".." are refused besides.
	bucketRe = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
)

// ParseDestination reads a destination: "s3://bucket/prefix" (the prefix may be empty),
// or a directory path. Any other URL scheme is an error, and so is an S3 prefix with
// empty, "." or ".." segments, which S3 would keep as written and nobody means.
func ParseDestination(s string) (Destination, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Destination{}, errors.New("empty destination: want a directory, or s3://bucket/prefix")
	}
	rest, isS3 := strings.CutPrefix(s, "s3://")
	if !isS3 {
		if schemeRe.MatchString(s) {
			return Destination{}, fmt.Errorf("destination %q: unsupported scheme: want a directory path, or s3://bucket/prefix", s)
		}
		return Destination{Dir: filepath.Clean(s)}, nil
	}
	if strings.ContainsAny(rest, "?#") {
		return Destination{}, fmt.Errorf("destination %q: a query or fragment has no place in it: want s3://bucket/prefix", s)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if !bucketRe.MatchString(bucket) || strings.Contains(bucket, "..") || net.ParseIP(bucket) != nil {
		return Destination{}, fmt.Errorf("destination %q: %q is not an S3 bucket name (3-63 lower-case letters, digits, dots and hyphens)", s, bucket)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		for _, seg := range strings.Split(prefix, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return Destination{}, fmt.Errorf("destination %q: the key prefix %q has an empty, \".\" or \"..\" segment", s, prefix)
			}
		}
	}
	return Destination{Bucket: bucket, Prefix: prefix}, nil
}

// sink stores reports under a destination, each at a path relative to it
// ("cis-aws-3.0/cis-aws-3.0-20261202T120000Z.html"), and lists and removes them for
// pruning.
type sink interface {
	// put stores body at rel and returns where it went (a path or an s3:// URL).
	put(ctx context.Context, rel string, body []byte, contentType string) (string, error)
	// list returns the names directly in folder that begin with prefix.
	list(ctx context.Context, folder, prefix string) ([]string, error)
	// remove deletes rel and returns where it was.
	remove(ctx context.Context, rel string) (string, error)
}

// dirSink writes reports into a directory: folders 0700, files 0600, each written to a
// temporary file beside it and renamed into place, so that a reader (or a crash) never
// sees half a report.
type dirSink struct{ root string }

func (d dirSink) put(_ context.Context, rel string, body []byte, _ string) (string, error) {
	final := filepath.Join(d.root, filepath.FromSlash(rel))
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return final, fmt.Errorf("write %s: %w", final, err)
	}
	// CreateTemp opens the file 0600: the report is never readable by others, even
	// before the rename.
	f, err := os.CreateTemp(dir, "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return final, fmt.Errorf("write %s: %w", final, err)
	}
	tmp := f.Name()
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return final, fmt.Errorf("write %s: %w", final, err)
	}
	// The rename is durable once the folder is synced; a failure here loses nothing
	// already written, so it is not one of the write.
	if df, err := os.Open(dir); err == nil {
		_ = df.Sync()
		_ = df.Close()
	}
	return final, nil
}

func (d dirSink) list(_ context.Context, folder, prefix string) ([]string, error) {
	dir := filepath.Join(d.root, filepath.FromSlash(folder))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func (d dirSink) remove(_ context.Context, rel string) (string, error) {
	p := filepath.Join(d.root, filepath.FromSlash(rel))
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return p, fmt.Errorf("remove %s: %w", p, err)
	}
	return p, nil
}

// s3Sink writes reports as objects of a bucket, below a prefix.
type s3Sink struct {
	client         *s3.Client
	bucket, prefix string
	region         string // the client's, for the hint of a wrong-region answer
}

func (s s3Sink) key(rel string) string {
	if s.prefix == "" {
		return rel
	}
	return s.prefix + "/" + rel
}

func (s s3Sink) url(key string) string { return "s3://" + s.bucket + "/" + key }

func (s s3Sink) put(ctx context.Context, rel string, body []byte, contentType string) (string, error) {
	key := s.key(rel)
	// A bytes.Reader is seekable: the SDK computes the checksum over it (and over plain
	// HTTP the payload hash) before it sends the body.
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String(contentType)})
	if err != nil {
		return s.url(key), s.explain("write "+s.url(key)+" (s3:PutObject)", err)
	}
	return s.url(key), nil
}

func (s s3Sink) list(ctx context.Context, folder, prefix string) ([]string, error) {
	dir := s.key(folder) + "/"
	var names []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(dir + prefix)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.explain("list "+s.url(dir+prefix)+"* (s3:ListObjectsV2)", err)
		}
		for _, o := range out.Contents {
			// Objects in deeper "folders" are not this folder's.
			if name := strings.TrimPrefix(aws.ToString(o.Key), dir); !strings.Contains(name, "/") {
				names = append(names, name)
			}
		}
	}
	return names, nil
}

func (s s3Sink) remove(ctx context.Context, rel string) (string, error) {
	key := s.key(rel)
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}); err != nil {
		return s.url(key), s.explain("remove "+s.url(key)+" (s3:DeleteObject)", err)
	}
	return s.url(key), nil
}

// explain wraps an S3 error with what was being done and, for the answers whose fix is
// knowable, what to change.
func (s s3Sink) explain(doing string, err error) error {
	var hint string
	switch awsapi.Code(err) {
	case "NoSuchBucket", "NotFound":
		hint = fmt.Sprintf("bucket %q does not exist: create it, or correct the destination", s.bucket)
	case "AccessDenied", "Forbidden":
		hint = fmt.Sprintf("the credentials may not use bucket %q (it needs s3:PutObject, s3:ListBucket and s3:DeleteObject on the prefix)", s.bucket)
	case "AuthorizationHeaderMalformed", "PermanentRedirect", "IllegalLocationConstraintException":
		hint = fmt.Sprintf("bucket %q is not in region %s: set the region of the bucket", s.bucket, s.region)
	}
	if hint == "" {
		return fmt.Errorf("%s: %w", doing, awsapi.Redact(err))
	}
	return fmt.Errorf("%s: %s: %w", doing, hint, awsapi.Redact(err))
}
