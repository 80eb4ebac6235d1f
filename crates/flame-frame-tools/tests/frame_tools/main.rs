//! The frame tools through the real facade on a data directory of their own.

use flame_api::{DataDir, Env, Flame};
use flame_model::{Actor, Role, Status, ToolCall};
use serde_json::json;

/// A frame id from another tree is refused by every tool that takes one, so an agent (or an MCP
/// client) working in one tree can neither read another tree's logs nor change its frames.
#[test]
fn the_tools_never_reach_another_trees_frames() {
    let dir = tempfile::tempdir().unwrap();
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame = Flame::open_with(home, Env::fixed(1_795_307_601_000, 9)).unwrap();
    let other = flame.create_tree(Actor::Person, "Other work", "Its own", None).unwrap();
    flame.append(Actor::Person, &other.root, Role::User, "a private note").unwrap();
    let mine = flame.create_tree(Actor::Person, "My work", "Mine", None).unwrap();
    let calls = [
        ("read_frame_log", json!({"id": other.root})),
        ("start_frame", json!({"id": other.root})),
        ("invalidate_frame", json!({"id": other.root, "reason": "not needed"})),
        (
            "plan_frames",
            json!({"frames": [{"title": "X", "success_criteria": "x"}], "parent": other.root}),
        ),
    ];
    for (name, arguments) in calls {
        let call = ToolCall { arguments, id: "c1".into(), name: name.into() };
        let outcome = flame_frame_tools::run(&flame, &mine.root, &call);
        assert!(outcome.is_error, "{name} reached the other tree: {}", outcome.content);
        assert!(outcome.content.contains("another tree"), "{name}: {}", outcome.content);
        assert!(!outcome.content.contains("a private note"), "{name}: {}", outcome.content);
    }
    let status = flame.status(Some(&other.id)).unwrap();
    assert_eq!(status.frames.len(), 1, "the other tree gained frames");
    assert_eq!(status.frames[0].frame.status, Status::InProgress);
}

/// A call whose arguments were cut off (the reply hit its length limit mid-call) does not run:
/// the model is told why, as a tool error, and nothing changes.
#[test]
fn a_call_with_unreadable_arguments_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame = Flame::open_with(home, Env::fixed(1_795_307_601_000, 9)).unwrap();
    let tree = flame.create_tree(Actor::Person, "Work", "Done", None).unwrap();
    let call = ToolCall::unreadable(
        "t1".into(),
        "pop_frame".into(),
        r#"{"status": "compl"#,
        "not JSON (EOF while parsing a string)",
    );
    let outcome = flame_frame_tools::run(&flame, &tree.root, &call);
    assert!(outcome.is_error, "{}", outcome.content);
    assert!(outcome.content.contains("pop_frame did not run"), "{}", outcome.content);
    assert!(outcome.content.contains("cut off at its length limit"), "{}", outcome.content);
    assert_eq!(flame.status(None).unwrap().frames[0].frame.status, Status::InProgress);
}
