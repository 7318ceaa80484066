package cloudsim

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// ServeOptions say what `warden sim` serves, and where.
type ServeOptions struct {
	// World is the world file to serve; empty serves an empty account.
	World string
	// Listen is the address to listen on (see loopback.Addr).
	Listen string
	// Latency, when set, replaces the world's latency added to every call.
	Latency time.Duration
	Logger  *slog.Logger
	// Serving, when set, is called once the simulator listens, with the world it serves
	// and its endpoint.
	Serving func(w *World, url string)
}

// Serve serves a world until ctx is done. Calls in flight then get up to 5 s to finish;
// connections that carry none (a client's keep-alive or gRPC connection) are closed at
// once, so that a stop does not wait for clients to hang up.
func Serve(ctx context.Context, o ServeOptions) error {
	w := &World{}
	if o.World != "" {
		var err error
		if w, err = LoadWorld(o.World); err != nil {
			return err
		}
	}
	if o.Latency > 0 {
		w.Latency = Duration(o.Latency)
	}
	sim, err := New(w, Options{Logger: o.Logger})
	if err != nil {
		return fmt.Errorf("world %s: %w", o.World, err)
	}
	srv, err := sim.Listen(o.Listen)
	if err != nil {
		return err
	}
	if o.Serving != nil {
		o.Serving(w, srv.URL)
	}
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(stop)
}
