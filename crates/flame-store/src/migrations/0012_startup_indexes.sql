-- Two indexes for what opening a large tree reads (issue 19: at 100k frames and 200k messages
-- the window read most of a 500 MB database before its first frame was drawn).
--
-- A tree's outline (`Store::outline_of_tree`, the flame graph's load) and its usage aggregate
-- (`Store::usage_by_frame_and_model`) read every frame of the tree, a few narrow columns each.
-- Through `frames_by_tree` each frame's row was then looked up in the table, which also holds
-- the long success criteria, results and decisions: at 100k frames that read most of the 90 MB
-- table where these columns are about 10 MB. `frames_outline` holds exactly the columns those
-- reads name (`rows::OUTLINE_COLUMNS` and `id`), so SQLite answers them from it alone. It leads
-- with `tree_id` like `frames_by_tree`, which stays: counting a tree's frames reads that small
-- index.
CREATE INDEX frames_outline ON frames (
    tree_id,
    id,
    parent_id,
    position,
    title,
    status,
    success_criteria_compacted,
    retry_of,
    started_at,
    ended_at,
    message_count,
    tokens,
    rolled_back_at
);

-- The replies still open (`Store::open_replies`: read when Flame opens, to close what a stopped
-- process left, and by every frame view) were found by scanning every message, 160 MB at 200k
-- messages. Only a reply being streamed, or left by a crash, is open, so this partial index
-- holds a handful of rows at most.
CREATE INDEX messages_open ON messages (id) WHERE open = 1;
