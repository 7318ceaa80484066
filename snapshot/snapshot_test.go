package snapshot_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/snapshot"
)

func TestWriterReaderRoundTrip(t *testing.T) {
	h := snapshot.Header{CollectedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Source: "test", Accounts: []string{"111111111111"}}
	in := []snapshot.Resource{
		{UID: "arn:aws:iam::111111111111:user/alice", Type: "aws.iam.user", Name: "alice", Account: "111111111111", Region: "global",
			Scope: "aws/111111111111/iam", Tags: map[string]string{"team": "a"}, Attributes: map[string]any{"mfa_active": true, "password_enabled": false, "path": "/"}},
		{UID: "tls://shop.example:443", Type: "tls.endpoint", Name: "shop.example:443", Account: "shop.example",
			Attributes: map[string]any{"host": "shop.example", "port": 443, "reachable": true, "error": "quote \" and backslash \\ and ] } inside"}},
	}
	var buf bytes.Buffer
	w, err := snapshot.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	w.AddScope(snapshot.Scope{ID: "aws/111111111111/iam", Status: snapshot.ScopeOK})
	w.AddScope(snapshot.Scope{ID: "tls/shop.example", Status: snapshot.ScopeFailed, Error: "timeout"})
	for _, r := range in {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	gotH, got, err := snapshot.ReadAll(&buf, "mem")
	if err != nil {
		t.Fatal(err)
	}
	if !gotH.CollectedAt.Equal(h.CollectedAt) || gotH.Source != "test" || len(gotH.Accounts) != 1 || len(gotH.Scopes) != 2 {
		t.Errorf("header = %+v", gotH)
	}
	if len(got) != 2 {
		t.Fatalf("got %d resources, want 2", len(got))
	}
	if got[0].Tags["team"] != "a" || got[0].Attributes["mfa_active"] != true {
		t.Errorf("resource 0 = %+v", got[0])
	}
	if got[1].Scope != "tls/shop.example" {
		t.Errorf("default scope = %q, want tls/shop.example", got[1].Scope)
	}
	if got[1].Attributes["error"] != in[1].Attributes["error"] {
		t.Errorf("escaped string = %q", got[1].Attributes["error"])
	}
	if s, ok := gotH.ScopeByID("tls/shop.example"); !ok || s.Complete() {
		t.Errorf("failed scope = %+v, %v", s, ok)
	}
}

// A reader must survive values split across its refills.
func TestReaderLargeSnapshotAcrossBuffers(t *testing.T) {
	var buf bytes.Buffer
	w, _ := snapshot.NewWriter(&buf, snapshot.Header{CollectedAt: time.Unix(0, 0)})
	long := strings.Repeat("x\\\"y", 50000)
	for i := range 300 {
		w.Write(snapshot.Resource{UID: "u" + strings.Repeat("0", i%7) + string(rune('a'+i%26)) + time.Duration(i).String(), Type: "aws.iam.group",
			Attributes: map[string]any{"path": long[:i*100]}})
	}
	w.Close()
	_, got, err := snapshot.ReadAll(iotestOneByte(&buf), "mem")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 300 {
		t.Fatalf("got %d resources, want 300", len(got))
	}
}

type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) > 7 {
		p = p[:7]
	}
	return o.r.Read(p)
}

func iotestOneByte(r io.Reader) io.Reader { return oneByte{r} }

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "line 1: empty input"},
		{"not an object", "[1]", `a snapshot is a JSON object, found '['`},
		{"resources before version", `{"resources": []}`, `line 1: resources: comes before "version"`},
		{"bad version", `{"version": 2, "resources": []}`, "version: unsupported snapshot version 2"},
		{"version is a string", `{"version": "1"}`, "version: expected int, found string"},
		{"unknown top-level field", "{\"version\": 1,\n\"scopez\": []}", `line 2: scopez: unknown field (did you mean "scopes"?)`},
		{"missing resources", `{"version": 1}`, "resources: is required"},
		{"unknown type", "{\"version\": 1, \"resources\": [\n{\"uid\": \"a\",\n \"type\": \"aws.iam.usr\"}]}",
			`line 3: resources[0].type: unknown resource type "aws.iam.usr" (did you mean "aws.iam.user"?)`},
		{"missing uid", "{\"version\": 1, \"resources\": [\n{\"type\": \"aws.iam.group\"}]}", "line 2: resources[0].uid: is required"},
		{"uid not a string", `{"version": 1, "resources": [{"uid": 5, "type": "aws.iam.group"}]}`, "resources[0].uid: must be a string, found number"},
		{"unknown resource field", `{"version": 1, "resources": [{"uid": "a", "type": "aws.iam.group", "atributes": {}}]}`, `resources[0].atributes: unknown field (did you mean "attributes"?)`},
		{"attributes not an object", `{"version": 1, "resources": [{"uid": "a", "type": "aws.iam.group", "attributes": []}]}`, "resources[0].attributes: must be an object, found array"},
		{"tag not a string", `{"version": 1, "resources": [{"uid": "a", "type": "aws.iam.group", "tags": {"a": 1}}]}`, `tag "a" must be a string`},
		{"resource not an object", `{"version": 1, "resources": [1]}`, "resources[0]: expected a resource object"},
		{"truncated", "{\"version\": 1, \"resources\": [\n{\"uid\": \"a\", \"type\": \"aws.iam.group\"},\n{\"uid\": \"b\"", "unexpected end of input in a value that starts on line 3"},
		{"missing comma", `{"version": 1, "resources": [{"uid": "a", "type": "aws.iam.group"} {"uid": "b", "type": "aws.iam.group"}]}`, "expected ',' or ']' after resources[0]"},
		{"bad json inside", "{\"version\": 1, \"resources\": [\n{\"uid\": \"a\",\n \"type\": \"aws.iam.group\", \"attributes\": {\"x\": tru}}]}", "line 3: resources[0]: invalid JSON"},
		{"trailing data", `{"version": 1, "resources": []} x`, "unexpected data after the snapshot object"},
		{"scope without status", `{"version": 1, "scopes": [{"id": "aws/1/iam"}], "resources": []}`, `scopes[0]: scope "aws/1/iam": "status" is required`},
		{"scope bad status", `{"version": 1, "scopes": [{"id": "aws/1/iam", "status": "fine"}], "resources": []}`, `unknown status "fine"`},
		{"duplicate key", `{"version": 1, "version": 1, "resources": []}`, "version: appears twice"},
		{"line break in string", "{\"version\": 1, \"source\": \"a\nb\", \"resources\": []}", "line break inside a string"},
		{"line break in a nested string", "{\"version\": 1, \"resources\": [\n{\"uid\": \"a\",\n \"type\": \"aws.iam.group\",\n \"name\": \"x\ny\"}]}", "line 4: line break inside a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := snapshot.ReadAll(strings.NewReader(tt.in), "snap.json")
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "read snapshot snap.json: ") {
				t.Errorf("error %q does not name the file", err)
			}
			var se *snapshot.Error
			if !errors.As(err, &se) {
				t.Errorf("error is %T, want *snapshot.Error", err)
			}
		})
	}
}

func TestReaderAcceptsScopesAfterResources(t *testing.T) {
	in := `{"version": 1, "collected_at": "2026-01-02T03:04:05Z", "resources": [{"uid": "a", "type": "aws.iam.group", "account": "1", "region": "global"}], "scopes": [{"id": "aws/1/iam", "status": "ok"}]}`
	h, rs, err := snapshot.ReadAll(strings.NewReader(in), "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Scope != "aws/1/iam" || len(h.Scopes) != 1 || h.CollectedAt.Year() != 2026 {
		t.Errorf("got %+v %+v", h, rs)
	}
}

func TestDefaultScope(t *testing.T) {
	tests := []struct{ typ, account, region, want string }{
		{"aws.iam.user", "111", "global", "aws/111/iam"},
		{"aws.ec2.security_group", "111", "eu-west-1", "aws/111/ec2/eu-west-1"},
		{"gcp.compute.firewall", "proj", "global", "gcp/proj/compute"},
		{"tls.endpoint", "shop.example:443", "", "tls/shop.example:443"},
		{"bogus", "1", "", ""},
	}
	for _, tt := range tests {
		if got := snapshot.DefaultScope(tt.typ, tt.account, tt.region); got != tt.want {
			t.Errorf("DefaultScope(%q, %q, %q) = %q, want %q", tt.typ, tt.account, tt.region, got, tt.want)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"version": 1, "resources": [{"uid": "a", "type": "aws.iam.user", "attributes": {"x": [1, "]"]}}], "scopes": []}`))
	f.Add([]byte(`{"version": 1, "resources": []}`))
	f.Add([]byte(`{"version":1,"resources":[{"uid":"\"","type":"tls.endpoint"},{}]}`))
	f.Add([]byte(`{"version": 1, "source": "\\", "resources": [`))
	// Long values (over the fuzz limits below), duplicate keys and schema violations.
	f.Add([]byte(`{"version": 1, "resources": [{"uid": "a", "type": "aws.iam.group", "name": "` + strings.Repeat(`x\"`, 100) + `"}]}`))
	f.Add([]byte(`{"version": 1, "resources": [{"uid": "a", "type": "aws.iam.root_user", "attributes": {"mfa_active": 1` + strings.Repeat("0", 300) + `}}]}`))
	f.Add([]byte(`{"version": 1, "resources": [{"uid": "arn:aws:iam::1:root", "type": "aws.iam.root_user", "attributes": {"mfa_active": false, "access_keys_active": 0, "mfa_active": true}}]}`))
	f.Add([]byte(`{"version": 1, "scopes": [{"id": "s", "status": "failed", "status": "ok"}], "resources": [{"uid": "a", "uid": "b", "type": "aws.iam.group"}]}`))
	f.Add([]byte(`{"version": 1, "resources": [{"uid": "k", "type": "aws.iam.access_key", "attributes": {"status": "Active", "created": "last tuesday"}}]}`))
	f.Add([]byte(`{"version": 1, "resources": [{"uid": "p", "type": "aws.iam.policy", "attributes": {"document": {"Statement": [{"Effect": "Allow", "Effect": "Deny"}]}}}]}`))
	f.Add([]byte(`{"version": 1, "resources": [{"uid": "g", "type": "aws.ec2.security_group", "attributes": {"ingress": [{"protocol": "tcp", "from_port": 1e400, "to_port": 22}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := snapshot.NewReader(bytes.NewReader(data), "fuzz", snapshot.WithLimits(snapshot.Limits{MaxValue: 128, MaxResource: 4096, MaxHeaderValue: 4096}))
		p := snapshot.NewParser("fuzz")
		for range 10000 {
			el, err := rd.Next()
			if err != nil {
				if err != io.EOF {
					var se *snapshot.Error
					if !errors.As(err, &se) {
						t.Fatalf("error %v is %T, not a located *snapshot.Error", err, err)
					}
				}
				return
			}
			if _, err := p.Decode(el); err != nil {
				var se *snapshot.Error
				if !errors.As(err, &se) {
					t.Fatalf("error %v is %T, not a located *snapshot.Error", err, err)
				}
			}
		}
	})
}
