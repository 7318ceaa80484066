package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/termesc"
)

// TestWriteFindings_chunksAreWrittenInOrder checks the findings array written chunk by
// chunk, on every core, against the array encoded whole: the same bytes, for counts
// around the chunk's size.
func TestWriteFindings_chunksAreWrittenInOrder(t *testing.T) {
	for _, n := range []int{1, 2, findingsChunk - 1, findingsChunk, findingsChunk + 1, 5*findingsChunk + 17} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			fs := make([]findings.Finding, n)
			for i := range fs {
				fs[i] = findings.Finding{
					Policy: "WARDEN-TEST-001", Severity: findings.High, Resource: fmt.Sprintf("arn:aws:iam::111122223333:user/u%06d", i),
					// a terminal escape and HTML-sensitive text: escaped as in the whole document
					Message:    fmt.Sprintf("user u%06d <has> \x1b[31m & more", i),
					Frameworks: map[string][]string{"soc2": {"CC6.1"}},
				}
			}
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			if err := writeFindings(w, fs); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			whole, err := json.MarshalIndent(fs, "  ", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if want := termesc.EscapeJSON(whole); !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%d findings: the array differs from the one encoded whole (%d bytes, want %d)", n, got.Len(), len(want))
			}
			var back []findings.Finding
			if err := json.Unmarshal(got.Bytes(), &back); err != nil || len(back) != n || back[n-1].Resource != fs[n-1].Resource {
				t.Fatalf("%d findings: read back %d (%v)", n, len(back), err)
			}
		})
	}
}
