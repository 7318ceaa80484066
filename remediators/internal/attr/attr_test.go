package attr

import (
	"encoding/json"
	"testing"
)

func TestCanonical_sameValueSameBytes(t *testing.T) {
	type rule struct {
		Z    string `json:"z"`
		A    int    `json:"a"`
		Peer any    `json:"peer"`
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"struct keys sorted", rule{Z: "<&>", A: 22, Peer: map[string]any{"b": 1.0, "a": json.Number("2")}}, `{"a":22,"peer":{"a":2,"b":1},"z":"<&>"}`},
		{"float and int alike", map[string]any{"port": 22.0, "n": int64(22)}, `{"n":22,"port":22}`},
		{"raw JSON compacted", json.RawMessage(`{ "b" : [1, 2], "a": null }`), `{"a":null,"b":[1,2]}`},
		{"big numbers kept", map[string]any{"id": json.Number("12345678901234567890")}, `{"id":12345678901234567890}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonical = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestToInt_readsWholeNumbersOnly(t *testing.T) {
	tests := []struct {
		v    any
		want int
		ok   bool
	}{
		{22, 22, true}, {int64(-1), -1, true}, {22.0, 22, true}, {json.Number("443"), 443, true},
		{22.5, 0, false}, {"22", 0, false}, {nil, 0, false}, {json.Number("1.5"), 0, false},
	}
	for _, tt := range tests {
		got, ok := ToInt(tt.v)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ToInt(%#v) = %d, %v; want %d, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParam_requiredAndTyped(t *testing.T) {
	p := map[string]any{"role": "roles/editor", "empty": "", "n": 3}
	if v, err := Param(p, "role", true); v != "roles/editor" || err != nil {
		t.Errorf("role: %q %v", v, err)
	}
	if _, err := Param(p, "member", true); err == nil {
		t.Error("a missing required param is no error")
	}
	if v, err := Param(p, "member", false); v != "" || err != nil {
		t.Errorf("a missing optional param: %q %v", v, err)
	}
	if _, err := Param(p, "empty", true); err == nil {
		t.Error("an empty required param is no error")
	}
	if _, err := Param(p, "n", false); err == nil {
		t.Error("a number for a string param is no error")
	}
}
