//! Bulk import: a valid tree goes in whole, an invalid one not at all.

use flame_model::{Actor, Frame, FrameId, IdSource, NewMessage, Role, Status, Tree};
use flame_store::{Change, ImportedMessage, Store, StoreError};

fn frame(
    id: &FrameId,
    tree: &Tree,
    parent: Option<&FrameId>,
    position: u32,
    status: Status,
) -> Frame {
    let mut frame = Frame::new(
        id.clone(),
        tree.id.clone(),
        parent.cloned(),
        position,
        format!("frame {position}"),
        "imported",
        status,
        1,
    );
    frame.results = (status == Status::Completed).then(|| "done".to_owned());
    frame
}

fn sample(ids: &mut IdSource) -> (Tree, Vec<Frame>) {
    let (tree_id, root, a, b) = (ids.tree_id(), ids.frame_id(), ids.frame_id(), ids.frame_id());
    let tree = Tree {
        id: tree_id,
        title: "Imported".into(),
        root: root.clone(),
        focus: b.clone(),
        created_at: 1,
        workspace: None,
    };
    let frames = vec![
        frame(&root, &tree, None, 0, Status::InProgress),
        frame(&a, &tree, Some(&root), 0, Status::Completed),
        frame(&b, &tree, Some(&root), 1, Status::InProgress),
    ];
    (tree, frames)
}

fn message(frame: usize, text: &str) -> ImportedMessage {
    ImportedMessage { frame, message: NewMessage::text(Role::User, text), tokens: 3, at: 5 }
}

#[test]
fn a_valid_tree_is_imported_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let (tree, frames) = sample(&mut IdSource::seeded(3));
    let change = Change { actor: Actor::Cli, at: 9 };
    let counts = store
        .import_tree(
            change,
            &tree,
            &frames,
            &[message(1, "one"), message(1, "two"), message(2, "three")],
        )
        .unwrap();
    assert_eq!((counts.frames, counts.messages), (3, 3));
    assert_eq!(store.current_tree().unwrap(), Some(tree.id.clone()));
    let a = store.frame(&frames[1].id).unwrap();
    assert_eq!((a.message_count, a.tokens), (2, 6));
    let texts: Vec<_> =
        store.messages(&frames[1].id).unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(texts, ["one", "two"]);
    assert_eq!(store.pending_logs().unwrap().len(), 3);
    assert_eq!(store.tree_message_tokens(&tree.id).unwrap(), 9);
}

#[test]
fn an_invalid_tree_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let (tree, mut frames) = sample(&mut IdSource::seeded(4));
    frames[1].status = Status::InProgress;
    frames[0].status = Status::Completed; // an in-progress frame under a completed root
    let change = Change { actor: Actor::Cli, at: 9 };
    let err = store.import_tree(change, &tree, &frames, &[message(0, "x")]).unwrap_err();
    assert!(matches!(&err, StoreError::Frame(e) if e.to_string().contains("not valid")), "{err}");
    assert!(store.trees().unwrap().is_empty());
    let (tree, frames) = sample(&mut IdSource::seeded(5));
    let err = store.import_tree(change, &tree, &frames, &[message(7, "x")]).unwrap_err();
    assert!(err.to_string().contains("names frame 7 of 3"), "{err}");
    assert!(store.trees().unwrap().is_empty());
}

#[test]
fn a_retry_is_imported_whatever_the_order_of_its_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let mut ids = IdSource::seeded(4);
    let (tree, mut frames) = sample(&mut ids);
    // The failed attempt and its retry, the retry listed (and so written) first.
    let failed_id = ids.frame_id();
    let mut failed = frame(&failed_id, &tree, Some(&tree.root), 3, Status::Failed);
    failed.status_reason = Some("no".into());
    let mut retry = frame(&ids.frame_id(), &tree, Some(&tree.root), 2, Status::Completed);
    retry.retry_of = Some(failed_id.clone());
    frames.push(retry.clone());
    frames.push(failed);
    store.import_tree(Change { actor: Actor::Cli, at: 9 }, &tree, &frames, &[]).unwrap();
    assert_eq!(store.frame(&retry.id).unwrap().retry_of, Some(failed_id));
}

#[test]
fn an_opencode_database_is_read_as_rows_and_left_unchanged() {
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../flame-import/tests/import/fixtures/opencode/opencode.db");
    let before = std::fs::read(&fixture).unwrap();
    let rows = flame_store::foreign::read_opencode_db(&fixture).unwrap();
    assert_eq!(rows.sessions.len(), 2);
    assert_eq!(rows.sessions[1].parent_id.as_deref(), Some("ses_01root"));
    assert_eq!(rows.messages.len(), 6);
    assert_eq!(rows.parts.len(), 22);
    assert!(rows.parts[0].data.starts_with('{'));
    assert_eq!(std::fs::read(&fixture).unwrap(), before);

    // A database that is not OpenCode's is refused with its path.
    let dir = tempfile::tempdir().unwrap();
    let flame_db = dir.path().join("flame.db");
    Store::open(&flame_db).unwrap();
    let err = flame_store::foreign::read_opencode_db(&flame_db).unwrap_err();
    assert!(err.to_string().contains("is not an OpenCode database"), "{err}");
}
