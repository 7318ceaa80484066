package compliance

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/yamlerr"
)

// FuzzParse: whatever the bytes, Parse returns a framework that holds together, or an
// error located on a line of the file; and Evaluate can judge what Parse accepts.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"frameworks/*.yaml", "testdata/*.yaml"} {
		names, _ := filepath.Glob(glob)
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			// The heads of the large files are as good seeds, and far quicker to minimize.
			if len(data) > 4<<10 {
				data = data[:4<<10]
			}
			f.Add(data)
		}
	}
	f.Add([]byte(testFramework))
	f.Fuzz(func(t *testing.T, data []byte) {
		fw, err := Parse("fuzz.yaml", data)
		if err != nil {
			var ye *yamlerr.Error
			if !errors.As(err, &ye) || ye.Line < 1 || !strings.HasPrefix(err.Error(), "parse framework fuzz.yaml: ") {
				t.Fatalf("error %q (%T) is not located on a line of the file", err, err)
			}
			return
		}
		if err := fw.Validate(nil); err != nil {
			t.Fatalf("Parse returned a framework that does not validate: %v", err)
		}
		rep := Evaluate(fw, Input{})
		s := rep.Score
		if s.Controls != len(fw.Controls) || s.Pass+s.Fail+s.Unknown+s.NotCovered+s.Manual != s.Controls || s.Pass != 0 {
			t.Fatalf("score %+v of %d controls judged on an empty posture", s, len(fw.Controls))
		}
	})
}
