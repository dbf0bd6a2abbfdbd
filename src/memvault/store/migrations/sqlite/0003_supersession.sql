-- Version 3: facts have a validity interval and may be superseded (kept, linked, hidden).
-- valid_from: since when the entry holds (its creation, for entries written before this);
-- valid_to: when a successor replaced it (NULL: current); superseded_by: that successor's id;
-- superseded_reason: why; supersedes: the ids this entry replaced (a JSON list).
ALTER TABLE entries ADD COLUMN valid_from INTEGER;
UPDATE entries SET valid_from = created_at;
ALTER TABLE entries ADD COLUMN valid_to INTEGER;
ALTER TABLE entries ADD COLUMN superseded_by TEXT;
ALTER TABLE entries ADD COLUMN superseded_reason TEXT;
ALTER TABLE entries ADD COLUMN supersedes TEXT NOT NULL DEFAULT '[]';
CREATE INDEX entries_superseded ON entries (tenant, scope, valid_to) WHERE valid_to IS NOT NULL;
