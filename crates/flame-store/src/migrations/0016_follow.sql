-- Sessions of other agents (Claude Code, Codex, OpenCode) that Flame follows: each is kept in
-- step with the agent's files in a tree of its own (`follow.rs`).

CREATE TABLE followed_sessions (
    -- '<agent>:<the agent's id of the session>'
    id          TEXT PRIMARY KEY NOT NULL,
    agent       TEXT NOT NULL CHECK (agent IN ('claude-code', 'codex', 'opencode')),
    session     TEXT NOT NULL,
    -- The session's main file, or the OpenCode database that holds it.
    source      TEXT NOT NULL,
    -- None until the session holds a message. Deleting the tree stops following the session.
    tree_id     TEXT REFERENCES trees (id) ON DELETE CASCADE,
    -- How many times the files were read again from their start (truncated or replaced); the
    -- keys of the frames each reading made carry it.
    generation  INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0),
    followed_at INTEGER NOT NULL,
    -- When a read last went well, and what the last read could not do (NULL when it went well).
    synced_at   INTEGER,
    problem     TEXT
) STRICT;

-- Where each file of a followed session was read up to: which file (device, inode) and how far.
CREATE TABLE follow_files (
    session_id TEXT NOT NULL REFERENCES followed_sessions (id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    device     INTEGER NOT NULL,
    inode      INTEGER NOT NULL,
    offset     INTEGER NOT NULL CHECK (offset >= 0),
    PRIMARY KEY (session_id, path)
) STRICT;

-- The frame each part of a followed session became (its key in the session's draft), and how
-- many of that part's messages are stored.
CREATE TABLE follow_frames (
    session_id TEXT NOT NULL REFERENCES followed_sessions (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    frame_id   TEXT NOT NULL REFERENCES frames (id) ON DELETE CASCADE,
    messages   INTEGER NOT NULL CHECK (messages >= 0),
    PRIMARY KEY (session_id, key)
) STRICT;

CREATE INDEX follow_frames_by_frame ON follow_frames (frame_id);

-- Agents whose every new session is followed: those active after `since`.
CREATE TABLE followed_agents (
    agent TEXT PRIMARY KEY NOT NULL CHECK (agent IN ('claude-code', 'codex', 'opencode')),
    since INTEGER NOT NULL
) STRICT;
