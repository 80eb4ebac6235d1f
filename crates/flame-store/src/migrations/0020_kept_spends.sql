-- Issue 39, speed at 100k frames. What each budgeted frame's subtree spent, kept as replies are
-- written (`frames/budgets.rs`), so that the check before a model call reads the budgets on the
-- frame's path and their spends, and never sums a subtree: a budget on the root made every
-- first check of a process sum the whole tree. One row per budgeted frame and model, holding
-- something (a row that would hold nothing is not kept); a model of NULL is the replies that
-- named none. The rows go with their budget.
CREATE TABLE budget_spends (
    frame_id         TEXT NOT NULL REFERENCES frame_budgets (frame_id) ON DELETE CASCADE,
    model            TEXT,
    input            INTEGER NOT NULL,
    output           INTEGER NOT NULL,
    cache_read       INTEGER NOT NULL,
    cache_write      INTEGER NOT NULL,
    cache_write_long INTEGER NOT NULL,
    tool_calls       INTEGER NOT NULL
) STRICT;

CREATE INDEX budget_spends_by_frame ON budget_spends (frame_id, model);

-- The budgets given before this version, summed once here as the store sums a subtree.
INSERT INTO budget_spends (frame_id, model, input, output, cache_read, cache_write,
                           cache_write_long, tool_calls)
WITH RECURSIVE subtree(budgeted, id) AS (
    SELECT frame_id, frame_id FROM frame_budgets
    UNION ALL
    SELECT s.budgeted, f.id FROM subtree s JOIN frames f ON f.parent_id = s.id
)
SELECT s.budgeted, m.model, sum(coalesce(m.usage_input, 0)), sum(coalesce(m.usage_output, 0)),
       sum(coalesce(m.usage_cache_read, 0)), sum(coalesce(m.usage_cache_write, 0)),
       sum(coalesce(m.usage_cache_write_long, 0)), sum(m.tool_call_count)
FROM subtree s CROSS JOIN messages m ON m.frame_id = s.id
WHERE m.role = 'assistant'
GROUP BY s.budgeted, m.model
HAVING sum(coalesce(m.usage_input, 0)) + sum(coalesce(m.usage_output, 0))
     + sum(coalesce(m.usage_cache_read, 0)) + sum(coalesce(m.usage_cache_write, 0))
     + sum(coalesce(m.usage_cache_write_long, 0)) + sum(m.tool_call_count) > 0;

-- Which save of a frame's context a row is (`frames/contexts.rs`): every save takes the next
-- number of `store_meta`'s `context_version`, so a process that keeps a frame's context parsed
-- knows, from this one column, whether it is still what is stored. Rows saved before are 0.
ALTER TABLE frame_contexts ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
