//go:build !unix

package profile

// onRotate does nothing where there is no SIGUSR1.
func onRotate(func(n int)) (stop func()) { return func() {} }
