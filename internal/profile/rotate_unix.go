//go:build unix

package profile

import (
	"os"
	"os/signal"
	"syscall"
)

// onRotate calls next(1), next(2), … at each SIGUSR1 until stop is called.
func onRotate(next func(n int)) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for n := 1; ; n++ {
			select {
			case <-c:
				next(n)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(c)
		close(done)
		<-finished
	}
}
