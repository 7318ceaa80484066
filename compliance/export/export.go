// Package export writes compliance reports on a schedule: each configured framework's
// evidence gathered once from the history, rendered in each configured format, and
// written to a directory or an S3 bucket as
//
//	<prefix>/<framework>/<framework>-<UTC time 20060102T150405Z>.<ext>
//
// keeping the last N reports of each framework and format. warden serve calls
// Exporter.Run every reports.every; one framework or format that fails is recorded and
// the others are written all the same.
package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/store"
)

// DefaultKeep is how many reports of each framework and format are kept unless told
// otherwise.
const DefaultKeep = 10

// TimeLayout is the UTC time in a report's name: sortable as text, free of colons.
const TimeLayout = "20060102T150405Z"

// Options configure an Exporter.
type Options struct {
	// Frameworks are the ids of the frameworks reported (compliance.Load).
	Frameworks []string
	// Formats are the formats each is written in (render.Formats).
	Formats []string
	// Destination is a directory or s3://bucket/prefix (ParseDestination).
	Destination string
	// Keep is how many reports of each framework and format are kept (default DefaultKeep).
	Keep int

	// Region is the S3 bucket's region; empty takes the AWS configuration's, else
	// us-east-1.
	Region string
	// Endpoint overrides the S3 endpoint (the simulator); empty uses AWS_ENDPOINT_URL
	// (AWS_ENDPOINT_URL_S3) when the standard chain is loaded, or AWS itself. A custom
	// endpoint is addressed path-style (endpoint/bucket/key): a bucket's own host name
	// exists only under AWS's.
	Endpoint string
	// AWS is the base AWS configuration; nil loads the standard chain (environment,
	// shared files, SSO, instance role).
	AWS *aws.Config

	// Store and Log are the history and audit log the evidence is read from.
	Store *store.Store
	Log   *audit.Log
	// Evidence are the options of evidence.Gather (policies, settings, waivers, tool);
	// its At is each run's time.
	Evidence evidence.Options
	// Logger receives a line per report written, pruned or failed; nil discards.
	Logger *slog.Logger
}

// Exporter writes the reports of its Options. It holds no state between runs but its
// S3 client: Run may be called from one goroutine at a time.
type Exporter struct {
	frameworks []*compliance.Framework
	formats    []format
	dest       Destination
	sink       sink
	keep       int
	o          Options
	log        *slog.Logger
}

// format is a report format with its writer and how its files are named and served.
type format struct {
	name, ext, contentType string
	w                      render.Writer
}

// formatFiles are the extension and content type of each format's files.
var formatFiles = map[string][2]string{
	"html":  {"html", "text/html; charset=utf-8"},
	"csv":   {"csv", "text/csv; charset=utf-8"},
	"json":  {"json", "application/json"},
	"sarif": {"sarif", "application/sarif+json"},
	"ocsf":  {"ocsf.json", "application/json"},
}

// New checks the options and prepares the exporter: the frameworks and formats are
// looked up, and for S3 the AWS configuration is loaded (no call is made yet).
func New(ctx context.Context, o Options) (*Exporter, error) {
	if o.Store == nil || o.Log == nil {
		return nil, errors.New("report export: the store and its audit log are required")
	}
	if len(o.Frameworks) == 0 || len(o.Formats) == 0 {
		return nil, errors.New("report export: name at least one framework and one format")
	}
	e := &Exporter{keep: o.Keep, o: o, log: o.Logger}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.keep == 0 {
		e.keep = DefaultKeep
	}
	if e.keep < 0 {
		return nil, fmt.Errorf("report export: keep %d: want at least 1 report of each framework and format", o.Keep)
	}
	for _, id := range o.Frameworks {
		fw, err := compliance.Lookup(id)
		if err != nil {
			return nil, fmt.Errorf("report export: %w", err)
		}
		if !slices.ContainsFunc(e.frameworks, func(f *compliance.Framework) bool { return f.ID == fw.ID }) {
			e.frameworks = append(e.frameworks, fw)
		}
	}
	for _, name := range o.Formats {
		w, err := render.New(name)
		if err != nil {
			return nil, fmt.Errorf("report export: %w", err)
		}
		name = strings.ToLower(name)
		files, ok := formatFiles[name]
		if !ok {
			return nil, fmt.Errorf("report export: format %q has no file extension here: add it to formatFiles", name)
		}
		if !slices.ContainsFunc(e.formats, func(f format) bool { return f.name == name }) {
			e.formats = append(e.formats, format{name: name, ext: files[0], contentType: files[1], w: w})
		}
	}
	var err error
	if e.dest, err = ParseDestination(o.Destination); err != nil {
		return nil, fmt.Errorf("report export: %w", err)
	}
	if !e.dest.IsS3() {
		e.sink = dirSink{root: e.dest.Dir}
		return e, nil
	}
	client, region, err := s3Client(ctx, o)
	if err != nil {
		return nil, err
	}
	e.sink = s3Sink{client: client, bucket: e.dest.Bucket, prefix: e.dest.Prefix, region: region}
	return e, nil
}

// s3Client makes the S3 client of the options.
func s3Client(ctx context.Context, o Options) (*s3.Client, string, error) {
	var cfg aws.Config
	if o.AWS != nil {
		cfg = o.AWS.Copy()
	} else {
		var err error
		if cfg, err = awsconfig.LoadDefaultConfig(ctx); err != nil {
			return nil, "", fmt.Errorf("report export: load AWS configuration: %w", awsapi.Redact(err))
		}
	}
	if o.Region != "" {
		cfg.Region = o.Region
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	// The standard chain asks for a CRC32 of every upload and checks it on reads; a
	// configuration built in code leaves both unset, and the SDK would then send none.
	if cfg.RequestChecksumCalculation == aws.RequestChecksumCalculationUnset {
		cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
	}
	if cfg.ResponseChecksumValidation == aws.ResponseChecksumValidationUnset {
		cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.UsePathStyle = so.BaseEndpoint != nil
	})
	return client, cfg.Region, nil
}

// Destination is where the exporter writes.
func (e *Exporter) Destination() Destination { return e.dest }

// Result is what one run did.
type Result struct {
	// At is the time the reports describe and are named after.
	At time.Time
	// Reports are one per framework and format, in the order of the options.
	Reports []Report
}

// Report is one framework's report in one format.
type Report struct {
	Framework, Format string
	// Location is where the report was (or was to be) written: a path or an s3:// URL.
	Location string
	Bytes    int
	// Pruned are the older reports removed, oldest first.
	Pruned []string
	// Err is why the report was not written, or (with the report written) why the older
	// ones could not all be pruned; nil when both went well.
	Err error
}

// Failed returns the reports whose Err is set.
func (r Result) Failed() []Report {
	var out []Report
	for _, rep := range r.Reports {
		if rep.Err != nil {
			out = append(out, rep)
		}
	}
	return out
}

// Run writes every framework's report in every format as the posture stood at at (zero:
// now), then prunes each folder to the newest Keep reports of the format. Each
// framework's evidence is gathered once. A framework or format that fails is recorded
// in the Result and the others are still written; the error then names each failure.
func (e *Exporter) Run(ctx context.Context, at time.Time) (Result, error) {
	if at.IsZero() {
		now := time.Now
		if e.o.Evidence.Now != nil {
			now = e.o.Evidence.Now
		}
		at = now()
	}
	// A name holds whole seconds: the report describes the second it is named after.
	at = at.UTC().Truncate(time.Second)
	res := Result{At: at}
	for _, fw := range e.frameworks {
		o := e.o.Evidence
		o.At = at
		doc, gerr := evidence.Gather(ctx, e.o.Store, e.o.Log, fw, o)
		for _, f := range e.formats {
			rep := Report{Framework: fw.ID, Format: f.name}
			rel := fw.ID + "/" + fw.ID + "-" + at.Format(TimeLayout) + "." + f.ext
			if gerr != nil {
				rep.Location, rep.Err = e.location(rel), fmt.Errorf("gather the evidence of %s: %w", fw.ID, gerr)
			} else {
				e.write(ctx, &rep, rel, f, doc)
			}
			if rep.Err != nil {
				e.log.Error("report failed", "framework", fw.ID, "format", f.name, "to", rep.Location, "err", rep.Err)
			}
			res.Reports = append(res.Reports, rep)
		}
	}
	failed := res.Failed()
	e.log.Info("reports exported", "at", at, "to", e.dest.String(), "reports", len(res.Reports)-len(failed), "failed", len(failed))
	if len(failed) == 0 {
		return res, nil
	}
	errs := make([]error, len(failed))
	for i, r := range failed {
		errs[i] = fmt.Errorf("%s %s: %w", r.Framework, r.Format, r.Err)
	}
	return res, fmt.Errorf("export reports at %s to %s: %d of %d failed: %w", at.Format(time.RFC3339), e.dest, len(failed), len(res.Reports), errors.Join(errs...))
}

// location is where rel is written, for a report that never got that far.
func (e *Exporter) location(rel string) string {
	if e.dest.IsS3() {
		return "s3://" + e.dest.Bucket + "/" + strings.TrimPrefix(e.dest.Prefix+"/"+rel, "/")
	}
	return filepath.Join(e.dest.Dir, filepath.FromSlash(rel))
}

// write renders doc in f, stores it at rel and prunes the folder.
func (e *Exporter) write(ctx context.Context, rep *Report, rel string, f format, doc *compliance.Document) {
	rep.Location = e.location(rel)
	// Rendered whole before anything is written: a writer that fails half-way leaves no
	// file behind.
	var buf bytes.Buffer
	if err := f.w.Write(&buf, doc); err != nil {
		rep.Err = fmt.Errorf("render %s as %s: %w", rep.Framework, f.name, err)
		return
	}
	loc, err := e.sink.put(ctx, rel, buf.Bytes(), f.contentType)
	rep.Location = loc
	if err != nil {
		rep.Err = err
		return
	}
	rep.Bytes = buf.Len()
	e.log.Info("report written", "framework", rep.Framework, "format", f.name, "to", loc, "bytes", rep.Bytes)
	rep.Pruned, rep.Err = e.prune(ctx, rep.Framework, f, rel)
}

// prune removes the reports of framework fw in format f beyond the newest Keep, the one
// just written (rel) always among those kept. Only names of the exact form
// <fw>-<time>.<ext> count: anything else in the folder is never touched.
func (e *Exporter) prune(ctx context.Context, fw string, f format, rel string) ([]string, error) {
	names, err := e.sink.list(ctx, fw, fw+"-")
	if err != nil {
		return nil, fmt.Errorf("prune the %s reports of %s: %w", f.name, fw, err)
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(fw) + `-\d{8}T\d{6}Z\.` + regexp.QuoteMeta(f.ext) + `$`)
	written := strings.TrimPrefix(rel, fw+"/")
	var older []string
	for _, n := range names {
		if n != written && re.MatchString(n) {
			if _, err := time.Parse(TimeLayout, strings.TrimSuffix(strings.TrimPrefix(n, fw+"-"), "."+f.ext)); err == nil {
				older = append(older, n)
			}
		}
	}
	// The time is fixed-width UTC: the names sort as the times do, newest last.
	slices.Sort(older)
	excess := len(older) - (e.keep - 1)
	if excess <= 0 {
		return nil, nil
	}
	var pruned []string
	var errs []error
	for _, n := range older[:excess] {
		loc, err := e.sink.remove(ctx, fw+"/"+n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pruned = append(pruned, loc)
		e.log.Info("report pruned", "framework", fw, "format", f.name, "removed", loc, "keep", e.keep)
	}
	if len(errs) > 0 {
		return pruned, fmt.Errorf("prune the %s reports of %s: %w", f.name, fw, errors.Join(errs...))
	}
	return pruned, nil
}
