-- Expiring approval requests runs in every fix's transaction: it reads only the pending
-- requests due, by this index, instead of every pending one.
CREATE INDEX approval_requests_due ON approval_requests(state, expires_at);
