-- The scan history: one row per scan, its findings (carried ones included) per scan.
-- IF NOT EXISTS adopts histories written before versioned migrations existed.
CREATE TABLE IF NOT EXISTS scans (
	id {{serial}},
	started_at TEXT NOT NULL,
	finished_at TEXT NOT NULL,
	snapshot TEXT NOT NULL,
	source TEXT NOT NULL,
	collected_at TEXT NOT NULL,
	resources INTEGER NOT NULL,
	policies INTEGER NOT NULL,
	scopes TEXT NOT NULL,
	summary TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS findings (
	scan_id {{bigint}} NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
	fingerprint TEXT NOT NULL,
	policy TEXT NOT NULL,
	severity TEXT NOT NULL,
	resource TEXT NOT NULL,
	resource_type TEXT NOT NULL,
	account TEXT NOT NULL,
	region TEXT NOT NULL,
	scope TEXT NOT NULL,
	status TEXT NOT NULL,
	first_seen TEXT NOT NULL,
	data TEXT NOT NULL,
	PRIMARY KEY (scan_id, fingerprint)
);
CREATE INDEX IF NOT EXISTS findings_resource ON findings(resource);
