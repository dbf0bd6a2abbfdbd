-- memvault PostgreSQL schema, version 1 (the same model as SQLite version 2).
-- Migrations are append-only: never edit a shipped file.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE entries (
    rid                BIGSERIAL PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    tenant             TEXT    NOT NULL,
    scope              TEXT    NOT NULL,
    scope_kind         TEXT    NOT NULL,
    content            TEXT    NOT NULL,
    context            TEXT,
    category           TEXT,
    tags               JSONB   NOT NULL DEFAULT '[]',
    created_at         BIGINT  NOT NULL,
    updated_at         BIGINT  NOT NULL,
    expires_at         BIGINT,
    promoted_from_id   TEXT,
    compacted_from_ids JSONB   NOT NULL DEFAULT '[]',
    metadata           JSONB   NOT NULL DEFAULT '{}',
    provenance         JSONB   NOT NULL DEFAULT '{}',
    revision           INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX entries_scope_time ON entries (tenant, scope, created_at, id);
CREATE INDEX entries_tenant_time ON entries (tenant, created_at, id);
CREATE INDEX entries_expiry ON entries (tenant, expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE entry_tags (
    entry_rid BIGINT NOT NULL REFERENCES entries (rid) ON DELETE CASCADE,
    tag       TEXT   NOT NULL,
    PRIMARY KEY (entry_rid, tag)
);
CREATE INDEX entry_tags_tag ON entry_tags (tag, entry_rid);

-- tenant and scope are repeated on chunks so that vector and text searches filter by scope
-- inside their own index scans.
CREATE TABLE chunks (
    rid       BIGSERIAL PRIMARY KEY,
    entry_rid BIGINT  NOT NULL REFERENCES entries (rid) ON DELETE CASCADE,
    tenant    TEXT    NOT NULL,
    scope     TEXT    NOT NULL,
    seq       INTEGER NOT NULL,
    start     INTEGER NOT NULL,
    stop      INTEGER NOT NULL,
    text      TEXT    NOT NULL,
    context   TEXT,
    tsv       tsvector GENERATED ALWAYS AS
                  (to_tsvector('english', text || ' ' || coalesce(context, ''))) STORED,
    vector    vector,
    UNIQUE (entry_rid, seq)
);
CREATE INDEX chunks_scope ON chunks (tenant, scope);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);

CREATE TABLE store_info (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
