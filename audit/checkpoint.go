package audit

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/warden-sec/warden/store"
)

// Checkpoint is a tree head: the log named Origin had Size entries whose tree hash
// was Root. Its text form is the body of a C2SP tlog-checkpoint:
//
//	<origin>\n<size in decimal>\n<base64 root hash>\n
//
// signed as a note (golang.org/x/mod/sumdb/note, ed25519).
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

// Text is the checkpoint's body, what its signature covers.
func (c Checkpoint) Text() string {
	return c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + base64.StdEncoding.EncodeToString(c.Root[:]) + "\n"
}

// ParseCheckpoint reads a checkpoint's body (the note's text): origin, size and root
// hash lines; extension lines after them are allowed and ignored, as C2SP says.
func ParseCheckpoint(text string) (Checkpoint, error) {
	if !strings.HasSuffix(text, "\n") {
		return Checkpoint{}, errors.New("checkpoint does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, fmt.Errorf("checkpoint has %d lines, want origin, size and root hash", len(lines))
	}
	c := Checkpoint{Origin: lines[0]}
	if c.Origin == "" {
		return Checkpoint{}, errors.New("checkpoint has an empty origin line")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || lines[1] != strconv.FormatInt(size, 10) {
		return Checkpoint{}, fmt.Errorf("checkpoint size %q is not a decimal number", lines[1])
	}
	c.Size = size
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("checkpoint root hash %q is not %d bytes of base64", lines[2], tlog.HashSize)
	}
	c.Root = tlog.Hash(root)
	return c, nil
}

// OpenCheckpoint checks a signed checkpoint's signature with v and parses its body.
func OpenCheckpoint(signed []byte, v note.Verifier) (Checkpoint, error) {
	if v == nil {
		return Checkpoint{}, errors.New("open checkpoint: no verifier key")
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("open checkpoint: %w", err)
	}
	return ParseCheckpoint(n.Text)
}

// Checkpoint signs the log's current tree head with the log's signer, stores it, and
// returns the signed note.
func (l *Log) Checkpoint(ctx context.Context) ([]byte, error) {
	if l.signer == nil {
		return nil, errors.New("sign audit checkpoint: no signing key configured")
	}
	var signed []byte
	err := l.st.InTx(ctx, func(tx *store.Tx) error {
		origin, err := l.originTx(ctx, tx)
		if err != nil {
			return err
		}
		var size int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), -1) + 1 FROM audit_entries`).Scan(&size); err != nil {
			return fmt.Errorf("read the log's size: %w", err)
		}
		root, err := tlog.TreeHash(size, hashReader(ctx, tx))
		if err != nil {
			return fmt.Errorf("tree hash of %d entries: %w", size, err)
		}
		c := Checkpoint{Origin: origin, Size: size, Root: root}
		signed, err = note.Sign(&note.Note{Text: c.Text()}, l.signer)
		if err != nil {
			return fmt.Errorf("sign: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_checkpoints (size, root, created_at, note) VALUES (?, ?, ?, ?)`,
			size, root.String(), store.FormatTime(l.now().UTC()), string(signed)); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sign audit checkpoint: %w", err)
	}
	return signed, nil
}

// LatestCheckpoint returns the newest stored checkpoint's signed note, or nil when none
// was ever signed.
func (l *Log) LatestCheckpoint(ctx context.Context) ([]byte, error) {
	var text string
	err := l.st.Read(ctx, func(r *store.Reader) error {
		return r.QueryRowContext(ctx, `SELECT note FROM audit_checkpoints ORDER BY id DESC LIMIT 1`).Scan(&text)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the latest audit checkpoint: %w", err)
	}
	return []byte(text), nil
}

// logIDKey is the audit_meta row holding the log's random id.
const logIDKey = "log_id"

// originPrefix starts the default origin line.
const originPrefix = "warden.audit/"

// originTx returns the log's origin, creating its random log id on first use.
func (l *Log) originTx(ctx context.Context, tx *store.Tx) (string, error) {
	if l.origin != "" {
		return l.checkedOrigin()
	}
	var id string
	err := tx.QueryRowContext(ctx, `SELECT value FROM audit_meta WHERE name = ?`, logIDKey).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("choose a log id: %w", err)
		}
		id = hex.EncodeToString(b[:])
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_meta (name, value) VALUES (?, ?)`, logIDKey, id); err != nil {
			return "", fmt.Errorf("store the log id: %w", err)
		}
		return originPrefix + id, nil
	}
	if err != nil {
		return "", fmt.Errorf("read the log id: %w", err)
	}
	return originPrefix + id, nil
}

// originRead returns the log's origin without creating it: "" when the log has none yet.
func (l *Log) originRead(ctx context.Context, r *store.Reader) (string, error) {
	if l.origin != "" {
		return l.checkedOrigin()
	}
	var id string
	err := r.QueryRowContext(ctx, `SELECT value FROM audit_meta WHERE name = ?`, logIDKey).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the log id: %w", err)
	}
	return originPrefix + id, nil
}

// checkedOrigin refuses a configured origin that cannot be a checkpoint's first line.
func (l *Log) checkedOrigin() (string, error) {
	if strings.ContainsAny(l.origin, "\n\r") || l.origin == "" || l.origin != strings.TrimSpace(l.origin) {
		return "", fmt.Errorf("origin %q is not one line of text", l.origin)
	}
	return l.origin, nil
}

// parseSigned parses a signed note's checkpoint body without checking its signature,
// for code that has no verifier and checks the checkpoint against the log instead.
func parseSigned(signed []byte) (Checkpoint, error) {
	// As note.Open: the signatures follow the last blank line.
	i := bytes.LastIndex(signed, []byte("\n\n"))
	if i < 0 {
		return Checkpoint{}, errors.New("not a signed note")
	}
	return ParseCheckpoint(string(signed[:i+1]))
}
