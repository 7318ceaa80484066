package permissions_test

import (
	"os"
	"path/filepath"
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

func TestSelection_Check_namesTheFlagAndItsValues(t *testing.T) {
	for _, tt := range []struct {
		sel   permissions.Selection
		inErr string
	}{
		{permissions.Selection{Role: "all", Cloud: "all"}, ""},
		{permissions.Selection{Role: "scanner", Cloud: "gcp", Format: "yaml"}, ""},
		{permissions.Selection{Role: "admin", Cloud: "all"}, `--role: unknown value "admin" (want scanner, remediator, exporter, all)`},
		{permissions.Selection{Role: "all", Cloud: "azure"}, `--cloud: unknown value "azure" (want aws, gcp, all)`},
		{permissions.Selection{Role: "all", Cloud: "all", Format: "xml"}, `--format: unknown value "xml" (want json, yaml, cloudformation, terraform)`},
		{permissions.Selection{Cloud: "all"}, `--role: unknown value ""`},
	} {
		err := tt.sel.Check()
		if tt.inErr == "" && err != nil || tt.inErr != "" && (err == nil || !strings.Contains(err.Error(), tt.inErr)) {
			t.Errorf("%+v: Check() = %v, want %q", tt.sel, err, tt.inErr)
		}
	}
}

func TestWrite_headsEachOfSeveralDocuments(t *testing.T) {
	one := []permissions.Document{{Name: "a.json", About: "A", Body: []byte("{}\n")}}
	var b strings.Builder
	permissions.Write(&b, one)
	if b.String() != "{}\n" {
		t.Errorf("one document: %q, want it as it is", b.String())
	}
	b.Reset()
	permissions.Write(&b, append(one, permissions.Document{Name: "b.yaml", About: "B", Body: []byte("b: 1\n")}))
	if want := "# file: a.json (A)\n{}\n\n# file: b.yaml (B)\nb: 1\n"; b.String() != want {
		t.Errorf("two documents: %q, want %q", b.String(), want)
	}
}

func TestWriteDir_writesEachFileAndNamesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "iam")
	var b strings.Builder
	if err := permissions.WriteDir(dir, []permissions.Document{{Name: "a.json", About: "A", Body: []byte("{}\n")}}, &b); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "a.json")); err != nil || string(got) != "{}\n" {
		t.Errorf("a.json: %q, %v", got, err)
	}
	if !strings.Contains(b.String(), "wrote "+filepath.Join(dir, "a.json")+": A") {
		t.Errorf("output %q does not name the file", b.String())
	}
}
