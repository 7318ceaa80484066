-- The hourly budget of fixes shared by every run on the store (the daemon applies one
-- action per job, so per-run caps do not bound it) counts recent intents by state and
-- time; the failure breaker reads the latest outcomes.
CREATE INDEX action_events_state_at ON action_events(state, at);
