//! Following other agents' sessions through the facade: each line stored once, partial lines
//! waiting, truncated and replaced files read again into the same tree, subagent files becoming
//! child frames, recorded costs with the cache priced, and every bad input the issue lists a
//! clear message on the session's row with the rest kept and nothing half-stored.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use flame_api::{AbsentFolder, Agent, AgentHomes, Flame, FollowOutcome, FollowerNews, WatchSignal};
use flame_model::{Actor, Status, TreeId};

use crate::Scratch;

const A: Actor = Actor::Cli;

/// A Claude Code record at second `n` of the session.
fn time(n: usize) -> String {
    format!("2026-11-26T10:{:02}:{:02}.000Z", n / 60 % 60, n % 60)
}

fn user(n: usize, text: &str) -> String {
    serde_json::json!({"type": "user", "sessionId": "s1", "cwd": "/work/p", "timestamp": time(n),
        "message": {"role": "user", "content": text}})
    .to_string()
}

fn assistant(n: usize, id: &str, text: &str, output: u64) -> String {
    serde_json::json!({"type": "assistant", "sessionId": "s1", "timestamp": time(n),
        "message": {"id": id, "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 100, "output_tokens": output}}})
    .to_string()
}

fn append(path: &Path, text: &str) {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

fn sync(flame: &Flame, id: &str) -> FollowOutcome {
    flame.sync_followed(A, id).unwrap()
}

/// Every message of the tree's frames, oldest first.
fn contents(flame: &Flame, tree: &TreeId) -> Vec<String> {
    let status = flame.status(Some(tree)).unwrap();
    let mut all: Vec<(i64, String)> = Vec::new();
    for f in &status.frames {
        for m in flame.messages(&f.frame.id).unwrap() {
            all.push((m.id.0, m.content));
        }
    }
    all.sort();
    all.into_iter().map(|(_, c)| c).collect()
}

fn session(dir: &Path) -> PathBuf {
    let project = dir.join("projects/-work-p");
    std::fs::create_dir_all(&project).unwrap();
    project.join("s1.jsonl")
}

fn row_problem(flame: &Flame, id: &str) -> Option<String> {
    flame.followed_sessions().unwrap().into_iter().find(|s| s.id == id).unwrap().problem
}

#[test]
fn a_thousand_lines_appended_in_bursts_are_stored_once_each() {
    let s = Scratch::new(1);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n", user(0, "Count to a thousand")));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    assert_eq!((first.messages, first.problem.as_deref()), (1, None));
    let id = first.id.clone();
    let lines: Vec<String> =
        (1..1000).map(|n| assistant(n, &format!("m{n}"), &format!("line {n}"), 7)).collect();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    // Bursts of 1 to 97 lines, most of them ending inside a line, as a writer's buffer does.
    let (mut at, mut burst, mut stored) = (0usize, 1usize, 1u64);
    while at < text.len() {
        let end = (at + burst * 131).min(text.len());
        append(&path, &text[at..end]);
        at = end;
        burst = burst % 97 + 13;
        stored += sync(&s.flame, &id).messages;
    }
    assert_eq!(stored, 1000);
    let tree = first.tree.unwrap();
    let all = contents(&s.flame, &tree);
    assert_eq!(all.len(), 1000);
    let expected: Vec<String> = std::iter::once("Count to a thousand".to_owned())
        .chain((1..1000).map(|n| format!("line {n}")))
        .collect();
    assert_eq!(all, expected);
    // Another process (the app after a restart) reads from the store's cursor: nothing twice.
    let again = s.reopen(2);
    let outcome = again.sync_followed(A, &id).unwrap();
    assert_eq!((outcome.messages, outcome.restarted), (0, None));
    assert_eq!(contents(&again, &tree).len(), 1000);
}

#[test]
fn a_partial_last_line_waits_for_its_end() {
    let s = Scratch::new(3);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n", user(0, "Go")));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    let line = assistant(1, "m1", "half and half", 3);
    let (head, tail) = line.split_at(line.len() / 2);
    append(&path, head);
    assert_eq!(sync(&s.flame, &first.id).messages, 0);
    append(&path, &format!("{tail}\n"));
    assert_eq!(sync(&s.flame, &first.id).messages, 1);
    assert_eq!(contents(&s.flame, first.tree.as_ref().unwrap()), ["Go", "half and half"]);
}

#[test]
fn a_truncated_or_replaced_file_is_read_again_into_the_same_tree() {
    let s = Scratch::new(4);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n{}\n", user(0, "First try"), assistant(1, "m1", "one", 3)));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    let tree = first.tree.clone().unwrap();
    // Cut short and written again.
    std::fs::write(&path, format!("{}\n", user(2, "Second try"))).unwrap();
    let outcome = sync(&s.flame, &first.id);
    assert!(outcome.restarted.as_deref().is_some_and(|w| w.contains("cut to")), "{outcome:?}");
    assert_eq!(outcome.tree.as_ref(), Some(&tree));
    assert_eq!(contents(&s.flame, &tree), ["First try", "one", "Second try"]);
    // Replaced by another file under the same name while no Flame ran.
    let other = path.with_extension("new");
    std::fs::write(
        &other,
        format!("{}\n{}\n", user(3, "Third try"), assistant(4, "m4", "three", 3)),
    )
    .unwrap();
    std::fs::rename(&other, &path).unwrap();
    let later = s.reopen(5);
    let outcome = later.sync_followed(A, &first.id).unwrap();
    assert!(outcome.restarted.as_deref().is_some_and(|w| w.contains("replaced")), "{outcome:?}");
    assert_eq!(contents(&later, &tree), ["First try", "one", "Second try", "Third try", "three"]);
    // One root: each reading's frames hang under it.
    let status = later.status(Some(&tree)).unwrap();
    assert_eq!(status.frames.iter().filter(|f| f.frame.parent.is_none()).count(), 1);
}

#[test]
fn a_subagent_file_that_appears_becomes_its_child_frame() {
    let s = Scratch::new(6);
    let path = session(s.dir.path());
    let task = serde_json::json!({"type": "assistant", "sessionId": "s1", "timestamp": time(1),
        "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Task",
                "input": {"description": "Explore the code", "prompt": "Read every module"}}]}});
    let progress = serde_json::json!({"type": "progress", "sessionId": "s1", "timestamp": time(2),
        "parentToolUseID": "toolu_1", "data": {"type": "agent_progress", "agentId": "a42"}});
    append(&path, &format!("{}\n{task}\n", user(0, "Look around")));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    let tree = first.tree.clone().unwrap();
    let frames = |flame: &Flame| flame.status(Some(&tree)).unwrap().frames;
    let sub = frames(&s.flame).into_iter().find(|f| f.frame.title == "Explore the code").unwrap();
    assert_eq!(sub.frame.status, Status::InProgress);
    // The subagent's file appears and grows; its link is written in the main file.
    let agents = path.with_extension("").join("subagents");
    std::fs::create_dir_all(&agents).unwrap();
    append(&agents.join("agent-a42.jsonl"), &format!("{}\n", user(2, "Read every module")));
    append(&path, &format!("{progress}\n"));
    let outcome = sync(&s.flame, &first.id);
    assert_eq!(outcome.messages, 1, "{outcome:?}");
    append(
        &agents.join("agent-a42.jsonl"),
        &format!("{}\n", assistant(3, "s1", "Read them all", 5)),
    );
    sync(&s.flame, &first.id);
    let held: Vec<String> =
        s.flame.messages(&sub.frame.id).unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(held, ["Read every module", "Read them all"]);
    // The call's result ends the subagent's frame.
    let result = serde_json::json!({"type": "user", "sessionId": "s1", "timestamp": time(4),
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Every module read"}]}});
    append(&path, &format!("{result}\n"));
    assert_eq!(sync(&s.flame, &first.id).changed, 1);
    let ended = frames(&s.flame).into_iter().find(|f| f.frame.id == sub.frame.id).unwrap();
    assert_eq!(
        (ended.frame.status, ended.frame.results.as_deref()),
        (Status::Completed, Some("Every module read"))
    );
}

#[test]
fn a_deleted_session_keeps_its_tree_and_says_so() {
    let s = Scratch::new(7);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n{}\n", user(0, "Go"), assistant(1, "m1", "went", 3)));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    std::fs::remove_file(&path).unwrap();
    let outcome = sync(&s.flame, &first.id);
    let problem = outcome.problem.unwrap();
    assert!(problem.contains("is gone") && problem.contains("keeps what was read"), "{problem}");
    assert_eq!(row_problem(&s.flame, &first.id).as_deref(), Some(problem.as_str()));
    assert_eq!(contents(&s.flame, first.tree.as_ref().unwrap()), ["Go", "went"]);
}

#[test]
fn a_file_that_is_not_jsonl_is_said_to_be_so_and_stores_nothing() {
    let s = Scratch::new(8);
    let path = session(s.dir.path());
    std::fs::write(&path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\nnot json at all\n").unwrap();
    let outcome = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    let problem = outcome.problem.unwrap();
    assert!(problem.starts_with("nothing in it can be stored yet"), "{problem}");
    assert!(problem.contains("line 1: not UTF-8") && problem.contains("not JSON"), "{problem}");
    assert_eq!(outcome.tree, None);
    assert_eq!(row_problem(&s.flame, &outcome.id).as_deref(), Some(problem.as_str()));
}

#[test]
fn a_line_over_the_limit_is_named_on_the_row_and_the_rest_is_stored() {
    let s = Scratch::new(9);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n", user(0, "Go")));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    let huge =
        format!("{{\"type\":\"user\",\"pad\":\"{}\"}}\n", "x".repeat(flame_follow_limit() + 1));
    append(&path, &huge);
    append(&path, &format!("{}\n", assistant(2, "m2", "after the long one", 3)));
    let outcome = sync(&s.flame, &first.id);
    assert_eq!(outcome.messages, 1);
    let problem = outcome.problem.unwrap();
    assert!(problem.contains("s1.jsonl line 2") && problem.contains("over the limit"), "{problem}");
    assert_eq!(contents(&s.flame, first.tree.as_ref().unwrap()), ["Go", "after the long one"]);
}

/// The longest line a followed file may have (`flame_follow::MAX_LINE_BYTES`), through the
/// facade's dependency.
fn flame_follow_limit() -> usize {
    32 * 1024 * 1024
}

#[test]
fn a_file_replaced_by_a_folder_keeps_the_tree_and_says_so() {
    let s = Scratch::new(10);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n", user(0, "Go")));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let problem = sync(&s.flame, &first.id).problem.unwrap();
    assert!(problem.contains("is a folder now, not a session file"), "{problem}");
    assert_eq!(contents(&s.flame, first.tree.as_ref().unwrap()), ["Go"]);
}

#[test]
fn a_clock_that_goes_backwards_is_named_and_the_file_s_order_kept() {
    let s = Scratch::new(11);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n{}\n", user(600, "Go"), assistant(601, "m1", "first", 3)));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    append(&path, &format!("{}\n", assistant(5, "m2", "an hour earlier?", 3)));
    let outcome = sync(&s.flame, &first.id);
    assert_eq!(outcome.messages, 1);
    let problem = outcome.problem.unwrap();
    assert!(problem.contains("the clock went back") && problem.contains("line 3"), "{problem}");
    let tree = first.tree.unwrap();
    assert_eq!(contents(&s.flame, &tree), ["Go", "first", "an hour earlier?"]);
    let frames = s.flame.status(Some(&tree)).unwrap().frames;
    let times: Vec<i64> = frames
        .iter()
        .flat_map(|f| s.flame.messages(&f.frame.id).unwrap())
        .map(|m| m.created_at)
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
}

fn opencode_copy(dir: &Path) -> PathBuf {
    let data = dir.join("xdg/opencode");
    std::fs::create_dir_all(&data).unwrap();
    let db = data.join("opencode.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/opencode-cli/opencode.db"),
        &db,
    )
    .unwrap();
    db
}

const OPENCODE_SESSION: &str = "ses_de6bc2cfaffew4W9CLfKSzVseX";

#[test]
fn an_opencode_session_is_followed_from_its_database_read_only() {
    let s = Scratch::new(12);
    let db = opencode_copy(s.dir.path());
    let before = std::fs::read(&db).unwrap();
    let outcome = s.flame.follow(A, Agent::OpenCode, &db, OPENCODE_SESSION).unwrap();
    assert_eq!(outcome.problem, None);
    let tree = outcome.tree.unwrap();
    let status = s.flame.status(Some(&tree)).unwrap();
    let titles: Vec<&str> = status.frames.iter().map(|f| f.frame.title.as_str()).collect();
    assert!(titles.contains(&"Count the lines"), "{titles:?}");
    // The recorded usage, cache reads included, is priced: the model is gpt-4.1-mini.
    let costs = s.flame.tree_costs(Some(&tree)).unwrap();
    let root = costs.get(&status.tree.root).unwrap();
    assert!(root.subtree.usage.cache_read_tokens > 0, "{root:?}");
    assert!(root.subtree.micro_usd > 0, "{root:?}");
    assert_eq!(sync(&s.flame, &outcome.id).messages, 0);
    assert_eq!(std::fs::read(&db).unwrap(), before, "the database is never written");
}

#[test]
fn a_locked_or_half_migrated_database_is_said_to_be_so_and_stores_nothing() {
    let s = Scratch::new(13);
    let db = opencode_copy(s.dir.path());
    let first = s.flame.follow(A, Agent::OpenCode, &db, OPENCODE_SESSION).unwrap();
    let tree = first.tree.unwrap();
    let held = contents(&s.flame, &tree);
    {
        let _lock = flame_store::synthetic::HeldDatabase::exclusive(&db).unwrap();
        let problem = sync(&s.flame, &first.id).problem.unwrap();
        assert!(
            problem.contains("locked") && problem.contains("read again at its next change"),
            "{problem}"
        );
        assert_eq!(row_problem(&s.flame, &first.id).as_deref(), Some(problem.as_str()));
    }
    // Mid-migration: a table the reader needs is not there (yet).
    flame_store::synthetic::HeldDatabase::run(&db, "ALTER TABLE part RENAME TO part_old;").unwrap();
    let problem = sync(&s.flame, &first.id).problem.unwrap();
    assert!(problem.contains("no such table") && problem.contains("migrating"), "{problem}");
    flame_store::synthetic::HeldDatabase::run(&db, "ALTER TABLE part_old RENAME TO part;").unwrap();
    let outcome = sync(&s.flame, &first.id);
    assert_eq!((outcome.problem, outcome.messages), (None, 0));
    assert_eq!(row_problem(&s.flame, &first.id), None);
    assert_eq!(contents(&s.flame, &tree), held);
}

fn codex_copy(dir: &Path) -> (PathBuf, PathBuf) {
    let day = dir.join("codex/sessions/2026/11/26");
    std::fs::create_dir_all(&day).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/codex/sessions/2026/11/26");
    let mut main = PathBuf::new();
    let mut child = PathBuf::new();
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let from = entry.unwrap().path();
        let to = day.join(from.file_name().unwrap());
        if to.to_string_lossy().ends_with("b1d2-7f40-8521-8f71ebf5a2ec.jsonl") {
            main = to.clone();
        } else {
            child = to.clone();
        }
        std::fs::copy(&from, &to).unwrap();
    }
    (main, child)
}

#[test]
fn a_codex_session_written_line_by_line_ends_as_its_import_with_cached_input_priced() {
    let s = Scratch::new(14);
    let (main, child) = codex_copy(s.dir.path());
    let whole = std::fs::read_to_string(&main).unwrap();
    let child_text = std::fs::read_to_string(&child).unwrap();
    std::fs::write(&main, "").unwrap();
    std::fs::write(&child, "").unwrap();
    let first =
        s.flame.follow(A, Agent::Codex, &main, "01a21942-b1d2-7f40-8521-8f71ebf5a2ec").unwrap();
    assert_eq!(first.tree, None);
    // Codex writes both threads as it goes; here, a line at a time, the child's when its turn
    // comes (after the parent's spawn call).
    let mut child_lines = child_text.lines();
    for (n, line) in whole.lines().enumerate() {
        append(&main, &format!("{line}\n"));
        if line.contains("\"spawn_agent\"") || n % 5 == 0 {
            for l in child_lines.by_ref().take(4) {
                append(&child, &format!("{l}\n"));
            }
        }
        sync(&s.flame, &first.id);
    }
    for l in child_lines {
        append(&child, &format!("{l}\n"));
    }
    let last = sync(&s.flame, &first.id);
    assert_eq!(last.problem, None);
    let tree = last.tree.unwrap();
    let followed = s.flame.status(Some(&tree)).unwrap();
    // The same tree as importing the finished files.
    let imported = s.flame.import_file(A, &main, None, true, None, &mut |_| {}).unwrap();
    let import = s.flame.status(Some(&imported.tree.id)).unwrap();
    let shape = |status: &flame_api::TreeStatus| -> Vec<(String, Status, u64)> {
        let mut v: Vec<_> = status
            .frames
            .iter()
            .map(|f| (f.frame.title.clone(), f.frame.status, f.frame.message_count))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(shape(&followed), shape(&import));
    // Codex's cached input is counted as cache reads, priced at gpt-5-mini's cache price.
    let costs = s.flame.tree_costs(Some(&tree)).unwrap();
    let whole_cost = &costs.get(&followed.tree.root).unwrap().subtree;
    let usage = whole_cost.usage;
    assert!(usage.cache_read_tokens > 0, "{usage:?}");
    let price = s.flame.prices().get("gpt-5-mini").unwrap().price();
    let expected = flame_model::cost::cost_micro_usd(&usage, &price);
    assert_eq!(whole_cost.micro_usd, expected);
    let without_cache = flame_model::cost::cost_micro_usd(
        &flame_model::Usage {
            input_tokens: usage.input_tokens + usage.cache_read_tokens,
            cache_read_tokens: 0,
            ..usage
        },
        &price,
    );
    assert!(whole_cost.micro_usd < without_cache);
}

#[test]
fn the_sessions_list_shows_each_agent_s_sessions_with_cost_and_whether_followed() {
    let s = Scratch::new(15);
    let (main, _) = codex_copy(s.dir.path());
    opencode_copy(s.dir.path());
    let cc = s.dir.path().join("claude/projects/-work-p");
    std::fs::create_dir_all(&cc).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code/short.jsonl"),
        cc.join("short.jsonl"),
    )
    .unwrap();
    let homes = AgentHomes {
        claude_code: s.dir.path().join("claude/projects"),
        codex: s.dir.path().join("codex/sessions"),
        opencode: s.dir.path().join("xdg/opencode"),
    };
    s.flame.follow_named(A, &homes, &Agent::ALL, &main.display().to_string()).unwrap();
    let list = s.flame.sessions(&homes, &Agent::ALL).unwrap();
    let agents: Vec<Agent> = list.sessions.iter().map(|e| e.agent).collect();
    assert_eq!(list.sessions.len(), 3, "{agents:?}: the Codex subagent's thread is not a session");
    for entry in &list.sessions {
        assert!(entry.first_request.is_some(), "{entry:?}");
        assert!(entry.recorded_cost.as_ref().is_some_and(|c| c.micro_usd > 0), "{entry:?}");
        // What Flame's context would have cost on the same calls: the replay priced at the
        // session's model, the followed tree's frames each; a model without a price says so.
        match &entry.flame_cost {
            flame_api::FlameContextCost::Priced { session, frames } => {
                assert!(session.micro_usd > 0, "{entry:?}");
                assert_eq!(!frames.is_empty(), entry.followed, "{entry:?}");
            }
            flame_api::FlameContextCost::NotAvailable { reason } => {
                assert!(reason.contains("no price"), "{entry:?}");
            }
        }
        assert_eq!(entry.followed, entry.agent == Agent::Codex, "{entry:?}");
    }
    assert!(
        list.sessions
            .iter()
            .filter(|e| matches!(e.flame_cost, flame_api::FlameContextCost::Priced { .. }))
            .count()
            >= 2,
        "the Claude Code and Codex sessions name models with prices"
    );
    let codex = list.sessions.iter().find(|e| e.agent == Agent::Codex).unwrap();
    assert_eq!(codex.id, "codex:01a21942-b1d2-7f40-8521-8f71ebf5a2ec");
    assert!(codex.tree.is_some());
    assert_eq!(s.flame.sessions(&homes, &[Agent::OpenCode]).unwrap().sessions.len(), 1);
}

#[test]
fn the_follower_reads_a_session_when_its_file_changes_and_follows_an_agent_s_new_sessions() {
    let s = Scratch::new(16);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n", user(0, "Go")));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    s.flame.follow_agent(Agent::ClaudeCode, true).unwrap();
    let homes = AgentHomes {
        claude_code: s.dir.path().join("projects"),
        codex: s.dir.path().join("none"),
        opencode: s.dir.path().join("none"),
    };
    let (sender, signals) = mpsc::channel();
    let (reads, heard) = mpsc::channel::<FollowOutcome>();
    /// Ends the follower however the test ends, so the scope does not wait on it forever.
    struct StopOnDrop(mpsc::Sender<WatchSignal>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            let _ = self.0.send(WatchSignal::Stop);
        }
    }
    let stop = StopOnDrop(sender.clone());
    let flame = &s.flame;
    std::thread::scope(|scope| {
        scope.spawn(move || {
            flame
                .run_follower(A, &homes, sender, &signals, &mut |news| {
                    if let FollowerNews::Read(o) = news {
                        let _ = reads.send(o.clone());
                    }
                })
                .unwrap()
        });
        let wait_for = |what: &dyn Fn(&FollowOutcome) -> bool| loop {
            let outcome = heard.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
            if what(&outcome) {
                return outcome;
            }
        };
        // The first round reads every followed session.
        wait_for(&|o| o.id == first.id);
        append(&path, &format!("{}\n", assistant(1, "m1", "heard", 3)));
        let read = wait_for(&|o| o.id == first.id && o.messages > 0);
        assert_eq!(read.messages, 1);
        // A new session of Claude Code, followed whole, is followed when it appears.
        let second = user(2, "A new one").replace("\"s1\"", "\"s2\"");
        append(&path.with_file_name("s2.jsonl"), &format!("{second}\n"));
        let new = wait_for(&|o| o.id == "claude-code:s2" && o.messages > 0);
        assert!(new.tree.is_some(), "{new:?}");
        drop(stop);
    });
    assert_eq!(contents(&s.flame, first.tree.as_ref().unwrap()), ["Go", "heard"]);
}

/// A budget on a followed tree only warns: Flame does not drive the agent, so its replies are
/// stored past the budget, and the read says the budget is spent.
#[test]
fn a_spent_budget_on_a_followed_tree_only_warns() {
    let s = Scratch::new(41);
    let path = session(s.dir.path());
    append(&path, &format!("{}\n", user(0, "Work")));
    let first = s.flame.follow(A, Agent::ClaudeCode, &path, "s1").unwrap();
    let (id, tree) = (first.id.clone(), first.tree.clone().unwrap());
    let root = s.flame.status(Some(&tree)).unwrap().tree.root;
    let budget = flame_model::budget::FrameBudget { tokens: Some(2_000), ..Default::default() };
    s.flame.set_budget(Actor::Person, &root, Some(budget)).unwrap();
    append(&path, &format!("{}\n", assistant(1, "m1", "one", 7)));
    assert_eq!(sync(&s.flame, &id).budget_notice, None, "1,110 of 2,000 tokens");
    append(&path, &format!("{}\n", assistant(2, "m2", "two", 7)));
    let outcome = sync(&s.flame, &id);
    assert_eq!(outcome.messages, 1, "stored past the budget");
    let notice = outcome.budget_notice.unwrap();
    assert!(notice.contains("is spent (2,220 of 2,000 tokens)"), "{notice}");
    assert!(notice.contains("only warns"), "{notice}");
}

/// What the follower of [`followed_once_made`] told the test.
enum Heard {
    Read(FollowOutcome),
    Waiting(Vec<AbsentFolder>),
}

/// Follows every new session of `agent` with no agent's folder made yet, in a folder of its own,
/// and once the follower waits, has `make` write the agent's first session there, folders and
/// all, as the agent does on a new machine: the session must be followed. Returns the read that
/// stored it and the Flame it is stored in. Waits are bounded, so a follower that never hears of
/// the session fails the test instead of hanging it.
fn followed_once_made(seed: u64, agent: Agent, make: fn(&Path)) -> (Scratch, FollowOutcome) {
    let s = Scratch::new(seed);
    let agents = tempfile::tempdir().unwrap();
    s.flame.follow_agent(agent, true).unwrap();
    let homes = AgentHomes {
        claude_code: agents.path().join("claude/projects"),
        codex: agents.path().join("codex/sessions"),
        opencode: agents.path().join("xdg/opencode"),
    };
    let (sender, signals) = mpsc::channel();
    let (tell, heard) = mpsc::channel::<Heard>();
    /// Ends the follower however the test ends, so the scope does not wait on it forever.
    struct StopOnDrop(mpsc::Sender<WatchSignal>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            let _ = self.0.send(WatchSignal::Stop);
        }
    }
    let stop = StopOnDrop(sender.clone());
    let flame = &s.flame;
    let read = std::thread::scope(|scope| {
        let homes = &homes;
        scope.spawn(move || {
            flame
                .run_follower(A, homes, sender, &signals, &mut |news| {
                    let _ = tell.send(match news {
                        FollowerNews::Read(o) => Heard::Read(o.clone()),
                        FollowerNews::Waiting { absent } => Heard::Waiting(absent.to_vec()),
                    });
                })
                .unwrap()
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let next = |what: &str| {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            heard.recv_timeout(left).unwrap_or_else(|_| panic!("{agent:?}: never heard {what}"))
        };
        // The follower waits, watching the folder above the agent's missing one.
        let absent = loop {
            if let Heard::Waiting(absent) = next("the follower wait") {
                break absent;
            }
        };
        assert_eq!(
            absent,
            [AbsentFolder {
                agent,
                folder: homes.of(agent).to_owned(),
                watched: Some(agents.path().to_owned()),
            }]
        );
        make(agents.path());
        let prefix = format!("{}:", agent.as_str());
        let read = loop {
            if let Heard::Read(o) = next("of the session written after the follower started")
                && o.id.starts_with(&prefix)
                && o.messages > 0
            {
                break o;
            }
        };
        // Once read, the agent's folder is no longer awaited.
        loop {
            if let Heard::Waiting(absent) = next("the follower wait again")
                && absent.is_empty()
            {
                break;
            }
        }
        drop(stop);
        read
    });
    assert!(read.tree.is_some() && read.problem.is_none(), "{read:?}");
    (s, read)
}

#[test]
fn a_claude_code_session_is_followed_when_its_folder_is_made_after_following_starts() {
    let (s, read) = followed_once_made(61, Agent::ClaudeCode, |agents| {
        let project = agents.join("claude/projects/-home-marco-projects-spotter");
        std::fs::create_dir_all(&project).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/claude-code/short.jsonl");
        std::fs::copy(fixture, project.join("55604662-cf2a-4331-851a-ec234028f8ca.jsonl")).unwrap();
    });
    assert_eq!(read.id, "claude-code:55604662-cf2a-4331-851a-ec234028f8ca");
    assert!(!contents(&s.flame, read.tree.as_ref().unwrap()).is_empty());
}

#[test]
fn a_codex_session_is_followed_when_its_day_folder_is_made_after_following_starts() {
    let (s, read) = followed_once_made(62, Agent::Codex, |agents| {
        codex_copy(agents);
    });
    assert_eq!(read.id, "codex:01a21942-b1d2-7f40-8521-8f71ebf5a2ec");
    assert!(!contents(&s.flame, read.tree.as_ref().unwrap()).is_empty());
}

#[test]
fn an_opencode_session_is_followed_when_its_data_folder_is_made_after_following_starts() {
    let (s, read) = followed_once_made(63, Agent::OpenCode, |agents| {
        opencode_copy(agents);
    });
    assert_eq!(read.id, format!("opencode:{OPENCODE_SESSION}"));
    assert!(!contents(&s.flame, read.tree.as_ref().unwrap()).is_empty());
}
