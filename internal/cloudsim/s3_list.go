package cloudsim

import (
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ListObjectsV2: keys in UTF-8 binary order, filtered by prefix, grouped by delimiter into
// common prefixes, max-keys (at most 1000) a page, resumed from an opaque continuation
// token (here the last key or common prefix of the previous page) or from start-after.

type listV2Result struct {
	XMLName               xml.Name       `xml:"ListBucketResult"`
	NS                    string         `xml:"xmlns,attr"`
	Name                  string         `xml:"Name"`
	Prefix                string         `xml:"Prefix"`
	KeyCount              int            `xml:"KeyCount"`
	MaxKeys               int            `xml:"MaxKeys"`
	Delimiter             string         `xml:"Delimiter,omitempty"`
	IsTruncated           bool           `xml:"IsTruncated"`
	Contents              []listEntry    `xml:"Contents"`
	CommonPrefixes        []commonPrefix `xml:"CommonPrefixes"`
	EncodingType          string         `xml:"EncodingType,omitempty"`
	ContinuationToken     string         `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string         `xml:"NextContinuationToken,omitempty"`
	StartAfter            string         `xml:"StartAfter,omitempty"`
}

type listEntry struct {
	Key               string   `xml:"Key"`
	LastModified      string   `xml:"LastModified"`
	ETag              string   `xml:"ETag"`
	ChecksumAlgorithm []string `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string   `xml:"ChecksumType,omitempty"`
	Size              int      `xml:"Size"`
	Owner             *s3Owner `xml:"Owner,omitempty"`
	StorageClass      string   `xml:"StorageClass"`
}

type commonPrefix struct {
	Prefix string `xml:"Prefix"`
}

func invalidArgument(msg, name, value string) *s3Error {
	return s3Err(http.StatusBadRequest, "InvalidArgument", msg, "ArgumentName", name, "ArgumentValue", value)
}

// s3List answers ListObjectsV2 on b. The simulator's lock is held (s3Do).
func (s *Sim) s3List(b *Bucket, q url.Values) (*s3Answer, *s3Error) {
	maxKeys := 1000
	if v := q.Get("max-keys"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, invalidArgument("Provided max-keys not an integer or within integer range", "max-keys", v)
		}
		maxKeys = min(n, 1000)
	}
	enc := q.Get("encoding-type")
	if enc != "" && enc != "url" {
		return nil, invalidArgument("Invalid Encoding Method specified in Request", "encoding-type", enc)
	}
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	marker := q.Get("start-after")
	if q.Has("continuation-token") {
		m, err := base64.RawURLEncoding.DecodeString(q.Get("continuation-token"))
		if err != nil || len(m) == 0 {
			return nil, invalidArgument("The continuation token provided is incorrect", "continuation-token", q.Get("continuation-token"))
		}
		marker = string(m)
	}
	escape := func(s string) string { return s }
	if enc == "url" {
		escape = func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "%2F", "/") }
	}
	res := listV2Result{NS: s3NS, Name: b.Name, Prefix: escape(prefix), MaxKeys: maxKeys, Delimiter: escape(delim), EncodingType: enc,
		ContinuationToken: q.Get("continuation-token"), StartAfter: escape(q.Get("start-after"))}
	fetchOwner := q.Get("fetch-owner") == "true"
	keys := make([]string, 0, len(b.Objects))
	for k := range b.Objects {
		keys = append(keys, k)
	}
	slices.Sort(keys) // Go compares strings bytewise: UTF-8 binary order, as S3 lists
	last, lastPrefix := "", ""
	for _, k := range keys {
		if maxKeys == 0 {
			break
		}
		if k <= marker || !strings.HasPrefix(k, prefix) {
			continue
		}
		// Resuming after a common prefix: every key below it was rolled up into it.
		if delim != "" && strings.HasSuffix(marker, delim) && strings.HasPrefix(k, marker) {
			continue
		}
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				cp := k[:len(prefix)+i+len(delim)]
				if cp == lastPrefix {
					continue
				}
				if res.KeyCount == maxKeys {
					res.IsTruncated = true
					break
				}
				res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: escape(cp)})
				res.KeyCount++
				last, lastPrefix = cp, cp
				continue
			}
		}
		if res.KeyCount == maxKeys {
			res.IsTruncated = true
			break
		}
		o := b.Objects[k]
		s.fillObject(b, o)
		e := listEntry{Key: escape(k), LastModified: s3Time(o.Modified), ETag: o.ETag, Size: len(o.Body), StorageClass: "STANDARD"}
		for alg := range o.Checksums {
			e.ChecksumAlgorithm, e.ChecksumType = append(e.ChecksumAlgorithm, alg), "FULL_OBJECT"
		}
		if fetchOwner {
			owner := ownerOf(b.Account)
			e.Owner = &owner
		}
		res.Contents = append(res.Contents, e)
		res.KeyCount++
		last = k
	}
	if res.IsTruncated {
		res.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(last))
	}
	return &s3Answer{Doc: res}, nil
}
