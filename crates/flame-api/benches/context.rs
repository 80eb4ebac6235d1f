//! Context assembly as a person's chat asks for it: `Flame::prepare_call` (what the agent calls
//! before every model call: the context, and what it changes of the frame's stored context
//! written first) for the focused, deepest in-progress frame of a 100k-frame, 1M-message tree
//! read from the store, at the facade's default 128k-token budget and the default settings
//! (masking in batches under Anthropic's prices). The tree has a workspace, its finished frames have
//! file trails (so the finished frames shown list their subtrees' files), and the focus holds a
//! working conversation of about 200 messages: requests, answers, and tool calls reading,
//! editing and running things with their results. Each timed assembly follows a round of the
//! chat, as the agent's do. Issue 19's goal: p95 ≤ 0.5 ms.
//!
//! A second figure is one frame of 2,000 tool calls and results (a long working session), where
//! masking stubs 1,997 of them and the oldest messages give way to the budget.
//!
//! The tree's counts can be lowered with FLAME_BENCH_FRAMES and FLAME_BENCH_MESSAGES, and the
//! chat's rounds (100) and the unchanged assemblies timed (300) raised with FLAME_BENCH_ROUNDS and
//! FLAME_BENCH_RUNS for a profiler to see more of them. Prints
//! `BENCH <name> <value> <unit>` lines.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use flame_api::{Budget, CachePolicy, DataDir, Env, Flame, FlameConfig};
use flame_model::{
    Actor, FileTrail, Frame, FrameId, IdSource, NewMessage, Role, Status, ToolCall, ToolDetail,
    ToolResult, Tree,
};
use flame_store::{Change, ImportedMessage, Store};
use serde_json::json;

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The tool calls of the focus's conversation take turns: two reads, an edit, a command.
fn tool_turn(round: usize) -> (NewMessage, NewMessage, FileTrail) {
    let path = format!("src/module_{}/handler_{round}.rs", round % 7);
    let code_line =
        |n: usize| format!("    let value_{n} = compute(&input, {n}).map_err(Error::from)?;\n");
    let (name, arguments, result, detail, trail) = match round % 4 {
        0 | 1 => {
            let text: String = (0..60).map(code_line).collect();
            let detail = ToolDetail::Read {
                path: path.clone(),
                first_line: 1,
                last_line: 60,
                total_lines: Some(60),
            };
            let trail = FileTrail::new([path.clone()], []);
            ("read_file", json!({"path": path}), text, Some(detail), trail)
        }
        2 => {
            let old: String = (0..8).map(code_line).collect();
            let new: String = (0..12).map(code_line).collect();
            let diff: String = (0..12).map(|n| format!("+{}", code_line(n))).collect();
            let detail = ToolDetail::Change { path: path.clone(), created: false, diff };
            let trail = FileTrail::new([], [path.clone()]);
            let arguments = json!({"path": path, "old_string": old, "new_string": new});
            ("edit_file", arguments, format!("Edited {path}: 1 replacement"), Some(detail), trail)
        }
        _ => {
            let output: String = (0..40)
                .map(|n| format!("test module_{}::tests::case_{n} ... ok\n", round % 7))
                .collect();
            let arguments = json!({"command": "cargo test -p service --lib"});
            ("run_command", arguments, output, None, FileTrail::default())
        }
    };
    let id = format!("call_{round:05}");
    let call = NewMessage {
        tool_calls: Some(vec![ToolCall { arguments, id: id.clone(), name: name.to_owned() }]),
        ..NewMessage::text(Role::Assistant, format!("Next, step {round}: {name} on {path}."))
    };
    let result = NewMessage {
        tool_result: Some(ToolResult {
            detail,
            is_error: false,
            name: Some(name.to_owned()),
            tool_call_id: id,
        }),
        ..NewMessage::text(Role::Tool, result)
    };
    (call, result, trail)
}

fn count(message: &NewMessage) -> u64 {
    flame_tokens::count_message(flame_tokens::Encoding::O200kBase, message)
}

/// The focus's working conversation, written the way the agent writes it: a request, then
/// rounds of a call and its result, with an answer and a further request every 12 rounds.
fn write_conversation(store: &mut Store, focus: &FrameId) {
    let mut at = 2;
    let mut change = || {
        at += 1;
        Change { actor: Actor::Agent, at }
    };
    let request = "Add pagination to the list endpoint, keep the old query parameters working, \
                   and make sure every handler's tests still pass.";
    store.add_message(change(), focus, &NewMessage::text(Role::User, request), 30).unwrap();
    for round in 0..92 {
        let (call, result, trail) = tool_turn(round);
        store.add_message(change(), focus, &call, count(&call)).unwrap();
        store.add_tool_result(change(), focus, &result, count(&result), &trail).unwrap();
        if round % 12 == 11 {
            let answer = NewMessage::text(
                Role::Assistant,
                format!(
                    "Done with part {}: {}",
                    round / 12,
                    "the handlers page their results. ".repeat(20)
                ),
            );
            store.add_message(change(), focus, &answer, count(&answer)).unwrap();
            let more = NewMessage::text(Role::User, "Good. Go on with the next handlers.");
            store.add_message(change(), focus, &more, count(&more)).unwrap();
        }
    }
}

/// A tree of one in-progress frame holding `rounds` tool calls and their results.
fn long_session(rounds: usize) -> (Tree, Frame, Vec<ImportedMessage>) {
    let mut ids = IdSource::seeded(4096);
    let tree_id = ids.tree_id();
    let frame = Frame::new(
        ids.frame_id(),
        tree_id.clone(),
        None,
        0,
        "Long session",
        "Every handler pages its results",
        Status::InProgress,
        1,
    );
    let mut messages = Vec::with_capacity(2 * rounds + 2);
    let mut push = |message: NewMessage| {
        let at = messages.len() as i64;
        messages.push(ImportedMessage { frame: 0, tokens: count(&message), message, at });
    };
    push(NewMessage::text(Role::User, "Page every handler's results."));
    for round in 0..rounds {
        let (call, result, _) = tool_turn(round);
        push(call);
        push(result);
    }
    push(NewMessage::text(Role::Assistant, "Every handler pages its results now."));
    let tree = Tree {
        id: tree_id,
        title: "Long session".into(),
        root: frame.id.clone(),
        focus: frame.id.clone(),
        created_at: 1,
        workspace: None,
    };
    (tree, frame, messages)
}

/// Assembles `runs` times; the sorted times.
fn timed(runs: usize, mut assemble: impl FnMut()) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            assemble();
            started.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn at(times: &[Duration], p: f64) -> f64 {
    times[((times.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3
}

fn main() {
    let frames = env_count("FLAME_BENCH_FRAMES", 100_000);
    let messages = env_count("FLAME_BENCH_MESSAGES", 1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    let (tree, all_frames, all_messages) = flame_store::synthetic::tree(frames, messages);
    let focus = tree.focus.clone();
    // Every finished frame's own calls read two files and a third of them changed one, so the
    // finished frames shown list their subtrees' files as an imported transcript's would.
    let trails: Vec<(usize, FileTrail)> = all_frames
        .iter()
        .enumerate()
        .filter(|(_, f)| f.status == Status::Completed)
        .map(|(i, _)| {
            let read =
                [format!("src/module_{}/mod.rs", i % 50), format!("src/util_{}.rs", i % 997)];
            let changed =
                (i % 3 == 0).then(|| format!("src/module_{}/handler_{}.rs", i % 50, i % 13));
            (i, FileTrail::new(read, changed))
        })
        .collect();
    let (session, session_frame, session_messages) = long_session(2_000);
    {
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let change = Change { actor: Actor::Cli, at: 1 };
        store.import_tree_with_trails(change, &tree, &all_frames, &all_messages, &trails).unwrap();
        store.set_workspace(change, &tree.id, Some(&workspace.display().to_string())).unwrap();
        write_conversation(&mut store, &focus);
        store.import_tree(change, &session, &[session_frame], &session_messages).unwrap();
    }
    drop((all_messages, trails, session_messages));
    // Opening writes the logs of every imported frame once; that is import's cost, not this one's.
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame =
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 3)).unwrap();
    flame_tokens::warm_up();

    // The first assembly reads the finished frames' subtree trails, which are kept for the next;
    // it makes the frame's opening and stores it.
    let policy = CachePolicy::anthropic(None);
    let started = Instant::now();
    flame.prepare_call(&focus, flame_api::DEFAULT_BUDGET, policy).unwrap();
    println!("BENCH context.assemble_100k_first {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    // As in a chat: before each assembly, a round of the chat (the model's call and its result,
    // written through the facade as the agent writes them), so each assembly follows new
    // messages and events. The focus goes from about 200 messages to about 400.
    // `None`: the facade's default budget, a 128k-token window.
    let mut times: Vec<Duration> = (0..env_count("FLAME_BENCH_ROUNDS", 100))
        .map(|round| {
            let (call, result, trail) = tool_turn(92 + round);
            flame.add_message(Actor::Agent, &focus, &call).unwrap();
            flame.add_tool_result(Actor::Agent, &focus, &result, &trail).unwrap();
            let started = Instant::now();
            let doc = flame.prepare_call(&focus, flame_api::DEFAULT_BUDGET, policy).unwrap();
            let elapsed = started.elapsed();
            assert!(doc.report.fits && doc.report.masked_results > 0);
            elapsed
        })
        .collect();
    times.sort();
    println!("BENCH context.assemble_100k_median {:.3} ms", at(&times, 0.5));
    println!("BENCH context.assemble_100k_p95 {:.3} ms", at(&times, 0.95));
    // The same context again with nothing changed, as the context inspector redraws it (the
    // preview, which stores nothing and adds the frame's recorded cache hit rate).
    let times = timed(env_count("FLAME_BENCH_RUNS", 300), || {
        let doc = flame.context(Some(&focus), None).unwrap();
        assert!(doc.report.fits);
    });
    println!("BENCH context.assemble_100k_unchanged_p95 {:.3} ms", at(&times, 0.95));

    let tight = Budget { context_window: 20_000, reply_reserve: 0, tool_schemas: 0 };
    let started = Instant::now();
    let doc = flame.context(Some(&focus), Some(tight)).unwrap();
    println!("BENCH context.assemble_tight_budget {:.3} ms", started.elapsed().as_secs_f64() * 1e3);
    println!(
        "BENCH context.saving_ratio {:.1} x",
        doc.report.linear_tokens as f64 / doc.report.total_tokens.max(1) as f64
    );

    let times = timed(30, || {
        let doc = flame.context(Some(&session.focus), None).unwrap();
        assert!(
            doc.report.fits && doc.report.masked_results > 0 && doc.report.omitted_messages > 0
        );
    });
    println!("BENCH context.assemble_2000_tool_results_p95 {:.3} ms", at(&times, 0.95));
}
