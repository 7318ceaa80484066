package export_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/export"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

const acmeSnapshot = "../../fixtures/acme/snapshot.json"

// day0 is when the acme snapshot was collected; the history holds it and the next day's.
var day0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// history is a test's acme history; the scans finished on the wall clock, by end.
type history struct {
	*remediatetest.Env
	end time.Time
}

// at is the time of the i-th scheduled run: hours apart, after the history.
func (h history) at(i int) time.Time {
	return h.end.UTC().Truncate(time.Second).Add(time.Second + time.Duration(i)*time.Hour)
}

var frameworks = []string{"cis-aws-3.0", "soc2"}

// acmeHistory starts a simulator (with the bucket acme-audit in the env's account), a
// store on dsn, and records the acme organisation scanned on two days running.
func acmeHistory(t *testing.T, dsn string) history {
	t.Helper()
	w := remediatetest.World(1)
	w.AWS.S3.Buckets = []*cloudsim.Bucket{{Name: "acme-audit", Account: remediatetest.Account}}
	env := remediatetest.Start(t, dsn, w, gates.Config{Approvers: []string{"bob"}, UncheckedNames: true}, remediatetest.Options{})
	b, err := os.ReadFile(acmeSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	for day := range 2 {
		at := day0.AddDate(0, 0, day)
		const stamp = `"collected_at":"2026-11-30T12:00:00Z"`
		if !bytes.Contains(b, []byte(stamp)) {
			t.Fatalf("%s has no %s: update the test", acmeSnapshot, stamp)
		}
		path := filepath.Join(t.TempDir(), "acme.json")
		if err := os.WriteFile(path, bytes.Replace(b, []byte(stamp), []byte(`"collected_at":"`+at.Format(time.RFC3339)+`"`), 1), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := scan.Run(context.Background(), scan.Request{Source: scan.File(path), Engine: env.Engine, Store: env.Store, Now: at, Version: "test",
			Recorded: scan.Audit(env.Log, "alice", scan.VersionEvents(env.Engine, "", "")...)}); err != nil {
			t.Fatal(err)
		}
	}
	return history{env, time.Now()}
}

// options export every format of two frameworks from env's history to dest, logging to
// logs.
func options(env history, dest string, keep int, logs *bytes.Buffer) export.Options {
	return export.Options{Frameworks: frameworks, Formats: render.Formats(), Destination: dest, Keep: keep,
		Store: env.Store, Log: env.Log, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Evidence: evidence.Options{Policies: env.Engine.Policies(), Settings: evidence.SettingsInEffect(env.Engine.SettingsSchema(), nil),
			Tool: "warden test", Now: func() time.Time { return env.at(48) }}}
}

func (h history) names(fw, ext string, runs ...int) []string {
	var out []string
	for _, i := range runs {
		out = append(out, fw+"-"+h.at(i).Format(export.TimeLayout)+"."+ext)
	}
	return out
}

var exts = map[string]string{"html": "html", "csv": "csv", "json": "json", "sarif": "sarif", "ocsf": "ocsf.json"}

// checkContent parses a report as its format says it is.
func checkContent(t *testing.T, fw, format string, b []byte) {
	t.Helper()
	switch format {
	case "json":
		var doc struct {
			Report struct {
				Framework struct{ ID string }
				Controls  []struct{ ID, Status string }
			}
			Source struct {
				ScanID int64 `json:"scan_id"`
			}
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.Report.Framework.ID != fw || len(doc.Report.Controls) == 0 || doc.Source.ScanID == 0 {
			t.Errorf("%s JSON: %v; framework %q, %d controls, scan %d", fw, err, doc.Report.Framework.ID, len(doc.Report.Controls), doc.Source.ScanID)
		}
	case "sarif":
		var log struct {
			Version string
			Runs    []json.RawMessage
		}
		if err := json.Unmarshal(b, &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
			t.Errorf("%s SARIF: %v, version %q, %d runs", fw, err, log.Version, len(log.Runs))
		}
	case "ocsf":
		var events []struct {
			ClassUID int `json:"class_uid"`
		}
		if err := json.Unmarshal(b, &events); err != nil || len(events) == 0 || events[0].ClassUID != 2003 {
			t.Errorf("%s OCSF: %v, %d events", fw, err, len(events))
		}
	case "csv":
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Errorf("%s CSV: %v, %d rows", fw, err, len(rows))
		}
	case "html":
		if !bytes.Contains(bytes.ToLower(b[:min(len(b), 200)]), []byte("<!doctype html")) || !bytes.Contains(b, []byte("</html>")) {
			t.Errorf("%s HTML does not read as a whole page: %.200s", fw, b)
		}
	}
}

// A directory export: every framework in every format after each run, the newest three
// kept, files 0600 in 0700 folders, nothing half-written left, and files that are not
// the exporter's left alone.
func TestRun_directory(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			env := acmeHistory(t, dsn(t))
			dir := filepath.Join(t.TempDir(), "reports")
			foreign := map[string]string{
				"cis-aws-3.0/notes.txt":                                 "auditor's notes",
				"cis-aws-3.0/cis-aws-3.0-latest.html":                   "a link someone made",
				"cis-aws-3.0/cis-aws-3.0-20200101T000000Z.html.sig":     "a signature",
				"cis-aws-3.0/soc2-20200101T000000Z.json":                "another framework's name",
				"cis-aws-3.0/cis-aws-3.0-20201301T000000Z.json":         "not a time",
				"cis-aws-3.0/archive/cis-aws-3.0-20200101T000000Z.json": "archived by hand",
			}
			for rel, content := range foreign {
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			ex, err := export.New(ctx, options(env, dir, 3, &logs))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				res, err := ex.Run(ctx, env.at(i))
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				if len(res.Reports) != len(frameworks)*len(render.Formats()) || !res.At.Equal(env.at(i)) {
					t.Fatalf("run %d: %d reports at %v", i, len(res.Reports), res.At)
				}
				for _, r := range res.Reports {
					want := filepath.Join(dir, r.Framework, r.Framework+"-"+env.at(i).Format(export.TimeLayout)+"."+exts[r.Format])
					if r.Err != nil || r.Location != want || r.Bytes == 0 {
						t.Errorf("run %d: %+v, want %s written", i, r, want)
					}
					if wantPruned := max(0, i-2); len(r.Pruned) != min(wantPruned, 1) {
						t.Errorf("run %d: %s %s pruned %v", i, r.Framework, r.Format, r.Pruned)
					}
				}
			}
			for _, fw := range frameworks {
				entries, err := os.ReadDir(filepath.Join(dir, fw))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, e := range entries {
					got = append(got, e.Name())
				}
				for format, ext := range exts {
					for _, n := range env.names(fw, ext, 2, 3, 4) {
						b, err := os.ReadFile(filepath.Join(dir, fw, n))
						if err != nil {
							t.Errorf("%s: %v", n, err)
							continue
						}
						checkContent(t, fw, format, b)
					}
					for _, n := range env.names(fw, ext, 0, 1) {
						if slices.Contains(got, n) {
							t.Errorf("%s/%s was kept: want the newest 3 only", fw, n)
						}
					}
				}
				for _, n := range got {
					if strings.Contains(n, ".tmp-") {
						t.Errorf("temporary file %s/%s left behind", fw, n)
					}
				}
			}
			for rel, content := range foreign {
				if b, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(b) != content {
					t.Errorf("%s, not the exporter's, was touched: %q, %v", rel, b, err)
				}
			}
			err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				if _, mine := foreign[filepath.ToSlash(rel)]; mine || rel == "cis-aws-3.0/archive" || rel == "." {
					return nil
				}
				if want := map[bool]fs.FileMode{true: 0o700, false: 0o600}[d.IsDir()]; info.Mode().Perm() != want {
					t.Errorf("%s has mode %v, want %v", rel, info.Mode().Perm(), want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(logs.String(), `msg="report written"`); n != 5*len(frameworks)*len(render.Formats()) {
				t.Errorf("%d report written lines:\n%s", n, logs.String())
			}
			if n := strings.Count(logs.String(), `msg="report pruned"`); n != 2*len(frameworks)*len(render.Formats()) {
				t.Errorf("%d report pruned lines", n)
			}
		})
	}
}

// A report written again at the same time replaces the one there, whole.
func TestRun_directorySameTimeReplaces(t *testing.T) {
	ctx := context.Background()
	env := acmeHistory(t, storetest.Backends(t)["sqlite"](t))
	dir := t.TempDir()
	var logs bytes.Buffer
	o := options(env, dir, 2, &logs)
	o.Frameworks, o.Formats = []string{"soc2"}, []string{"json"}
	ex, err := export.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "soc2", env.names("soc2", "json", 0)[0])
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ex.Run(ctx, env.at(0).Add(900*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	checkContent(t, "soc2", "json", b)
}

// One framework that cannot be written does not stop the other; the error names it.
func TestRun_oneFailureDoesNotStopTheOthers(t *testing.T) {
	ctx := context.Background()
	env := acmeHistory(t, storetest.Backends(t)["sqlite"](t))
	dir := t.TempDir()
	// A file where soc2's folder belongs: every soc2 write fails.
	if err := os.WriteFile(filepath.Join(dir, "soc2"), []byte("in the way"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ex, err := export.New(ctx, options(env, dir, 3, &logs))
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(ctx, env.at(0))
	if err == nil || !strings.Contains(err.Error(), "5 of 10 failed") || !strings.Contains(err.Error(), "soc2 html: write "+filepath.Join(dir, "soc2")) {
		t.Fatalf("Run: %v, want the five soc2 failures named", err)
	}
	for _, r := range res.Reports {
		if failed := r.Err != nil; failed != (r.Framework == "soc2") {
			t.Errorf("%s %s: %v", r.Framework, r.Format, r.Err)
		}
		if r.Framework == "cis-aws-3.0" {
			if _, err := os.Stat(r.Location); err != nil {
				t.Errorf("%s not written: %v", r.Location, err)
			}
		}
	}
	if n := strings.Count(logs.String(), `msg="report failed"`); n != 5 {
		t.Errorf("%d report failed lines:\n%s", n, logs.String())
	}

	// Before the history's first scan there is no evidence: every report fails, saying so.
	res, err = ex.Run(ctx, day0.Add(-time.Hour))
	if !errors.Is(err, store.ErrNoScans) || len(res.Failed()) != len(res.Reports) {
		t.Errorf("Run before the first scan: %v (%d of %d failed), want store.ErrNoScans for all", err, len(res.Failed()), len(res.Reports))
	}
}

// s3Objects lists a bucket through the official SDK with the test's own client, not the
// exporter's.
func s3Objects(t *testing.T, c *s3.Client, bucket, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(7)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out[aws.ToString(o.Key)] = aws.ToString(o.ETag)
		}
	}
	return out
}

// An S3 export through the simulator: the objects are there as ListObjectsV2 shows
// them to another client, with their content types, the newest two kept, and objects
// that are not the exporter's left alone.
func TestRun_s3(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			env := acmeHistory(t, dsn(t))
			auditor := s3.NewFromConfig(simtest.AWSConfig(env.URL), func(o *s3.Options) { o.UsePathStyle = true })
			foreign := []string{"warden/reports/cis-aws-3.0/README.txt", "warden/reports/cis-aws-3.0/cis-aws-3.0-20200101T000000Z.json.sig",
				"warden/reports/cis-aws-3.0/old/cis-aws-3.0-20200101T000000Z.json", "warden/other/cis-aws-3.0/cis-aws-3.0-20200101T000000Z.json",
				"warden/reports/cis-aws-3.0-20200101T000000Z.json"}
			for _, k := range foreign {
				if _, err := auditor.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acme-audit"), Key: aws.String(k), Body: strings.NewReader("not warden's")}); err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			o := options(env, "s3://acme-audit/warden/reports/", 2, &logs)
			cfg := simtest.AWSConfig(env.URL)
			o.AWS, o.Endpoint = &cfg, env.URL
			ex, err := export.New(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if _, err := ex.Run(ctx, env.at(i)); err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
			}
			got := s3Objects(t, auditor, "acme-audit", "")
			want := slices.Clone(foreign)
			for _, fw := range frameworks {
				for format, ext := range exts {
					for _, n := range env.names(fw, ext, 1, 2) {
						want = append(want, "warden/reports/"+fw+"/"+n)
					}
					key := "warden/reports/" + fw + "/" + env.names(fw, ext, 2)[0]
					obj, err := auditor.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("acme-audit"), Key: aws.String(key)})
					if err != nil {
						t.Fatal(err)
					}
					b, err := io.ReadAll(obj.Body)
					obj.Body.Close()
					if err != nil {
						t.Fatal(err)
					}
					checkContent(t, fw, format, b)
					if ct := aws.ToString(obj.ContentType); !strings.HasPrefix(ct, map[string]string{"html": "text/html", "csv": "text/csv", "json": "application/json",
						"sarif": "application/sarif+json", "ocsf": "application/json"}[format]) {
						t.Errorf("%s: content type %q", key, ct)
					}
				}
			}
			keys := slices.Sorted(maps.Keys(got))
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("bucket holds\n%v\nwant\n%v", strings.Join(keys, "\n"), strings.Join(want, "\n"))
			}
			calls := env.Sim.Calls()
			if n := calls["s3:PutObject"].Calls; n != len(foreign)+3*len(frameworks)*len(render.Formats()) {
				t.Errorf("%d PutObject calls", n)
			}
			if n := calls["s3:DeleteObject"].Calls; n != len(frameworks)*len(render.Formats()) {
				t.Errorf("%d DeleteObject calls, want one per framework and format (the first run's)", n)
			}
		})
	}
}

// A bucket that does not exist fails every report with an error naming it.
func TestRun_s3NoSuchBucket(t *testing.T) {
	ctx := context.Background()
	env := acmeHistory(t, storetest.Backends(t)["sqlite"](t))
	var logs bytes.Buffer
	o := options(env, "s3://acme-missing/reports", 2, &logs)
	cfg := simtest.AWSConfig(env.URL)
	o.AWS, o.Endpoint = &cfg, env.URL
	ex, err := export.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(ctx, env.at(0))
	if err == nil || !strings.Contains(err.Error(), `bucket "acme-missing" does not exist`) || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("Run: %v, want an error naming the missing bucket", err)
	}
	if len(res.Failed()) != len(res.Reports) || len(res.Reports) != 10 {
		t.Errorf("%d of %d failed", len(res.Failed()), len(res.Reports))
	}
	if r := res.Reports[0]; r.Location != "s3://acme-missing/reports/cis-aws-3.0/"+env.names("cis-aws-3.0", "html", 0)[0] {
		t.Errorf("location %s", r.Location)
	}
	// The bucket in another region is refused the way S3 refuses it, with the fix named.
	env.Sim.Do(func(w *cloudsim.World) {
		w.AWS.S3.Buckets = append(w.AWS.S3.Buckets, &cloudsim.Bucket{Name: "acme-eu", Account: remediatetest.Account, Region: "eu-west-1"})
	})
	o.Destination = "s3://acme-eu"
	if ex, err = export.New(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := ex.Run(ctx, env.at(0)); err == nil || !strings.Contains(err.Error(), `bucket "acme-eu" is not in region us-east-1`) {
		t.Errorf("Run into a bucket of another region: %v", err)
	}
	o.Region = "eu-west-1"
	if ex, err = export.New(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := ex.Run(ctx, env.at(0)); err != nil {
		t.Errorf("Run with the bucket's region: %v", err)
	}
}
