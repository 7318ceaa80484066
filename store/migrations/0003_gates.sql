-- Approval gates: one request per action and content hash, and the approvers' decisions.
-- A request changes state only by compare-and-set on (id, state, content_hash); decided_at
-- and reason are empty while it is pending.
CREATE TABLE approval_requests (
	id TEXT PRIMARY KEY,
	action_id TEXT NOT NULL,
	content_hash TEXT NOT NULL,
	remediator TEXT NOT NULL,
	target TEXT NOT NULL,
	part TEXT NOT NULL,
	risk TEXT NOT NULL CHECK (risk IN ('none', 'low', 'medium', 'high', 'critical')),
	requester TEXT NOT NULL,
	quorum INTEGER NOT NULL CHECK (quorum >= 1),
	state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired', 'voided')),
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	decided_at TEXT NOT NULL,
	reason TEXT NOT NULL,
	UNIQUE (action_id, content_hash)
);
-- At most one live (pending or approved) request per action: approvals of an older
-- content hash are voided before a new request is made.
CREATE UNIQUE INDEX approval_requests_live ON approval_requests(action_id) WHERE state IN ('pending', 'approved');
CREATE INDEX approval_requests_state ON approval_requests(state);
-- One decision per approver and request.
CREATE TABLE approval_decisions (
	request_id TEXT NOT NULL REFERENCES approval_requests(id),
	actor TEXT NOT NULL,
	channel TEXT NOT NULL CHECK (channel IN ('cli', 'slack', 'web')),
	decision TEXT NOT NULL CHECK (decision IN ('approve', 'deny')),
	reason TEXT NOT NULL,
	at TEXT NOT NULL,
	PRIMARY KEY (request_id, actor)
);
