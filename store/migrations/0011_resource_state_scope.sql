-- A resource's uid is unique only within its scope: an AWS-managed policy
-- (arn:aws:iam::aws:policy/ReadOnlyAccess) has one ARN in every account, and each
-- account's read of it is its own (attachments differ). Keyed by uid alone, every account's
-- read moved the one row, so an unchanged sweep evaluated it again in each account.
CREATE TABLE resource_state_scoped (
	scope TEXT NOT NULL,
	uid TEXT NOT NULL,
	type TEXT NOT NULL,
	hash TEXT NOT NULL,
	data TEXT NOT NULL,
	read_at TEXT NOT NULL,
	PRIMARY KEY (scope, uid)
);
INSERT INTO resource_state_scoped (scope, uid, type, hash, data, read_at)
	SELECT scope, uid, type, hash, data, read_at FROM resource_state;
DROP TABLE resource_state;
ALTER TABLE resource_state_scoped RENAME TO resource_state;
-- An event names a resource by uid alone: its scope is looked up.
CREATE INDEX resource_state_uid ON resource_state(uid);
-- A resource's findings are looked up with its scope.
DROP INDEX finding_state_resource;
CREATE INDEX finding_state_resource ON finding_state(resource, scope);
