// Package collectors reads the actual state of the world into snapshots. Each collector
// (AWS, GCP, TLS endpoints) reports resources and the scopes it read; a scope it could
// not read is recorded as failed, never as empty.
package collectors

import (
	"context"
	"errors"
	"sync"

	"github.com/warden-sec/warden/snapshot"
)

// Sink receives what collectors read. Implementations are safe for concurrent use.
type Sink interface {
	Resource(r snapshot.Resource) error
	Scope(s snapshot.Scope)
}

// Collector reads one kind of target.
type Collector interface {
	// Name identifies the collector in logs and errors ("tls", "aws", "gcp").
	Name() string
	// Collect reads every target, reporting each scope it attempted. It returns an error
	// only when it cannot go on at all; a failed target is a failed scope.
	Collect(ctx context.Context, sink Sink) error
}

// ErrNotFound is the error of a Read whose resource the cloud says does not exist (IAM's
// NoSuchEntity, EC2's InvalidGroup.NotFound, Google's NOT_FOUND). It is never the error
// of a read that was denied, throttled or failed: those say nothing about existence.
var ErrNotFound = errors.New("resource not found")

// ErrUnsupported is the error of a Read of a uid the collector cannot read alone (a
// resource type it reads only in bulk, or a uid that is not its own).
var ErrUnsupported = errors.New("resource cannot be read by uid")

// Reader reads one resource again, as Collect would have reported it: same uid, type,
// name, account, region, scope, tags and attributes. It is the drift re-check before a
// fix and the verification after it, so it reads only that resource, with the fewest
// calls. A resource the cloud says is gone is ErrNotFound (errors.Is); any other failure
// is another error, never ErrNotFound.
type Reader interface {
	Read(ctx context.Context, uid string) (snapshot.Resource, error)
}

// Discoverer is a collector that can name the accounts (AWS account ids, GCP project ids)
// it will read before reading them, so that a snapshot's header lists them ahead of the
// resources and policies can tell the organisation's accounts from strangers'.
type Discoverer interface {
	Discover(ctx context.Context) ([]string, error)
}

// WriterSink streams what collectors read into a snapshot writer.
type WriterSink struct {
	mu sync.Mutex
	W  *snapshot.Writer
}

// Resource implements Sink.
func (s *WriterSink) Resource(r snapshot.Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.W.Write(r)
}

// Scope implements Sink.
func (s *WriterSink) Scope(sc snapshot.Scope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.W.AddScope(sc)
}

// MemorySink keeps what collectors read in memory, for tests and small collections.
type MemorySink struct {
	mu        sync.Mutex
	Resources []snapshot.Resource
	Scopes    []snapshot.Scope
}

// Resource implements Sink.
func (s *MemorySink) Resource(r snapshot.Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Resources = append(s.Resources, r)
	return nil
}

// Scope implements Sink.
func (s *MemorySink) Scope(sc snapshot.Scope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Scopes = append(s.Scopes, sc)
}
