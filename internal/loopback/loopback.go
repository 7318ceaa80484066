// Package loopback tells whether an address stays on this machine: the one check behind
// every listener warden refuses to expose without being told (warden sim, warden serve,
// the dashboard's authentication default) and the ACME http-01 challenge's bind address.
package loopback

import "net"

// Host reports whether host is "localhost" or a loopback IP (127.0.0.0/8, ::1).
func Host(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr reports whether a host:port listen address is on loopback. An address without a
// host (":8080", every interface) or that does not parse is not.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && Host(host)
}
