package config

import (
	"strings"
	"testing"
	"time"
)

func TestParse_reports(t *testing.T) {
	c, err := Parse([]byte(`reports:
  frameworks: [cis-aws-3.0, soc2]
  formats:
    - html
    - ocsf
  destination: s3://acme-audit/warden
  region: eu-west-1
  keep: 30
  every: 6h
`), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := c.Reports
	if r == nil || strings.Join(r.Frameworks, ",") != "cis-aws-3.0,soc2" || strings.Join(r.Formats, ",") != "html,ocsf" ||
		r.Destination != "s3://acme-audit/warden" || r.Region != "eu-west-1" || r.Keep != 30 || r.Every != 6*time.Hour {
		t.Errorf("reports = %+v", r)
	}
	d, err := Parse([]byte("reports:\n  frameworks: [pci-dss-4.0]\n  formats: [json]\n  destination: /var/lib/warden/reports\n"), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r := d.Reports; r.Keep != DefaultReportsKeep || r.Every != DefaultReportsEvery || r.Region != "" {
		t.Errorf("defaults: %+v, want keep %d every %v", r, DefaultReportsKeep, DefaultReportsEvery)
	}
	if none, err := Parse([]byte("db: warden.db\n"), "warden.yaml"); err != nil || none.Reports != nil {
		t.Errorf("no reports: section: %+v, %v (want none scheduled)", none.Reports, err)
	}
}

func TestParse_reportsErrorsNameTheLineAndField(t *testing.T) {
	const head = "reports:\n  frameworks: [soc2]\n  formats: [json]\n"
	const dest = "  destination: /srv/reports\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown framework", "reports:\n  frameworks:\n    - soc2\n    - cis-aws-30\n  formats: [json]\n" + dest,
			`line 4: reports.frameworks[1]: unknown framework "cis-aws-30" (did you mean "cis-aws-3.0"?); known: cis-aws-3.0, cis-gcp-2.0`},
		{"framework twice", "reports:\n  frameworks: [soc2, soc2]\n  formats: [json]\n" + dest, `line 2: reports.frameworks[1]: "soc2" is listed twice`},
		{"frameworks not a list", "reports:\n  frameworks: soc2\n  formats: [json]\n" + dest, "line 2: reports.frameworks: want a list, e.g. [cis-aws-3.0, soc2]"},
		{"no frameworks", "reports:\n  frameworks: []\n  formats: [json]\n" + dest, "line 2: reports.frameworks: name at least one framework"},
		{"unknown format", "reports:\n  frameworks: [soc2]\n  formats: [html, pdf]\n" + dest, `line 3: reports.formats[1]: unknown report format "pdf"; known: html, csv, json, sarif, ocsf`},
		{"format misspelt", "reports:\n  frameworks: [soc2]\n  formats: [jsno]\n" + dest, `line 3: reports.formats[0]: unknown report format "jsno" (did you mean "json"?)`},
		{"format upper case", "reports:\n  frameworks: [soc2]\n  formats: [HTML]\n" + dest, `line 3: reports.formats[0]: "HTML": write format names in lower case ("html")`},
		{"no formats", "reports:\n  frameworks: [soc2]\n" + dest, "line 2: reports.formats: name at least one format (html, csv, json, sarif, ocsf)"},
		{"no destination", head, "line 2: reports.destination: required: a directory, or s3://bucket/prefix"},
		{"other scheme", head + "  destination: gs://acme-audit\n", `line 4: reports.destination: destination "gs://acme-audit": unsupported scheme`},
		{"bad bucket", head + "  destination: s3://Acme_Audit/x\n", `line 4: reports.destination: destination "s3://Acme_Audit/x": "Acme_Audit" is not an S3 bucket name`},
		{"bad region", head + dest + "  region: Ireland\n", `line 5: reports.region: "Ireland" is not an AWS region`},
		{"keep zero", head + dest + "  keep: 0\n", "line 5: reports.keep: 0: keep at least 1 report of each framework and format (default 10)"},
		{"keep negative", head + dest + "  keep: -3\n", "line 5: reports.keep: -3: keep at least 1"},
		{"keep not a number", head + dest + "  keep: ten\n", `line 5: reports.keep: "ten": want a whole number of reports (default 10)`},
		{"every not a duration", head + dest + "  every: daily\n", `line 5: reports.every: "daily": want a duration (24h, 6h, 90m)`},
		{"every too often", head + dest + "  every: 10s\n", "line 5: reports.every: 10s: want at least 1m0s between runs"},
		{"every negative", head + dest + "  every: -1h\n", "line 5: reports.every: -1h0m0s: want at least 1m0s"},
		{"unknown key", head + "  destinaton: /srv/reports\n", `line 4: reports.destinaton: unknown key (did you mean "destination"?)`},
		{"key twice", head + dest + "  keep: 3\n  keep: 4\n", "line 6: reports.keep: given twice (also line 5)"},
		{"not a mapping", "reports: yes\n", "line 1: reports: want a mapping with keys frameworks, formats, destination, region, keep, every"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "warden.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "warden.yaml") {
				t.Errorf("error = %v, want one naming warden.yaml and %q", err, c.want)
			}
		})
	}
	if _, err := Parse([]byte("report:\n  keep: 3\n"), "warden.yaml"); err == nil || !strings.Contains(err.Error(), "reports, export)") {
		t.Errorf("a misspelt section: %v, want the known fields listed", err)
	}
}
