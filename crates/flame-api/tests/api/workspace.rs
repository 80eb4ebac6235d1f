//! A tree's workspace through the facade: the folder checks, the kinds allowed for the rest of
//! the tree, the file trail stored with tool results, and where a command's output is kept.

use flame_api::{ErrorCode, MAX_OUTPUT_NAME_CHARS};
use flame_model::{Actor, EventKind, FileTrail, NewMessage, Role, ToolKind, ToolResult};
use flame_store::{MAX_TRAIL_PATH_BYTES, MAX_TRAIL_PATHS};

use crate::Scratch;

const A: Actor = Actor::Person;

fn tool_result(call: &str, text: &str) -> NewMessage {
    NewMessage {
        tool_result: Some(ToolResult {
            detail: None,
            is_error: false,
            name: Some("read_file".into()),
            tool_call_id: call.into(),
        }),
        ..NewMessage::text(Role::Tool, text)
    }
}

fn trail(read: &[&str], changed: &[&str]) -> FileTrail {
    FileTrail::new(read.iter().map(|s| s.to_string()), changed.iter().map(|s| s.to_string()))
}

#[test]
fn a_tree_keeps_its_workspace_canonical() {
    let s = Scratch::new(1);
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("project")).unwrap();
    std::os::unix::fs::symlink(folder.path().join("project"), folder.path().join("link")).unwrap();
    let tree = s
        .flame
        .create_tree(A, "Work", "Done", Some(&folder.path().join("link/../project/.")))
        .unwrap();
    let real = folder.path().join("project").canonicalize().unwrap();
    assert_eq!(tree.workspace.as_deref(), Some(real.to_str().unwrap()));
    assert_eq!(s.flame.status(Some(&tree.id)).unwrap().tree.workspace, tree.workspace);

    let none = s.flame.create_tree(A, "Other", "Done", None).unwrap();
    assert_eq!(none.workspace, None);
}

#[test]
fn a_workspace_that_is_missing_a_file_or_flames_own_is_refused() {
    let s = Scratch::new(2);
    let folder = tempfile::tempdir().unwrap();
    let missing = folder.path().join("nowhere");
    let err = s.flame.create_tree(A, "Work", "Done", Some(&missing)).unwrap_err();
    assert_eq!(err.code, ErrorCode::Invalid);
    assert!(err.message.contains(&missing.display().to_string()), "{}", err.message);

    let file = folder.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    let err = s.flame.create_tree(A, "Work", "Done", Some(&file)).unwrap_err();
    assert_eq!(err.code, ErrorCode::Invalid);
    assert!(err.message.contains("not a folder"), "{}", err.message);

    let data = s.flame.data_dir().path().to_path_buf();
    for own in [data.clone(), data.join("logs")] {
        std::fs::create_dir_all(&own).unwrap();
        let err = s.flame.create_tree(A, "Work", "Done", Some(&own)).unwrap_err();
        assert_eq!(err.code, ErrorCode::Invalid);
        assert!(err.message.contains("Flame's own folder"), "{}", err.message);
    }
    // A folder holding the data directory would let the tools reach it just as well.
    let parent = data.parent().unwrap();
    let err = s.flame.create_tree(A, "Work", "Done", Some(parent)).unwrap_err();
    assert!(err.message.contains("holds Flame's own folder"), "{}", err.message);
    // Nothing was created by the refusals.
    assert!(s.flame.trees().unwrap().is_empty());
}

#[test]
fn setting_the_workspace_is_logged_and_clears_the_allowed_kinds() {
    let s = Scratch::new(3);
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(first.path())).unwrap();
    assert_eq!(s.flame.allowed_kinds(&tree.id).unwrap(), vec![]);
    s.flame.allow_kind(A, &tree.id, ToolKind::Running).unwrap();
    s.flame.allow_kind(A, &tree.id, ToolKind::Changing).unwrap();
    s.flame.allow_kind(A, &tree.id, ToolKind::Changing).unwrap();
    assert_eq!(
        s.flame.allowed_kinds(&tree.id).unwrap(),
        vec![ToolKind::Changing, ToolKind::Running]
    );

    let changed = s.flame.set_workspace(A, &tree.id, Some(second.path())).unwrap();
    let real = second.path().canonicalize().unwrap();
    assert_eq!(changed.workspace.as_deref(), Some(real.to_str().unwrap()));
    assert_eq!(s.flame.allowed_kinds(&tree.id).unwrap(), vec![]);
    let last = s.flame.events_since(0, 100).unwrap().pop().unwrap();
    assert_eq!((last.kind, last.frame), (EventKind::WorkspaceSet, tree.root.clone()));
    let log = s.flame.log(&tree.root).unwrap();
    assert!(log.contains(&format!("Workspace set to {}", real.display())), "{log}");

    s.flame.allow_kind(A, &tree.id, ToolKind::Reading).unwrap();
    let cleared = s.flame.set_workspace(A, &tree.id, None).unwrap();
    assert_eq!(cleared.workspace, None);
    assert_eq!(s.flame.allowed_kinds(&tree.id).unwrap(), vec![]);
    assert!(s.flame.log(&tree.root).unwrap().contains("workspace folder was cleared"));

    // A refused folder changes nothing, not even the event log.
    let seq = s.flame.latest_seq().unwrap();
    let err = s.flame.set_workspace(A, &tree.id, Some(s.flame.data_dir().path())).unwrap_err();
    assert_eq!(err.code, ErrorCode::Invalid);
    assert_eq!(s.flame.latest_seq().unwrap(), seq);
}

#[test]
fn a_tool_result_and_its_trail_are_stored_together() {
    let s = Scratch::new(4);
    let tree = s.flame.create_tree(A, "Work", "Done", None).unwrap();
    let frame = s.flame.push(A, Some(&tree.root), "Edit", "Edited").unwrap().id;
    s.flame
        .add_tool_result(A, &frame, &tool_result("c1", "read"), &trail(&["b.rs", "a.rs"], &[]))
        .unwrap();
    s.flame
        .add_tool_result(A, &frame, &tool_result("c2", "edited"), &trail(&[], &["a.rs", "c.rs"]))
        .unwrap();
    // Read after being changed: still changed.
    let message = s
        .flame
        .add_tool_result(A, &frame, &tool_result("c3", "read"), &trail(&["c.rs", "d.md"], &[]))
        .unwrap();
    assert_eq!(s.flame.messages(&frame).unwrap().last(), Some(&message));
    let files = s.flame.file_trail(&frame).unwrap();
    assert_eq!(files, trail(&["b.rs", "d.md"], &["a.rs", "c.rs"]));
    assert_eq!(s.flame.frame_detail(&frame).unwrap().files, files);
    assert_eq!(s.flame.frame_view(&frame, None).unwrap().frame.files, files);

    // A refused message records no path either: the frame is finished.
    s.flame.pop(A, Some(&frame), &completed()).unwrap();
    let err = s
        .flame
        .add_tool_result(A, &frame, &tool_result("c4", "late"), &trail(&["late.rs"], &[]))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Refused);
    assert_eq!(s.flame.file_trail(&frame).unwrap().read, vec!["b.rs", "d.md"]);

    // Only a tool result carries a trail.
    let err = s
        .flame
        .add_tool_result(A, &tree.root, &NewMessage::text(Role::User, "hi"), &trail(&["x"], &[]))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Invalid);
    assert_eq!(s.flame.file_trail(&tree.root).unwrap(), FileTrail::default());
    assert!(s.flame.messages(&tree.root).unwrap().is_empty());
}

fn completed() -> flame_api::PopRequest {
    flame_api::PopRequest {
        status: flame_model::lifecycle::PopStatus::Completed,
        results: Some("done".into()),
        results_compacted: None,
        artifacts: vec![],
        decisions: vec![],
        reason: None,
    }
}

#[test]
fn the_trail_stops_at_its_caps() {
    let s = Scratch::new(5);
    let tree = s.flame.create_tree(A, "Work", "Done", None).unwrap();
    let root = tree.root;
    let many: Vec<String> = (0..MAX_TRAIL_PATHS + 5).map(|i| format!("src/{i:05}.rs")).collect();
    let too_long = "x".repeat(MAX_TRAIL_PATH_BYTES + 1);
    let first = FileTrail::new(many.iter().cloned().chain([too_long.clone()]), []);
    s.flame.add_tool_result(A, &root, &tool_result("c1", "listed"), &first).unwrap();
    let files = s.flame.file_trail(&root).unwrap();
    assert_eq!(files.read.len(), MAX_TRAIL_PATHS);
    assert!(!files.read.contains(&too_long));
    // Full: a new path is left out, but a recorded read that is changed becomes a change.
    let edit = trail(&[], &["src/00003.rs", "new.rs"]);
    s.flame.add_tool_result(A, &root, &tool_result("c2", "edited"), &edit).unwrap();
    let files = s.flame.file_trail(&root).unwrap();
    assert_eq!(files.changed, vec!["src/00003.rs"]);
    assert_eq!(files.read.len() + files.changed.len(), MAX_TRAIL_PATHS);
    // Every tool result was stored whatever its trail held.
    assert_eq!(s.flame.messages(&root).unwrap().len(), 2);
}

#[test]
fn a_commands_output_is_kept_beside_the_frames_log_and_goes_with_the_tree() {
    let s = Scratch::new(6);
    let tree = s.flame.create_tree(A, "Work", "Done", None).unwrap();
    let path = s.flame.command_output_path(&tree.root, "call/../../x y").unwrap();
    let log = std::path::PathBuf::from(s.flame.frame(&tree.root).unwrap().log_path);
    assert_eq!(path.parent().unwrap(), log.with_extension("outputs"));
    assert_eq!(path.file_name().unwrap(), "call.2f.2e.2e.2f.2e.2e.2fx.20y.log");
    assert!(path.parent().unwrap().is_dir());
    let long = s.flame.command_output_path(&tree.root, &"a".repeat(500)).unwrap();
    assert_eq!(long.file_name().unwrap().len(), MAX_OUTPUT_NAME_CHARS + ".log".len());
    std::fs::write(&path, "the whole output").unwrap();

    s.flame.delete_tree(A, &tree.id).unwrap();
    assert!(!path.exists());
    assert!(!log.parent().unwrap().exists());
}

#[test]
fn calls_whose_ids_differ_only_in_punctuation_keep_their_outputs_apart() {
    let s = Scratch::new(6);
    let tree = s.flame.create_tree(A, "Work", "Done", None).unwrap();
    let ids = ["call.1", "call_1", "call-1", "call 1", "call/1"];
    for id in ids {
        let path = s.flame.command_output_path(&tree.root, id).unwrap();
        std::fs::write(&path, format!("the output of {id}")).unwrap();
    }
    for id in ids {
        let path = s.flame.command_output_path(&tree.root, id).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("the output of {id}"));
    }
}

#[test]
fn the_parents_context_after_a_pop_names_the_childs_files() {
    let s = Scratch::new(7);
    let folder = tempfile::tempdir().unwrap();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(folder.path())).unwrap();
    let child = s.flame.push(A, Some(&tree.root), "Fix the login", "It logs in").unwrap().id;
    let files = trail(&["docs/login.md", "src/login.rs"], &["src/login.rs"]);
    s.flame.add_tool_result(A, &child, &tool_result("c1", "edited"), &files).unwrap();
    let popped = s.flame.pop(A, Some(&child), &completed()).unwrap();
    assert_eq!(popped.artifacts, vec!["src/login.rs"]);

    let doc = s.flame.context(Some(&tree.root), None).unwrap();
    let real = folder.path().canonicalize().unwrap();
    assert!(
        doc.system.contains(&format!("workspace is the folder {}", real.display())),
        "{}",
        doc.system
    );
    assert!(doc.xml.contains("<artifact>src/login.rs</artifact>"), "{}", doc.xml);
    assert!(doc.xml.contains("<read>docs/login.md</read>"), "{}", doc.xml);
    // Already among the artifacts, so not repeated as changed.
    assert!(!doc.xml.contains("<changed>"), "{}", doc.xml);

    s.flame.set_workspace(A, &tree.id, None).unwrap();
    let doc = s.flame.context(Some(&tree.root), None).unwrap();
    assert!(doc.system.contains("has no workspace folder"), "{}", doc.system);
}

#[test]
fn a_finished_frame_lists_the_files_its_children_touched_to_a_later_sibling() {
    let s = Scratch::new(8);
    let tree = s.flame.create_tree(A, "Work", "Done", None).unwrap();
    let first = s.flame.push(A, Some(&tree.root), "Fix the login", "It logs in").unwrap().id;
    let helper = s.flame.push(A, Some(&first), "Find the bug", "Found").unwrap().id;
    let found = trail(&["src/session.rs"], &["src/login.rs"]);
    s.flame.add_tool_result(A, &helper, &tool_result("c1", "edited"), &found).unwrap();
    s.flame.pop(A, Some(&helper), &completed()).unwrap();
    s.flame
        .add_tool_result(A, &first, &tool_result("c2", "read"), &trail(&["README.md"], &[]))
        .unwrap();
    s.flame.pop(A, Some(&first), &completed()).unwrap();
    let later = s.flame.push(A, Some(&tree.root), "Fix the logout", "It logs out").unwrap().id;

    // The later frame sees "Fix the login" but not the frame under it, so the finished frame
    // carries its child's files too.
    let doc = s.flame.context(Some(&later), None).unwrap();
    assert!(!doc.xml.contains("Find the bug"), "{}", doc.xml);
    assert!(doc.xml.contains("<changed>src/login.rs</changed>"), "{}", doc.xml);
    assert!(doc.xml.contains("<read>README.md, src/session.rs</read>"), "{}", doc.xml);
    // The frame's own trail is still its own calls'.
    assert_eq!(s.flame.file_trail(&first).unwrap(), trail(&["README.md"], &[]));
}
