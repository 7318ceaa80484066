-- The daemon's view of the world (package reconcile), kept between its scope jobs: the
-- latest state of every resource as its scope was last read (hash: SHA-256 of its JSON,
-- so a read that changed nothing costs no evaluation), each scope's last read, and each
-- finding's life from opened to resolved. Times are RFC 3339 text, as elsewhere.
CREATE TABLE resource_state (
	uid TEXT PRIMARY KEY,
	scope TEXT NOT NULL,
	type TEXT NOT NULL,
	hash TEXT NOT NULL,
	data TEXT NOT NULL,
	read_at TEXT NOT NULL
);
CREATE INDEX resource_state_scope ON resource_state(scope);
-- status is the last read's (ok, partial, failed); ok_at the last read in full;
-- evaluated_with the engine and settings version the scope's findings were judged with,
-- full_at when every resource of it was last evaluated (ages move on without a change).
CREATE TABLE scope_state (
	scope TEXT PRIMARY KEY,
	status TEXT NOT NULL,
	error TEXT NOT NULL,
	resources INTEGER NOT NULL,
	read_at TEXT NOT NULL,
	ok_at TEXT NOT NULL,
	evaluated_with TEXT NOT NULL,
	full_at TEXT NOT NULL,
	data TEXT NOT NULL
);
-- status is open, waived, unknown (its scope or its evaluation failed: neither confirmed
-- nor resolved) or resolved; resolved rows stay, so that a finding seen again reopens.
CREATE TABLE finding_state (
	fingerprint TEXT PRIMARY KEY,
	scope TEXT NOT NULL,
	resource TEXT NOT NULL,
	policy TEXT NOT NULL,
	severity TEXT NOT NULL,
	status TEXT NOT NULL,
	opened_at TEXT NOT NULL,
	seen_at TEXT NOT NULL,
	resolved_at TEXT NOT NULL,
	data TEXT NOT NULL
);
CREATE INDEX finding_state_scope ON finding_state(scope, status);
CREATE INDEX finding_state_resource ON finding_state(resource);
