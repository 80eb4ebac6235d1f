-- Issue 38, commands in a sandbox. The trees whose person allowed their sandboxed commands the
-- network from an approval prompt; cleared, like tree_allowed_kinds, when the tree's workspace
-- changes.
CREATE TABLE tree_network_allowed (
    tree_id TEXT PRIMARY KEY NOT NULL REFERENCES trees (id)
) STRICT, WITHOUT ROWID;
