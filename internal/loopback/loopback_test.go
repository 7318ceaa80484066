package loopback

import "testing"

func TestAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1": true, "127.9.8.7:80": true, "[::1]:1": true, "localhost:1": true,
		"0.0.0.0:4566": false, ":4566": false, "10.1.2.3:4566": false, "[::]:80": false,
		"nohostport": false, "example.com:443": false, "": false,
	} {
		if got := Addr(addr); got != want {
			t.Errorf("Addr(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "0.0.0.0": false, "": false, "localhost.example": false} {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}
