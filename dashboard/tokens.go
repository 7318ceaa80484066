package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
)

// Role is what a dashboard user may do; each role may do what the ones below it may.
type Role int

// Roles, from the least to the most trusted.
const (
	// RoleNone may do nothing: an identity the proxy vouches for whose groups map to no role.
	RoleNone Role = iota
	// RoleViewer reads every page.
	RoleViewer
	// RoleApprover also approves and denies requests and waives findings.
	RoleApprover
	// RoleAdmin also rolls fixes back and revokes tokens.
	RoleAdmin
)

var roleNames = [...]string{"none", "viewer", "approver", "admin"}

func (r Role) String() string {
	if r < RoleNone || r > RoleAdmin {
		return fmt.Sprintf("role(%d)", int(r))
	}
	return roleNames[r]
}

// ParseRole reads viewer, approver or admin.
func ParseRole(s string) (Role, error) {
	for i, n := range roleNames[1:] {
		if s == n {
			return Role(i + 1), nil
		}
	}
	return RoleNone, fmt.Errorf("unknown role %q (want viewer, approver or admin)", s)
}

// Audit kinds of the dashboard's own changes.
const (
	KindTokenCreated = "token.created"
	KindTokenRevoked = "token.revoked"
	KindWaiverAdded  = "waiver.added"
)

// tokenPrefix starts every token, so that secret scanners can recognise a leaked one.
const tokenPrefix = "wdt_"

// Token is a dashboard bearer token as the store keeps it: never the token itself.
type Token struct {
	ID string `json:"id"`
	// Name is the identity the token acts as: the name approvers and the audit log know.
	Name       string    `json:"name"`
	Role       Role      `json:"-"`
	RoleName   string    `json:"role"`
	CreatedAt  time.Time `json:"created_at"`
	CreatedBy  string    `json:"created_by"`
	LastUsedAt time.Time `json:"last_used_at,omitzero"`
	RevokedAt  time.Time `json:"revoked_at,omitzero"`
	RevokedBy  string    `json:"revoked_by,omitempty"`
}

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// Tokens keeps the dashboard's bearer tokens and browser sessions in the store (migration
// 0012) and audits their creation and revocation. It is safe for concurrent use.
type Tokens struct {
	st  *store.Store
	log *audit.Log
	now func() time.Time
}

// NewTokens returns the token store over st, auditing to log; now is the clock (nil:
// time.Now).
func NewTokens(st *store.Store, log *audit.Log, now func() time.Time) *Tokens {
	if now == nil {
		now = time.Now
	}
	return &Tokens{st: st, log: log, now: now}
}

// ErrBadToken is a token (or session) that is unknown, revoked or expired. It never says
// which: a guesser learns nothing.
var ErrBadToken = errors.New("unknown, revoked or expired credential")

// hashSecret is the hex SHA-256 of a token or session secret: the secrets have 256 bits
// of entropy, so a plain hash is as good as a slow one, and lookups stay indexed.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// newSecret is 32 random bytes, base64url.
func newSecret() string { return base64.RawURLEncoding.EncodeToString(randomBytes(32)) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	// crypto/rand.Read never fails (Go ≥ 1.24): it crashes the program rather than
	// return predictable bytes.
	_, _ = rand.Read(b)
	return b
}

// checkName refuses a name that could pass for another identity or drive a terminal.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name: name the person or service the token acts as")
	case len(name) > 100:
		return errors.New("the name is longer than 100 bytes")
	case strings.HasPrefix(name, "slack:"):
		return fmt.Errorf("%q: names starting with slack: are Slack users' identities", name)
	case name == "warden":
		return errors.New(`"warden" is the name of warden's own changes`)
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.IsSpace(r) && r != ' ' {
			return fmt.Errorf("%q holds a control or space character", name)
		}
	}
	return nil
}

// Create makes a token acting as name with role, created by actor (audited), and
// returns it with its secret: the only time the secret is available. An empty name
// makes the token act as its id.
func (ts *Tokens) Create(ctx context.Context, name string, role Role, actor string) (Token, string, error) {
	name = strings.TrimSpace(name)
	id := "tok-" + hex.EncodeToString(randomBytes(4))
	if name == "" {
		name = id
	}
	if err := checkName(name); err != nil {
		return Token{}, "", fmt.Errorf("create token: %w", err)
	}
	if role < RoleViewer || role > RoleAdmin {
		return Token{}, "", fmt.Errorf("create token: %w", fmt.Errorf("unknown role %s", role))
	}
	secret := tokenPrefix + newSecret()
	t := Token{ID: id, Name: name, Role: role, RoleName: role.String(), CreatedAt: ts.now().UTC(), CreatedBy: actor}
	err := ts.st.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO dashboard_tokens (id, name, role, hash, created_at, created_by, last_used_at, revoked_at, revoked_by)
			VALUES (?, ?, ?, ?, ?, ?, '', '', '')`, t.ID, t.Name, t.RoleName, hashSecret(secret), store.FormatTime(t.CreatedAt), actor); err != nil {
			return err
		}
		_, err := ts.log.Append(ctx, tx, audit.Event{Actor: actor, Kind: KindTokenCreated, Subject: t.ID,
			Data: map[string]any{"name": t.Name, "role": t.RoleName}})
		return err
	})
	if err != nil {
		return Token{}, "", fmt.Errorf("create token for %s: %w", name, err)
	}
	return t, secret, nil
}

const tokenColumns = `id, name, role, created_at, created_by, last_used_at, revoked_at, revoked_by`

func scanToken(s interface{ Scan(...any) error }) (Token, error) {
	var t Token
	var created, used, revoked string
	if err := s.Scan(&t.ID, &t.Name, &t.RoleName, &created, &t.CreatedBy, &used, &revoked, &t.RevokedBy); err != nil {
		return Token{}, err
	}
	var err error
	if t.Role, err = ParseRole(t.RoleName); err != nil {
		return Token{}, fmt.Errorf("token %s: %w", t.ID, err)
	}
	for _, f := range []struct {
		text string
		to   *time.Time
	}{{created, &t.CreatedAt}, {used, &t.LastUsedAt}, {revoked, &t.RevokedAt}} {
		if *f.to, err = store.ParseTime(f.text); err != nil {
			return Token{}, fmt.Errorf("token %s: %w", t.ID, err)
		}
	}
	return t, nil
}

// List returns every token, revoked ones too, oldest first.
func (ts *Tokens) List(ctx context.Context) ([]Token, error) {
	var out []Token
	err := ts.st.Read(ctx, func(r *store.Reader) error {
		rows, err := r.QueryContext(ctx, `SELECT `+tokenColumns+` FROM dashboard_tokens ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanToken(rows)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// Revoke revokes token id as actor (audited) and ends its sessions. Revoking a revoked
// token is refused, so that the audit log records one revocation.
func (ts *Tokens) Revoke(ctx context.Context, id, actor string) (Token, error) {
	var t Token
	err := ts.st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		t, err = scanToken(tx.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM dashboard_tokens WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no token %s (warden token list shows them)", id)
		}
		if err != nil {
			return err
		}
		if t.Revoked() {
			return fmt.Errorf("token %s was revoked already, at %s by %s", id, store.FormatTime(t.RevokedAt), t.RevokedBy)
		}
		t.RevokedAt, t.RevokedBy = ts.now().UTC(), actor
		res, err := tx.ExecContext(ctx, `UPDATE dashboard_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at = ''`,
			store.FormatTime(t.RevokedAt), actor, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("token %s was revoked meanwhile", id)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE token_id = ?`, id); err != nil {
			return err
		}
		_, err = ts.log.Append(ctx, tx, audit.Event{Actor: actor, Kind: KindTokenRevoked, Subject: id,
			Data: map[string]any{"name": t.Name, "role": t.RoleName}})
		return err
	})
	if err != nil {
		return Token{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return t, nil
}

// usedEvery is how stale last_used_at may get before a use writes it again: a write per
// request would contend with the daemon for the store's write lock.
const usedEvery = 5 * time.Minute

// Authenticate returns the live token whose secret this is; ErrBadToken otherwise.
func (ts *Tokens) Authenticate(ctx context.Context, secret string) (Token, error) {
	if !strings.HasPrefix(secret, tokenPrefix) {
		return Token{}, ErrBadToken
	}
	var t Token
	err := ts.st.Read(ctx, func(r *store.Reader) error {
		var err error
		t, err = scanToken(r.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM dashboard_tokens WHERE hash = ?`, hashSecret(secret)))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) || err == nil && t.Revoked() {
		return Token{}, ErrBadToken
	}
	if err != nil {
		return Token{}, fmt.Errorf("authenticate: %w", err)
	}
	if now := ts.now(); now.Sub(t.LastUsedAt) > usedEvery {
		if err := ts.st.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE dashboard_tokens SET last_used_at = ? WHERE id = ?`, store.FormatTime(now.UTC()), t.ID)
			return err
		}); err != nil {
			return Token{}, fmt.Errorf("authenticate: record the use: %w", err)
		}
	}
	return t, nil
}

// StartSession exchanges a live token for a browser session lasting ttl, and returns the
// session's secret (the cookie's value). Expired sessions are deleted on the way.
func (ts *Tokens) StartSession(ctx context.Context, tokenSecret string, ttl time.Duration) (Token, string, error) {
	t, err := ts.Authenticate(ctx, tokenSecret)
	if err != nil {
		return Token{}, "", err
	}
	secret := newSecret()
	now := ts.now().UTC()
	err = ts.st.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE expires_unix <= ?`, now.Unix()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO dashboard_sessions (hash, token_id, created_at, expires_unix) VALUES (?, ?, ?, ?)`,
			hashSecret(secret), t.ID, store.FormatTime(now), now.Add(ttl).Unix())
		return err
	})
	if err != nil {
		return Token{}, "", fmt.Errorf("start a session: %w", err)
	}
	return t, secret, nil
}

// Session returns the live token of a live session; ErrBadToken otherwise.
func (ts *Tokens) Session(ctx context.Context, secret string) (Token, error) {
	var t Token
	err := ts.st.Read(ctx, func(r *store.Reader) error {
		var err error
		t, err = scanToken(r.QueryRowContext(ctx, `SELECT t.id, t.name, t.role, t.created_at, t.created_by, t.last_used_at, t.revoked_at, t.revoked_by
			FROM dashboard_sessions s JOIN dashboard_tokens t ON t.id = s.token_id
			WHERE s.hash = ? AND s.expires_unix > ?`, hashSecret(secret), ts.now().Unix()))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) || err == nil && t.Revoked() {
		return Token{}, ErrBadToken
	}
	if err != nil {
		return Token{}, fmt.Errorf("read the session: %w", err)
	}
	return t, nil
}

// EndSession deletes a session (logout); an unknown one is no error.
func (ts *Tokens) EndSession(ctx context.Context, secret string) error {
	err := ts.st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE hash = ?`, hashSecret(secret))
		return err
	})
	if err != nil {
		return fmt.Errorf("end the session: %w", err)
	}
	return nil
}
