package serve

import (
	"os"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/gates/sign"
)

// signingGate is the gate serve's channels (the dashboard, Slack) decide through. In
// checked mode (the default) it signs each decision with the replica's key
// ($WARDEN_REPLICA_KEY, else gates.replica_key_file, else replica.key beside the default
// database, made on first use), naming the channel and the identity the channel verified; it warns when that
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
	s, path, err := replicaSigner(gc, os.Getenv(sign.ReplicaKeyEnv))
	if err != nil {
		return nil, err
	}
	fp := sign.Fingerprint(s.PublicKey())
	if !gc.ListsReplicaKey(s.PublicKey()) {
		o.Logger.Warn("this replica's signing key is not listed under gates.signers."+sign.Replicas+": web and Slack decisions are refused until it is",
			"key", sign.AuthorizedKey(s.PublicKey()), "fingerprint", fp, "from", path)
	} else {
		o.Logger.Info("web and Slack decisions are signed by this replica", "fingerprint", fp)
	}
	return o.Gate.WithSigner(s), nil
}

// replicaSigner is the replica's signing key: from $WARDEN_REPLICA_KEY (env) when set,
// else the key file (gc.ReplicaKeyPath), made on first use; from says which, for the
// logs.
func replicaSigner(gc gates.Config, env string) (s ssh.Signer, from string, err error) {
	if env != "" {
		s, err = sign.ParsePrivateKey([]byte(env), "$"+sign.ReplicaKeyEnv)
		return s, "$" + sign.ReplicaKeyEnv, err
	}
	file, err := gc.ReplicaKeyPath()
	if err != nil {
		return nil, "", err
	}
	s, err = sign.LoadOrCreateKey(file)
	return s, file, err
}
