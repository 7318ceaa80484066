-- Multi-step fixes (remediators.Stepper) keep their progress with the action: the last
-- step completed, when the next is due, what the steps created. JSON; '' for none.
ALTER TABLE actions ADD COLUMN progress TEXT NOT NULL DEFAULT '';
