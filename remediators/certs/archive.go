package certs

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/store"
)

// Kinds of archive rows.
const (
	kindPrevious = "previous" // what an action replaced
	kindIssued   = "issued"   // what an action delivered (or is about to)
	kindAccount  = "account"  // the ACME account key
)

// material is what the archive keeps of one certificate. Only its ciphertext is stored.
type material struct {
	// Cert, Chain and Key are PEM: the leaf, its issuers, its private key (empty when
	// unknown: ACM never gives one back).
	Cert  string `json:"cert,omitempty"`
	Chain string `json:"chain,omitempty"`
	Key   string `json:"key,omitempty"`
	// Files are the delivered files as they were, by role (cert, key, chain), for a
	// files target: restored byte for byte.
	Files map[string]fileCopy `json:"files,omitempty"`
}

// fileCopy is one file as it was: whether it existed, its mode, its bytes.
type fileCopy struct {
	Exists bool   `json:"exists"`
	Mode   uint32 `json:"mode,omitempty"`
	Data   []byte `json:"data,omitempty"`
}

func (m *material) wipe() {
	if m == nil {
		return
	}
	m.Key = ""
	for k, f := range m.Files {
		clear(f.Data)
		delete(m.Files, k)
	}
}

// record is one archive row, decrypted.
type record struct {
	ActionID    string
	Target      string
	Kind        string
	Serial      string
	Fingerprint string
	Created     time.Time
	M           material
}

func (r *record) hasKey() bool {
	if r.M.Key != "" {
		return true
	}
	f, ok := r.M.Files["key"]
	return ok && f.Exists && len(f.Data) > 0
}

// archive keeps certificate material in the store's cert_archive table, encrypted with
// AES-256-GCM under the configured key; each row's identity (action, target, kind,
// fingerprint) is its associated data, so a ciphertext moved to another row does not
// open.
type archive struct {
	st  *store.Store
	key *archiveKey
	now func() time.Time
}

func (a *archive) aead() (cipher.AEAD, error) {
	b, err := aes.NewCipher(a.key.k[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

func associated(actionID, target, kind, fingerprint string) []byte {
	return []byte("warden/cert_archive/v1\x00" + actionID + "\x00" + target + "\x00" + kind + "\x00" + fingerprint)
}

// put writes a row. An existing row of the same action and kind is kept (replace false:
// the first archive of what was there wins) or overwritten (replace true).
func (a *archive) put(ctx context.Context, r *record) error { return a.write(ctx, r, false) }

func (a *archive) replace(ctx context.Context, r *record) error { return a.write(ctx, r, true) }

func (a *archive) write(ctx context.Context, r *record, replace bool) error {
	plain, err := json.Marshal(r.M)
	if err != nil {
		return fmt.Errorf("archive %s of action %s: encode: %w", r.Kind, r.ActionID, err)
	}
	defer clear(plain)
	g, err := a.aead()
	if err != nil {
		return fmt.Errorf("archive %s of action %s: %w", r.Kind, r.ActionID, err)
	}
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("archive %s of action %s: nonce: %w", r.Kind, r.ActionID, err)
	}
	ct := g.Seal(nil, nonce, plain, associated(r.ActionID, r.Target, r.Kind, r.Fingerprint))
	conflict := "DO NOTHING"
	if replace {
		conflict = "DO UPDATE SET target = excluded.target, serial = excluded.serial, fingerprint = excluded.fingerprint, " +
			"has_key = excluded.has_key, created_at = excluded.created_at, nonce = excluded.nonce, ciphertext = excluded.ciphertext"
	}
	hasKey := 0
	if r.hasKey() {
		hasKey = 1
	}
	err = a.st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cert_archive (action_id, target, kind, serial, fingerprint, has_key, created_at, nonce, ciphertext)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (action_id, kind) `+conflict,
			r.ActionID, r.Target, r.Kind, r.Serial, r.Fingerprint, hasKey, store.FormatTime(a.now()), nonce, ct)
		return err
	})
	if err != nil {
		return fmt.Errorf("archive %s of action %s: %w", r.Kind, r.ActionID, err)
	}
	return nil
}

// get reads the row of an action and kind; nil when there is none.
func (a *archive) get(ctx context.Context, actionID, kind string) (*record, error) {
	var out *record
	err := a.st.Read(ctx, func(q *store.Reader) error {
		row := q.QueryRowContext(ctx, `SELECT target, serial, fingerprint, created_at, nonce, ciphertext FROM cert_archive
			WHERE action_id = ? AND kind = ?`, actionID, kind)
		r, err := a.scan(row, actionID, kind)
		out = r
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read the %s certificate of action %s from the archive: %w", kind, actionID, err)
	}
	return out, nil
}

// holdsKey reports whether the archive holds the private key of the certificate of this
// serial that warden delivered to target: what an ACM rollback needs.
func (a *archive) holdsKey(ctx context.Context, target, serial string) (bool, error) {
	var n int
	err := a.st.Read(ctx, func(q *store.Reader) error {
		return q.QueryRowContext(ctx, `SELECT COUNT(*) FROM cert_archive WHERE target = ? AND serial = ? AND has_key = 1`, target, serial).Scan(&n)
	})
	if err != nil {
		return false, fmt.Errorf("look up certificate %s in the archive: %w", serial, err)
	}
	return n > 0, nil
}

// keyFor finds the private key of a certificate warden delivered to target earlier (by
// the SHA-256 fingerprint of its DER); "" when warden never held it.
func (a *archive) keyFor(ctx context.Context, target, fingerprint string) (string, error) {
	var key string
	err := a.st.Read(ctx, func(q *store.Reader) error {
		rows, err := q.QueryContext(ctx, `SELECT action_id, kind FROM cert_archive
			WHERE target = ? AND fingerprint = ? AND has_key = 1 ORDER BY id DESC`, target, fingerprint)
		if err != nil {
			return err
		}
		type id struct{ action, kind string }
		var ids []id
		for rows.Next() {
			var i id
			if err := rows.Scan(&i.action, &i.kind); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, i)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, i := range ids {
			row := q.QueryRowContext(ctx, `SELECT target, serial, fingerprint, created_at, nonce, ciphertext FROM cert_archive
				WHERE action_id = ? AND kind = ?`, i.action, i.kind)
			r, err := a.scan(row, i.action, i.kind)
			if err != nil {
				return err
			}
			if r == nil {
				continue
			}
			k := r.M.Key
			if k == "" {
				k = string(r.M.Files["key"].Data)
			}
			r.M.wipe()
			if k != "" {
				key = k
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("look up the key of certificate %s in the archive: %w", fingerprint, err)
	}
	return key, nil
}

func (a *archive) scan(row *sql.Row, actionID, kind string) (*record, error) {
	r := &record{ActionID: actionID, Kind: kind}
	var created string
	var nonce, ct []byte
	if err := row.Scan(&r.Target, &r.Serial, &r.Fingerprint, &created, &nonce, &ct); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return nil, err
	}
	r.Created, _ = store.ParseTime(created)
	g, err := a.aead()
	if err != nil {
		return nil, err
	}
	if len(nonce) != g.NonceSize() {
		return nil, errors.New("a row with a malformed nonce")
	}
	plain, err := g.Open(nil, nonce, ct, associated(actionID, r.Target, kind, r.Fingerprint))
	if err != nil {
		return nil, errors.New("the row does not decrypt: another archive key, or the row was altered")
	}
	defer clear(plain)
	if err := json.Unmarshal(plain, &r.M); err != nil {
		return nil, errors.New("the decrypted row is not an archive record")
	}
	return r, nil
}
