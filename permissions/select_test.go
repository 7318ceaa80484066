package permissions_test

import (
	"strings"
	"testing"

	"github.com/warden-sec/warden/permissions"
)

func TestSelect_keepsTheSelectedDocumentsInOrder(t *testing.T) {
	docs := []permissions.Document{
		{Name: "a", Cloud: "aws", Role: "scanner", Format: "json"},
		{Name: "b", Cloud: "aws", Role: "remediator", Format: "json"},
		{Name: "c", Cloud: "aws", Role: "all", Format: "cloudformation"},
		{Name: "d", Cloud: "gcp", Role: "scanner", Format: "yaml"},
	}
	for _, tt := range []struct {
		sel  permissions.Selection
		want string
	}{
		{permissions.Selection{Role: "all", Cloud: "all"}, "abcd"},
		{permissions.Selection{Role: "scanner", Cloud: "all"}, "ad"},
		{permissions.Selection{Role: "all", Cloud: "aws", Format: "json"}, "ab"},
		{permissions.Selection{Role: "all", Cloud: "aws", Format: "cloudformation"}, "c"},
	} {
		got, err := permissions.Select(docs, tt.sel)
		if err != nil {
			t.Fatalf("%+v: %v", tt.sel, err)
		}
		var names strings.Builder
		for _, d := range got {
			names.WriteString(d.Name)
		}
		if names.String() != tt.want {
			t.Errorf("%+v: %s, want %s", tt.sel, names.String(), tt.want)
		}
	}
	if _, err := permissions.Select(docs, permissions.Selection{Role: "remediator", Cloud: "gcp", Format: "json"}); err == nil || !strings.Contains(err.Error(), "no document is json") {
		t.Errorf("an empty selection: %v, want an error saying so", err)
	}
	if len(docs) != 4 || docs[1].Name != "b" {
		t.Errorf("Select changed its input: %+v", docs)
	}
}
