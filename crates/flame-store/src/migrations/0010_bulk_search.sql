-- Issue 19, a fast bulk import. A large import now writes its rows with neither the search
-- indexes' insert triggers nor the tables' secondary indexes in place, and indexes the rows in
-- bulk before it commits (`import.rs`); live writes are indexed by the triggers as before. The
-- indexes are made again, with one prefix index instead of two.

-- An insert trigger, even one whose WHEN clause is false, makes SQLite keep a statement journal
-- for every insert into its table (a copy of each page the statement changes), which cost an
-- import of a million messages seconds. A bulk import drops these two triggers inside its own
-- transaction and creates them again from this text before it commits, so no other connection
-- ever sees the tables without them; `search_deferred`, which held the triggers back row by row,
-- is no longer needed.
DROP TRIGGER message_search_insert;
DROP TRIGGER frame_search_insert;
DROP TABLE search_deferred;

-- A message's indexed columns but its tree, read from `messages` alone: a bulk import knows its
-- tree, so it indexes from this view and names the tree itself, where looking up each message's
-- frame for it (as `message_search_text` does) took as long as the indexing. The tool calls as
-- migration 8 reads them (`0008_search.sql` says why they are walked this way).
CREATE VIEW message_search_columns AS
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
       m.frame_id AS frame_id,
       m.open AS open
FROM messages AS m;

-- What the message index reads, as in migration 8, now over the view above so that the calls
-- are read one way only.
DROP VIEW message_search_text;
CREATE VIEW message_search_text AS
SELECT c.id AS id, c.content AS content, c.calls AS calls, f.tree_id AS tree
FROM message_search_columns AS c JOIN frames AS f ON f.id = c.frame_id
WHERE c.open = 0;

-- Both indexes again, as in migration 8 but for the prefixes: only prefixes of 3 characters have
-- their own index now. A word adds itself and each prefix indexed to the index, so the second
-- prefix index made every write a third larger (a million messages of a 50,000-word vocabulary
-- took a third longer to import, and their index was 345 MiB rather than 255). A 3-character
-- prefix matches so many words that merging their lists took a search over a million messages
-- a tenth of a second, which is why it keeps its index; a prefix of 4 or more characters
-- matches few enough that merging them takes a few milliseconds (`benches/fts.rs`).
DROP TABLE message_search;
DROP TABLE frame_search;

CREATE VIRTUAL TABLE message_search USING fts5(
    content, calls, tree,
    content = 'message_search_text', content_rowid = 'id',
    prefix = '3', columnsize = 0,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE frame_search USING fts5(
    title, results, tree,
    content = 'frame_search_text', content_rowid = 'id',
    prefix = '3', columnsize = 0,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Migration 8's insert triggers without the `search_deferred` test. `import.rs` reads their text
-- back from `sqlite_schema` to create them again, so this is their only definition.
CREATE TRIGGER message_search_insert AFTER INSERT ON messages WHEN NEW.open = 0 BEGIN
    INSERT INTO message_search (rowid, content, calls, tree)
        SELECT id, content, calls, tree FROM message_search_text WHERE id = NEW.id;
END;

CREATE TRIGGER frame_search_insert AFTER INSERT ON frames BEGIN
    INSERT INTO frame_search_rows (frame_id) VALUES (NEW.id);
    INSERT INTO frame_search (rowid, title, results, tree)
        SELECT id, title, results, tree FROM frame_search_text
        WHERE id = (SELECT id FROM frame_search_rows WHERE frame_id = NEW.id);
END;

-- The rows written before this version.
INSERT INTO message_search (message_search) VALUES ('rebuild');
INSERT INTO frame_search (frame_search) VALUES ('rebuild');
