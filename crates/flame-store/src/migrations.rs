//! Versioned schema migrations.
//!
//! The schema version lives in SQLite's `user_version`. Each migration runs in its own
//! transaction together with the version bump, so a crash leaves the database at a whole version.
//! Migrations are only ever appended: a released migration is never edited.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::OpenError;

struct Migration {
    version: u32,
    sql: &'static str,
}

/// Every migration, in order. Version N is at index N - 1.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        // Facts about the database itself (such as the current tree), as key/value text.
        sql: "CREATE TABLE store_meta (
                  key   TEXT PRIMARY KEY NOT NULL,
                  value TEXT NOT NULL
              ) STRICT;",
    },
    Migration { version: 2, sql: include_str!("migrations/0002_frames.sql") },
    Migration { version: 3, sql: include_str!("migrations/0003_tree_tokens.sql") },
    Migration { version: 4, sql: include_str!("migrations/0004_open_replies.sql") },
    Migration { version: 5, sql: include_str!("migrations/0005_reply_owner.sql") },
    Migration { version: 6, sql: include_str!("migrations/0006_workspace.sql") },
    Migration { version: 7, sql: include_str!("migrations/0007_checkpoints.sql") },
    Migration { version: 8, sql: include_str!("migrations/0008_search.sql") },
    Migration { version: 9, sql: include_str!("migrations/0009_usage_index.sql") },
    Migration { version: 10, sql: include_str!("migrations/0010_bulk_search.sql") },
    Migration { version: 11, sql: include_str!("migrations/0011_search_catch_up.sql") },
    Migration { version: 12, sql: include_str!("migrations/0012_startup_indexes.sql") },
    Migration { version: 13, sql: include_str!("migrations/0013_usage_columns.sql") },
    Migration { version: 14, sql: include_str!("migrations/0014_frame_search_catch_up.sql") },
    Migration { version: 15, sql: include_str!("migrations/0015_cache_true_context.sql") },
    Migration { version: 16, sql: include_str!("migrations/0016_follow.sql") },
    Migration { version: 17, sql: include_str!("migrations/0017_budgets.sql") },
    Migration { version: 18, sql: include_str!("migrations/0018_tree_network.sql") },
    Migration { version: 19, sql: include_str!("migrations/0019_gateway.sql") },
    Migration { version: 20, sql: include_str!("migrations/0020_kept_spends.sql") },
];

/// The version a freshly opened database is at.
pub const LATEST_SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

pub(crate) fn current_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// Brings the database up to [`LATEST_SCHEMA_VERSION`], refusing one that is newer.
pub(crate) fn apply(conn: &mut Connection, path: &Path) -> Result<(), OpenError> {
    let sqlite = |source| crate::classify(path, source);
    let found = current_version(conn).map_err(sqlite)?;
    if found > LATEST_SCHEMA_VERSION {
        return Err(OpenError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: LATEST_SCHEMA_VERSION,
        });
    }
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        // IMMEDIATE takes the write lock up front, so two processes opening a new database at
        // once cannot both run the same migration.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sqlite)?;
        // Another process may have migrated while this one waited for the lock.
        if current_version(&tx).map_err(sqlite)? >= migration.version {
            continue;
        }
        tx.execute_batch(migration.sql).map_err(sqlite)?;
        tx.pragma_update(None, "user_version", migration.version).map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        tracing::info!(version = migration.version, "migrated the database");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use flame_model::{Frame, IdSource, NewMessage, Role, Status, Tree, TreeId};

    use crate::{Change, HitPlace, ImportedMessage, Store};

    /// Tree `t0000000001` ("Old") focused on its root `f0000000001`, as every version stores it.
    const OLD_TREE: &str = "INSERT INTO trees (id, title, root_id, focus_id, created_at)
        VALUES ('t0000000001', 'Old', 'f0000000001', 'f0000000001', 1);";

    /// That root, "Old tree", in progress, in the columns every version has.
    const OLD_ROOT: &str = "INSERT INTO frames
        (id, tree_id, parent_id, position, title, success_criteria, status, created_at)
        VALUES ('f0000000001', 't0000000001', NULL, 0, 'Old tree', 'c', 'in_progress', 1);";

    /// A database file made by the migrations up to `version` alone, holding `rows` (SQL), opened
    /// by the store, which brings it to the latest version.
    fn opened_at(version: u32, rows: &str) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flame.db");
        let conn = Connection::open(&path).unwrap();
        for migration in MIGRATIONS.iter().filter(|m| m.version <= version) {
            conn.execute_batch(migration.sql).unwrap();
        }
        conn.pragma_update(None, "user_version", version).unwrap();
        conn.execute_batch(rows).unwrap();
        drop(conn);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), LATEST_SCHEMA_VERSION);
        (dir, store)
    }

    /// Where `words` are found, across every tree.
    fn found(store: &Store, words: &str) -> Vec<HitPlace> {
        store.search(words, None, 50).unwrap().into_iter().map(|h| h.place).collect()
    }

    /// Imports a tree of one frame holding one message of `text`.
    fn import_one_message(store: &mut Store, change: Change, seed: u64, text: &str) -> TreeId {
        let mut ids = IdSource::seeded(seed);
        let (tree, frame) = (ids.tree_id(), ids.frame_id());
        let imported = Tree {
            id: tree.clone(),
            title: "Imported".into(),
            root: frame.clone(),
            focus: frame.clone(),
            created_at: 8,
            workspace: None,
        };
        let frames =
            [Frame::new(frame, tree.clone(), None, 0, "Imported", "c", Status::InProgress, 8)];
        let messages = [ImportedMessage {
            frame: 0,
            message: NewMessage::text(Role::User, text),
            tokens: 1,
            at: 8,
        }];
        store.import_tree(change, &imported, &frames, &messages).unwrap();
        tree
    }

    #[test]
    fn versions_are_dense_and_start_at_one() {
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            assert_eq!(migration.version as usize, index + 1);
        }
    }

    /// A database at version 5 (before workspaces) with a tree and a finished frame opens at
    /// the latest version: the tree has no workspace, no allowed kinds, no trail, and takes
    /// them from then on.
    #[test]
    fn a_version_5_database_gains_workspaces_and_trails() {
        use flame_model::{Actor, FileTrail, FrameId, ToolKind, ToolResult};

        let (_dir, mut store) = opened_at(5, &[OLD_TREE, OLD_ROOT].concat());
        let (tree, root) = (
            TreeId::from_trusted("t0000000001".into()),
            FrameId::from_trusted("f0000000001".into()),
        );
        assert_eq!(store.tree(&tree).unwrap().workspace, None);
        assert_eq!(store.allowed_kinds(&tree).unwrap(), vec![]);
        assert_eq!(store.file_trail(&root).unwrap(), FileTrail::default());
        // Version 7: no checkpoints yet, and no frame rolled back.
        assert_eq!(store.frame(&root).unwrap().rolled_back_at, None);
        assert!(store.checkpoint_workspaces().unwrap().is_empty());

        let change = Change { actor: Actor::Person, at: 2 };
        store.set_workspace(change, &tree, Some("/work/project")).unwrap();
        store.allow_kind(change, &tree, ToolKind::Reading).unwrap();
        let result = NewMessage {
            tool_result: Some(ToolResult {
                detail: None,
                is_error: false,
                name: Some("read_file".into()),
                tool_call_id: "c1".into(),
            }),
            ..NewMessage::text(Role::Tool, "1 line")
        };
        let trail = FileTrail::new(["README.md".to_owned()], []);
        store.add_tool_result(change, &root, &result, 3, &trail).unwrap();
        assert_eq!(store.tree(&tree).unwrap().workspace.as_deref(), Some("/work/project"));
        assert_eq!(store.allowed_kinds(&tree).unwrap(), vec![ToolKind::Reading]);
        assert_eq!(store.file_trail(&root).unwrap(), trail);
    }

    /// A database at version 8 (before the usage index) opens with its replies' usage indexed,
    /// usage that is not JSON included as nothing rather than failing the migration.
    #[test]
    fn a_version_8_database_gains_the_usage_index() {
        use flame_model::Usage;
        use flame_model::cost::ModelUsage;

        let (_dir, store) = opened_at(
            8,
            &[OLD_TREE, OLD_ROOT, r#"INSERT INTO messages (id, frame_id, role, content, tokens, model, usage, created_at)
                       VALUES (1, 'f0000000001', 'assistant', 'a', 1, 'claude-opus-4-6', '{"input_tokens":3,"cache_read_input_tokens":5}', 2),
                              (2, 'f0000000001', 'assistant', 'b', 1, 'claude-opus-4-6', '{not json', 3),
                              (3, 'f0000000001', 'user', 'c', 1, NULL, NULL, 4);"#].concat(),
        );
        let rows = store.usage_by_frame_and_model(&TreeId::from_trusted("t0000000001".into()));
        let usage = Usage { input_tokens: 3, cache_read_tokens: 5, ..Usage::default() };
        assert_eq!(
            rows.unwrap().into_iter().map(|(_, u)| u).collect::<Vec<_>>(),
            [ModelUsage { model: Some("claude-opus-4-6".into()), usage }]
        );
    }

    /// A database at version 14 opens with the hour's cache writes that Claude Code recorded by
    /// lifetime (and an earlier import stored in its usage JSON) apart from the five minutes',
    /// in the sums and in each message read back.
    #[test]
    fn a_version_14_database_keeps_the_hours_cache_writes_apart() {
        use flame_model::cost::ModelUsage;
        use flame_model::{FrameId, Usage};

        let (_dir, store) = opened_at(
            14,
            &[OLD_TREE, OLD_ROOT, r#"INSERT INTO messages (id, frame_id, role, content, tokens, model, usage, created_at,
                           usage_input, usage_output, usage_cache_read, usage_cache_write)
                       VALUES (1, 'f0000000001', 'assistant', 'a', 1, 'claude-opus-4-6', '{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":5,"cache_creation":{"ephemeral_5m_input_tokens":4,"ephemeral_1h_input_tokens":6},"output_tokens":2}', 2, 3, 2, 5, 10),
                              (2, 'f0000000001', 'assistant', 'b', 1, 'claude-opus-4-6', NULL, 3, 1, 1, 1, 1);"#].concat(),
        );
        let rows = store.usage_by_frame_and_model(&TreeId::from_trusted("t0000000001".into()));
        let sum = Usage {
            input_tokens: 4,
            output_tokens: 3,
            cache_read_tokens: 6,
            cache_write_tokens: 5,
            cache_write_long_tokens: 6,
        };
        assert_eq!(
            rows.unwrap().into_iter().map(|(_, u)| u).collect::<Vec<_>>(),
            [ModelUsage { model: Some("claude-opus-4-6".into()), usage: sum }]
        );
        let messages = store.messages(&FrameId::from_trusted("f0000000001".into())).unwrap();
        assert_eq!(messages[0].usage.unwrap().cache_write_long_tokens, 6);
        assert_eq!(messages[0].usage.unwrap().cache_write_tokens, 4);
        assert_eq!(messages[1].usage.unwrap().cache_write_long_tokens, 0);
    }

    /// A database at version 12 (usage in JSON alone) opens with its replies' counts in the
    /// usage columns, read from every shape earlier versions and broken files left (Anthropic's
    /// names for the cache counts, a count that is not a number, a negative one, one past 2^32,
    /// text that is not JSON), so that the sums are those the JSON index gave; each message still
    /// reads back as its JSON, and messages written afterwards are added up with them.
    #[test]
    fn a_version_12_database_gains_usage_columns_with_the_same_sums() {
        use flame_model::cost::ModelUsage;
        use flame_model::{Actor, FrameId, MessageId, Usage};

        let (_dir, mut store) = opened_at(
            12,
            &[OLD_TREE, OLD_ROOT, r#"INSERT INTO messages (id, frame_id, role, content, tokens, model, usage, created_at)
                       VALUES (1, 'f0000000001', 'assistant', 'a', 1, 'claude-haiku-4-5', '{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4,"service_tier":"standard"}', 2),
                              (2, 'f0000000001', 'assistant', 'b', 1, 'claude-haiku-4-5', '{"input_tokens":"many","output_tokens":-5,"cache_read_tokens":8589934592}', 3),
                              (3, 'f0000000001', 'assistant', 'c', 1, 'claude-haiku-4-5', '{not json', 4),
                              (4, 'f0000000001', 'assistant', 'd', 1, 'gpt-4o', '{"cache_read_tokens":5,"cache_write_tokens":6,"input_tokens":7,"output_tokens":8}', 5),
                              (5, 'f0000000001', 'user', 'e', 1, NULL, NULL, 6);"#].concat(),
        );
        let (tree, root) = (
            TreeId::from_trusted("t0000000001".into()),
            FrameId::from_trusted("f0000000001".into()),
        );
        let usage = |input_tokens, output_tokens, cache_read_tokens, cache_write_tokens| Usage {
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_write_tokens,
            ..Usage::default()
        };
        let sums = |store: &Store| {
            let mut rows: Vec<ModelUsage> = store
                .usage_by_frame_and_model(&tree)
                .unwrap()
                .into_iter()
                .map(|(frame, u)| {
                    assert_eq!(frame, root);
                    u
                })
                .collect();
            rows.sort_by(|a, b| a.model.cmp(&b.model));
            rows
        };
        let model = |name: &str, u| ModelUsage { model: Some(name.into()), usage: u };
        assert_eq!(
            sums(&store),
            [
                model("claude-haiku-4-5", usage(1, 2, 3 + (1 << 32), 4)),
                model("gpt-4o", usage(7, 8, 5, 6)),
            ]
        );
        let read: Vec<Option<Usage>> = store
            .messages_by_id(&[1, 2, 3, 4, 5].map(MessageId))
            .unwrap()
            .into_iter()
            .map(|m| m.usage)
            .collect();
        assert_eq!(
            read,
            [Some(usage(1, 2, 3, 4)), None, None, Some(usage(7, 8, 5, 6)), None],
            "each as its JSON reads (a shape the reader refuses reads as none, as before)"
        );

        let change = Change { actor: Actor::Person, at: 7 };
        let mut reply = NewMessage::text(Role::Assistant, "f");
        reply.model = Some("gpt-4o".into());
        reply.usage = Some(usage(1, 1, 1, 1));
        let written = store.add_message(change, &root, &reply, 1).unwrap();
        assert_eq!(store.messages_by_id(&[written.id]).unwrap()[0].usage, reply.usage);
        assert_eq!(sums(&store)[1], model("gpt-4o", usage(8, 9, 6, 7)));
    }

    /// A database at version 7 (before search) opens with its messages, tool calls, titles and
    /// results already searchable, a reply left open not indexed until it is finished, and
    /// stored tool calls that are not JSON left out rather than failing the migration.
    #[test]
    fn a_version_7_database_gains_a_search_index_of_what_it_holds() {
        use flame_model::{Actor, FrameId, MessageId};

        let (_dir, mut store) = opened_at(
            7,
            r#"INSERT INTO trees (id, title, root_id, focus_id, created_at)
                       VALUES ('t0000000001', 'Old', 'f0000000001', 'f0000000002', 1);
                   INSERT INTO frames (id, tree_id, parent_id, position, title, success_criteria, status, results, created_at)
                       VALUES ('f0000000001', 't0000000001', NULL, 0, 'Old tree', 'c', 'in_progress', NULL, 1),
                              ('f0000000002', 't0000000001', 'f0000000001', 0, 'Find the parser', 'c', 'completed', 'The lexer was rewritten', 2);
                   INSERT INTO messages (id, frame_id, role, content, tool_calls, tokens, created_at, open)
                       VALUES (1, 'f0000000002', 'user', 'where is the oldword', NULL, 3, 3, 0),
                              (2, 'f0000000002', 'assistant', '', '[{"input": {"pattern": "grepword"}, "id": "c1", "name": "grep"}]', 3, 4, 0),
                              (3, 'f0000000002', 'assistant', 'broken calls', '{not json', 3, 5, 0),
                              (4, 'f0000000001', 'assistant', 'streamingword', NULL, 0, 6, 1);"#,
        );
        store.check_search_index().unwrap();
        let message = |id| HitPlace::Message { id: MessageId(id), role: Role::Assistant };
        assert_eq!(
            found(&store, "oldword"),
            [HitPlace::Message { id: MessageId(1), role: Role::User }]
        );
        assert_eq!(found(&store, "grepword"), [message(2)], "arguments stored as `input`");
        assert_eq!(found(&store, "broken"), [message(3)]);
        assert_eq!(found(&store, "lexer"), [HitPlace::Results]);
        assert_eq!(found(&store, "parser"), [HitPlace::Results]);
        assert!(found(&store, "streamingword").is_empty(), "an open reply waits to be finished");

        let change = Change { actor: Actor::Person, at: 7 };
        let finished = NewMessage::text(Role::Assistant, "streamingword done");
        store.finish_reply(change, MessageId(4), &finished, 2).unwrap();
        assert_eq!(found(&store, "streamingword"), [message(4)]);
        let hit = &store.search("streamingword", None, 1).unwrap()[0];
        assert_eq!(hit.frame, FrameId::from_trusted("f0000000001".into()));
        store.check_search_index().unwrap();
    }

    /// A database at version 9 (indexes with two prefix indexes, `search_deferred`) opens with
    /// the indexes made again from its rows: everything is found as before, prefixes of three and
    /// of more characters included, the table is gone, and live writes and imports are indexed.
    #[test]
    fn a_version_9_database_has_its_search_indexes_made_again() {
        use flame_model::{Actor, FrameId, MessageId};

        let (_dir, mut store) = opened_at(
            9,
            &[OLD_TREE, r#"INSERT INTO frames (id, tree_id, parent_id, position, title, success_criteria, status, results, created_at)
                       VALUES ('f0000000001', 't0000000001', NULL, 0, 'Serve the pages', 'c', 'in_progress', NULL, 1);
                   INSERT INTO messages (id, frame_id, role, content, tool_calls, tokens, created_at)
                       VALUES (1, 'f0000000001', 'user', 'the webserver crashed', NULL, 3, 2),
                              (2, 'f0000000001', 'assistant', '', '[{"arguments": {"path": "nginx.conf"}, "id": "c1", "name": "read_file"}]', 3, 3);"#].concat(),
        );
        store.check_search_index().unwrap();
        let user = HitPlace::Message { id: MessageId(1), role: Role::User };
        let call = HitPlace::Message { id: MessageId(2), role: Role::Assistant };
        assert_eq!(found(&store, "webserver"), [user]);
        assert_eq!(found(&store, "web"), [user], "a prefix of three characters");
        assert_eq!(found(&store, "webs"), [user], "a prefix of four");
        assert_eq!(found(&store, "nginx"), [call]);
        assert_eq!(found(&store, "pages"), [HitPlace::Results]);
        assert_eq!(found(&store, "ser"), [HitPlace::Results]);
        let tables: i64 = store
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 'search_deferred'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 0);

        let change = Change { actor: Actor::Person, at: 7 };
        let root = FrameId::from_trusted("f0000000001".into());
        store.add_message(change, &root, &NewMessage::text(Role::User, "livelyword"), 1).unwrap();
        assert_eq!(found(&store, "livelyword").len(), 1);

        let tree = import_one_message(&mut store, change, 9, "importedword");
        let hits = store.search("importedword", Some(&tree), 50).unwrap();
        assert_eq!(hits.len(), 1);
        assert!(store.search("webserver", Some(&tree), 50).unwrap().is_empty());
        assert_eq!(
            store
                .search("webserver", Some(&TreeId::from_trusted("t0000000001".into())), 50)
                .unwrap()
                .len(),
            1
        );
        store.check_search_index().unwrap();
    }

    /// A database at version 10 (imports indexed their messages themselves) keeps its indexes as
    /// they are: what it holds is found, live writes are indexed by the new triggers, and an
    /// import's messages wait in `search_pending` until a search indexes them.
    #[test]
    fn a_version_10_database_keeps_its_index_and_leaves_imports_to_the_catch_up() {
        use flame_model::{Actor, FrameId, MessageId};

        let (_dir, mut store) = opened_at(
            10,
            &[OLD_TREE, r#"INSERT INTO frames (id, tree_id, parent_id, position, title, success_criteria, status, results, created_at)
                       VALUES ('f0000000001', 't0000000001', NULL, 0, 'Serve the pages', 'c', 'in_progress', NULL, 1);
                   INSERT INTO messages (id, frame_id, role, content, tool_calls, tokens, created_at)
                       VALUES (1, 'f0000000001', 'user', 'the webserver crashed', NULL, 3, 2);"#].concat(),
        );
        store.check_search_index().unwrap();
        let pending = |store: &Store| -> i64 {
            store.conn.query_row("SELECT count(*) FROM search_pending", [], |r| r.get(0)).unwrap()
        };
        assert_eq!(pending(&store), 0);
        assert_eq!(
            found(&store, "webserver"),
            [HitPlace::Message { id: MessageId(1), role: Role::User }]
        );
        assert_eq!(found(&store, "pages"), [HitPlace::Results]);

        let change = Change { actor: Actor::Person, at: 7 };
        let root = FrameId::from_trusted("f0000000001".into());
        store.add_message(change, &root, &NewMessage::text(Role::User, "livelyword"), 1).unwrap();
        assert_eq!(pending(&store), 0, "a live message is indexed as it is written");
        assert_eq!(found(&store, "livelyword").len(), 1);

        let tree = import_one_message(&mut store, change, 10, "importedword");
        assert_eq!(pending(&store), 1);
        assert_eq!(store.search("importedword", Some(&tree), 50).unwrap().len(), 1);
        assert_eq!(pending(&store), 0);
        store.check_search_index().unwrap();
    }

    /// A database at version 17 (budgets summed when asked) opens with each budget's subtree
    /// spend kept, summed once by the migration (a frame's own replies, its children's, by
    /// model, with their tool calls; a reply that recorded nothing keeps no row), and its stored
    /// contexts numbered 0 until they are saved again.
    #[test]
    fn a_version_17_database_keeps_what_each_budget_spent() {
        use flame_model::FrameId;

        let (_dir, store) = opened_at(
            17,
            &[OLD_TREE, OLD_ROOT, r#"INSERT INTO frames (id, tree_id, parent_id, position, title, success_criteria, status, created_at)
                       VALUES ('f0000000002', 't0000000001', 'f0000000001', 0, 'Child', 'c', 'in_progress', 2);
                   INSERT INTO frame_budgets (frame_id, tree_id, tokens) VALUES ('f0000000001', 't0000000001', 1000),
                                                                                ('f0000000002', 't0000000001', 500);
                   INSERT INTO messages (id, frame_id, role, content, tokens, model, created_at, usage_input, usage_output, tool_call_count)
                       VALUES (1, 'f0000000001', 'assistant', 'a', 1, 'gpt-4o', 3, 10, 1, 0),
                              (2, 'f0000000002', 'assistant', 'b', 1, 'gpt-4o', 4, 20, 2, 3),
                              (3, 'f0000000002', 'assistant', 'c', 1, NULL, 5, NULL, NULL, 0),
                              (4, 'f0000000002', 'user', 'd', 1, NULL, 6, NULL, NULL, 0);
                   INSERT INTO frame_contexts (frame_id, state) VALUES ('f0000000002', '{}');"#]
                .concat(),
        );
        let child = FrameId::from_trusted("f0000000002".into());
        let on_path = store.budgets_on_path(&child).unwrap();
        let spent: Vec<(u64, u64, u64, usize)> = on_path
            .iter()
            .map(|b| {
                let input = b.usage.by_model.iter().map(|r| r.usage.input_tokens).sum();
                let output = b.usage.by_model.iter().map(|r| r.usage.output_tokens).sum();
                (input, output, b.usage.tool_calls, b.usage.by_model.len())
            })
            .collect();
        assert_eq!(spent, [(30, 3, 3, 1), (20, 2, 3, 1)], "the root's, then the child's");
        for budgeted in &on_path {
            let summed = store.subtree_usage(&budgeted.frame).unwrap();
            assert_eq!(budgeted.usage.tool_calls, summed.tool_calls);
        }
        assert_eq!(store.frame_context_version(&child).unwrap(), Some(0));
    }
}
