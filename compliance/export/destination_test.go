package export_test

import (
	"context"
	"strings"
	"testing"

	"github.com/warden-sec/warden/compliance/export"
	"github.com/warden-sec/warden/store/storetest"
)

func TestParseDestination(t *testing.T) {
	for _, c := range []struct {
		in                  string
		dir, bucket, prefix string
		str                 string
	}{
		{in: "/var/lib/warden/reports/", dir: "/var/lib/warden/reports", str: "/var/lib/warden/reports"},
		{in: "reports", dir: "reports", str: "reports"},
		{in: " ./out//x ", dir: "out/x", str: "out/x"},
		{in: "s3://acme-audit", bucket: "acme-audit", str: "s3://acme-audit"},
		{in: "s3://acme-audit/", bucket: "acme-audit", str: "s3://acme-audit"},
		{in: "s3://acme.audit-1/warden/reports/", bucket: "acme.audit-1", prefix: "warden/reports", str: "s3://acme.audit-1/warden/reports"},
	} {
		d, err := export.ParseDestination(c.in)
		if err != nil || d.Dir != c.dir || d.Bucket != c.bucket || d.Prefix != c.prefix || d.String() != c.str || d.IsS3() != (c.bucket != "") {
			t.Errorf("ParseDestination(%q) = %+v (%s), %v", c.in, d, d, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty destination"},
		{"gs://acme-audit/reports", `unsupported scheme`},
		{"file:///var/reports", `unsupported scheme`},
		{"s3://", `"" is not an S3 bucket name`},
		{"s3://Acme_Audit/reports", `"Acme_Audit" is not an S3 bucket name`},
		{"s3://ab/reports", `"ab" is not an S3 bucket name`},
		{"s3://192.168.10.1/reports", `is not an S3 bucket name`},
		{"s3://acme..audit", `is not an S3 bucket name`},
		{"s3://acme-audit/a//b", `empty, "." or ".." segment`},
		{"s3://acme-audit/a/../b", `empty, "." or ".." segment`},
		{"s3://acme-audit/reports?versionId=1", "a query or fragment has no place in it"},
	} {
		if _, err := export.ParseDestination(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseDestination(%q): %v, want %q", c.in, err, c.want)
		}
	}
}

func TestNew_refusesWhatCannotRun(t *testing.T) {
	env := acmeHistory(t, storetest.Backends(t)["sqlite"](t))
	good := func() export.Options {
		return export.Options{Frameworks: []string{"soc2"}, Formats: []string{"json"}, Destination: t.TempDir(), Store: env.Store, Log: env.Log}
	}
	for _, c := range []struct {
		name string
		edit func(o *export.Options)
		want string
	}{
		{"unknown framework", func(o *export.Options) { o.Frameworks = []string{"soc-2"} }, `unknown framework "soc-2" (did you mean "soc2"?)`},
		{"unknown format", func(o *export.Options) { o.Formats = []string{"jsno"} }, `unknown report format "jsno" (did you mean "json"?)`},
		{"no frameworks", func(o *export.Options) { o.Frameworks = nil }, "name at least one framework and one format"},
		{"negative keep", func(o *export.Options) { o.Keep = -1 }, "keep -1: want at least 1"},
		{"bad destination", func(o *export.Options) { o.Destination = "s3://No" }, `"No" is not an S3 bucket name`},
		{"no store", func(o *export.Options) { o.Store = nil }, "the store and its audit log are required"},
	} {
		o := good()
		c.edit(&o)
		if _, err := export.New(context.Background(), o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	ex, err := export.New(context.Background(), good())
	if err != nil || ex.Destination().IsS3() {
		t.Fatalf("New: %v", err)
	}
}
