-- Issue 37, the gateway (migration 19). A session the gateway records is kept as a followed session is (its row
-- in followed_sessions with source 'gateway', its frames in follow_frames by draft key), so the
-- same code stores both and a session is one tree whichever way it reached Flame. A client the
-- gateway cannot name is the agent 'other', which migration 16's CHECK refused: the three tables
-- are made again with the wider CHECK, their rows kept (a dropped parent would take its
-- children's rows with it through ON DELETE CASCADE, so the children are set aside first).

CREATE TEMP TABLE kept_follow_files AS SELECT * FROM follow_files;
CREATE TEMP TABLE kept_follow_frames AS SELECT * FROM follow_frames;
DROP TABLE follow_files;
DROP TABLE follow_frames;

CREATE TABLE followed_sessions_new (
    -- '<agent>:<the agent's id of the session>'
    id          TEXT PRIMARY KEY NOT NULL,
    agent       TEXT NOT NULL CHECK (agent IN ('claude-code', 'codex', 'opencode', 'other')),
    session     TEXT NOT NULL,
    -- The session's main file, the OpenCode database that holds it, or 'gateway'.
    source      TEXT NOT NULL,
    tree_id     TEXT REFERENCES trees (id) ON DELETE CASCADE,
    generation  INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0),
    followed_at INTEGER NOT NULL,
    synced_at   INTEGER,
    problem     TEXT
) STRICT;
INSERT INTO followed_sessions_new SELECT * FROM followed_sessions;
DROP TABLE followed_sessions;
ALTER TABLE followed_sessions_new RENAME TO followed_sessions;

CREATE TABLE follow_files (
    session_id TEXT NOT NULL REFERENCES followed_sessions (id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    device     INTEGER NOT NULL,
    inode      INTEGER NOT NULL,
    offset     INTEGER NOT NULL CHECK (offset >= 0),
    PRIMARY KEY (session_id, path)
) STRICT;
INSERT INTO follow_files SELECT * FROM kept_follow_files;

CREATE TABLE follow_frames (
    session_id TEXT NOT NULL REFERENCES followed_sessions (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    frame_id   TEXT NOT NULL REFERENCES frames (id) ON DELETE CASCADE,
    messages   INTEGER NOT NULL CHECK (messages >= 0),
    PRIMARY KEY (session_id, key)
) STRICT;
INSERT INTO follow_frames SELECT * FROM kept_follow_frames;
CREATE INDEX follow_frames_by_frame ON follow_frames (frame_id);

DROP TABLE temp.kept_follow_files;
DROP TABLE temp.kept_follow_frames;

-- Every model call the gateway forwarded or refused: the frame it was made in, what the upstream
-- billed for what was sent (its own usage report), and what the client's own request would have
-- cost under the same prompt-cache model (`flame_model::prompt_cache`), so that each frame and
-- session shows what was billed beside what the client alone would have paid.
CREATE TABLE gateway_calls (
    id                INTEGER PRIMARY KEY,
    session_id        TEXT NOT NULL REFERENCES followed_sessions (id) ON DELETE CASCADE,
    tree_id           TEXT NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
    frame_id          TEXT NOT NULL REFERENCES frames (id) ON DELETE CASCADE,
    at                INTEGER NOT NULL,
    -- 'anthropic', 'responses' or 'chat'
    wire              TEXT NOT NULL,
    -- 'observe' or 'context'
    mode              TEXT NOT NULL CHECK (mode IN ('observe', 'context')),
    model             TEXT,
    -- The HTTP status the client received (0: the upstream could not be reached).
    status            INTEGER NOT NULL,
    -- Why the gateway refused the call (a budget), when it did; nothing was sent then.
    refused           TEXT,
    -- What the upstream reported for what was sent.
    sent_input        INTEGER NOT NULL DEFAULT 0 CHECK (sent_input >= 0),
    sent_cache_read   INTEGER NOT NULL DEFAULT 0 CHECK (sent_cache_read >= 0),
    sent_cache_write  INTEGER NOT NULL DEFAULT 0 CHECK (sent_cache_write >= 0),
    sent_cache_write_long INTEGER NOT NULL DEFAULT 0 CHECK (sent_cache_write_long >= 0),
    output            INTEGER NOT NULL DEFAULT 0 CHECK (output >= 0),
    -- The client's own request through the same cache model.
    client_input      INTEGER NOT NULL DEFAULT 0 CHECK (client_input >= 0),
    client_cache_read INTEGER NOT NULL DEFAULT 0 CHECK (client_cache_read >= 0),
    client_cache_write INTEGER NOT NULL DEFAULT 0 CHECK (client_cache_write >= 0),
    client_cache_write_long INTEGER NOT NULL DEFAULT 0 CHECK (client_cache_write_long >= 0),
    -- Where the call wrote the cache again, why: 'opening', 'masking', 'cold', 'client'.
    rewrite           TEXT CHECK (rewrite IN ('opening', 'masking', 'cold', 'client'))
) STRICT;

CREATE INDEX gateway_calls_by_frame ON gateway_calls (frame_id);
CREATE INDEX gateway_calls_by_session ON gateway_calls (session_id, at);
