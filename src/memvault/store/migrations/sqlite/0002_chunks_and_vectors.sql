-- Version 2: content is searched by chunk (text + context) with vectors; FTS moves to chunks.
ALTER TABLE entries ADD COLUMN context TEXT;

DROP TRIGGER entries_fts_insert;
DROP TRIGGER entries_fts_delete;
DROP TRIGGER entries_fts_update;
DROP TABLE entries_fts;

CREATE TABLE chunks (
    rowid       INTEGER PRIMARY KEY,
    entry_rowid INTEGER NOT NULL REFERENCES entries (rowid) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    start       INTEGER NOT NULL,
    stop        INTEGER NOT NULL,
    vector      BLOB,
    UNIQUE (entry_rowid, seq)
);

-- A regular FTS5 table (it keeps its own copy of the text): only then does secure-delete scrub
-- every token of a deleted row; a contentless table keeps them until an index-wide merge.
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text,
    context,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
END;

-- Entries written under version 1 become one chunk each, without a vector until re-embedded.
INSERT INTO chunks (entry_rowid, seq, start, stop) SELECT rowid, 0, 0, length(content) FROM entries;
INSERT INTO chunks_fts (rowid, text, context)
    SELECT c.rowid, e.content, e.context FROM chunks c JOIN entries e ON e.rowid = c.entry_rowid;
