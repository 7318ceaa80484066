package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"

	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/internal/loopback"
)

// ErrNotLoopback is the error of a listen address beyond this machine that the config
// does not allow (serve.allow_remote).
var ErrNotLoopback = errors.New("not a loopback address")

// CheckServe is what warden serve refuses of the config before it starts, listening on
// listen (its --listen flag; "" for serve.listen, else DefaultServeListen): an address
// beyond loopback without serve.allow_remote, and the dashboard's authentication off
// beyond loopback. warden config check reports the same problems (for serve.listen),
// so that a config it passes is one serve starts on. Every problem is joined in the
// error; those of the address wrap ErrNotLoopback.
func (c *Config) CheckServe(listen string) error {
	var errs []error
	for _, e := range c.serveProblems(listen) {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// serveProblems are CheckServe's problems, each located in the file.
func (c *Config) serveProblems(listen string) []*Error {
	addr := cmp.Or(listen, c.Serve.Listen, DefaultServeListen)
	if loopback.Addr(addr) {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil && listen == "" {
		return nil // not host:port: validate says so
	}
	field, line := "serve.listen", c.lines["@serve.listen"]
	if listen != "" {
		field, line = "--listen", 0
	}
	var errs []*Error
	if !c.Serve.AllowRemote {
		errs = append(errs, &Error{File: c.File, Line: line, Field: field, Err: ErrNotLoopback,
			Msg: fmt.Sprintf("%s is %v: warden serve refuses it unless serve.allow_remote is true (serving beyond this machine is an explicit choice)", addr, ErrNotLoopback)})
	}
	if c.Dashboard.IsEnabled() && c.Dashboard.Auth == dashboard.AuthOff {
		errs = append(errs, &Error{File: c.File, Line: cmp.Or(c.lines["@dashboard.auth"], c.lines["@dashboard"]), Field: "dashboard.auth",
			Msg: fmt.Sprintf("off is allowed only when warden serve listens on loopback, and it listens on %s (%s): anyone who reaches the pages would act as its user; use auto or required", addr, field)})
	}
	return errs
}
