-- Issue 16, checkpoints. A checkpoint is a snapshot of a workspace folder: a commit in the
-- workspace's shadow repository under the data directory's `checkpoints/` folder. One is taken
-- for a frame when it starts, before and after each of its changing tool calls, and around a
-- rollback. `id` orders them across every tree that shares the workspace.
CREATE TABLE checkpoints (
    id        INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    tree_id   TEXT NOT NULL REFERENCES trees (id),
    frame_id  TEXT NOT NULL REFERENCES frames (id),
    reason    TEXT NOT NULL CHECK (reason IN
                  ('start', 'before_call', 'after_call', 'before_rollback', 'after_rollback')),
    -- The tool call an around-a-call checkpoint belongs to.
    call_id   TEXT,
    commit_id TEXT NOT NULL,
    at        INTEGER NOT NULL,
    -- Changed paths past the store's limit per checkpoint, not recorded in checkpoint_files.
    files_left_out INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX checkpoints_by_frame ON checkpoints (frame_id, id);
CREATE INDEX checkpoints_by_workspace ON checkpoints (workspace, id);

-- What a call or a rollback changed: the paths an `after_call` or `after_rollback` checkpoint
-- found changed since the checkpoint taken just before the call or the rollback.
CREATE TABLE checkpoint_files (
    checkpoint_id INTEGER NOT NULL REFERENCES checkpoints (id),
    path          TEXT NOT NULL,
    PRIMARY KEY (checkpoint_id, path)
) STRICT, WITHOUT ROWID;

CREATE INDEX checkpoint_files_by_path ON checkpoint_files (path);

-- When the frame's changes were last rolled back; the graph marks such a frame.
ALTER TABLE frames ADD COLUMN rolled_back_at INTEGER;
