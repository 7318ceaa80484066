package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
)

// Export is the export: section: where warden serve sends its findings on its own, so
// that security teams read them where they already read findings.
//
//	export:
//	  every: 15m                  # how often what changed is sent (default 15m)
//	  securityhub:                # AWS Security Hub, as a custom integration
//	    region: eu-west-1         # the hub's region
//	    account: "111111111111"   # the account the hub is in (the credentials')
//	    all: false                # every finding, not only AWS ones
//	  scc:                        # Google Security Command Center, a source of warden's own
//	    organization: "123456789012"
//	    all: false                # every finding, not only Google Cloud ones
//
// Absent, nothing is exported on a schedule (warden report --to still can). Validated as
// it is read: every error names the field and its line.
type Export struct {
	Every       time.Duration
	SecurityHub *SecurityHubExport
	SCC         *SCCExport
}

// SecurityHubExport is export.securityhub.
type SecurityHubExport struct {
	Region, Account string
	All             bool
	// Endpoint overrides Security Hub's (a simulator).
	Endpoint string
}

// SCCExport is export.scc.
type SCCExport struct {
	// Organization is the numeric id of the organization whose Security Command Center
	// holds warden's source.
	Organization string
	All          bool
	// Endpoint overrides Security Command Center's (a simulator); credentials are then
	// not sent.
	Endpoint string
}

// Defaults of the export: section.
const (
	DefaultExportEvery = 15 * time.Minute
	// MinExportEvery is the shortest schedule.
	MinExportEvery = time.Minute
)

var (
	exportKeys      = []string{"every", "securityhub", "scc"}
	securityHubKeys = []string{"region", "account", "all", "endpoint"}
	sccKeys         = []string{"organization", "all", "endpoint"}
	awsAccountID    = regexp.MustCompile(`^[0-9]{12}$`)
	gcpOrgID        = regexp.MustCompile(`^[0-9]{1,20}$`)
)

func exportError(line int, field, msg string) *yamlerr.Error {
	return &yamlerr.Error{Section: "export", Line: line, Field: field, Msg: msg}
}

// UnmarshalYAML reads the export: section and checks it. Unknown keys are errors, so that
// a typo does not leave findings unsent; every problem of the section is reported, each
// with its line.
func (e *Export) UnmarshalYAML(n *yaml.Node) error {
	out := Export{Every: DefaultExportEvery}
	var errs []error
	eachKey(n, "", exportKeys, &errs, func(k, v *yaml.Node) {
		switch k.Value {
		case "every":
			d, err := time.ParseDuration(v.Value)
			switch {
			case v.Kind != yaml.ScalarNode || err != nil:
				errs = append(errs, exportError(v.Line, "every", fmt.Sprintf("%q: want a duration (15m, 1h)", v.Value)))
			case d < MinExportEvery:
				errs = append(errs, exportError(v.Line, "every", fmt.Sprintf("%v: want at least %v between runs", d, MinExportEvery)))
			}
			out.Every = d
		case "securityhub":
			sh := &SecurityHubExport{}
			settled := eachKey(v, "securityhub.", securityHubKeys, &errs, func(k, v *yaml.Node) {
				field := "securityhub." + k.Value
				switch k.Value {
				case "region":
					sh.Region = exportScalar(v, field, &errs)
					if sh.Region != "" && !validRegion(sh.Region) {
						errs = append(errs, exportError(v.Line, field, fmt.Sprintf("%q is not an AWS region (eu-west-1, us-east-1, …)", sh.Region)))
					}
				case "account":
					sh.Account = exportScalar(v, field, &errs)
					if sh.Account != "" && !awsAccountID.MatchString(sh.Account) {
						errs = append(errs, exportError(v.Line, field, fmt.Sprintf("%q: want the 12 digits of an AWS account id, quoted", sh.Account)))
					}
				case "all":
					sh.All = exportBool(v, field, &errs)
				case "endpoint":
					sh.Endpoint = exportEndpoint(v, field, &errs)
				}
			})
			if v.Kind == yaml.MappingNode && !hasKey(v, "account") && !settled["account"] {
				errs = append(errs, exportError(k.Line, "securityhub.account", "required: the 12 digits of the account Security Hub is in"))
			}
			out.SecurityHub = sh
		case "scc":
			sc := &SCCExport{}
			settled := eachKey(v, "scc.", sccKeys, &errs, func(k, v *yaml.Node) {
				field := "scc." + k.Value
				switch k.Value {
				case "organization":
					sc.Organization = strings.TrimPrefix(exportScalar(v, field, &errs), "organizations/")
					if sc.Organization != "" && !gcpOrgID.MatchString(sc.Organization) {
						errs = append(errs, exportError(v.Line, field, fmt.Sprintf("%q: want the numeric id of a Google Cloud organization, quoted", sc.Organization)))
					}
				case "all":
					sc.All = exportBool(v, field, &errs)
				case "endpoint":
					sc.Endpoint = exportEndpoint(v, field, &errs)
				}
			})
			if v.Kind == yaml.MappingNode && !hasKey(v, "organization") && !settled["organization"] {
				errs = append(errs, exportError(k.Line, "scc.organization", "required: the numeric id of the organization"))
			}
			out.SCC = sc
		}
	})
	if len(errs) == 0 && out.SecurityHub == nil && out.SCC == nil && n.Kind == yaml.MappingNode {
		errs = append(errs, exportError(n.Line, "", "name where to export: securityhub, scc or both"))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	*e = out
	return nil
}

// eachKey calls f with each key of the mapping n and its value, after refusing a key
// given twice or not among known (with the closest known key when there is one). It
// returns the known keys a misspelt one was taken for: their absence is reported already.
func eachKey(n *yaml.Node, prefix string, known []string, errs *[]error, f func(k, v *yaml.Node)) (suggested map[string]bool) {
	suggested = map[string]bool{}
	if n.Kind != yaml.MappingNode {
		*errs = append(*errs, exportError(n.Line, strings.TrimSuffix(prefix, "."), "want a mapping with keys "+strings.Join(known, ", ")))
		return suggested
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if l, ok := seen[k.Value]; ok {
			*errs = append(*errs, exportError(k.Line, prefix+k.Value, fmt.Sprintf("given twice (also line %d)", l)))
			continue
		}
		seen[k.Value] = k.Line
		if !slices.Contains(known, k.Value) {
			msg := fmt.Sprintf("unknown key (known: %s)", strings.Join(known, ", "))
			if s := suggest.Closest(k.Value, known); s != "" {
				msg = fmt.Sprintf("unknown key (did you mean %q?)", s)
				suggested[s] = true
			}
			*errs = append(*errs, exportError(k.Line, prefix+k.Value, msg))
			continue
		}
		f(k, v)
	}
	return suggested
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func exportScalar(v *yaml.Node, field string, errs *[]error) string {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		*errs = append(*errs, exportError(v.Line, field, "want a string"))
		return ""
	}
	return strings.TrimSpace(v.Value)
}

func exportBool(v *yaml.Node, field string, errs *[]error) bool {
	if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
		*errs = append(*errs, exportError(v.Line, field, fmt.Sprintf("%q: want true or false", v.Value)))
		return false
	}
	return v.Value == "true"
}

// exportEndpoint reads an endpoint URL: http or https, with a host and no credentials.
func exportEndpoint(v *yaml.Node, field string, errs *[]error) string {
	s := exportScalar(v, field, errs)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		*errs = append(*errs, exportError(v.Line, field, "want a URL such as https://securityhub.eu-west-1.amazonaws.com"))
	case u.User != nil:
		*errs = append(*errs, exportError(v.Line, field, "holds credentials: remove them from the URL (warden takes credentials from the environment)"))
	}
	return s
}
