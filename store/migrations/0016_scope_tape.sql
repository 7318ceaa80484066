-- The tape of a scope's last complete read (package reconcile/state): the requests it
-- sent and a digest of each answer, as its collector recorded them (collectors.Rereader),
-- so that the next read can send them again and, answered alike, cost its reads and
-- nothing more. NULL: none (never read in full, read by a collector without tapes, or a
-- resource of the scope written since by a refresh).
ALTER TABLE scope_state ADD COLUMN tape {{blob}};
