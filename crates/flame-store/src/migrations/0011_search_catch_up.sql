-- Issue 19, a fast bulk import. Indexing a million imported messages for search was over half of
-- a large import's time (FTS5 tokenizing, writing and merging its segments), so a bulk import
-- now leaves its messages to be indexed afterwards: it records the range of message ids it wrote
-- here, in its own transaction, and `Store::catch_up_search` indexes every range before any
-- search reads the index (`search.rs`). The frames' titles and results, a tenth as many rows,
-- are still indexed by the import itself.
--
-- The invariant: `message_search` holds exactly the closed messages whose id is in no range
-- below. So the triggers leave a message in a range alone, whatever happens to it (a reply
-- finished, an edit, a deleted tree): the catch-up indexes what the range's messages hold when it
-- runs, and a message deleted meanwhile is simply not there to index. A new message whose id
-- falls in a range (SQLite may give a deleted message's id again) waits for the catch-up too. No
-- two ranges overlap: an import whose ids could reach into a range indexes that range first.
--
-- `tree` is the imported tree: the catch-up reads the range's messages of that tree without
-- looking up each one's frame (which took as long as the indexing), and any other message in the
-- range (only a reused id can be one) with its frame looked up.
CREATE TABLE search_pending (
    first INTEGER NOT NULL,
    last  INTEGER NOT NULL,
    tree  TEXT NOT NULL,
    CHECK (first <= last)
) STRICT;

-- Migration 10's message triggers, each with the test above.
DROP TRIGGER message_search_insert;
DROP TRIGGER message_search_unindex;
DROP TRIGGER message_search_reindex;
DROP TRIGGER message_search_delete;

-- `import.rs` takes this trigger away during a large import and creates it again from its text
-- here (read back from `sqlite_schema`), so this is its only definition.
CREATE TRIGGER message_search_insert AFTER INSERT ON messages
WHEN NEW.open = 0
     AND NOT EXISTS (SELECT 1 FROM search_pending WHERE NEW.id BETWEEN first AND last) BEGIN
    INSERT INTO message_search (rowid, content, calls, tree)
        SELECT id, content, calls, tree FROM message_search_text WHERE id = NEW.id;
END;

CREATE TRIGGER message_search_unindex BEFORE UPDATE OF content, tool_calls, open, frame_id ON messages
WHEN OLD.open = 0
     AND NOT EXISTS (SELECT 1 FROM search_pending WHERE OLD.id BETWEEN first AND last) BEGIN
    INSERT INTO message_search (message_search, rowid, content, calls, tree)
        SELECT 'delete', id, content, calls, tree FROM message_search_text WHERE id = OLD.id;
END;

CREATE TRIGGER message_search_reindex AFTER UPDATE OF content, tool_calls, open, frame_id ON messages
WHEN NEW.open = 0
     AND NOT EXISTS (SELECT 1 FROM search_pending WHERE NEW.id BETWEEN first AND last) BEGIN
    INSERT INTO message_search (rowid, content, calls, tree)
        SELECT id, content, calls, tree FROM message_search_text WHERE id = NEW.id;
END;

CREATE TRIGGER message_search_delete BEFORE DELETE ON messages
WHEN OLD.open = 0
     AND NOT EXISTS (SELECT 1 FROM search_pending WHERE OLD.id BETWEEN first AND last) BEGIN
    INSERT INTO message_search (message_search, rowid, content, calls, tree)
        SELECT 'delete', id, content, calls, tree FROM message_search_text WHERE id = OLD.id;
END;
