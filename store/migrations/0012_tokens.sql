-- The web dashboard's credentials (package dashboard). A bearer token is 32 random bytes
-- shown once by `warden token create`; only its SHA-256 (hex) is kept, so that a copy of
-- the database yields no usable token. name is the identity the token acts as (the name
-- approvers and the audit log know), role one of viewer, approver, admin; revoked_at is
-- empty while the token is live. Times are RFC 3339 text, as elsewhere.
CREATE TABLE dashboard_tokens (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	role TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE,
	created_at TEXT NOT NULL,
	created_by TEXT NOT NULL,
	last_used_at TEXT NOT NULL,
	revoked_at TEXT NOT NULL,
	revoked_by TEXT NOT NULL
);
-- A browser session a token was exchanged for at the login form: the cookie holds 32
-- random bytes, the table their SHA-256. expires_unix is in seconds, an integer so that
-- expired sessions can be deleted by comparison; a revoked token ends its sessions.
CREATE TABLE dashboard_sessions (
	hash TEXT PRIMARY KEY,
	token_id TEXT NOT NULL REFERENCES dashboard_tokens(id) ON DELETE CASCADE,
	created_at TEXT NOT NULL,
	expires_unix {{bigint}} NOT NULL
);
CREATE INDEX dashboard_sessions_token ON dashboard_sessions(token_id);
