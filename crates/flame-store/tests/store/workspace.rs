//! A tree's workspace in the store: the folder, the kinds allowed for the rest of the tree, the
//! file trail stored with tool results, and a pop merging the changed files into the artifacts.

use std::collections::HashMap;

use flame_model::lifecycle::PopStatus;
use flame_model::{
    Actor, EventKind, FileTrail, FrameError, FrameId, IdSource, NewMessage, Role, Status, ToolKind,
    ToolResult, TreeId,
};
use flame_store::{Change, Pop, Store, StoreError};

struct Fixture {
    store: Store,
    ids: IdSource,
    clock: i64,
    tree: TreeId,
    root: FrameId,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let mut ids = IdSource::seeded(7);
        let (tree, root) = (ids.tree_id(), ids.frame_id());
        let at = Change { actor: Actor::Person, at: 1 };
        store.create_tree(at, &tree, &root, "Work", "Done", Some("/home/me/project")).unwrap();
        Fixture { store, ids, clock: 1, tree, root, _dir: dir }
    }

    fn change(&mut self) -> Change {
        self.clock += 1;
        Change { actor: Actor::Agent, at: self.clock }
    }

    fn push(&mut self, title: &str) -> FrameId {
        let root = self.root.clone();
        self.push_under(&root, title)
    }

    fn push_under(&mut self, parent: &FrameId, title: &str) -> FrameId {
        let (id, c) = (self.ids.frame_id(), self.change());
        self.store.push(c, &id, parent, title, "criteria").unwrap();
        id
    }

    fn touch(&mut self, frame: &FrameId, read: &[&str], changed: &[&str]) {
        let c = self.change();
        let trail = FileTrail::new(
            read.iter().map(|s| s.to_string()),
            changed.iter().map(|s| s.to_string()),
        );
        self.store.add_tool_result(c, frame, &tool_result("call"), 5, &trail).unwrap();
    }

    fn pop(&mut self, frame: &FrameId, status: PopStatus, artifacts: &[&str]) -> Vec<String> {
        let c = self.change();
        let pop = Pop {
            status,
            results: Some("done".into()),
            results_compacted: None,
            artifacts: artifacts.iter().map(|s| s.to_string()).collect(),
            decisions: vec![],
            reason: (status != PopStatus::Completed).then(|| "because".into()),
        };
        self.store.pop(c, frame, &pop).unwrap().artifacts
    }
}

fn tool_result(call: &str) -> NewMessage {
    NewMessage {
        tool_result: Some(ToolResult {
            detail: None,
            is_error: false,
            name: Some("edit_file".into()),
            tool_call_id: call.into(),
        }),
        ..NewMessage::text(Role::Tool, "ok")
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_tree_keeps_its_workspace_and_a_change_is_an_event_that_clears_the_allowed_kinds() {
    let mut f = Fixture::new();
    let tree = f.tree.clone();
    assert_eq!(f.store.tree(&tree).unwrap().workspace.as_deref(), Some("/home/me/project"));
    let c = f.change();
    f.store.allow_kind(c, &tree, ToolKind::Running).unwrap();
    f.store.allow_kind(c, &tree, ToolKind::Reading).unwrap();
    f.store.allow_kind(c, &tree, ToolKind::Running).unwrap();
    assert_eq!(f.store.allowed_kinds(&tree).unwrap(), vec![ToolKind::Reading, ToolKind::Running]);
    assert!(!f.store.network_allowed(&tree).unwrap());
    f.store.allow_network(c, &tree).unwrap();
    f.store.allow_network(c, &tree).unwrap();
    assert!(f.store.network_allowed(&tree).unwrap());

    let c = f.change();
    let changed = f.store.set_workspace(c, &tree, Some("/home/me/other")).unwrap();
    assert_eq!(changed.workspace.as_deref(), Some("/home/me/other"));
    assert_eq!(f.store.allowed_kinds(&tree).unwrap(), vec![]);
    assert!(!f.store.network_allowed(&tree).unwrap(), "the network outlived the workspace");
    let event = f.store.events_since(0, u32::MAX).unwrap().pop().unwrap();
    assert_eq!((event.kind, &event.frame), (EventKind::WorkspaceSet, &f.root));
    assert_eq!(
        event.detail,
        flame_model::EventDetail::WorkspaceSet {
            workspace: Some("/home/me/other".into()),
            previous: Some("/home/me/project".into()),
        }
    );

    let c = f.change();
    assert_eq!(f.store.set_workspace(c, &tree, None).unwrap().workspace, None);

    // An unknown tree is refused by every one of them.
    let nowhere = f.ids.tree_id();
    let c = f.change();
    for result in [
        f.store.set_workspace(c, &nowhere, None).map(drop),
        f.store.allow_kind(c, &nowhere, ToolKind::Changing),
        f.store.allowed_kinds(&nowhere).map(drop),
        f.store.allow_network(c, &nowhere),
        f.store.network_allowed(&nowhere).map(drop),
    ] {
        assert!(matches!(result, Err(StoreError::Frame(FrameError::NoSuchTree(_)))), "{result:?}");
    }
}

#[test]
fn a_trail_keeps_a_changed_file_changed_whatever_the_order() {
    let mut f = Fixture::new();
    let a = f.push("A");
    f.touch(&a, &["src/lib.rs", "README.md"], &[]);
    f.touch(&a, &[], &["src/lib.rs"]);
    f.touch(&a, &["src/lib.rs", "Cargo.toml"], &[]);
    f.touch(&a, &["README.md"], &["new.rs"]);
    let trail = f.store.file_trail(&a).unwrap();
    assert_eq!(trail.changed, strings(&["new.rs", "src/lib.rs"]));
    assert_eq!(trail.read, strings(&["Cargo.toml", "README.md"]));
    // Every result was counted on the frame like any message.
    assert_eq!(f.store.frame(&a).unwrap().message_count, 4);

    let b = f.push("B");
    f.touch(&b, &["b.md"], &[]);
    let c = f.push("C");
    let trails = f.store.file_trails(&[a.clone(), b.clone(), c.clone()]).unwrap();
    assert_eq!(
        trails,
        HashMap::from([(a, trail), (b, FileTrail { read: strings(&["b.md"]), changed: vec![] }),])
    );
}

#[test]
fn a_subtree_trail_gathers_every_descendants_files_with_changes_winning() {
    let mut f = Fixture::new();
    let a = f.push("A");
    f.touch(&a, &["a.md", "shared.rs"], &[]);
    let b = f.push_under(&a, "B");
    f.touch(&b, &[], &["shared.rs", "b.rs"]);
    let c = f.push_under(&b, "C");
    f.touch(&c, &["c.md"], &[]);
    let quiet = f.ids.frame_id();
    let trails = f.store.subtree_file_trails(&[a.clone(), b.clone(), quiet]).unwrap();
    assert_eq!(
        trails,
        HashMap::from([
            (
                a.clone(),
                FileTrail {
                    read: strings(&["a.md", "c.md"]),
                    changed: strings(&["b.rs", "shared.rs"])
                }
            ),
            (b, FileTrail { read: strings(&["c.md"]), changed: strings(&["b.rs", "shared.rs"]) }),
        ])
    );
    // The frame's own trail is still only its own calls'.
    assert_eq!(f.store.file_trail(&a).unwrap().changed, Vec::<String>::new());
    assert_eq!(
        f.store.subtree_file_trails(std::slice::from_ref(&c)).unwrap()[&c],
        f.store.file_trail(&c).unwrap()
    );
}

#[test]
fn a_refused_tool_result_records_no_path() {
    let mut f = Fixture::new();
    let a = f.push("A");
    f.pop(&a, PopStatus::Completed, &[]);
    let events = f.store.events_since(0, u32::MAX).unwrap().len();
    let c = f.change();
    let trail = FileTrail::new([], ["x.rs".to_owned()]);
    let err = f.store.add_tool_result(c, &a, &tool_result("late"), 1, &trail).unwrap_err();
    assert!(matches!(err, StoreError::Frame(FrameError::Refused { .. })), "{err:?}");
    assert_eq!(f.store.file_trail(&a).unwrap(), FileTrail::default());
    assert!(f.store.messages(&a).unwrap().is_empty());
    assert_eq!(f.store.events_since(0, u32::MAX).unwrap().len(), events);

    // A message that answers no call carries no trail, and is not stored either.
    let b = f.push("B");
    let c = f.change();
    let err =
        f.store.add_tool_result(c, &b, &NewMessage::text(Role::User, "hi"), 1, &trail).unwrap_err();
    assert!(matches!(err, StoreError::Frame(FrameError::Invalid(_))), "{err:?}");
    assert!(f.store.messages(&b).unwrap().is_empty());
}

#[test]
fn every_pop_merges_the_changed_files_after_the_agents_own_artifacts() {
    let mut f = Fixture::new();
    for status in [PopStatus::Completed, PopStatus::Failed, PopStatus::Blocked] {
        let frame = f.push("Edit");
        f.touch(&frame, &["notes.md"], &["src/b.rs", "src/a.rs"]);
        f.touch(&frame, &[], &["docs/guide.md"]);
        let artifacts = f.pop(&frame, status, &["https://example.com/pr/1", "src/b.rs"]);
        assert_eq!(
            artifacts,
            strings(&["https://example.com/pr/1", "src/b.rs", "docs/guide.md", "src/a.rs"]),
            "{status:?}"
        );
        // The pop's event carries the merged list, so the frame's log shows it.
        let event = f.store.events_since(0, u32::MAX).unwrap();
        let popped = event.iter().rev().find(|e| e.kind == EventKind::Popped).unwrap();
        let flame_model::EventDetail::Popped { artifacts, .. } = &popped.detail else {
            panic!("a pop records a popped detail: {:?}", popped.detail);
        };
        assert_eq!(artifacts.len(), 4);
    }

    // A frame that changed nothing keeps exactly the list it was given.
    let quiet = f.push("Read only");
    f.touch(&quiet, &["src/a.rs"], &[]);
    assert_eq!(f.pop(&quiet, PopStatus::Completed, &["report.md"]), strings(&["report.md"]));

    // Resumed and popped again, a blocked frame's list is merged once more, without repeats.
    let blocked = f.push("Blocked");
    f.touch(&blocked, &[], &["x.rs"]);
    assert_eq!(f.pop(&blocked, PopStatus::Blocked, &[]), strings(&["x.rs"]));
    let c = f.change();
    f.store.resume(c, &blocked).unwrap();
    f.touch(&blocked, &[], &["y.rs"]);
    assert_eq!(f.pop(&blocked, PopStatus::Completed, &["x.rs"]), strings(&["x.rs", "y.rs"]));
    assert_eq!(f.store.frame(&blocked).unwrap().status, Status::Completed);
}

#[test]
fn deleting_the_tree_removes_its_trails_and_allowed_kinds() {
    let mut f = Fixture::new();
    let a = f.push("A");
    f.touch(&a, &["a.md"], &["b.rs"]);
    let (tree, c) = (f.tree.clone(), f.change());
    f.store.allow_kind(c, &tree, ToolKind::Changing).unwrap();
    let c = f.change();
    f.store.delete_tree(c, &tree).unwrap();
    assert_eq!(f.store.file_trails(&[a]).unwrap(), HashMap::new());
    let conn = rusqlite::Connection::open(f.store.path()).unwrap();
    let left: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM frame_files) + (SELECT count(*) FROM tree_allowed_kinds)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
}
