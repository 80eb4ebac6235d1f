-- Trees, frames, messages, the event journal, and the frames whose log files lag behind.

CREATE TABLE trees (
    id         TEXT PRIMARY KEY NOT NULL,
    title      TEXT NOT NULL,
    -- root_id and focus_id name frames of this tree; the store keeps them valid (a foreign key
    -- would be circular, since the root frame names the tree).
    root_id    TEXT NOT NULL,
    focus_id   TEXT NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE frames (
    id                         TEXT PRIMARY KEY NOT NULL,
    tree_id                    TEXT NOT NULL REFERENCES trees (id),
    parent_id                  TEXT REFERENCES frames (id),
    position                   INTEGER NOT NULL CHECK (position >= 0),
    title                      TEXT NOT NULL,
    success_criteria           TEXT NOT NULL,
    success_criteria_compacted TEXT,
    status                     TEXT NOT NULL CHECK (status IN
        ('planned', 'in_progress', 'completed', 'failed', 'blocked', 'invalidated')),
    status_reason              TEXT,
    results                    TEXT,
    results_compacted          TEXT,
    artifacts                  TEXT NOT NULL DEFAULT '[]',  -- a JSON array of strings
    decisions                  TEXT NOT NULL DEFAULT '[]',  -- a JSON array of strings
    retry_of                   TEXT REFERENCES frames (id),
    created_at                 INTEGER NOT NULL,
    started_at                 INTEGER,
    ended_at                   INTEGER,
    message_count              INTEGER NOT NULL DEFAULT 0,
    tokens                     INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Children in order; also what makes "ancestors and their children" an index search.
CREATE INDEX frames_by_parent ON frames (parent_id, position);
CREATE INDEX frames_by_tree ON frames (tree_id);

CREATE TABLE messages (
    id          INTEGER PRIMARY KEY,
    frame_id    TEXT NOT NULL REFERENCES frames (id),
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'note')),
    content     TEXT NOT NULL,
    tool_calls  TEXT,  -- JSON
    tool_result TEXT,  -- JSON
    tokens      INTEGER NOT NULL,
    model       TEXT,
    usage       TEXT,  -- JSON
    created_at  INTEGER NOT NULL,
    interrupted INTEGER NOT NULL DEFAULT 0 CHECK (interrupted IN (0, 1))
) STRICT;

CREATE INDEX messages_by_frame ON messages (frame_id, id);

-- Every operation: what, on which frame, by whom, when. seq orders them across processes.
CREATE TABLE events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    tree_id  TEXT NOT NULL,
    frame_id TEXT NOT NULL,
    kind     TEXT NOT NULL,
    actor    TEXT NOT NULL CHECK (actor IN ('person', 'agent', 'cli')),
    at       INTEGER NOT NULL,
    detail   TEXT NOT NULL DEFAULT '{}'  -- JSON
) STRICT;

CREATE INDEX events_by_frame ON events (frame_id, seq);

-- Frames whose Markdown log has not yet been written up to through_seq. Rows are added in the
-- same transaction as the events and removed once the log file has them, so a crash in between
-- leaves a row that the next start repairs.
CREATE TABLE log_pending (
    frame_id    TEXT PRIMARY KEY NOT NULL,
    through_seq INTEGER NOT NULL
) STRICT;
