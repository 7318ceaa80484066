-- What each target's sweep listed (package reconcile/state). listed_scopes is the scopes
-- the target's last listing named: the next sweep starts replaying those it read before
-- at once, while it lists the organisation again (25 calls of organizations:ListAccounts
-- at 500 accounts, five seconds at warden's pace, that every collection used to wait
-- for). scope_listings keeps each listing's result under the id its sweep's collections
-- name: the account list policies judge with (account_lists.digest) and the scopes the
-- sweep had started that it no longer listed. A collection so started judges nothing
-- until that listing is there, and nothing at all when its scope is no longer listed.
CREATE TABLE listed_scopes (
	target TEXT NOT NULL,
	scope TEXT NOT NULL,
	PRIMARY KEY (target, scope)
);
CREATE TABLE scope_listings (
	id TEXT PRIMARY KEY,
	accounts_ref TEXT NOT NULL,
	departed TEXT NOT NULL,
	created_at TEXT NOT NULL
);
