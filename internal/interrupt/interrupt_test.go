package interrupt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestExitCodeOf_isTheShellsCodeOfTheSignal(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  int
	}{
		{Signal{syscall.SIGINT}, 130},
		{Signal{syscall.SIGTERM}, 143},
		{fmt.Errorf("scan: %w", Signal{syscall.SIGTERM}), 143},
		{context.Canceled, CanceledCode},
		{nil, CanceledCode},
	} {
		if got := ExitCodeOf(tc.cause); got != tc.want {
			t.Errorf("ExitCodeOf(%v) = %d, want %d", tc.cause, got, tc.want)
		}
	}
}

func TestSignal_isACancellation(t *testing.T) {
	err := Signal{syscall.SIGINT}
	if !errors.Is(err, context.Canceled) {
		t.Error("a signal's cause is not context.Canceled for errors.Is")
	}
	if got, want := err.Error(), "interrupt signal received"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestNotifyContext_causeNamesTheSignal(t *testing.T) {
	ctx, stop := NotifyContext(context.Background(), io.Discard, syscall.SIGUSR1)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context was not cancelled by the signal")
	}
	if got := ExitCodeOf(context.Cause(ctx)); got != 128+int(syscall.SIGUSR1) {
		t.Errorf("exit code %d, want %d (cause %v)", got, 128+int(syscall.SIGUSR1), context.Cause(ctx))
	}
}

func TestNotifyContext_stopCancelsWithoutACause(t *testing.T) {
	ctx, stop := NotifyContext(context.Background(), io.Discard, syscall.SIGUSR2)
	stop()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause after stop = %v, want context.Canceled", context.Cause(ctx))
	}
	if _, ok := errors.AsType[Signal](context.Cause(ctx)); ok {
		t.Error("stop is not a signal, yet the cause is one")
	}
}
