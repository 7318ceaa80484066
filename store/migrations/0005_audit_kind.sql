-- Version events (policy pack, config) are recorded when they change: finding the
-- latest entry of a kind must not scan the whole log.
CREATE INDEX audit_entries_kind ON audit_entries(kind, seq);
