// Package sinks builds the places findings are sent to from the config's export:
// section: AWS Security Hub through the AWS SDK's standard chain, Google Security Command
// Center through the default credentials, each at its endpoint when one is set (a
// simulator). It is what warden serve's export task and `warden report --to` share.
package sinks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/securityhub"

	securitycenter "cloud.google.com/go/securitycenter/apiv1"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/publish"
	publishscc "github.com/warden-sec/warden/publish/scc"
	publishsh "github.com/warden-sec/warden/publish/securityhub"
	"github.com/warden-sec/warden/store"
)

// The names of the places, as `warden report --to` takes them.
const (
	SecurityHub = "securityhub"
	SCC         = "scc"
)

// Names are the places findings can be sent to.
var Names = []string{SecurityHub, SCC}

// Sinks are the places the config names, open.
type Sinks struct {
	List   []publish.Sink
	closer []func() error
}

// Close closes the clients.
func (s *Sinks) Close() error {
	var errs []error
	for _, c := range s.closer {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// Open builds the sinks of the export: section ex; with to, only that one (securityhub
// or scc), which ex must configure. It makes no call yet.
func Open(ctx context.Context, ex *config.Export, to string) (*Sinks, error) {
	if to != "" && to != SecurityHub && to != SCC {
		return nil, fmt.Errorf("unknown place %q (want %s)", to, strings.Join(Names, " or "))
	}
	if to != "" && (ex == nil || (to == SecurityHub && ex.SecurityHub == nil) || (to == SCC && ex.SCC == nil)) {
		return nil, fmt.Errorf("the config has no export.%s section: it names where %s findings go (docs/integrations.md)", to, to)
	}
	out := &Sinks{}
	if ex == nil {
		return out, nil
	}
	if sh := ex.SecurityHub; sh != nil && (to == "" || to == SecurityHub) {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("security hub: load AWS configuration: %w", awsapi.Redact(err))
		}
		if sh.Region != "" {
			cfg.Region = sh.Region
		}
		if cfg.Region == "" {
			return nil, errors.New("security hub: no region: set export.securityhub.region (or AWS_REGION)")
		}
		client := securityhub.NewFromConfig(cfg, func(o *securityhub.Options) {
			if sh.Endpoint != "" {
				o.BaseEndpoint = aws.String(sh.Endpoint)
			}
		})
		s, err := publishsh.New(client, publishsh.Options{Region: cfg.Region, Account: sh.Account, All: sh.All})
		if err != nil {
			return nil, err
		}
		out.List = append(out.List, s)
	}
	if sc := ex.SCC; sc != nil && (to == "" || to == SCC) {
		_, rpc, err := gcpapi.ClientOptions(sc.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("security command center: %w", err)
		}
		client, err := securitycenter.NewClient(ctx, rpc...)
		if err != nil {
			_ = out.Close()
			return nil, fmt.Errorf("security command center: create the client: %w", err)
		}
		out.closer = append(out.closer, client.Close)
		s, err := publishscc.New(client, publishscc.Options{Organization: sc.Organization, All: sc.All})
		if err != nil {
			_ = out.Close()
			return nil, err
		}
		out.List = append(out.List, s)
	}
	return out, nil
}

// Run sends what changed to every sink of s at now, and logs each sink's result.
func (s *Sinks) Run(ctx context.Context, st *store.Store, now time.Time, log *slog.Logger) ([]publish.Result, publish.Source, error) {
	res, src, err := publish.Sweep(ctx, st, s.List, now)
	for _, r := range res {
		log.Info("findings exported", "sink", r.Sink, "findings", r.Considered, "unchanged", r.Unchanged, "sent", r.Sent,
			"resolved", r.Resolved, "refused", len(r.Refused), "batches", r.Batches)
	}
	return res, src, err
}

// Report is `warden report --to`: the findings the store at dbPath holds, as they stand
// (the daemon's state, else the latest scan), sent to the place to (securityhub or scc)
// that the config file's export: section configures, what changed only; one line a
// sink on w says what was done. A refused finding makes it fail, after the others were
// sent.
func Report(ctx context.Context, configFile, dbPath, to string, w io.Writer) error {
	cfg, err := config.LoadOptional(configFile)
	if err != nil {
		return err
	}
	s, err := Open(ctx, cfg.Export, to)
	if err != nil {
		return fmt.Errorf("--to %s: %w", to, err)
	}
	defer s.Close()
	// Reading the history never creates one: a misspelt --db is an error.
	st, err := cfg.OpenStore(ctx, dbPath, false)
	if err != nil {
		return err
	}
	defer st.Close()
	res, src, err := s.Run(ctx, st, time.Now(), slog.New(slog.DiscardHandler))
	for _, r := range res {
		fmt.Fprintf(w, "warden: %s (from the %s)\n", r, src)
		for _, f := range r.Refused {
			fmt.Fprintf(w, "warden: refused: %s %s on %s: %s\n", f.Fingerprint, f.Policy, termesc.Escape(f.Resource), termesc.Escape(f.Reason))
		}
		if err == nil && len(r.Refused) > 0 {
			err = fmt.Errorf("%s refused %d findings (sent again next time)", r.Sink, len(r.Refused))
		}
	}
	return err
}
