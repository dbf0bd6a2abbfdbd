-- memvault SQLite schema, version 1. Migrations are append-only: never edit a shipped file.
CREATE TABLE entries (
    rowid              INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    tenant             TEXT    NOT NULL,
    scope              TEXT    NOT NULL,
    scope_kind         TEXT    NOT NULL,
    content            TEXT    NOT NULL,
    category           TEXT,
    tags               TEXT    NOT NULL DEFAULT '[]',
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    expires_at         INTEGER,
    promoted_from_id   TEXT,
    compacted_from_ids TEXT    NOT NULL DEFAULT '[]',
    metadata           TEXT    NOT NULL DEFAULT '{}',
    provenance         TEXT    NOT NULL DEFAULT '{}',
    revision           INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX entries_scope_time ON entries (tenant, scope, created_at, id);
CREATE INDEX entries_tenant_time ON entries (tenant, created_at, id);
CREATE INDEX entries_expiry ON entries (tenant, expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE entry_tags (
    entry_rowid INTEGER NOT NULL REFERENCES entries (rowid) ON DELETE CASCADE,
    tag         TEXT    NOT NULL,
    PRIMARY KEY (entry_rowid, tag)
) WITHOUT ROWID;
CREATE INDEX entry_tags_tag ON entry_tags (tag, entry_rowid);

CREATE VIRTUAL TABLE entries_fts USING fts5 (
    content,
    content = 'entries',
    content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO entries_fts (entries_fts, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER entries_fts_update AFTER UPDATE OF content ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO entries_fts (rowid, content) VALUES (new.rowid, new.content);
END;

CREATE TABLE store_info (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
