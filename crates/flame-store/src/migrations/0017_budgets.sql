-- Issue 32, budgets. A frame's budget bounds its whole subtree, in any of dollars (micro-dollars),
-- tokens and tool calls; a unit left NULL is not limited. The tree is kept beside the frame so
-- that a tree's budgets are found without reading its frames.
CREATE TABLE frame_budgets (
    frame_id   TEXT PRIMARY KEY NOT NULL REFERENCES frames (id),
    tree_id    TEXT NOT NULL REFERENCES trees (id),
    micro_usd  INTEGER CHECK (micro_usd >= 0),
    tokens     INTEGER CHECK (tokens >= 0),
    tool_calls INTEGER CHECK (tool_calls >= 0)
) STRICT;

CREATE INDEX frame_budgets_by_tree ON frame_budgets (tree_id);

-- How many tool calls a message makes, so a subtree's spend in tool calls is summed from the
-- usage index alone, as its tokens and dollars are, without parsing a reply's calls.
ALTER TABLE messages ADD COLUMN tool_call_count INTEGER NOT NULL DEFAULT 0
    CHECK (tool_call_count >= 0);
UPDATE messages SET tool_call_count = json_array_length(tool_calls)
WHERE tool_calls IS NOT NULL AND json_valid(tool_calls) AND json_type(tool_calls) = 'array';

-- Migration 15's index with the new column.
DROP INDEX messages_usage;
CREATE INDEX messages_usage ON messages (
    frame_id,
    model,
    usage_input,
    usage_output,
    usage_cache_read,
    usage_cache_write,
    usage_cache_write_long,
    tool_call_count
) WHERE role = 'assistant';
