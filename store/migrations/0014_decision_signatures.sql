-- A decision carries proof of who made it: the armored SSH signature (ssh-keygen -Y sign
-- format, namespace warden-decision@warden) over its canonical message, and the SHA256
-- fingerprint of the key that made it. Empty for the decisions of an unchecked warden
-- (no gates.signers) and those made before.
ALTER TABLE approval_decisions ADD COLUMN signature TEXT NOT NULL DEFAULT '';
ALTER TABLE approval_decisions ADD COLUMN signer TEXT NOT NULL DEFAULT '';
