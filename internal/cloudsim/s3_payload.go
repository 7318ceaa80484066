package cloudsim

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// An upload's body reaches S3 in one of two shapes. Over plain HTTP the SDK sends the
// object's bytes as they are, with their checksum in a header (x-amz-checksum-crc32) and
// their SHA-256 in x-amz-content-sha256. Over TLS it streams them in aws-chunked framing
//
//	<size hex>[;chunk-signature=…]\r\n<bytes>\r\n … 0\r\n<trailer>:<value>\r\n\r\n
//
// with Content-Encoding: aws-chunked, the object's length in
// x-amz-decoded-content-length, and the checksum in a trailer x-amz-trailer announces.
// readPayload undoes the framing, so that an object holds exactly what was put, and
// verifies every checksum sent, as S3 does (BadDigest).

// payload is an upload's body with the framing removed, and its checksums.
type payload struct {
	Body []byte
	// Checksums are the verified checksums by algorithm (CRC32…), base64; when the client
	// named an algorithm but sent no value, the simulator computed it, as S3 does.
	Checksums map[string]string
}

// checksumAlgorithms are the algorithms S3 checks, by the suffix of their header.
var checksumAlgorithms = []string{"CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"}

// crc64NVME is the table of CRC-64/NVME (reflected polynomial 0x9a6c9329ac4bc9b5).
var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// checksum computes an algorithm's checksum of b, base64 as S3 writes it.
func checksum(alg string, b []byte) string {
	var sum []byte
	switch alg {
	case "CRC32":
		sum = binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(b))
	case "CRC32C":
		sum = binary.BigEndian.AppendUint32(nil, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	case "CRC64NVME":
		sum = binary.BigEndian.AppendUint64(nil, crc64.Checksum(b, crc64NVME))
	case "SHA1":
		s := sha1.Sum(b)
		sum = s[:]
	case "SHA256":
		s := sha256.Sum256(b)
		sum = s[:]
	}
	return base64.StdEncoding.EncodeToString(sum)
}

// readPayload decodes and verifies a request body (see above).
func readPayload(r *http.Request, raw []byte) (payload, *s3Error) {
	h := r.Header
	contentSHA := h.Get("X-Amz-Content-Sha256")
	// A signed payload's hash must be the body's: S3 refuses a body changed on the way.
	if len(contentSHA) == 64 && !strings.HasPrefix(contentSHA, "STREAMING-") && contentSHA != sha256Hex(raw) {
		return payload{}, s3Err(http.StatusBadRequest, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.",
			"ClientComputedContentSHA256", contentSHA, "S3ComputedContentSHA256", sha256Hex(raw))
	}
	body, trailers := raw, map[string]string{}
	if strings.Contains(h.Get("Content-Encoding"), "aws-chunked") || strings.HasPrefix(contentSHA, "STREAMING-") {
		var e *s3Error
		if body, trailers, e = decodeAWSChunked(raw); e != nil {
			return payload{}, e
		}
		if n := h.Get("X-Amz-Decoded-Content-Length"); n != "" && n != strconv.Itoa(len(body)) {
			return payload{}, s3Err(http.StatusBadRequest, "IncompleteBody",
				fmt.Sprintf("You did not provide the number of bytes specified by the x-amz-decoded-content-length header (%s); the chunks held %d", n, len(body)))
		}
		for _, name := range strings.Split(h.Get("X-Amz-Trailer"), ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name != "" && trailers[name] == "" {
				return payload{}, s3Err(http.StatusBadRequest, "MalformedTrailerError", "The request contained trailing data that was not well-formed: trailer "+name+" was announced and not sent")
			}
		}
	}
	if md := h.Get("Content-Md5"); md != "" {
		want, err := base64.StdEncoding.DecodeString(md)
		if err != nil || len(want) != md5.Size {
			return payload{}, s3Err(http.StatusBadRequest, "InvalidDigest", "The Content-MD5 you specified was invalid.")
		}
		if got := md5.Sum(body); !bytes.Equal(got[:], want) {
			return payload{}, s3Err(http.StatusBadRequest, "BadDigest", "The Content-MD5 you specified did not match what we received.")
		}
	}
	sent := map[string]string{}
	for _, alg := range checksumAlgorithms {
		name := "x-amz-checksum-" + strings.ToLower(alg)
		if v := or(h.Get(name), trailers[name]); v != "" {
			sent[alg] = v
		}
	}
	if len(sent) > 1 {
		return payload{}, s3Err(http.StatusBadRequest, "InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	}
	p := payload{Body: body}
	for alg, v := range sent {
		if got := checksum(alg, body); got != v {
			return payload{}, s3Err(http.StatusBadRequest, "BadDigest", fmt.Sprintf("The %s you specified did not match the calculated checksum.", alg))
		}
		p.Checksums = map[string]string{alg: v}
	}
	if alg := strings.ToUpper(h.Get("X-Amz-Sdk-Checksum-Algorithm")); p.Checksums == nil && alg != "" {
		if !slices.Contains(checksumAlgorithms, alg) {
			return payload{}, s3Err(http.StatusBadRequest, "InvalidRequest", "Checksum algorithm "+alg+" is not supported (want one of "+strings.Join(checksumAlgorithms, ", ")+")")
		}
		p.Checksums = map[string]string{alg: checksum(alg, body)}
	}
	return p, nil
}

// decodeAWSChunked reads an aws-chunked body: the bytes of its chunks, and its trailers by
// lower-case name. Chunk signatures (the signed variant) are read past, not checked.
func decodeAWSChunked(raw []byte) (body []byte, trailers map[string]string, e *s3Error) {
	crlf := []byte("\r\n")
	incomplete := s3Err(http.StatusBadRequest, "IncompleteBody", "The request body terminated unexpectedly")
	body = []byte{}
	for {
		line, rest, ok := bytes.Cut(raw, crlf)
		if !ok {
			return nil, nil, incomplete
		}
		size, _, _ := bytes.Cut(line, []byte(";"))
		n, err := strconv.ParseUint(string(bytes.TrimSpace(size)), 16, 31)
		if err != nil {
			return nil, nil, s3Err(http.StatusBadRequest, "InvalidChunkSizeError", fmt.Sprintf("Only the last chunk is allowed to have a size of 0, and each size is hexadecimal: chunk header %q", line))
		}
		raw = rest
		if n == 0 {
			break
		}
		if uint64(len(raw)) < n+2 {
			return nil, nil, incomplete
		}
		if !bytes.Equal(raw[n:n+2], crlf) {
			return nil, nil, s3Err(http.StatusBadRequest, "InvalidChunkSizeError", fmt.Sprintf("a chunk of %d bytes is not followed by CRLF", n))
		}
		body = append(body, raw[:n]...)
		raw = raw[n+2:]
	}
	trailers = map[string]string{}
	for len(raw) > 0 {
		line, rest, ok := bytes.Cut(raw, crlf)
		if !ok {
			line, rest = raw, nil // the final CRLF left out
		}
		raw = rest
		if len(line) == 0 {
			break
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return nil, nil, s3Err(http.StatusBadRequest, "MalformedTrailerError", fmt.Sprintf("The request contained trailing data that was not well-formed: %q", line))
		}
		trailers[strings.ToLower(strings.TrimSpace(string(k)))] = strings.TrimSpace(string(v))
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		return nil, nil, s3Err(http.StatusBadRequest, "MalformedTrailerError", "The request contained trailing data after the trailers")
	}
	return body, trailers, nil
}

// hexMD5 is the hex MD5 of b: an object's ETag, unquoted.
func hexMD5(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}
