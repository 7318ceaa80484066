package serve

import (
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/store"
)

// signingGate is the gate serve's channels (the dashboard, Slack) decide through. In
// checked mode (gates.signers listed) it signs each decision with the replica's key
// (gates.replica_key_file, else replica.key beside the default database, made on first
// use), naming the channel and the identity the channel verified; it warns when that
// key is not listed under gates.signers' @replicas, as web and Slack decisions are
// refused then. Unchecked, it is o.Gate, and serve warns that decisions are unchecked
// names.
func (o RunOptions) signingGate() (*gates.Gate, error) {
	gc := o.Config.Gates
	if w := gc.UncheckedWarning(); w != "" {
		o.Logger.Warn(w)
	}
	if !gc.Checked() || o.Gate == nil {
		return o.Gate, nil
	}
	path := gc.ReplicaKeyFile
	if path == "" {
		db, err := store.DefaultPath()
		if err != nil {
			return nil, fmt.Errorf("the replica's signing key: %w", err)
		}
		path = filepath.Join(filepath.Dir(db), "replica.key")
	}
	s, err := sign.LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	fp := sign.Fingerprint(s.PublicKey())
	listed := slices.ContainsFunc(gc.SignerKeys(sign.Replicas), func(k ssh.PublicKey) bool { return sign.Fingerprint(k) == fp })
	if !listed {
		o.Logger.Warn("this replica's signing key is not listed under gates.signers."+sign.Replicas+": web and Slack decisions are refused until it is",
			"key", sign.AuthorizedKey(s.PublicKey()), "fingerprint", fp, "file", path)
	} else {
		o.Logger.Info("web and Slack decisions are signed by this replica", "fingerprint", fp)
	}
	return o.Gate.WithSigner(s), nil
}
