// Package sign makes and checks the proof of who made a gates decision: an SSH signature
// in the format of `ssh-keygen -Y sign` (namespace Namespace) over Message, the canonical
// text of the decision, verified against the public keys gates.signers lists for the
// decision's actor, as git's allowed signers are.
package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// Namespace is the sshsig namespace of a decision's signature, so that a signature made
// for another purpose (a git commit, a file) never passes for a decision.
const Namespace = "warden-decision@warden"

// Replicas is the reserved signer name whose keys sign the decisions the replicas take
// in from the web and Slack after verifying the session, token or Slack signature.
const Replicas = "@replicas"

// ReplicaKeyEnv is the variable that holds the replica's private signing key (an OpenSSH
// private key without passphrase, as ssh-keygen writes it); when set, warden serve signs
// with it instead of gates.replica_key_file: the way to give the key to replicas whose
// files are read-only (Kubernetes, from a Secret).
const ReplicaKeyEnv = "WARDEN_REPLICA_KEY"

// hash is the hash algorithm decisions are signed with.
const hash = sshsig.HashSHA512

// ErrBadSignature is a signature that does not verify against any key of the signer.
var ErrBadSignature = errors.New("the signature does not verify against the signer's keys")

// ErrUnsigned is a decision without a signature.
var ErrUnsigned = errors.New("the decision is not signed")

// Decision is what a signature binds: the request decided, the content hash of the
// action it approves (a change of the action voids the signature), who decided, through
// which channel, the vote (approve or deny) and its reason.
type Decision struct {
	Request string `json:"request"`
	Content string `json:"content"`
	Actor   string `json:"actor"`
	Channel string `json:"channel"`
	Vote    string `json:"vote"`
	Reason  string `json:"reason"`
}

// Message is the canonical text of d that is signed: a JSON object with its keys sorted,
// prefixed by the format's name, so that no two decisions share a message.
func Message(d Decision) []byte {
	m := map[string]string{"request": d.Request, "content": d.Content, "actor": d.Actor,
		"channel": d.Channel, "vote": d.Vote, "reason": d.Reason}
	b, err := json.Marshal(m) // encoding/json sorts a map's keys
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return append([]byte("warden-decision v1\n"), b...)
}

// Sign signs d with s and returns the armored signature (-----BEGIN SSH SIGNATURE-----),
// as `ssh-keygen -Y sign -n warden-decision@warden` would over Message(d).
func Sign(d Decision, s ssh.Signer) (string, error) {
	sig, err := sshsig.Sign(bytes.NewReader(Message(d)), s, hash, Namespace)
	if err != nil {
		return "", fmt.Errorf("sign the decision on %s: %w", d.Request, err)
	}
	return string(sshsig.Armor(sig)), nil
}

// Verify checks the armored signature of d against keys and returns the fingerprint of
// the key that made it. It fails with ErrUnsigned for an empty signature, ErrBadSignature
// when no key of keys made a valid signature of this decision.
func Verify(d Decision, armored string, keys []ssh.PublicKey) (string, error) {
	if strings.TrimSpace(armored) == "" {
		return "", ErrUnsigned
	}
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return "", fmt.Errorf("%w: unreadable signature: %v", ErrBadSignature, err)
	}
	if sig.Namespace != Namespace {
		return "", fmt.Errorf("%w: namespace %q, want %q", ErrBadSignature, sig.Namespace, Namespace)
	}
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	for _, k := range keys {
		if ssh.FingerprintSHA256(k) != fp {
			continue
		}
		if err := sshsig.Verify(bytes.NewReader(Message(d)), sig, k, sig.HashAlgorithm, Namespace); err != nil {
			return "", fmt.Errorf("%w: %v", ErrBadSignature, err)
		}
		return fp, nil
	}
	return "", fmt.Errorf("%w: key %s is not listed for %s", ErrBadSignature, fp, d.Actor)
}

// ParseKey reads one public key in authorized_keys form ("ssh-ed25519 AAAA… comment").
func ParseKey(line string) (ssh.PublicKey, error) {
	k, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return nil, fmt.Errorf("not an SSH public key (want an authorized_keys line such as ssh-ed25519 AAAA… name): %w", err)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("more than one key on a line: list each key as its own item")
	}
	return k, nil
}

// LoadKeyFile reads a passphrase-less private key file (OpenSSH or PEM) to sign with.
func LoadKeyFile(path string) (ssh.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the signing key: %w", err)
	}
	return ParsePrivateKey(b, path)
}

// ParsePrivateKey reads a passphrase-less private key (OpenSSH or PEM) from text; from
// names where it came from in errors (a file, $WARDEN_REPLICA_KEY), which never quote
// the key.
func ParsePrivateKey(text []byte, from string) (ssh.Signer, error) {
	s, err := ssh.ParsePrivateKey(text)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("read the signing key %s: it has a passphrase: add it to ssh-agent and leave out --sign-key", from)
		}
		return nil, fmt.Errorf("read the signing key %s: %w", from, err)
	}
	return s, nil
}

// AgentSigner finds, in the ssh-agent listening at sock ($SSH_AUTH_SOCK), a key among
// allowed (the keys listed for the actor) and returns a signer using it. The returned
// close function ends the connection to the agent.
func AgentSigner(sock string, allowed []ssh.PublicKey) (ssh.Signer, func() error, error) {
	if sock == "" {
		return nil, nil, errors.New("no ssh-agent (SSH_AUTH_SOCK is not set): give a key file with --sign-key")
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, nil, fmt.Errorf("reach the ssh-agent at %s: %w", sock, err)
	}
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("list the ssh-agent's keys: %w", err)
	}
	for _, s := range signers {
		fp := ssh.FingerprintSHA256(s.PublicKey())
		for _, k := range allowed {
			if ssh.FingerprintSHA256(k) == fp {
				return s, conn.Close, nil
			}
		}
	}
	conn.Close()
	return nil, nil, errors.New("the ssh-agent holds none of the keys gates.signers lists for you: add yours (ssh-add) or give --sign-key")
}

// Fingerprint is the SHA256 fingerprint of k, as ssh-keygen -l prints it.
func Fingerprint(k ssh.PublicKey) string { return ssh.FingerprintSHA256(k) }

// LoadOrCreateKey reads the replica's signing key, an OpenSSH private key without
// passphrase, at path; when there is none, it creates an ed25519 one (mode 0600, in a
// directory made with mode 0700) and writes its public key beside it, at path+".pub", as
// the line to list under gates.signers' @replicas. A key file others may read is
// refused, as ssh refuses one. Errors name the file, never the key.
func LoadOrCreateKey(path string) (ssh.Signer, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := createKey(path); err != nil {
			return nil, fmt.Errorf("create the replica's signing key %s: %w", path, err)
		}
	}
	return ReadReplicaKey(path)
}

// ReadReplicaKey reads the replica's signing key file at path without creating it; a
// file others may read is refused, as ssh refuses one.
func ReadReplicaKey(path string) (ssh.Signer, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read the replica's signing key: %w", err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("the replica's signing key %s is readable by others (mode %04o): chmod 600 it", path, perm)
	}
	return LoadKeyFile(path)
}

// createKey writes a new ed25519 key at path and its public key at path+".pub". The key
// is written whole to a temporary file and linked into place, which fails if path
// exists: of two replicas creating it at once, one key is published, complete, and both
// read that one (an O_EXCL create would let the loser read a file still being written).
func createKey(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	block, err := ssh.MarshalPrivateKey(priv, "warden replica")
	if err != nil {
		return err
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return err
	}
	won, err := publish(dir, path, pem.EncodeToMemory(block))
	if err != nil || !won {
		return err
	}
	line := AuthorizedKey(s.PublicKey()) + " warden-replica\n"
	_, err = publish(dir, path+".pub", []byte(line))
	return err
}

// publish writes data (mode 0600) to a temporary file in dir and links it to path unless
// path already exists, in which case the existing file wins and won is false.
func publish(dir, path string, data []byte) (won bool, err error) {
	f, err := os.CreateTemp(dir, ".replica-key-*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// AuthorizedKey is k as an authorized_keys line, as gates.signers lists it.
func AuthorizedKey(k ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}
