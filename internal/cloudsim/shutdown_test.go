package cloudsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// holdConnections opens, on srv, every kind of connection a client may leave open when
// the simulator stops: a gRPC (h2c) client after a call, an HTTP/1.1 keep-alive
// connection back in its pool, a TCP connection that never sent a request (a client's
// spare dial), and an h2c connection that sent its preface and then reads nothing (so it
// never acts on GOAWAY). It returns the raw connections, to check that they are closed.
func holdConnections(t *testing.T, srv *Server) []net.Conn {
	t.Helper()
	ctx := context.Background()
	c, err := admin.NewIamClient(ctx, option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{
		Name: "projects/-/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"}); err != nil {
		t.Fatalf("gRPC call: %v", err)
	}

	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/_sim/health")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	var raw []net.Conn
	for _, preface := range []string{"", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"} {
		nc, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		if preface != "" {
			if _, err := io.WriteString(nc, preface); err != nil {
				t.Fatal(err)
			}
		}
		raw = append(raw, nc)
	}
	// Let the server see every connection (accept, read the preface) before it stops.
	time.Sleep(50 * time.Millisecond)
	return raw
}

// TestServerShutdown_closesIdleAndLongLivedConnectionsAtOnce stops a simulator that
// clients keep connections open to: it must not wait for them (net/http waits 5 s for a
// connection that never sent a request, and h2c ones outlive GOAWAY).
func TestServerShutdown_closesIdleAndLongLivedConnectionsAtOnce(t *testing.T) {
	_, srv := startGCP(t, gcpTestWorld())
	raw := holdConnections(t, srv)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	err := srv.Shutdown(ctx)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Shutdown after %v: %v", elapsed, err)
	}
	if elapsed > time.Second {
		t.Errorf("Shutdown took %v with idle connections open, want well under 1s", elapsed)
	}
	t.Logf("stopped in %v", elapsed)
	for i, nc := range raw {
		_ = nc.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := io.Copy(io.Discard, nc); err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
			t.Errorf("connection %d still open after Shutdown: %v", i, err)
		}
	}
	if _, err := net.DialTimeout("tcp", srv.Addr, time.Second); err == nil {
		t.Error("the port still accepts connections after Shutdown")
	}
}

// TestServerShutdown_finishesCallsInFlight keeps the graceful part: a call already being
// answered when the server stops gets its whole answer, over HTTP/1.1 and over h2c gRPC.
func TestServerShutdown_finishesCallsInFlight(t *testing.T) {
	tests := []struct {
		name    string
		service string
		call    func(srv *Server) error
	}{
		{"HTTP/1.1 REST", "cloudresourcemanager", func(srv *Server) error {
			resp, err := http.Get(srv.URL + "/v3/projects/acme-prod")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil && (resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "acme-prod")) {
				err = fmt.Errorf("status %d: %s", resp.StatusCode, b)
			}
			return err
		}},
		{"h2c gRPC", "iamadmin", func(srv *Server) error {
			ctx := context.Background()
			c, err := admin.NewIamClient(ctx, option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
				option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
			if err != nil {
				return err
			}
			defer c.Close()
			sa, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{
				Name: "projects/-/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"})
			if err == nil && sa.GetProjectId() != "acme-prod" {
				err = fmt.Errorf("answer %v", sa)
			}
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := gcpTestWorld()
			w.Latency = Duration(300 * time.Millisecond)
			sim, srv := startGCP(t, w)
			got := make(chan error, 1)
			go func() { got <- tt.call(srv) }()
			for deadline := time.Now().Add(5 * time.Second); sim.CallsTo(tt.service) == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the call never arrived")
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			if err := <-got; err != nil {
				t.Errorf("the call in flight: %v", err)
			}
		})
	}
}

// TestServerShutdown_cutsCallsPastTheDeadline reports, rather than hides, a stop that had
// to cut calls still running at the deadline.
func TestServerShutdown_cutsCallsPastTheDeadline(t *testing.T) {
	w := gcpTestWorld()
	w.Latency = Duration(3 * time.Second)
	sim, srv := startGCP(t, w)
	go func() {
		if resp, err := http.Get(srv.URL + "/v3/projects/acme-prod"); err == nil {
			resp.Body.Close()
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); sim.CallsTo("cloudresourcemanager") == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call never arrived")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := srv.Shutdown(ctx)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "in flight") {
		t.Fatalf("Shutdown = %v, want a deadline error naming the calls in flight", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Shutdown returned after %v, want soon after its 200ms deadline", elapsed)
	}
}
