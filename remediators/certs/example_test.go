package certs_test

import (
	"fmt"
	"time"

	"github.com/warden-sec/warden/remediators/certs"
)

// The certs: section of warden's config, read and asked when a certificate is due.
func ExampleParseConfig() {
	cfg, err := certs.ParseConfig([]byte(`
directory: https://acme-v02.api.letsencrypt.org/directory
email: security@acme.example
challenge:
  http01: {listen: 127.0.0.1:5002}
targets:
  shop.acme.example:443:
    files: {cert: /etc/nginx/tls/shop.crt, key: /etc/nginx/tls/shop.key}
    reload: [/usr/sbin/nginx, -s, reload]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	issued := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	expires := issued.Add(90 * 24 * time.Hour)
	fmt.Println(cfg.Due(issued, expires, issued.Add(59*24*time.Hour)), cfg.Due(issued, expires, issued.Add(60*24*time.Hour)))

	_, err = certs.ParseConfig([]byte("directory: https://ca.example/dir\nchallenge: {dns01: {provider: route53}}\n"))
	fmt.Println(err)
	// Output:
	// false true
	// line 2: certs.challenge.dns01.provider: unknown DNS provider "route53": this warden knows exec
}
