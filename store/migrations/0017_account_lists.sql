-- The organisation's accounts and projects that the daemon's jobs evaluate with
-- (package reconcile/state): each list once, sorted, as a JSON array, under the hex
-- SHA-256 of that array. A job carries the digest, not the list: a sweep of 500 accounts
-- queued 4,500 collections that each carried 500 account ids, and the fixes they planned
-- carried them again. A list is kept while it may be named: lists change only when
-- accounts join or leave, so there are few.
CREATE TABLE account_lists (
	digest TEXT PRIMARY KEY,
	accounts TEXT NOT NULL,
	created_at TEXT NOT NULL
);
