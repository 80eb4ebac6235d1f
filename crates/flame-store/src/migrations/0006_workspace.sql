-- Issue 15, the agent's hands. A tree's workspace: the folder its workspace tools work in
-- (absolute), absent when the tree has none.
ALTER TABLE trees ADD COLUMN workspace TEXT;

-- The kinds of workspace tool call the person allowed for the rest of a tree from an approval
-- prompt ("read", "change", "run"), so later calls of that kind in the tree do not ask.
CREATE TABLE tree_allowed_kinds (
    tree_id TEXT NOT NULL REFERENCES trees (id),
    kind    TEXT NOT NULL CHECK (kind IN ('read', 'change', 'run')),
    PRIMARY KEY (tree_id, kind)
) STRICT, WITHOUT ROWID;

-- The file trail: the workspace-relative paths a frame's own tool calls read (changed = 0) and
-- changed (changed = 1). A path changed is listed as changed; one only read, as read.
CREATE TABLE frame_files (
    frame_id TEXT NOT NULL REFERENCES frames (id),
    changed  INTEGER NOT NULL CHECK (changed IN (0, 1)),
    path     TEXT NOT NULL,
    PRIMARY KEY (frame_id, changed, path)
) STRICT, WITHOUT ROWID;
