//! The file trail read out of a transcript's tool calls, the cut at commits, and the replay's
//! first-touch recall, on a small transcript written here.

use flame_import::replay::replay;
use flame_model::{FileTrail, Status};
use serde_json::{Value, json};

use crate::import;

const CWD: &str = "/home/u/proj";

fn record(kind: &str, second: u32, message: Value) -> String {
    json!({
        "type": kind,
        "sessionId": "s1",
        "cwd": CWD,
        "timestamp": format!("2026-01-01T00:00:{second:02}Z"),
        "message": message,
    })
    .to_string()
}

fn request(second: u32, text: &str) -> String {
    record("user", second, json!({"role": "user", "content": text}))
}

/// An assistant response `id` with one tool call, recorded with usage (a model call).
fn tool_use(second: u32, id: &str, name: &str, input: Value) -> String {
    record(
        "assistant",
        second,
        json!({
            "id": format!("msg-{id}"),
            "role": "assistant",
            "model": "claude-opus-4-5",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "usage": {"input_tokens": 100 * second, "output_tokens": 5},
        }),
    )
}

fn result(second: u32, id: &str, text: &str, is_error: bool) -> String {
    record(
        "user",
        second,
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": text, "is_error": is_error}
        ]}),
    )
}

fn text(second: u32, id: &str, said: &str) -> String {
    record(
        "assistant",
        second,
        json!({
            "id": format!("msg-{id}"),
            "role": "assistant",
            "model": "claude-opus-4-5",
            "content": [{"type": "text", "text": said}],
            "usage": {"input_tokens": 100 * second, "output_tokens": 5},
        }),
    )
}

/// A request; a read, an edit, a failed edit and a commit; then, after the commit, a read of
/// the edited file and a failed commit, which does not cut.
fn transcript() -> Vec<String> {
    vec![
        request(1, "Fix the parser"),
        tool_use(2, "t1", "Read", json!({"file_path": format!("{CWD}/src/parse.rs")})),
        result(3, "t1", "fn parse() {}", false),
        tool_use(4, "t2", "Edit", json!({"file_path": format!("{CWD}/src/lib.rs")})),
        result(5, "t2", "ok", false),
        tool_use(6, "t3", "Edit", json!({"file_path": format!("{CWD}/src/broken.rs")})),
        result(7, "t3", "String not found", true),
        tool_use(8, "t4", "Grep", json!({"pattern": "x", "path": "/etc/hosts.conf"})),
        result(9, "t4", "no match", false),
        tool_use(10, "t5", "Bash", json!({"command": "git add -A && git commit -m 'Fix parse'"})),
        result(11, "t5", "[main abc] Fix parse", false),
        text(12, "a1", "Committed. Now the docs."),
        tool_use(13, "t6", "Read", json!({"file_path": format!("{CWD}/src/lib.rs")})),
        result(14, "t6", "pub mod parse;", false),
        tool_use(15, "t7", "Bash", json!({"command": "git commit -m 'nothing'"})),
        result(16, "t7", "nothing to commit", true),
        text(17, "a2", "Done."),
    ]
}

fn draft_of(lines: &[String]) -> flame_import::Draft {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s1.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    import(&path)
}

#[test]
fn a_successful_commit_ends_a_segment_and_a_failed_one_does_not() {
    let draft = draft_of(&transcript());
    let segments: Vec<_> = draft.frames.iter().skip(1).collect();
    let titles: Vec<_> = segments.iter().map(|f| f.title.as_str()).collect();
    assert_eq!(titles, ["Fix the parser", "Fix the parser (after commit)"]);
    assert_eq!(segments[0].status, Status::Completed);
    assert_eq!(segments[1].criteria, "Fix the parser");
    assert_eq!(segments[1].status, Status::InProgress);
}

#[test]
fn each_segment_has_the_files_its_successful_tool_calls_read_and_changed() {
    let draft = draft_of(&transcript());
    let trails = draft.trails(|_| true);
    assert_eq!(
        trails[&1],
        FileTrail {
            read: vec!["/etc/hosts.conf".into(), "src/parse.rs".into()],
            changed: vec!["src/lib.rs".into()],
        }
    );
    assert_eq!(trails[&2], FileTrail { read: vec!["src/lib.rs".into()], changed: vec![] });
    assert!(!draft.files.iter().any(|f| f.path.contains("broken")), "{:?}", draft.files);
    // The materialised tree carries the same trails, for the store.
    let tree = draft.materialise(&mut flame_model::IdSource::seeded(1)).unwrap();
    assert_eq!(tree.trails, trails.into_iter().collect::<Vec<_>>());
}

#[test]
fn replay_names_an_earlier_segments_files_and_counts_them_as_recalled() {
    let draft = draft_of(&transcript());
    let r = replay(&draft, &Default::default()).unwrap();
    // The read of src/lib.rs after the commit returns to a file the first segment changed; the
    // first segment's trail names it in the stack-context.
    assert_eq!((r.returning_paths, r.recalled_paths), (1, 1));
    assert_eq!(r.first_touch_recall, Some(1.0));
    let call = r.per_call.iter().find(|c| c.returning_paths == 1).unwrap();
    assert_eq!(call.frame, 2);
}

/// The hand-made session whose subagent returns to its parent's file (issue 39): the subagent's
/// read of `src/greet.py`, which its parent segment read and edited before starting it, is a
/// returning path, and the subagent's context names it, as the parent's own files.
#[test]
fn a_subagent_that_returns_to_its_parents_file_finds_it_named() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/import/fixtures/claude-code/5b0a6e3c-1d2f-4a8b-9c7d-2e4f6a8b0c1d.jsonl");
    let draft = import(&path);
    assert!(draft.report.problems.is_empty(), "{:?}", draft.report.problems);
    let subagent = draft.frames.iter().position(|f| f.title == "Check the tests").unwrap();
    assert_eq!(draft.frames[subagent].kind, flame_import::FrameKind::Subagent);
    let r = replay(&draft, &Default::default()).unwrap();
    let returning: Vec<_> =
        r.per_call.iter().filter(|c| c.frame == subagent && c.returning_paths > 0).collect();
    assert_eq!(returning.len(), 1, "{:?}", r.per_call);
    assert_eq!(returning[0].recalled_paths, 1, "{:?}", returning[0]);
    assert_eq!(r.first_touch_recall, Some(1.0), "{r:?}");
}
