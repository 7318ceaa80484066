package certs

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	"github.com/go-acme/lego/v5/certcrypto"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
)

// target is where a certificate lives: an ACM certificate, or a server's files.
type target interface {
	fmt.Stringer
	// id names the target in the archive (the resource uid).
	id() string
	// read returns what is in place now, its key only where the target gives it.
	read(ctx context.Context) (*current, error)
	// holds reports whether cur is m, whole.
	holds(cur *current, m *material) bool
	// deliver puts a newly issued certificate in place; restore puts back what was
	// archived before; settle finishes a delivery already in place (the reload).
	deliver(ctx context.Context, m *material) error
	restore(ctx context.Context, m *material) error
	settle(ctx context.Context) error
}

// current is what a target holds now.
type current struct {
	leaf *x509.Certificate // nil when there is none
	// consistent is false when the key in place does not match the certificate.
	consistent bool
	m          material
}

func (r *Renew) target(a remediators.Action, b before) (target, error) {
	switch {
	case b.ACM != "" && b.Files == nil:
		if r.sessions == nil {
			return nil, errors.New("no AWS sessions: this warden was not given AWS credentials")
		}
		if a.Region == "" || a.Region == "global" {
			return nil, fmt.Errorf("action %s: ACM certificate %s has no region", a.ID, b.ACM)
		}
		return &acmTarget{r: r, a: a, arn: b.ACM}, nil
	case b.Files != nil && b.ACM == "":
		name := strings.TrimPrefix(a.Target, "tls://")
		t, ok := r.cfg.Targets[name]
		if !ok {
			return nil, fmt.Errorf("action %s: %s is no longer in certs.targets: a fresh plan is needed", a.ID, name)
		}
		if t.Files.Cert != b.Files.Cert || t.Files.Key != b.Files.Key || t.Files.Chain != b.Files.Chain {
			return nil, fmt.Errorf("action %s: certs.targets.%s.files changed since the plan: a fresh plan is needed", a.ID, name)
		}
		return &fileTarget{uid: a.Target, files: t.Files, reload: t.Reload}, nil
	}
	return nil, fmt.Errorf("action %s: the before-state names no delivery (acm or files)", a.ID)
}

// acmTarget is an imported ACM certificate, re-imported under its ARN.
type acmTarget struct {
	r   *Renew
	a   remediators.Action
	arn string
}

func (t *acmTarget) String() string { return "ACM certificate " + t.arn }
func (t *acmTarget) id() string     { return t.arn }

func (t *acmTarget) client(ctx context.Context) (*acm.Client, error) {
	acct, err := t.r.sessions.Account(ctx, t.a.Account)
	if err != nil {
		return nil, fmt.Errorf("open account %s: %w", t.a.Account, err)
	}
	return acct.ACM(t.a.Region), nil
}

func (t *acmTarget) read(ctx context.Context) (*current, error) {
	cl, err := t.client(ctx)
	if err != nil {
		return nil, err
	}
	out, err := cl.GetCertificate(ctx, &acm.GetCertificateInput{CertificateArn: aws.String(t.arn)})
	if awsapi.IsNotFound(err) {
		return nil, fmt.Errorf("%s is gone: a fresh plan is needed", t)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", t, awsapi.Redact(err))
	}
	c := &current{consistent: true, m: material{Cert: aws.ToString(out.Certificate), Chain: aws.ToString(out.CertificateChain)}}
	if c.leaf, err = parseLeaf(c.m.Cert); err != nil {
		return nil, fmt.Errorf("read %s: %w", t, err)
	}
	return c, nil
}

func (t *acmTarget) holds(cur *current, m *material) bool {
	leaf, err := parseLeaf(m.Cert)
	return err == nil && cur.leaf != nil && bytes.Equal(cur.leaf.Raw, leaf.Raw)
}

func (t *acmTarget) deliver(ctx context.Context, m *material) error { return t.importCert(ctx, m) }
func (t *acmTarget) restore(ctx context.Context, m *material) error { return t.importCert(ctx, m) }
func (t *acmTarget) settle(context.Context) error                   { return nil }

func (t *acmTarget) importCert(ctx context.Context, m *material) error {
	cl, err := t.client(ctx)
	if err != nil {
		return err
	}
	in := &acm.ImportCertificateInput{CertificateArn: aws.String(t.arn), Certificate: []byte(m.Cert), PrivateKey: []byte(m.Key)}
	if m.Chain != "" {
		in.CertificateChain = []byte(m.Chain)
	}
	defer clear(in.PrivateKey)
	if _, err := cl.ImportCertificate(ctx, in); err != nil {
		return fmt.Errorf("re-import %s: %w", t, awsapi.Redact(err))
	}
	return nil
}

// fileTarget is the PEM files of a server, and the command that makes it read them.
type fileTarget struct {
	uid    string
	files  Files
	reload []string
}

func (t *fileTarget) String() string {
	return "the certificate files of " + t.uid + " (" + t.files.Cert + ")"
}
func (t *fileTarget) id() string { return t.uid }

// roles are the files in the order they are written: the certificate last, so that a
// server reading it finds its key and chain already in place.
func (t *fileTarget) roles() []string {
	if t.files.Chain != "" {
		return []string{"chain", "key", "cert"}
	}
	return []string{"key", "cert"}
}

func (t *fileTarget) path(role string) string {
	switch role {
	case "cert":
		return t.files.Cert
	case "key":
		return t.files.Key
	}
	return t.files.Chain
}

func (t *fileTarget) read(context.Context) (*current, error) {
	c := &current{m: material{Files: map[string]fileCopy{}}}
	for _, role := range t.roles() {
		p := t.path(role)
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			c.m.Files[role] = fileCopy{}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s file: %w", role, err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %s file: %w", role, err)
		}
		c.m.Files[role] = fileCopy{Exists: true, Mode: uint32(st.Mode().Perm()), Data: data}
	}
	cert := c.m.Files["cert"]
	if !cert.Exists {
		return c, nil
	}
	leaf, err := parseLeaf(string(cert.Data))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", t.files.Cert, err)
	}
	c.leaf = leaf
	if k := c.m.Files["key"]; k.Exists {
		if key, err := certcrypto.ParsePEMPrivateKey(k.Data); err == nil {
			pub, ok := leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
			c.consistent = ok && pub.Equal(key.Public())
		}
	}
	return c, nil
}

// render is the bytes each file gets for m: an issued certificate (the full chain in the
// certificate file when no chain file is configured), or archived files as they were.
func (t *fileTarget) render(m *material) map[string]fileCopy {
	if len(m.Files) > 0 {
		return m.Files
	}
	out := map[string]fileCopy{
		"key":  {Exists: true, Mode: 0o600, Data: []byte(m.Key)},
		"cert": {Exists: true, Mode: 0o600, Data: []byte(m.Cert)},
	}
	if t.files.Chain != "" {
		out["chain"] = fileCopy{Exists: true, Mode: 0o600, Data: []byte(m.Chain)}
	} else {
		out["cert"] = fileCopy{Exists: true, Mode: 0o600, Data: []byte(m.Cert + m.Chain)}
	}
	return out
}

func (t *fileTarget) holds(cur *current, m *material) bool {
	want := t.render(m)
	for _, role := range t.roles() {
		w, g := want[role], cur.m.Files[role]
		if w.Exists != g.Exists || !bytes.Equal(w.Data, g.Data) {
			return false
		}
	}
	return true
}

func (t *fileTarget) deliver(ctx context.Context, m *material) error {
	if err := t.write(t.render(m), true); err != nil {
		return err
	}
	return t.settle(ctx)
}

func (t *fileTarget) restore(ctx context.Context, m *material) error {
	if err := t.write(t.render(m), false); err != nil {
		return err
	}
	return t.settle(ctx)
}

func (t *fileTarget) write(files map[string]fileCopy, fresh bool) error {
	for _, role := range t.roles() {
		f, p := files[role], t.path(role)
		if !f.Exists {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s file %s: %w", role, p, err)
			}
			continue
		}
		mode := fs.FileMode(f.Mode).Perm()
		if fresh || mode == 0 {
			mode = 0o600
		}
		if err := writeAtomic(p, f.Data, mode); err != nil {
			return fmt.Errorf("write %s file: %w", role, err)
		}
	}
	return nil
}

// writeAtomic replaces path with data: a temporary file in the same directory, synced,
// then renamed over it (and the directory synced), so that a reader sees the old file
// or the new one, never a part.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".warden-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// settle runs the reload command, without a shell. Its output (cut short, keys
// redacted) is in the error when it fails.
func (t *fileTarget) settle(ctx context.Context) error {
	if len(t.reload) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.reload[0], t.reload[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		text := strings.TrimSpace(redactKeys(string(out)))
		if len(text) > 512 {
			text = text[:512] + "…"
		}
		if text != "" {
			text = ": " + text
		}
		return fmt.Errorf("reload %s (%s): %w%s", t.uid, t.reload[0], err, text)
	}
	return nil
}

// parseLeaf reads the first certificate of a PEM bundle.
func parseLeaf(s string) (*x509.Certificate, error) {
	rest := []byte(s)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM certificate")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}
