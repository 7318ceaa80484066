-- Certificate renewal (certs.renew) keeps what it replaces and what it delivers, so that
-- a crash between issuing and delivering loses nothing and a rollback can restore the
-- previous certificate (ACM never gives a private key back). The material is encrypted
-- (AES-256-GCM, the row's identity as associated data): ciphertext holds no PEM in the
-- clear. kind is 'previous' (what the action replaced), 'issued' (what it delivered) or
-- 'account' (the ACME account key). serial and fingerprint (SHA-256 of the DER) are the
-- certificate's public identity, to find the key of a certificate warden issued earlier.
CREATE TABLE cert_archive (
	id {{serial}},
	action_id TEXT NOT NULL,
	target TEXT NOT NULL,
	kind TEXT NOT NULL,
	serial TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	has_key INTEGER NOT NULL,
	created_at TEXT NOT NULL,
	nonce {{blob}} NOT NULL,
	ciphertext {{blob}} NOT NULL
);
CREATE UNIQUE INDEX cert_archive_action_kind ON cert_archive(action_id, kind);
CREATE INDEX cert_archive_fingerprint ON cert_archive(target, fingerprint);
