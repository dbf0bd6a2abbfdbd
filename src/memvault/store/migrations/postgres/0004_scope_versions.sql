-- Version 4: a scope's search index is current while the scope's last audit event is; this
-- index finds that event without a scan.
CREATE INDEX audit_log_scope_seq ON audit_log (tenant, scope, seq);
DROP INDEX audit_log_scope;
