-- Slack approvals (package slackgate): the message posted for each approval request, so
-- that a restart neither posts it again nor forgets to update it. ts is Slack's message
-- timestamp, '' while a process has claimed the request and is posting it (claimed_at
-- says since when: a claim left by a crash is taken over after a while). rendered is the
-- SHA-256 of the message as last sent; settled is 1 once the message can change no more
-- (the request denied, expired or voided, the fix rolled back, or watched long enough).
CREATE TABLE slack_messages (
	request_id TEXT PRIMARY KEY,
	channel TEXT NOT NULL,
	ts TEXT NOT NULL,
	rendered TEXT NOT NULL,
	settled INTEGER NOT NULL,
	claimed_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX slack_messages_settled ON slack_messages(settled);
