-- Version 4: the audit log. One row per change to an entry (never its content): when, who,
-- which operation, what happened, which entry of which scope. Append-only: rows are never
-- updated; only an erasure deletes rows (those of what it erased).
CREATE TABLE audit_log (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant    TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    actor     TEXT    NOT NULL,
    operation TEXT    NOT NULL,
    change    TEXT    NOT NULL,
    entry_id  TEXT,
    scope     TEXT,
    note      TEXT
);
CREATE INDEX audit_log_entry ON audit_log (tenant, entry_id);
CREATE INDEX audit_log_scope ON audit_log (tenant, scope);
CREATE INDEX audit_log_tenant ON audit_log (tenant, seq);
CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
