-- Version 7: the audit log's hash chain (memvault.store.audit_chain). Each event keeps the hash
-- it is chained to (prev) and its own (hash): H(prev, the event's fields), per tenant, H keyed
-- by the store's audit key when it has one. An erasure's event keeps the checkpoint that
-- bridges the gaps it left (JSON). Each tenant's head (seq and hash of its last event) is kept
-- in store_info ('audit_head:' || tenant), with the fingerprint of the key ('audit_key'); the
-- events written before this version have no hash, and 'audit_chain_from' says up to where.
ALTER TABLE audit_log ADD COLUMN prev TEXT;
ALTER TABLE audit_log ADD COLUMN hash TEXT;
ALTER TABLE audit_log ADD COLUMN checkpoint TEXT;
INSERT INTO store_info (key, value)
    SELECT 'audit_chain_from', CAST(coalesce(max(seq), 0) AS TEXT) FROM audit_log;
