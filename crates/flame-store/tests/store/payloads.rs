//! A message's tool calls, tool result and usage read back typed from every shape earlier
//! versions stored: the live agent's, and the one imports of Claude Code and OpenCode wrote.

use flame_model::{Actor, IdSource, NewMessage, Role, ToolCall, ToolResult, Usage};
use flame_store::{Change, Store};

fn change(at: i64) -> Change {
    Change { actor: Actor::Person, at }
}

/// A store with one message in its root, whose payload columns the test then overwrites with
/// `(tool_calls, tool_result, usage)` as raw text, the way an earlier version left them.
fn stored_as(columns: [Option<&str>; 3]) -> flame_model::Message {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let mut ids = IdSource::seeded(1);
    let (tree, root) = (ids.tree_id(), ids.frame_id());
    store.create_tree(change(1), &tree, &root, "Build the app", "A working app", None).unwrap();
    store.add_message(change(2), &root, &NewMessage::text(Role::Assistant, "x"), 1).unwrap();
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    conn.execute(
        "UPDATE messages SET tool_calls = ?1, tool_result = ?2, usage = ?3",
        rusqlite::params![columns[0], columns[1], columns[2]],
    )
    .unwrap();
    store.messages(&root).unwrap().remove(0)
}

#[test]
fn what_the_live_agent_stored_reads_back_typed() {
    let m = stored_as([
        Some(r#"[{"arguments":{"title":"Parser"},"id":"c1","name":"push_frame"}]"#),
        Some(r#"{"is_error":true,"name":"push_frame","tool_call_id":"c1"}"#),
        Some(
            r#"{"cache_read_tokens":5,"cache_write_tokens":6,"input_tokens":7,"output_tokens":8}"#,
        ),
    ]);
    assert_eq!(
        m.tool_calls,
        Some(vec![ToolCall {
            arguments: serde_json::json!({"title": "Parser"}),
            id: "c1".into(),
            name: "push_frame".into(),
        }])
    );
    assert_eq!(
        m.tool_result,
        Some(ToolResult {
            detail: None,
            is_error: true,
            name: Some("push_frame".into()),
            tool_call_id: "c1".into()
        })
    );
    assert_eq!(
        m.usage,
        Some(Usage {
            cache_read_tokens: 5,
            cache_write_tokens: 6,
            input_tokens: 7,
            output_tokens: 8,
            ..Usage::default()
        })
    );
}

#[test]
fn what_imports_stored_reads_back_typed() {
    let m = stored_as([
        Some(r#"[{"id":"toolu_1","input":{"command":"ls"},"name":"Bash"}]"#),
        Some(r#"{"is_error":false,"tool_use_id":"toolu_1"}"#),
        Some(
            r#"{"cache_creation":{"ephemeral_5m_input_tokens":9},"cache_creation_input_tokens":9,"cache_read_input_tokens":4,"input_tokens":3,"output_tokens":2,"service_tier":"standard"}"#,
        ),
    ]);
    assert_eq!(
        m.tool_calls,
        Some(vec![ToolCall {
            arguments: serde_json::json!({"command": "ls"}),
            id: "toolu_1".into(),
            name: "Bash".into(),
        }])
    );
    assert_eq!(
        m.tool_result,
        Some(ToolResult {
            detail: None,
            is_error: false,
            name: None,
            tool_call_id: "toolu_1".into()
        })
    );
    assert_eq!(
        m.usage,
        Some(Usage {
            cache_read_tokens: 4,
            cache_write_tokens: 9,
            input_tokens: 3,
            output_tokens: 2,
            ..Usage::default()
        })
    );
}

#[test]
fn a_payload_of_another_shape_reads_as_none_and_the_message_still_reads() {
    let m = stored_as([Some(r#"{"not":"a list"}"#), Some("[1, 2]"), Some(r#""many""#)]);
    assert_eq!((m.tool_calls, m.tool_result, m.usage), (None, None, None));
    assert_eq!(m.content, "x");
}

/// A frame's context (issue 29) is kept with its note in one transaction, its opening apart and
/// written only when a new one is made. A stored context that cannot be read (damaged, or written
/// by a newer Flame) is no context: the next call makes a new opening, which costs a cache miss
/// and loses nothing.
#[test]
fn a_frames_context_is_kept_with_its_note_and_an_unreadable_one_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let mut ids = IdSource::seeded(2);
    let (tree, root) = (ids.tree_id(), ids.frame_id());
    store.create_tree(change(1), &tree, &root, "Build the app", "A working app", None).unwrap();
    assert_eq!(store.frame_context(&root).unwrap(), None);
    let context = flame_model::FrameContext {
        instructions: Some(vec![flame_model::InstructionFileReport {
            path: "AGENTS.md".into(),
            scope: flame_model::InstructionScope::Workspace,
            size: 40,
            sent: 40,
            problem: None,
        }]),
        ..opening_context()
    };
    let note = NewMessage::text(Role::Note, "[Flame] a frame changed");
    let saved =
        store.save_frame_context(change(2), &root, context.clone(), Some((&note, 6))).unwrap();
    let stored = saved.note.clone().unwrap();
    let kept = store.frame_context(&root).unwrap().unwrap();
    assert_eq!(kept.notes, [stored.id], "the note's id is kept with the context");
    assert_eq!(kept.instructions, context.instructions, "and what its opening's instructions were");
    assert_eq!(saved.context, kept, "the save returns the context as it reads back");
    assert_eq!(store.messages(&root).unwrap().last().unwrap().content, note.content);
    assert!(store.ask_context_rebuild(change(3), &root).unwrap());
    let asked = store.frame_context(&root).unwrap().unwrap();
    assert!(asked.rebuild_asked);
    assert_eq!(asked.opening, context.opening, "the opening is kept through the request");

    // The opening is written when a new one is made, not with every change after it; a state
    // and an opening of different generations are no context.
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let opening_row = |conn: &rusqlite::Connection| -> (u32, String) {
        conn.query_row("SELECT generation, opening FROM frame_openings", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
    };
    conn.execute("UPDATE frame_openings SET opening = 'as first written'", []).unwrap();
    let masked = flame_model::FrameContext { rewritten_per_mille: 40, ..kept.clone() };
    store.save_frame_context(change(4), &root, masked.clone(), None).unwrap();
    assert_eq!(opening_row(&conn), (1, "as first written".to_owned()));
    let second = flame_model::FrameContext {
        generation: 2,
        opening: "<stack-context>2</stack-context>".into(),
        ..masked
    };
    store.save_frame_context(change(5), &root, second.clone(), None).unwrap();
    assert_eq!(opening_row(&conn), (2, second.opening.clone()));
    assert_eq!(store.frame_context(&root).unwrap().as_ref(), Some(&second));
    conn.execute("UPDATE frame_openings SET generation = 1", []).unwrap();
    assert_eq!(store.frame_context(&root).unwrap(), None);

    conn.execute("UPDATE frame_contexts SET state = '{\"generation\": \"many\"}'", []).unwrap();
    assert_eq!(store.frame_context(&root).unwrap(), None);
    assert!(!store.ask_context_rebuild(change(4), &root).unwrap());
}

/// Every save of a frame's context, and every request to make its opening again, is given a
/// number no save had before, in any frame and after a tree's deletion too: a process that keeps
/// a frame's context parsed knows from that number alone whether it is still what is stored.
#[test]
fn every_save_of_a_frames_context_has_a_new_number() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let mut ids = IdSource::seeded(4);
    let (tree, root, child) = (ids.tree_id(), ids.frame_id(), ids.frame_id());
    store.create_tree(change(1), &tree, &root, "Build", "It works", None).unwrap();
    store.push(change(2), &child, &root, "Parse", "Parses").unwrap();
    assert_eq!(store.frame_context_version(&root).unwrap(), None);
    let context = opening_context();
    let mut given = Vec::new();
    let first = store.save_frame_context(change(3), &root, context.clone(), None).unwrap().version;
    given.push(first);
    assert_eq!(store.frame_context_version(&root).unwrap(), Some(first));
    given.push(store.save_frame_context(change(4), &child, context.clone(), None).unwrap().version);
    assert_eq!(store.frame_context_version(&root).unwrap(), Some(first), "another frame's save");
    // Another process's saves are seen, and numbered after this one's.
    let mut other = Store::open(store.path()).unwrap();
    assert!(other.ask_context_rebuild(change(5), &root).unwrap());
    let asked = store.versioned_frame_context(&root).unwrap();
    assert!(asked.context.unwrap().rebuild_asked);
    given.push(asked.version.unwrap());
    given.push(other.save_frame_context(change(6), &root, context.clone(), None).unwrap().version);
    // The tree deleted and made again with the same ids: its first save is a new number.
    store.delete_tree(change(7), &tree).unwrap();
    assert_eq!(store.frame_context_version(&root).unwrap(), None);
    store.create_tree(change(8), &tree, &root, "Build", "It works", None).unwrap();
    given.push(store.save_frame_context(change(9), &root, context.clone(), None).unwrap().version);
    let mut distinct = given.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), given.len(), "{given:?}");
    assert!(given.windows(2).all(|w| w[0] < w[1]), "{given:?}");
    assert_eq!(store.versioned_frame_context(&root).unwrap().version, given.last().copied());
}

/// A frame context just opened, with nothing told, masked or noted yet.
fn opening_context() -> flame_model::FrameContext {
    flame_model::FrameContext {
        generation: 1,
        opening: "<stack-context/>".into(),
        opening_tokens: 5,
        reason: flame_model::OpeningReason::Entered,
        made_at: 1,
        first_message: None,
        omission: None,
        sections: vec![],
        masked_through: None,
        told: vec![],
        notes: vec![],
        superseded_notes: vec![],
        rebuild_asked: false,
        rewritten_per_mille: 0,
        budget_told: None,
        instructions: None,
    }
}
