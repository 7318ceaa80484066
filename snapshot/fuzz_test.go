package snapshot_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/warden-sec/warden/snapshot"
)

// acmeSnapshots cuts the acme fixture into small snapshots of its header and one resource
// of each type, so that the fuzzer starts from every shape a collector writes.
func acmeSnapshots(tb testing.TB) [][]byte {
	tb.Helper()
	b, err := os.ReadFile("../fixtures/acme/snapshot.json")
	if err != nil {
		tb.Fatal(err)
	}
	var snap struct {
		Version     int               `json:"version"`
		CollectedAt string            `json:"collected_at"`
		Accounts    []string          `json:"accounts"`
		Resources   []json.RawMessage `json:"resources"`
		Scopes      []json.RawMessage `json:"scopes"`
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		tb.Fatal(err)
	}
	seen := map[string]bool{}
	var out [][]byte
	for _, r := range snap.Resources {
		var head struct{ Type, Scope string }
		if err := json.Unmarshal(r, &head); err != nil {
			tb.Fatal(err)
		}
		if seen[head.Type] {
			continue
		}
		seen[head.Type] = true
		var scopes []json.RawMessage
		for _, s := range snap.Scopes {
			if bytes.Contains(s, []byte(`"`+head.Scope+`"`)) {
				scopes = append(scopes, s)
			}
		}
		// A struct, not a map: "version" must come first.
		one, err := json.Marshal(struct {
			Version     int               `json:"version"`
			CollectedAt string            `json:"collected_at"`
			Accounts    []string          `json:"accounts"`
			Resources   []json.RawMessage `json:"resources"`
			Scopes      []json.RawMessage `json:"scopes"`
		}{snap.Version, snap.CollectedAt, snap.Accounts, []json.RawMessage{r}, scopes})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, one)
	}
	return out
}

// scalars calls fn on every string of v, map keys included.
func scalars(v any, fn func(s string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case map[string]any:
		for k, x := range v {
			fn(k)
			scalars(x, fn)
		}
	case []any:
		for _, x := range v {
			scalars(x, fn)
		}
	}
}

// FuzzReaderLimits: whatever the snapshot file, what the reader hands out stays within
// its limits (no resource larger than MaxResource, no value longer than MaxValue, no
// header value longer than MaxHeaderValue), every refusal is a located *snapshot.Error,
// and the resources it accepts, written out by the Writer, read back the same.
func FuzzReaderLimits(f *testing.F) {
	for _, s := range acmeSnapshots(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"version":1,"collected_at":"2026-11-30T12:00:00Z","resources":[{"uid":"u","type":"aws.iam.group","tags":{"k":"` +
		string(bytes.Repeat([]byte("\\u00e9"), 40)) + `"}}]}`))
	limits := snapshot.Limits{MaxValue: 200, MaxResource: 8192, MaxHeaderValue: 8192}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := snapshot.NewReader(bytes.NewReader(data), "fuzz.json", snapshot.WithLimits(limits))
		p := snapshot.NewParser("fuzz.json")
		located := func(err error) {
			var se *snapshot.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v is %T, not a located *snapshot.Error", err, err)
			}
		}
		var got []snapshot.Resource
		for i := 0; ; i++ {
			el, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				located(err)
				return
			}
			if len(el.Data) > limits.MaxResource {
				t.Fatalf("resource %d of %d bytes handed out; the limit is %d", el.Index, len(el.Data), limits.MaxResource)
			}
			if i == 0 {
				p.SetCollectedAt(rd.Header().CollectedAt)
			}
			res, err := p.Decode(el)
			if err != nil {
				located(err)
				return
			}
			long := func(s string) {
				if n := utf8.RuneCountInString(s); n > limits.MaxValue {
					t.Fatalf("resource %d holds a value of %d characters; the limit is %d bytes", el.Index, n, limits.MaxValue)
				}
			}
			scalars(res.Attributes, long)
			for k, v := range res.Tags {
				long(k)
				long(v)
			}
			for _, s := range []string{res.UID, res.Type, res.Name, res.Account, res.Region, res.Scope} {
				long(s)
			}
			got = append(got, res)
		}
		h := rd.Header()
		if utf8.RuneCountInString(h.Source) > limits.MaxHeaderValue {
			t.Fatalf("header source of %d characters; the limit is %d bytes", len(h.Source), limits.MaxHeaderValue)
		}
		if h.CollectedAt.IsZero() {
			return // the Writer would stamp it now, and the time checks with it
		}
		var buf bytes.Buffer
		w, err := snapshot.NewWriter(&buf, h)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if err := w.Write(r); err != nil {
				t.Fatalf("write an accepted resource: %v", err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		h2, back, err := snapshot.ReadAll(&buf, "again.json")
		if err != nil {
			t.Fatalf("accepted resources, written out, do not read back: %v\n%s", err, buf.Bytes())
		}
		if len(back) != len(got) || (len(got) > 0 && !reflect.DeepEqual(back, got)) {
			t.Fatalf("resources changed in the round trip:\n%+v\n%+v", got, back)
		}
		// No scopes is no scopes, whether the list was absent or empty.
		if !h2.CollectedAt.Equal(h.CollectedAt) || h2.Source != h.Source || (len(h.Scopes)+len(h2.Scopes) > 0 && !reflect.DeepEqual(h2.Scopes, h.Scopes)) {
			t.Fatalf("header changed in the round trip: %+v / %+v", h, h2)
		}
	})
}
