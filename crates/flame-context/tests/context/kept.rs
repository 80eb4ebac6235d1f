//! Assembling with kept parts (`next_call` with `KeptParts`) gives what assembling afresh gives, after every
//! kind of change a kept part could miss: each field a frame shows, a subtree's files, a log
//! path, the order of siblings, the focus, the budget, a retry, and messages added, streamed
//! and masked. Each step also checks that the change shows in the context, so a part kept when
//! it should not be fails the test.

use std::collections::HashMap;

use flame_context::{
    Budget, CacheEconomics, CachePolicy, CallRules, ContextDoc, ContextInput, KeptParts, next_call,
};
use flame_model::CacheLifetime;
use flame_model::{FileTrail, Frame, FrameId, Message, Role, Status, ToolCall, ToolResult};
use flame_tokens::Encoding;
use serde_json::json;

use crate::{log_paths, marked, message, shared};

const ROOT: &str = "f000000r00t";
const A: &str = "f00000000a0";
const B: &str = "f00000000b0";
const PLANNED: &str = "f00000000p0";
const B1: &str = "f00000000b1";
const FOCUS: &str = "f00000000c0";
const SIBLING: &str = "f00000000s0";
const FAILED: &str = "f00000000x0";
const CHILD: &str = "f00000000k0";
const NEW: &str = "f00000000n0";

const RULES: CallRules = CallRules {
    now: 1_000,
    policy: CachePolicy {
        conversation: CacheLifetime::Short,
        economics: CacheEconomics::ANTHROPIC,
    },
};

/// The context of a fresh opening, with parts kept in `kept` or without.
fn opening(input: &ContextInput<'_>, kept: Option<(&mut KeptParts, usize)>) -> ContextDoc {
    next_call(input, None, &RULES, kept).unwrap().doc
}

fn id(name: &str) -> FrameId {
    FrameId::parse(name).unwrap()
}

/// Root; A completed; B in progress with a planned frame and B1; under B1 the focus, a
/// completed sibling and a failed one; under the focus a completed child. The focus is three
/// levels below the root, so the root shows its compacted criteria.
fn frames() -> Vec<Frame> {
    vec![
        marked(ROOT, None, 0, Status::InProgress),
        marked(A, Some(ROOT), 0, Status::Completed),
        marked(B, Some(ROOT), 1, Status::InProgress),
        marked(PLANNED, Some(B), 0, Status::Planned),
        marked(B1, Some(B), 1, Status::InProgress),
        marked(SIBLING, Some(B1), 0, Status::Completed),
        marked(FOCUS, Some(B1), 1, Status::InProgress),
        marked(FAILED, Some(B1), 2, Status::Failed),
        marked(CHILD, Some(FOCUS), 0, Status::Completed),
    ]
}

fn trail(read: &[String], changed: &[&str]) -> FileTrail {
    FileTrail::new(read.iter().cloned(), changed.iter().map(|s| s.to_string()))
}

/// A call reading a file (with a long argument, which masking cuts) and its result.
fn turn(n: i64, focus: &FrameId) -> [Message; 2] {
    let call_id = format!("call_{n}");
    let mut call = message(2 * n + 1, focus, "", 30);
    call.role = Role::Assistant;
    call.tool_calls = Some(vec![ToolCall {
        arguments: json!({"path": format!("src/{n}.rs"), "content": "x".repeat(600)}),
        id: call_id.clone(),
        name: "write_file".to_owned(),
    }]);
    let mut result =
        message(2 * n + 2, focus, &format!("output {n}: {}", "line\n".repeat(80)), 200);
    result.role = Role::Tool;
    result.tool_result =
        Some(ToolResult { detail: None, is_error: false, name: None, tool_call_id: call_id });
    [call, result]
}

struct Case {
    frames: Vec<Frame>,
    focus: FrameId,
    messages: Vec<Message>,
    /// How many of `messages` are settled.
    settled: usize,
    logs: HashMap<FrameId, String>,
    trails: HashMap<FrameId, FileTrail>,
    path_trails: HashMap<FrameId, FileTrail>,
    budget: u64,
    kept: KeptParts,
    last: Option<ContextDoc>,
}

impl Case {
    fn frame(&mut self, name: &str) -> &mut Frame {
        self.frames.iter_mut().find(|f| f.id.as_str() == name).unwrap()
    }

    /// Assembles with the kept parts and afresh: the same context, and (unless `same`) not
    /// the one before.
    fn check(&mut self, what: &str, same: bool) -> ContextDoc {
        let messages = shared(&self.messages);
        let input = ContextInput {
            focus: &self.focus,
            frames: &self.frames,
            messages: &messages,
            encoding: Encoding::O200kBase,
            budget: Budget::of(self.budget),
            log_paths: &self.logs,
            linear_message_tokens: 0,
            workspace: Some("/work/space"),
            trails: &self.trails,
            path_trails: &self.path_trails,
            keep_tool_results: Some(1),
            allowance: None,
            instructions: None,
            read_back: flame_context::ReadBack::FrameLog,
        };
        let kept = opening(&input, Some((&mut self.kept, self.settled)));
        assert_eq!(kept, opening(&input, None), "{what}");
        if let Some(last) = &self.last {
            assert_eq!(&kept == last, same, "{what}: the change shows in the context");
        }
        self.last = Some(kept.clone());
        kept
    }
}

#[test]
fn kept_parts_give_the_fresh_context_after_every_kind_of_change() {
    let frames = frames();
    let focus = id(FOCUS);
    let files = |n: usize| (0..n).map(|i| format!("src/file_{i:02}.rs")).collect::<Vec<_>>();
    let mut case = Case {
        logs: log_paths(&frames),
        trails: HashMap::from([
            (id(A), trail(&files(25), &["src/a.rs"])),
            (id(SIBLING), trail(&files(2), &["src/s.rs", "artifact-f00000000s0"])),
            (id(CHILD), trail(&files(1), &[])),
        ]),
        path_trails: HashMap::from([(id(B1), trail(&files(2), &["src/b1.rs"]))]),
        messages: [message(0, &focus, "do the work", 10)]
            .into_iter()
            .chain((0..3).flat_map(|n| turn(n, &focus)))
            .collect(),
        settled: 7,
        frames,
        focus,
        budget: 1_000_000,
        kept: KeptParts::default(),
        last: None,
    };
    case.check("first", false);
    case.check("nothing changed", true);
    case.kept.trust_frames_unchanged();
    case.check("nothing changed, as the caller promised", true);

    // Frames' fields, each where the context shows it.
    case.frame(ROOT).success_criteria_compacted = Some("the root, shorter".into());
    case.check("the root's compacted criteria", false);
    case.frame(PLANNED).success_criteria_compacted = Some("planned, shorter".into());
    case.check("a planned frame's compacted criteria", false);
    case.frame(B).title = "B, renamed".into();
    case.check("a title on the path", false);
    case.frame(B1).success_criteria = "B1's criteria, edited".into();
    case.check("the parent's criteria", false);
    case.frame(FOCUS).results = Some("partial results".into());
    case.check("the focus's partial results", false);
    case.frame(SIBLING).results_compacted = Some("sibling, compacted again".into());
    case.check("a sibling's compacted results", false);
    case.frame(CHILD).results = Some("the child's results, in full".into());
    case.check("a child's results", false);
    case.frame(A).decisions.push("one more decision".into());
    case.check("an uncle's decisions", false);
    case.frame(SIBLING).artifacts.push("src/s.rs".into());
    case.check("an artifact that hides a changed file", false);
    case.frame(FAILED).status_reason = Some("another reason".into());
    case.check("a failed sibling's reason", false);
    case.frame(SIBLING).status = Status::Blocked;
    case.check("a sibling's status", false);

    // Files, logs and the order of siblings.
    case.trails.insert(id(SIBLING), trail(&files(3), &["src/s.rs"]));
    case.check("a sibling's subtree read one more file", false);
    case.trails.insert(id(A), trail(&files(30), &["src/a.rs"]));
    case.check("past the listed files, only the count changes", false);
    case.trails.remove(&id(CHILD));
    case.check("a child whose subtree touched nothing", false);
    case.path_trails.insert(id(B1), trail(&files(3), &["src/b1.rs"]));
    case.check("the parent's own work read one more file", false);
    case.path_trails.insert(id(ROOT), trail(&[], &["README.md"]));
    case.check("the root changed a file", false);
    // A trail given for the focus (its own work is in its messages) or a frame off the path
    // shows nothing.
    case.path_trails.insert(id(FOCUS), trail(&files(1), &[]));
    case.path_trails.insert(id(SIBLING), trail(&files(1), &[]));
    case.check("trails that are not shown", true);
    case.logs.insert(id(SIBLING), "logs/elsewhere.md".into());
    case.check("a log path", false);
    for frame in case.frames.iter_mut().filter(|f| f.parent == Some(id(B1))) {
        frame.position += 1;
    }
    case.frames.push(marked(NEW, Some(B1), 0, Status::Completed));
    case.check("a sibling put first shifts the others", false);

    // A retry, the focus, the budget.
    case.frame(FOCUS).retry_of = Some(id(FAILED));
    case.check("the focus retries the failed sibling", false);
    case.focus = id(B1);
    case.check("another focus", false);
    // A promise that the frames are unchanged does not carry the texts to another focus.
    case.kept.trust_frames_unchanged();
    case.focus = id(FOCUS);
    case.check("the focus again", false);
    // Just short of what everything costs, so that something gives way.
    case.budget = case.last.as_ref().unwrap().report.total_tokens - 40;
    let tight = case.check("a tight budget", false);
    assert!(tight.report.sections.iter().any(|s| s.state != flame_context::SectionState::Full));
    case.budget = 1_000_000;
    case.check("room again", false);

    // Messages: new turns mask older results (their calls cut), a reply streams in under one
    // id, and the settled ones are read again from a new start.
    let focus = case.focus.clone();
    case.messages.extend(turn(3, &focus));
    case.settled = case.messages.len();
    let doc = case.check("a new turn", false);
    assert!(doc.report.masked_results >= 3 && doc.report.masked_calls >= 3);
    let mut reply = message(100, &focus, "the answer so", 5);
    reply.role = Role::Assistant;
    case.messages.push(reply);
    case.check("a reply begins", false);
    case.messages.last_mut().unwrap().content = "the answer so far, longer".into();
    case.check("the reply grows under its id", false);
    case.settled = case.messages.len();
    case.messages.extend(turn(60, &focus));
    case.settled = case.messages.len();
    case.check("the reply is settled, and one more turn", false);
}

/// A kept part is taken again only when it was made for the same inputs; this checks that
/// `forget_messages` is what makes a reused id safe: with it the context is the fresh one.
#[test]
fn forgetting_messages_lets_an_id_name_another_message() {
    let frames = frames();
    let focus = id(FOCUS);
    let logs = log_paths(&frames);
    let trails = HashMap::new();
    let first: Vec<Message> = (0..3).flat_map(|n| turn(n, &focus)).collect();
    let mut second = first.clone();
    second[1].content = format!("another output: {}", "row\n".repeat(90));
    second[1].tokens = 300;
    let mut kept = KeptParts::default();
    for (messages, forget) in [(shared(&first), false), (shared(&second), true)] {
        let input = ContextInput {
            focus: &focus,
            frames: &frames,
            messages: &messages,
            encoding: Encoding::O200kBase,
            budget: Budget::of(1_000_000),
            log_paths: &logs,
            linear_message_tokens: 0,
            workspace: None,
            trails: &trails,
            path_trails: &trails,
            keep_tool_results: Some(1),
            allowance: None,
            instructions: None,
            read_back: flame_context::ReadBack::FrameLog,
        };
        if forget {
            kept.forget_messages();
        }
        let doc = opening(&input, Some((&mut kept, messages.len())));
        assert_eq!(doc, opening(&input, None));
    }
}
