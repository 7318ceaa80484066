package collect_test

import (
	"context"
	"testing"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors/tlsprobe"
)

func TestOpen_readsEndpointsAgainEvenWithoutTargets(t *testing.T) {
	c, err := collect.Open(context.Background(), collect.Targets{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Sessions != nil || c.GCP != nil {
		t.Errorf("no cloud named, but clients were made: %+v", c)
	}
	if len(c.Readers) != 1 {
		t.Fatalf("%d readers, want the TLS prober alone", len(c.Readers))
	}
	if _, ok := c.Readers[0].(*tlsprobe.Collector); !ok {
		t.Errorf("reader %T, want the TLS prober", c.Readers[0])
	}
}

func TestOpen_namesAMalformedEndpoint(t *testing.T) {
	if _, err := collect.Open(context.Background(), collect.Targets{TLS: []string{"host:notaport"}}); err == nil {
		t.Fatal("a malformed TLS endpoint was accepted")
	}
}
