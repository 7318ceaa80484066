// Package interrupt turns the signals that stop a command-line run into the cause of its
// context's cancellation, and that cause into the shell's exit code.
package interrupt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// CanceledCode is the exit code of a run cancelled without a signal: 128 + SIGINT. A run
// stopped by a signal exits 128 + its number (143 for SIGTERM).
const CanceledCode = 130

// Signal is the cause of a run cancelled by a signal.
type Signal struct{ Sig os.Signal }

func (e Signal) Error() string { return e.Sig.String() + " signal received" }

// Is makes an interruption a cancellation for errors.Is.
func (e Signal) Is(target error) bool { return target == context.Canceled }

// ExitCode is the shell's convention for a process ended by a signal: 128 + its number.
func (e Signal) ExitCode() int {
	if s, ok := e.Sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return CanceledCode
}

// ExitCodeOf is the exit code of a run whose context was cancelled with cause: the
// signal's when a signal cancelled it, else CanceledCode.
func ExitCodeOf(cause error) int {
	if in, ok := errors.AsType[Signal](cause); ok {
		return in.ExitCode()
	}
	return CanceledCode
}

// NotifyContext is signal.NotifyContext with two differences: the context's cause says
// which signal arrived (a Signal, so that the exit code can), and a second signal ends
// the process at once, so that nothing that fails to notice the cancellation can hold
// it; it says so on stderr.
func NotifyContext(parent context.Context, stderr io.Writer, sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(Signal{s})
		case <-done:
			return
		}
		select {
		case s := <-ch:
			fmt.Fprintf(stderr, "warden: %v again: exiting now, the run is incomplete\n", s)
			os.Exit(Signal{s}.ExitCode())
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
