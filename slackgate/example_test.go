package slackgate_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/serve"
	"github.com/warden-sec/warden/slackgate"
	"github.com/warden-sec/warden/store"
)

// Example shows how warden serve wires the Slack channel: the notifier runs after each
// pass of the loop (and posts, then updates, each request's message), the handler is
// mounted at POST /slack/interactions, and a decision wakes the loop.
func Example() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	dir, _ := os.MkdirTemp("", "warden-example")
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	alog := audit.New(st, audit.Options{})
	gcfg := gates.Config{Approvers: []string{"carol", "erin"}, UncheckedNames: true}
	gate := gates.New(st, alog, gcfg, nil)
	machine := remediate.New(remediate.Options{Store: st, Log: alog, Gate: gate, Gates: gcfg, Actor: "warden"})

	cfg := slackgate.Config{Channel: "C0123456789", Approvers: []string{"U0BBBBBBB"}, APIURL: "http://127.0.0.1:1/api/"}
	// In warden serve: slackgate.LoadSecrets(cfg, os.Getenv).
	secrets := slackgate.NewSecrets("xoxb-example-token", "0123456789abcdef0123456789abcdef")
	var loop *daemon.Loop
	n, err := slackgate.NewNotifier(slackgate.Options{
		Config: cfg, Identities: slackgate.Identities{"carol": {Slack: "U0CCCCCCC"}}, Secrets: secrets,
		Store: st, Gate: gate, Actions: machine,
		OnDecision: func(string) { loop.Wake() },
	})
	if err != nil {
		log.Fatal(err)
	}
	h := slackgate.NewHandler(n)
	loop = daemon.NewLoop(daemon.LoopOptions{Machine: machine, Syncers: []daemon.Syncer{n}})
	srv := serve.New(serve.Options{Routes: map[string]http.Handler{"POST /slack/interactions": h}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	done, looped := make(chan error, 1), make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln) }()
	go func() { looped <- loop.Run(ctx) }()
	// An unsigned request never reaches the gate.
	resp, err := http.Post("http://"+ln.Addr().String()+"/slack/interactions", "application/x-www-form-urlencoded", nil)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("unsigned:", resp.StatusCode)
	stop() // SIGTERM: serve drains
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	if err := <-looped; err != nil {
		log.Fatal(err)
	}
	h.Wait() // after the listener: the clicks acknowledged are decided and answered
	fmt.Println("rejected:", h.Stats().Rejected())
	// Output:
	// unsigned: 401
	// rejected: 1
}
