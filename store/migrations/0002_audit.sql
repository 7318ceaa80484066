-- The audit log (package audit): an append-only Merkle log of every event.
-- audit_entries holds one row per leaf; seq is the 0-based leaf index, assigned
-- contiguously inside the writer's transaction. at is the entry's time as
-- store.FormatTime writes it; data is canonical JSON (see audit.CanonicalRecord).
CREATE TABLE audit_entries (
	seq {{bigint}} PRIMARY KEY,
	at TEXT NOT NULL,
	actor TEXT NOT NULL,
	kind TEXT NOT NULL,
	subject TEXT NOT NULL,
	data TEXT NOT NULL
);
CREATE INDEX audit_entries_subject ON audit_entries(subject);
-- audit_hashes holds the tree's stored hashes (golang.org/x/mod/sumdb/tlog): idx is
-- tlog.StoredHashIndex(level, n), hash the 32-byte node hash. Proofs and tree hashes
-- read at most a logarithmic number of them.
CREATE TABLE audit_hashes (
	idx {{bigint}} PRIMARY KEY,
	hash {{blob}} NOT NULL
);
-- audit_checkpoints holds every signed checkpoint (C2SP tlog-checkpoint, a signed
-- note); size and root repeat what the note says, for queries.
CREATE TABLE audit_checkpoints (
	id {{serial}},
	size {{bigint}} NOT NULL,
	root TEXT NOT NULL,
	created_at TEXT NOT NULL,
	note TEXT NOT NULL
);
-- audit_meta holds the log's settings, such as its random log id (the default origin).
CREATE TABLE audit_meta (
	name TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
