-- Remediation: the plans applied, their actions with their state, each action's history,
-- and the global controls (pause).
CREATE TABLE plans (
	hash TEXT PRIMARY KEY,
	created_at TEXT NOT NULL,
	actor TEXT NOT NULL,
	snapshot TEXT NOT NULL,
	data TEXT NOT NULL
);
CREATE TABLE actions (
	id TEXT PRIMARY KEY,
	content_hash TEXT NOT NULL,
	generation INTEGER NOT NULL,
	plan_hash TEXT NOT NULL,
	remediator TEXT NOT NULL,
	target TEXT NOT NULL,
	part TEXT NOT NULL,
	account TEXT NOT NULL,
	risk TEXT NOT NULL,
	policy TEXT NOT NULL,
	finding TEXT NOT NULL,
	idem_key TEXT NOT NULL,
	state TEXT NOT NULL,
	detail TEXT NOT NULL,
	data TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX actions_state ON actions(state);
CREATE TABLE action_events (
	id {{serial}},
	action_id TEXT NOT NULL,
	at TEXT NOT NULL,
	actor TEXT NOT NULL,
	state TEXT NOT NULL,
	detail TEXT NOT NULL
);
CREATE INDEX action_events_action ON action_events(action_id);
CREATE TABLE controls (
	name TEXT PRIMARY KEY,
	active INTEGER NOT NULL,
	reason TEXT NOT NULL,
	actor TEXT NOT NULL,
	at TEXT NOT NULL
);
