//! The frame tools through the real facade on a data directory of their own.

use flame_api::{DataDir, Env, Flame, FlameConfig};
use flame_model::{Actor, Role, Status, ToolCall};
use serde_json::json;

/// A frame id from another tree is refused by every tool that takes one, so an agent (or an MCP
/// client) working in one tree can neither read another tree's logs nor change its frames.
#[test]
fn the_tools_never_reach_another_trees_frames() {
    let dir = tempfile::tempdir().unwrap();
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame =
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 9)).unwrap();
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
    let flame =
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 9)).unwrap();
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

/// A masked result can be read back whole by its call's id, however long the frame's log is; an
/// id the frame does not have is a clear error.
#[test]
fn a_result_is_read_back_by_its_call_id() {
    let dir = tempfile::tempdir().unwrap();
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame =
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 9)).unwrap();
    let tree = flame.create_tree(Actor::Person, "Work", "Done", None).unwrap();
    let early = format!("EARLY RESULT {}", "x".repeat(30_000));
    for (id, text) in [("call_0", early.clone()), ("call_1", "y".repeat(60_000))] {
        let mut result = flame_model::NewMessage::text(Role::Tool, text);
        result.tool_result = Some(flame_model::ToolResult {
            detail: None,
            is_error: false,
            name: Some("read_file".into()),
            tool_call_id: id.into(),
        });
        flame.add_message(Actor::Agent, &tree.root, &result).unwrap();
    }
    let read = |arguments| {
        let call = ToolCall { arguments, id: "c9".into(), name: "read_frame_log".into() };
        flame_frame_tools::run(&flame, &tree.root, &call)
    };
    // The whole log is cut to its end, so the early result is not in it.
    let whole = read(json!({"id": tree.root}));
    assert!(!whole.content.contains("EARLY RESULT"));
    let one = read(json!({"id": tree.root, "tool_call_id": "call_0"}));
    assert!(!one.is_error);
    assert_eq!(one.content, early);
    let missing = read(json!({"id": tree.root, "tool_call_id": "call_7"}));
    assert!(missing.is_error && missing.content.contains("call_7"), "{}", missing.content);
}
