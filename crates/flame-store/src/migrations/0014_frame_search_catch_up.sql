-- Issue 19, a fast bulk import. A bulk import now leaves its frames to be indexed for search
-- afterwards too, as it leaves its messages (migration 11): indexing 100k frames' titles and
-- results was a fifteenth of a large import's time. It names its tree here, in its own
-- transaction, and `Store::catch_up_search` indexes the tree's frames before any search reads
-- the index (`search.rs`).
--
-- The invariant: `frame_search` holds exactly the frames that have a row in
-- `frame_search_rows`, as before, and every frame has one but the frames a bulk import wrote of
-- a tree named here. So the frames' triggers need no test: a frame without a search row is one
-- they already leave alone (each finds its row first), whatever happens to it before the
-- catch-up, which gives each such frame of a named tree its row and indexes it with what it
-- holds then. A frame written live into a named tree gets its row and is indexed as before.
CREATE TABLE frame_search_pending (
    tree TEXT PRIMARY KEY NOT NULL
) STRICT;
