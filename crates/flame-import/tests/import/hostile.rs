//! Files that are damaged in the ways real files are: each problem is reported by line and
//! the rest is imported.

use std::path::Path;

use flame_import::{ImportError, ImportOptions, import};
use flame_model::{Role, ToolCall, ToolResult, Usage};
use flame_tokens::Encoding;

const USER: &str = r#"{"type":"user","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"Fix the parser"}}"#;
const ASSISTANT: &str = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-opus-4-6","role":"assistant","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":10,"cache_read_input_tokens":100}}}"#;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn read(path: &Path) -> Result<flame_import::Draft, ImportError> {
    import(path, None, &ImportOptions::default(), &mut |_| {})
}

#[test]
fn a_truncated_last_line_is_reported_and_the_rest_imported() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{USER}\n{ASSISTANT}\n{}", &ASSISTANT[..60]);
    let draft = read(&write(dir.path(), "s.jsonl", text.as_bytes())).unwrap();
    assert_eq!(draft.messages.len(), 2);
    assert_eq!(draft.report.problems.len(), 1);
    assert!(draft.report.problems[0].contains("line 3: truncated"), "{:?}", draft.report.problems);
}

#[test]
fn bad_utf8_is_reported_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = format!("{USER}\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"user\",\"message\":{\"content\":\"caf\xe9\"}}\n");
    bytes.extend_from_slice(format!("{ASSISTANT}\n").as_bytes());
    let draft = read(&write(dir.path(), "s.jsonl", &bytes)).unwrap();
    assert_eq!(
        draft.messages.iter().map(|m| m.message.role).collect::<Vec<_>>(),
        [Role::User, Role::Assistant]
    );
    assert!(
        draft.report.problems[0].contains("s.jsonl line 2: not UTF-8"),
        "{:?}",
        draft.report.problems
    );
}

#[test]
fn an_empty_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = read(&write(dir.path(), "s.jsonl", b"")).unwrap_err();
    assert!(matches!(err, ImportError::Empty { .. }), "{err}");
    assert!(err.to_string().contains("holds no message"), "{err}");
    let err = import(
        &write(dir.path(), "t.jsonl", b"\n\n"),
        Some(flame_import::Format::ClaudeCode),
        &ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, ImportError::Empty { .. }), "{err}");
}

#[test]
fn an_empty_subagent_file_is_reported_and_its_frame_kept() {
    let dir = tempfile::tempdir().unwrap();
    let task = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m2","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Task","input":{"description":"Look around","prompt":"Read the code"}}],"usage":{"input_tokens":12}}}"#;
    let result = r#"{"type":"user","sessionId":"s1","timestamp":"2026-01-01T00:00:09Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"It is small."}]}]},"toolUseResult":{"status":"completed","agentId":"abc"}}"#;
    let text = format!("{USER}\n{ASSISTANT}\n{task}\n{result}\n");
    let session = write(dir.path(), "s.jsonl", text.as_bytes());
    std::fs::create_dir_all(dir.path().join("s/subagents")).unwrap();
    write(&dir.path().join("s/subagents"), "agent-abc.jsonl", b"");
    let draft = read(&session).unwrap();
    let sub = draft.frames.iter().find(|f| f.title == "Look around").unwrap();
    assert_eq!(sub.results.as_deref(), Some("It is small."));
    assert_eq!(draft.report.problems, ["agent-abc.jsonl: the file is empty"]);
}

#[test]
fn a_subagent_id_is_a_name_never_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let task = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m2","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Task","input":{"description":"Look around","prompt":"Read the code"}}],"usage":{"input_tokens":12}}}"#;
    // The id walks out of the session's folder through a folder the bundle brought along.
    let escape = "x/../../../../outside/secret";
    let result = format!(
        r#"{{"type":"user","sessionId":"s1","timestamp":"2026-01-01T00:00:09Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":[{{"type":"text","text":"Done."}}]}}]}},"toolUseResult":{{"status":"completed","agentId":"{escape}"}}}}"#
    );
    let session = dir.path().join("bundle");
    std::fs::create_dir_all(session.join("s/subagents/agent-x")).unwrap();
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    let secret = USER.replace("Fix the parser", "SECRET-FROM-OUTSIDE");
    write(&dir.path().join("outside"), "secret.jsonl", secret.as_bytes());
    let text = format!("{USER}\n{ASSISTANT}\n{task}\n{result}\n");
    let draft = read(&write(&session, "s.jsonl", text.as_bytes())).unwrap();
    assert!(
        draft.messages.iter().all(|m| !m.message.content.contains("SECRET-FROM-OUTSIDE")),
        "a transcript outside the session's folder was read"
    );
    let sub = draft.frames.iter().find(|f| f.title == "Look around").unwrap();
    assert_eq!(sub.results.as_deref(), Some("Done."));
    assert_eq!(draft.report.problems.len(), 1, "{:?}", draft.report.problems);
    assert!(
        draft.report.problems[0].contains("is not a plain name"),
        "{:?}",
        draft.report.problems
    );
    // An id past the longest read is refused the same way, shown cut.
    let long = "a".repeat(flame_import::MAX_AGENT_ID_BYTES + 1);
    let text = text.replace(escape, &long);
    std::fs::create_dir_all(session.join("t/subagents")).unwrap();
    write(&session.join("t/subagents"), &format!("agent-{long}.jsonl"), USER.as_bytes());
    let draft = read(&write(&session, "t.jsonl", text.as_bytes())).unwrap();
    assert!(
        draft.report.problems.iter().any(|p| p.contains("is not a plain name")),
        "{:?}",
        draft.report.problems
    );
}

#[test]
fn an_unknown_file_is_refused_with_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let err = read(&write(dir.path(), "x.txt", b"hello\n")).unwrap_err();
    assert!(err.to_string().contains("--format"), "{err}");
    let err = read(&dir.path().join("missing.jsonl")).unwrap_err();
    assert!(matches!(err, ImportError::Io { .. }), "{err}");
}

#[test]
fn todo_list_items_cut_the_main_thread() {
    let dir = tempfile::tempdir().unwrap();
    let todo = |id: &str, item: &str, t: u32| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","timestamp":"2026-01-01T00:01:{t:02}Z","message":{{"id":"{id}","role":"assistant","content":[{{"type":"tool_use","id":"tu-{id}","name":"TodoWrite","input":{{"todos":[{{"content":"{item}","activeForm":"Doing {item}","status":"in_progress"}}]}}}}]}}}}
{{"type":"user","sessionId":"s1","timestamp":"2026-01-01T00:01:{t:02}Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"tu-{id}","content":"ok"}}]}}}}
{{"type":"assistant","sessionId":"s1","timestamp":"2026-01-01T00:01:{:02}Z","message":{{"id":"{id}x","role":"assistant","content":[{{"type":"text","text":"Worked on {item}"}}]}}}}"#,
            t + 1
        )
    };
    let text = format!("{USER}\n{}\n{}\n", todo("a", "parse", 1), todo("b", "test", 5));
    let draft = read(&write(dir.path(), "s.jsonl", text.as_bytes())).unwrap();
    let titles: Vec<_> = draft.frames.iter().skip(1).map(|f| f.title.as_str()).collect();
    // The request's segment keeps the choice of the first item; each item's work is its own.
    assert_eq!(titles, ["Fix the parser", "Doing parse", "Doing test"]);
    assert_eq!(draft.frames[2].results.as_deref(), Some("Worked on parse"));
    assert_eq!(draft.frames[2].criteria, "parse");
}

#[test]
fn a_file_of_bad_lines_names_the_first_few_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    // A first line that names the format, then 100 000 lines that are not JSON.
    let mut text = format!("{}\n", &USER[..USER.len() - 1]);
    for n in 0..100_000 {
        text.push_str(&format!("garbage {n} {}\n", "x".repeat(100)));
    }
    let err = import(
        &write(dir.path(), "bad.jsonl", text.as_bytes()),
        Some(flame_import::Format::ClaudeCode),
        &ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(message.len() < 2_000, "{} bytes: {}", message.len(), &message[..2_000]);
    assert!(message.contains("bad.jsonl line 1: "), "{message}");
    assert!(message.contains("bad.jsonl line 5: "), "{message}");
    assert!(!message.contains("line 6:"), "{message}");
    assert!(message.ends_with(&format!("and {} more)", 100_001 - 5)), "{message}");
}

#[test]
fn a_report_lists_a_few_problems_and_counts_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = format!("{USER}\n{ASSISTANT}\n");
    text.push_str(&"[1]\n".repeat(1_000));
    let draft = read(&write(dir.path(), "s.jsonl", text.as_bytes())).unwrap();
    assert_eq!(draft.messages.len(), 2);
    assert_eq!(draft.report.problems.len(), flame_import::MAX_LISTED_PROBLEMS);
    assert_eq!(draft.report.unlisted_problems, 1_000 - 5);
    assert_eq!(draft.report.problem_count(), 1_000);
    assert!(draft.report.problems[0].contains("s.jsonl line 3: not a JSON object"));
    assert_eq!(draft.report.problem_lines().last().unwrap(), "and 995 more");
}

#[test]
fn recorded_token_counts_near_the_top_of_u64_do_not_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let max = u64::MAX;
    let assistant = ASSISTANT.replace(
        r#""usage":{"input_tokens":10,"cache_read_input_tokens":100}"#,
        &format!(
            r#""usage":{{"input_tokens":{max},"cache_read_input_tokens":{max},"cache_creation_input_tokens":{max}}}"#
        ),
    );
    let draft =
        read(&write(dir.path(), "s.jsonl", format!("{USER}\n{assistant}\n").as_bytes())).unwrap();
    assert_eq!(draft.calls[0].input_tokens, u64::MAX);
    let replay = flame_import::replay::replay(&draft, &Default::default()).unwrap();
    assert_eq!(replay.linear_tokens, u64::MAX);
}

/// An export whose frames name their parents as `parents` says (by index), one message each.
fn export_of(parents: &[Option<usize>]) -> flame_import::flame_json::Export {
    let id = |i: usize| format!("f{i:010}");
    let frames: Vec<serde_json::Value> = parents
        .iter()
        .enumerate()
        .map(|(i, parent)| {
            serde_json::json!({
                "id": id(i), "parent": parent.map(id), "position": 0, "title": "t",
                "success_criteria": "c", "success_criteria_compacted": null,
                "status": "in_progress", "status_reason": null, "results": null,
                "results_compacted": null, "artifacts": [], "decisions": [], "retry_of": null,
                "created_at": 1, "started_at": 1, "ended_at": null, "messages": []
            })
        })
        .collect();
    serde_json::from_value(serde_json::json!({
        "format": "flame-export", "version": 1,
        "tree": { "title": "t", "created_at": 1, "focus": null },
        "frames": frames
    }))
    .unwrap()
}

#[test]
fn an_export_whose_parents_loop_or_nest_too_deep_is_refused() {
    let err =
        flame_import::flame_json::to_draft(&export_of(&[None, Some(2), Some(1)])).unwrap_err();
    assert!(err.contains("form a loop"), "{err}");

    // Chains listed leaf first: each frame's parent is the next one, the root comes last.
    let chain = |depth: usize| -> Vec<Option<usize>> {
        (0..=depth).map(|i| (i < depth).then_some(i + 1)).collect()
    };
    let max = flame_model::MAX_DEPTH;
    let err = flame_import::flame_json::to_draft(&export_of(&chain(max + 1))).unwrap_err();
    assert!(err.contains(&format!("deeper than {max} levels")), "{err}");
    let draft = flame_import::flame_json::to_draft(&export_of(&chain(max))).unwrap();
    assert_eq!(draft.frames.len(), max + 1);
    assert_eq!(draft.frames[max].parent, Some(max - 1), "the leaf comes last, under its parent");
}

/// A tool call, its result and the usage report read typed, under Flame's names, and a message
/// weighs what the same message added live weighs: its text, its calls and its result.
#[test]
fn tool_calls_results_and_usage_are_typed_and_weighed_by_the_live_rule() {
    let dir = tempfile::tempdir().unwrap();
    let call = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m2","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":12,"cache_creation_input_tokens":7,"cache_read_input_tokens":"many","output_tokens":3,"service_tier":"standard"}}}"#;
    let result = r#"{"type":"user","sessionId":"s1","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"No such file"}]}}"#;
    let text = format!("{USER}\n{call}\n{result}\n");
    let draft = read(&write(dir.path(), "s.jsonl", text.as_bytes())).unwrap();
    let of = |role| draft.messages.iter().find(|m| m.message.role == role).unwrap();
    let (assistant, tool) = (of(Role::Assistant), of(Role::Tool));
    assert_eq!(
        assistant.message.tool_calls,
        Some(vec![ToolCall {
            arguments: serde_json::json!({"command": "ls"}),
            id: "toolu_1".into(),
            name: "Bash".into(),
        }])
    );
    // A count that is not a number is taken as zero; what Flame does not model is not kept.
    assert_eq!(
        assistant.message.usage,
        Some(Usage {
            cache_read_tokens: 0,
            cache_write_tokens: 7,
            input_tokens: 12,
            output_tokens: 3,
            ..Usage::default()
        })
    );
    assert_eq!(
        tool.message.tool_result,
        Some(ToolResult {
            detail: None,
            is_error: true,
            name: None,
            tool_call_id: "toolu_1".into()
        })
    );
    let encoding = Encoding::for_model("claude-opus-4-6");
    let result_json = r#"{"is_error":true,"tool_call_id":"toolu_1"}"#;
    assert_eq!(
        tool.tokens,
        flame_tokens::count(encoding, "No such file") + flame_tokens::count(encoding, result_json),
        "a tool result weighs its result too, as a live one does"
    );
    for m in &draft.messages {
        assert_eq!(m.tokens, flame_tokens::count_message(encoding, &m.message));
    }
}

/// An export an earlier version wrote of an imported tree holds the importers' old shapes,
/// which read typed.
#[test]
fn an_export_holding_the_importers_old_shapes_reads_typed() {
    let text = r#"{"role":"tool","content":"ok","tool_calls":null,
        "tool_result":{"is_error":false,"tool_use_id":"toolu_1"},"model":null,
        "usage":{"cache_read_input_tokens":4,"input_tokens":3,"service_tier":"standard"},
        "tokens":1,"created_at":5,"interrupted":false}"#;
    let m: flame_import::flame_json::ExportMessage = serde_json::from_str(text).unwrap();
    assert_eq!(
        m.tool_result,
        Some(ToolResult {
            detail: None,
            is_error: false,
            name: None,
            tool_call_id: "toolu_1".into()
        })
    );
    assert_eq!(m.usage, Some(Usage { cache_read_tokens: 4, input_tokens: 3, ..Usage::default() }));
    let calls = r#"{"role":"assistant","content":"","tool_calls":[{"id":"c","input":{"a":1},"name":"Bash"}],
        "tool_result":null,"model":null,"usage":null,"tokens":1,"created_at":5,"interrupted":false}"#;
    let m: flame_import::flame_json::ExportMessage = serde_json::from_str(calls).unwrap();
    assert_eq!(m.tool_calls.unwrap()[0].arguments, serde_json::json!({"a": 1}));
}
