-- Issue 18, search across every frame. Two FTS5 indexes: one over the messages, one over the
-- frames' titles and results. Both are external-content tables, so the text is stored once (in
-- `messages` and `frames`) and FTS5 keeps only its index. Triggers keep them current: a trigger
-- runs inside the statement that fired it, so the index is always written in the same transaction
-- as the row it indexes, whatever code writes the row (a live message, a finished reply, a pop,
-- an edit, a deleted tree); a bulk import indexes its own rows before it commits (see
-- `search_deferred`).

-- What the message index reads: a closed message's text, and its tool calls' names and arguments
-- (the model's JSON, keys included, with the escapes `\n`, `\r` and `\t` read as spaces so the
-- words on either side stay words; earlier imports stored the arguments as `input`). FTS5 reads
-- this view from inside itself, where table-valued functions such as `json_each` cannot be
-- found, so the calls are walked by index with a recursive CTE. A reply still streaming
-- (`open = 1`) is rewritten every few hundred milliseconds; it is indexed once, when it is
-- finished. Stored JSON that does not parse is left out rather than failing the write. The tree's
-- id is indexed as one word, so a search within a tree is an FTS5 match rather than a filter
-- over every match; searches match people's words only in the other columns.
CREATE VIEW message_search_text AS
SELECT m.id AS id,
       m.content AS content,
       CASE WHEN m.tool_calls IS NOT NULL AND json_valid(m.tool_calls)
                 AND json_type(m.tool_calls) = 'array' AND json_array_length(m.tool_calls) > 0
            THEN (WITH RECURSIVE call (i) AS (
                      SELECT 0
                      UNION ALL
                      SELECT i + 1 FROM call WHERE i + 1 < json_array_length(m.tool_calls)
                  )
                  SELECT group_concat(
                             coalesce(json_extract(m.tool_calls, '$[' || i || '].name'), '') || ' ' ||
                             replace(replace(replace(
                                 coalesce(json_extract(m.tool_calls, '$[' || i || '].arguments'),
                                          json_extract(m.tool_calls, '$[' || i || '].input'), ''),
                                 '\n', ' '), '\r', ' '), '\t', ' '),
                             ' ')
                  FROM call)
       END AS calls,
       f.tree_id AS tree
FROM messages AS m JOIN frames AS f ON f.id = m.frame_id
WHERE m.open = 0;

-- unicode61 with diacritics removed: "café" is found by "cafe". A search's last word is also a
-- prefix; prefixes of 3 and 4 characters have their own index, because FTS5 finds any other
-- prefix by merging the lists of every word it begins, which for a short prefix on a large store
-- is tens of milliseconds (`benches/fts.rs`). Searches are not ranked by BM25, so the per-row
-- token counts it needs are not kept (`columnsize = 0`).
CREATE VIRTUAL TABLE message_search USING fts5(
    content, calls, tree,
    content = 'message_search_text', content_rowid = 'id',
    prefix = '3 4', columnsize = 0,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Holds a row only inside a bulk import's transaction (`import.rs`), which holds the write lock,
-- so every row written meanwhile is the import's: the insert triggers leave those rows to the
-- import, which indexes them with one statement per index before it commits. FTS5 writes the
-- terms it holds to disk at the start of each statement that changes it, so row-by-row indexing
-- of a large import leaves a sliver of index per row to merge later.
CREATE TABLE search_deferred (
    only INTEGER PRIMARY KEY CHECK (only = 1)
) STRICT;

-- An external-content index is told what to remove with the values it indexed, so removals run
-- before the row changes, reading the same view.
CREATE TRIGGER message_search_insert AFTER INSERT ON messages
WHEN NEW.open = 0 AND NOT EXISTS (SELECT 1 FROM search_deferred) BEGIN
    INSERT INTO message_search (rowid, content, calls, tree)
        SELECT id, content, calls, tree FROM message_search_text WHERE id = NEW.id;
END;

CREATE TRIGGER message_search_unindex BEFORE UPDATE OF content, tool_calls, open, frame_id ON messages
WHEN OLD.open = 0 BEGIN
    INSERT INTO message_search (message_search, rowid, content, calls, tree)
        SELECT 'delete', id, content, calls, tree FROM message_search_text WHERE id = OLD.id;
END;

CREATE TRIGGER message_search_reindex AFTER UPDATE OF content, tool_calls, open, frame_id ON messages
WHEN NEW.open = 0 BEGIN
    INSERT INTO message_search (rowid, content, calls, tree)
        SELECT id, content, calls, tree FROM message_search_text WHERE id = NEW.id;
END;

CREATE TRIGGER message_search_delete BEFORE DELETE ON messages WHEN OLD.open = 0 BEGIN
    INSERT INTO message_search (message_search, rowid, content, calls, tree)
        SELECT 'delete', id, content, calls, tree FROM message_search_text WHERE id = OLD.id;
END;

-- A frame's row in the frame index. `frames` has a text key, and SQLite's VACUUM may renumber
-- the hidden rowid of such a table, so the index is keyed by this table's own integer id.
CREATE TABLE frame_search_rows (
    id       INTEGER PRIMARY KEY,
    frame_id TEXT NOT NULL UNIQUE
) STRICT;

CREATE VIEW frame_search_text AS
SELECT r.id AS id, f.title AS title, f.results AS results, f.tree_id AS tree
FROM frame_search_rows AS r JOIN frames AS f ON f.id = r.frame_id;

CREATE VIRTUAL TABLE frame_search USING fts5(
    title, results, tree,
    content = 'frame_search_text', content_rowid = 'id',
    prefix = '3 4', columnsize = 0,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER frame_search_insert AFTER INSERT ON frames
WHEN NOT EXISTS (SELECT 1 FROM search_deferred) BEGIN
    INSERT INTO frame_search_rows (frame_id) VALUES (NEW.id);
    INSERT INTO frame_search (rowid, title, results, tree)
        SELECT id, title, results, tree FROM frame_search_text
        WHERE id = (SELECT id FROM frame_search_rows WHERE frame_id = NEW.id);
END;

CREATE TRIGGER frame_search_unindex BEFORE UPDATE OF title, results, tree_id ON frames BEGIN
    INSERT INTO frame_search (frame_search, rowid, title, results, tree)
        SELECT 'delete', r.id, OLD.title, OLD.results, OLD.tree_id
        FROM frame_search_rows AS r WHERE r.frame_id = OLD.id;
END;

CREATE TRIGGER frame_search_reindex AFTER UPDATE OF title, results, tree_id ON frames BEGIN
    INSERT INTO frame_search (rowid, title, results, tree)
        SELECT r.id, NEW.title, NEW.results, NEW.tree_id
        FROM frame_search_rows AS r WHERE r.frame_id = NEW.id;
END;

CREATE TRIGGER frame_search_delete BEFORE DELETE ON frames BEGIN
    INSERT INTO frame_search (frame_search, rowid, title, results, tree)
        SELECT 'delete', r.id, OLD.title, OLD.results, OLD.tree_id
        FROM frame_search_rows AS r WHERE r.frame_id = OLD.id;
    DELETE FROM frame_search_rows WHERE frame_id = OLD.id;
END;

-- The rows written before this version.
INSERT INTO frame_search_rows (frame_id) SELECT id FROM frames ORDER BY rowid;
INSERT INTO message_search (message_search) VALUES ('rebuild');
INSERT INTO frame_search (frame_search) VALUES ('rebuild');
