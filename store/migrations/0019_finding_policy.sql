-- warden serve's watch job looks every few minutes for the open findings of its policy
-- (state.FindingsOf): by this index, not by reading every finding of the organisation
-- (1.4 million at 500 accounts, four seconds of CPU a look). The index holds the watch
-- policy's findings alone, so that writing the others' costs nothing more; a query of
-- another policy reads the table. Its query binds the policy: SQLite plans it again with
-- the value bound, PostgreSQL plans with the value.
CREATE INDEX finding_state_watch ON finding_state(status) WHERE policy = 'WARDEN-WATCH-001';
