-- Version 7: how often each entry was used (returned by recall or build_context, put in a
-- system prompt, reinforced) and when last: what search(decay=True) and the hygiene report
-- read. Its own table: a use is not a change of the entry (no revision, no audit event), and
-- it goes with the entry. ``restated``: how many writes restated it and were merged into it
-- (the hygiene report's count of what was merged; a restatement is a use too).
CREATE TABLE entry_uses (
    entry_rid    BIGINT PRIMARY KEY REFERENCES entries (rid) ON DELETE CASCADE,
    last_used_at BIGINT NOT NULL,
    uses         BIGINT NOT NULL,
    restated     BIGINT NOT NULL DEFAULT 0
);
