package reconcile

import (
	"encoding/json"
	"testing"

	"github.com/warden-sec/warden/snapshot"
)

func TestHasher(t *testing.T) {
	base := func() snapshot.Resource {
		return snapshot.Resource{UID: "aws:iam::1:role/a", Type: "aws.iam.role", Name: "a", Account: "1",
			Tags: map[string]string{"team": "x", "env": "prod"},
			Attributes: map[string]any{
				"trust":    map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "sts:AssumeRole"}}},
				"policies": []any{"p1", "p2"}, "max_session": 3600.0, "ok": true, "none": nil,
				"last_used": "2026-12-06T09:15:00Z", "created": "2026-01-02T03:04:05Z",
				"usage": map[string]any{"services": []any{map[string]any{"service": "s3", "last_used": "2026-12-05T23:00:00Z"}}},
				"login": map[string]string{"password_last_used": "2026-12-01T08:00:00Z", "last_used_region": "eu-west-1"},
			}}
	}
	cases := []struct {
		name   string
		change func(*snapshot.Resource)
		same   bool
	}{
		{"identical", func(*snapshot.Resource) {}, true},
		{"maps rebuilt in another order", func(r *snapshot.Resource) {
			r.Tags = map[string]string{"env": "prod", "team": "x"}
		}, true},
		{"a tag value", func(r *snapshot.Resource) { r.Tags["env"] = "dev" }, false},
		{"a tag moved into the name", func(r *snapshot.Resource) { delete(r.Tags, "team"); r.Name = "ateam" }, false},
		{"a nested value", func(r *snapshot.Resource) {
			r.Attributes["trust"].(map[string]any)["Statement"].([]any)[0].(map[string]any)["Effect"] = "Deny"
		}, false},
		{"list order", func(r *snapshot.Resource) { r.Attributes["policies"] = []any{"p2", "p1"} }, false},
		{"strings split differently", func(r *snapshot.Resource) { r.Attributes["policies"] = []any{"p1p", "2"} }, false},
		{"a number", func(r *snapshot.Resource) { r.Attributes["max_session"] = 3601.0 }, false},
		{"bool", func(r *snapshot.Resource) { r.Attributes["ok"] = false }, false},
		{"null dropped", func(r *snapshot.Resource) { delete(r.Attributes, "none") }, false},
		{"null to empty string", func(r *snapshot.Resource) { r.Attributes["none"] = "" }, false},
		{"a Go slice of strings as its JSON twin", func(r *snapshot.Resource) { r.Attributes["policies"] = []string{"p1", "p2"} }, true},
		{"an unusual Go type", func(r *snapshot.Resource) { r.Attributes["policies"] = [2]string{"p1", "p2"} }, false},
		{"the scope", func(r *snapshot.Resource) { r.Scope = "aws/1/iam" }, false},
		// Last use is hashed to the day (lastUse): used again the same day is no change.
		{"used again the same day", func(r *snapshot.Resource) { r.Attributes["last_used"] = "2026-12-06T17:40:12Z" }, true},
		{"used again another day", func(r *snapshot.Resource) { r.Attributes["last_used"] = "2026-12-07T00:00:01Z" }, false},
		{"first used", func(r *snapshot.Resource) { r.Attributes["none"] = nil; r.Attributes["last_used"] = nil }, false},
		{"a service used again the same day", func(r *snapshot.Resource) {
			r.Attributes["usage"].(map[string]any)["services"].([]any)[0].(map[string]any)["last_used"] = "2026-12-05T23:59:59Z"
		}, true},
		{"a service used again the next day", func(r *snapshot.Resource) {
			r.Attributes["usage"].(map[string]any)["services"].([]any)[0].(map[string]any)["last_used"] = "2026-12-06T00:00:00Z"
		}, false},
		{"a password used again the same day", func(r *snapshot.Resource) {
			r.Attributes["login"].(map[string]string)["password_last_used"] = "2026-12-01T22:00:00Z"
		}, true},
		{"another time, not a last use", func(r *snapshot.Resource) { r.Attributes["created"] = "2026-01-02T03:04:06Z" }, false},
		{"a last use that is not a time", func(r *snapshot.Resource) { r.Attributes["last_used"] = "2026-12-06T09:15:00" }, false},
	}
	var h hasher
	want, err := h.sum(base())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := base()
			c.change(&r)
			got, err := h.sum(r)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != c.same {
				t.Errorf("same hash = %v, want %v", got == want, c.same)
			}
		})
	}
}

// TestHasher_deterministic hashes a resource with many map keys many times (Go's map
// order changes from one walk to the next) and one decoded from its own JSON.
func TestHasher_deterministic(t *testing.T) {
	attrs := map[string]any{}
	for _, k := range []string{"k", "b", "z", "a", "m", "q", "c", "y", "d", "x"} {
		attrs[k] = map[string]any{k + "1": 1.0, k + "2": []any{k, map[string]any{"n": k, "o": nil}}}
	}
	r := snapshot.Resource{UID: "u", Type: "t", Attributes: attrs}
	var h hasher
	first, err := h.sum(r)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if got, _ := h.sum(r); got != first {
			t.Fatalf("the hash changed between walks: %s then %s", first, got)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back snapshot.Resource
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.sum(back); got != first {
		t.Errorf("a resource decoded from its own JSON hashes differently")
	}
}

func TestHasher_refusesWhatJSONRefuses(t *testing.T) {
	var h hasher
	_, err := h.sum(snapshot.Resource{UID: "u", Attributes: map[string]any{"ch": make(chan int)}})
	if err == nil {
		t.Fatal("a channel attribute hashed")
	}
}
