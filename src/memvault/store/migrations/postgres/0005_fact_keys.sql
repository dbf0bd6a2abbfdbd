-- Version 5: each entry's fact key (memvault.store.duplicates.fact_key: a hash of its content
-- words, sorted), the same for any two texts one of which restates the other. A write's
-- near-duplicate probe reads the entries of its scope with its key through the index below,
-- instead of comparing its vector with every vector of the scope. memvault keys the entries
-- already stored when it opens the store (SqlOps.key_facts).
ALTER TABLE entries ADD COLUMN fact_key BIGINT;
CREATE INDEX entries_fact_key ON entries (tenant, scope, fact_key);
