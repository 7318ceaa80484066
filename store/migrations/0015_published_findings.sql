-- What warden last sent of each finding to each place security teams read findings in
-- (package publish): AWS Security Hub, Google Security Command Center. sink names the
-- place ("securityhub/eu-west-1/111111111111", "scc/organizations/123"); hash is the
-- SHA-256 of what was last accepted there (empty: never accepted), status the finding's
-- status it carried, data the finding as sent (so that one no longer seen can still be
-- sent as resolved). error and failures are the last refusal and how many in a row;
-- a refused finding keeps its old hash, so the next run sends it again. Times are RFC
-- 3339 text, as elsewhere.
CREATE TABLE published_findings (
	sink TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	hash TEXT NOT NULL,
	status TEXT NOT NULL,
	data TEXT NOT NULL,
	created_at TEXT NOT NULL,
	sent_at TEXT NOT NULL,
	error TEXT NOT NULL,
	failures INTEGER NOT NULL,
	PRIMARY KEY (sink, fingerprint)
);
