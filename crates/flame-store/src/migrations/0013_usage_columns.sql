-- Issue 19, a fast bulk import. A reply's usage counts in four integer columns rather than in its
-- `usage` JSON alone. Building `messages_usage` (migration 9) parsed every reply's JSON a dozen
-- times (each of its four counts tests and reads it), which was a quarter of a large import's
-- time, and the JSON was a sixth of every message row. The store now writes the counts here,
-- each capped at 2^32 as the index capped them, and leaves `usage` NULL unless a count is over
-- the cap (no provider reports one), so what it reads back is always exactly what was written:
-- the JSON when there is one, else these columns; all four are NULL for a message without usage.
ALTER TABLE messages ADD COLUMN usage_input INTEGER
    CHECK (usage_input BETWEEN 0 AND 4294967296);
ALTER TABLE messages ADD COLUMN usage_output INTEGER
    CHECK (usage_output BETWEEN 0 AND 4294967296);
ALTER TABLE messages ADD COLUMN usage_cache_read INTEGER
    CHECK (usage_cache_read BETWEEN 0 AND 4294967296);
ALTER TABLE messages ADD COLUMN usage_cache_write INTEGER
    CHECK (usage_cache_write BETWEEN 0 AND 4294967296);

-- The messages written before this version keep their JSON, which is still what they read back
-- as; their counts are filled in as migration 9's index read them (the shapes earlier versions
-- stored included; a count that is not a whole number is 0, and usage that is not JSON counts
-- nothing), so that the index below adds up the same sums.
UPDATE messages SET
    usage_input = min(max(coalesce(CAST(json_extract(CASE WHEN json_valid(usage) THEN usage END,
        '$.input_tokens') AS INTEGER), 0), 0), 4294967296),
    usage_output = min(max(coalesce(CAST(json_extract(CASE WHEN json_valid(usage) THEN usage END,
        '$.output_tokens') AS INTEGER), 0), 0), 4294967296),
    usage_cache_read = min(max(coalesce(CAST(coalesce(
        json_extract(CASE WHEN json_valid(usage) THEN usage END, '$.cache_read_tokens'),
        json_extract(CASE WHEN json_valid(usage) THEN usage END, '$.cache_read_input_tokens'))
        AS INTEGER), 0), 0), 4294967296),
    usage_cache_write = min(max(coalesce(CAST(coalesce(
        json_extract(CASE WHEN json_valid(usage) THEN usage END, '$.cache_write_tokens'),
        json_extract(CASE WHEN json_valid(usage) THEN usage END, '$.cache_creation_input_tokens'))
        AS INTEGER), 0), 0), 4294967296)
WHERE usage IS NOT NULL;

-- Migration 9's index over the columns: the same entries, with no JSON to read, and without
-- `role`: SQLite knows every entry's role from the index's WHERE, so the index still covers the
-- usage queries (see their `EXPLAIN QUERY PLAN` test in `reads.rs`).
DROP INDEX messages_usage;
CREATE INDEX messages_usage ON messages (
    frame_id,
    model,
    usage_input,
    usage_output,
    usage_cache_read,
    usage_cache_write
) WHERE role = 'assistant';
