-- The daemon looks every few seconds for approval requests that stopped waiting
-- (gates.StoppedWaiting): it reads those decided since its last look by this index,
-- instead of every pending request.
CREATE INDEX approval_requests_decided ON approval_requests(decided_at);
