-- Version 5: BM25 is computed by memvault's own per-scope index (one analyzer for every
-- backend), so SQLite no longer keeps a full-text copy of every chunk: the FTS5 table and its
-- trigger go. The audit log's last event of a scope tells a search index whether it is
-- current: the index below finds it without a scan.
DROP TRIGGER chunks_fts_delete;
DROP TABLE chunks_fts;
CREATE INDEX audit_log_scope_seq ON audit_log (tenant, scope, seq);
DROP INDEX audit_log_scope;
