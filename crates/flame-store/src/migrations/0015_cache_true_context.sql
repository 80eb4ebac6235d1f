-- Issue 29, cache-true context. Anthropic's prompt cache has two lifetimes, priced apart: five
-- minutes (writes at 1.25 times the input price) and an hour (writes at twice it). A reply's
-- writes for the hour get a fifth usage column; `usage_cache_write` keeps the short ones, so the
-- four earlier columns mean what they meant.
ALTER TABLE messages ADD COLUMN usage_cache_write_long INTEGER
    CHECK (usage_cache_write_long BETWEEN 0 AND 4294967296);

-- Claude Code records its writes by lifetime (`cache_creation.ephemeral_1h_input_tokens`), and
-- imports before this version stored its usage JSON whole: those rows' hour writes are moved out
-- of `usage_cache_write` here, as the JSON now reads (`flame_model::stored`).
UPDATE messages SET
    usage_cache_write_long = min(usage_cache_write, max(0, coalesce(CAST(json_extract(usage,
        '$.cache_creation.ephemeral_1h_input_tokens') AS INTEGER), 0))),
    usage_cache_write = usage_cache_write - min(usage_cache_write, max(0, coalesce(CAST(
        json_extract(usage, '$.cache_creation.ephemeral_1h_input_tokens') AS INTEGER), 0)))
WHERE usage IS NOT NULL AND json_valid(usage) AND usage_cache_write IS NOT NULL
    AND json_extract(usage, '$.cache_creation.ephemeral_1h_input_tokens') IS NOT NULL;
UPDATE messages SET usage_cache_write_long = 0
WHERE usage_input IS NOT NULL AND usage_cache_write_long IS NULL;

-- Migration 13's index with the new column, so the usage queries still read the index alone.
DROP INDEX messages_usage;
CREATE INDEX messages_usage ON messages (
    frame_id,
    model,
    usage_input,
    usage_output,
    usage_cache_read,
    usage_cache_write,
    usage_cache_write_long
) WHERE role = 'assistant';

-- What each frame's model was sent at the start of its conversation and has been told since
-- (`flame_model::FrameContext`, as JSON without its opening): the omission line, which tool
-- results are masked, a digest of every frame it was told of, and its context notes. Every later
-- request in the frame repeats it byte for byte, in any process, so the provider's prompt cache
-- holds.
CREATE TABLE frame_contexts (
    frame_id TEXT PRIMARY KEY NOT NULL REFERENCES frames (id),
    state    TEXT NOT NULL
) STRICT;

-- Each frame's opening, by its generation: written when an opening is made, not at every call
-- that appends a note or masks a batch (SQLite writes a row whole, and an opening is most of a
-- frame's context: 124 KB of 144 KB in the benchmark's tree).
CREATE TABLE frame_openings (
    frame_id   TEXT PRIMARY KEY NOT NULL REFERENCES frames (id),
    generation INTEGER NOT NULL,
    opening    TEXT NOT NULL
) STRICT;
