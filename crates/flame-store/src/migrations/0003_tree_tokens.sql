-- A running total of the tokens of every message in a tree: what a linear chat of the same work
-- would send, read by every context assembly, so it is kept rather than summed each time.
ALTER TABLE trees ADD COLUMN message_tokens INTEGER NOT NULL DEFAULT 0;
UPDATE trees SET message_tokens = (SELECT coalesce(sum(tokens), 0) FROM frames WHERE tree_id = trees.id);
