-- warden serve looks every few seconds for what happened to approval requests
-- (gates.Touched): it reads the requests ended and the decisions made since its last
-- look by these indexes, instead of every pending request.
CREATE INDEX approval_requests_decided ON approval_requests(decided_at);
CREATE INDEX approval_decisions_at ON approval_decisions(at);
