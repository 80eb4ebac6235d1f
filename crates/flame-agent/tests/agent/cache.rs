//! Flame's requests as a provider's prompt cache sees them (issue 29), captured by a scripted
//! model over both wire formats: a frame reads ten files in `src/`, pushes a child that reads one
//! more and pops, and goes on. Consecutive requests in a frame must start with the previous one,
//! the parent's first request after the pop with the whole of its last one before the push, an
//! Anthropic request must carry its cache marks, and masking must still mask. The workspace has
//! project instructions at two levels (`AGENTS.md`, `src/AGENTS.md`, issue 38): every request
//! carries the root's, and the child's, opened after its parent worked in `src/`, carry both in
//! that order, without costing the cache.
//!
//! Anthropic's marks (`cache_control`) move to the newest message at every request: they say
//! where to cache, and are not part of what is cached, so requests are compared with them taken
//! out.
//!
//! Two trees with different workspace folders send first requests that start alike (issue 39):
//! the tools and the system prompt up to the tree's own folder are the same bytes, so a
//! provider's cache serves them from one tree (or session) to the next, and on Anthropic's wire
//! the system's mark ends that shared start.

use std::io::Write as _;

use flame_agent::ApprovalPolicy;

use super::*;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Wire {
    Anthropic,
    Openai,
}

/// One streamed turn in `wire`'s format: `text`, then optionally one tool call with its id.
pub(super) fn scripted(wire: Wire, text: &str, call: Option<(&str, &str, Value)>) -> Reply {
    match wire {
        Wire::Anthropic => {
            let Reply::Stream { body, .. } =
                turn(text, call.as_ref().map(|(_, name, args)| (*name, args.clone())))
            else {
                unreachable!("turn streams")
            };
            let body = match &call {
                Some((id, name, _)) => body.replace(&format!("toolu_{name}"), id),
                None => body,
            };
            Reply::stream(body)
        }
        Wire::Openai => {
            let chunk = |delta: Value, finish: Option<&str>| {
                json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4.1",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let mut chunks = vec![chunk(json!({"role": "assistant", "content": text}), None)];
            if let Some((id, name, args)) = &call {
                let args = args.to_string();
                let (a, b) = args.split_at(args.len() / 2);
                chunks.push(chunk(
                    json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                                           "function": {"name": name, "arguments": a}}]}),
                    None,
                ));
                chunks.push(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
                    None,
                ));
            }
            let finish = if call.is_some() { "tool_calls" } else { "stop" };
            chunks.push(chunk(json!({}), Some(finish)));
            chunks.push(
                json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                               "usage": {"prompt_tokens": 900, "completion_tokens": 20,
                                         "prompt_tokens_details": {"cached_tokens": 800}}}),
            );
            let body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
            Reply::stream(format!("{body}data: [DONE]\n\n"))
        }
    }
}

/// An agent of `s`'s store with `settings`, its default model one of `wire`'s, whose key and base
/// URL lead to `s`'s scripted server.
pub(super) fn agent_on(s: &Setup, wire: Wire, mut settings: Settings) -> Agent {
    settings.default_model =
        Some(if wire == Wire::Anthropic { "claude-sonnet-4-5" } else { "gpt-4.1" }.into());
    let base = s.server.base_url.clone();
    let env = environment(&[
        ("ANTHROPIC_API_KEY", SENTINEL),
        ("OPENAI_API_KEY", SENTINEL),
        ("ANTHROPIC_BASE_URL", &base),
        ("OPENAI_BASE_URL", &format!("{base}/v1")),
    ]);
    Agent::new(s.flame.clone(), settings, env, RetryPolicy::default())
}

/// A source file of about three kilobytes, marked so a test can tell whether it was sent whole.
fn source(name: &str) -> String {
    let lines: String = (0..60)
        .map(|i| {
            format!("    let value_{i} = compute_{name}(&input, {i}).map_err(Error::from)?;\n")
        })
        .collect();
    format!("// BODY-OF-{name}\nfn {name}() {{\n{lines}}}\n")
}

/// The scenario's replies: ten reads, a push, the child's read and pop, two more reads and an
/// answer in the parent.
fn replies(wire: Wire) -> Vec<Reply> {
    let read = |id: String, path: String| {
        scripted(wire, "Reading.", Some((id.as_str(), "read_file", json!({"path": path}))))
    };
    let mut replies: Vec<Reply> =
        (0..10).map(|n| read(format!("call_read_{n}"), format!("src/file{n}.rs"))).collect();
    replies.push(scripted(
        wire,
        "The helpers need their own look.",
        Some((
            "call_push",
            "push_frame",
            json!({"title": "Check the helpers", "success_criteria": "helpers.rs is read"}),
        )),
    ));
    replies.push(read("call_child_read".into(), "src/helpers.rs".into()));
    replies.push(scripted(
        wire,
        "The helpers are fine.",
        Some((
            "call_pop",
            "pop_frame",
            json!({"status": "completed", "results": "helpers.rs is fine: HELPERS-CHECKED",
                   "results_compacted": "helpers fine"}),
        )),
    ));
    replies.push(read("call_extra_0".into(), "src/extra0.rs".into()));
    replies.push(read("call_extra_1".into(), "src/extra1.rs".into()));
    replies.push(scripted(wire, "I have read everything.", None));
    replies
}

/// Runs the scenario over `wire`; the request bodies the model received, as sent.
async fn captured(wire: Wire) -> Vec<String> {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join("src")).unwrap();
    std::fs::write(workspace.path().join("AGENTS.md"), ROOT_INSTRUCTIONS).unwrap();
    std::fs::write(workspace.path().join("src/AGENTS.md"), SRC_INSTRUCTIONS).unwrap();
    for name in (0..10).map(|n| format!("file{n}")).chain([
        "helpers".into(),
        "extra0".into(),
        "extra1".into(),
    ]) {
        std::fs::write(workspace.path().join(format!("src/{name}.rs")), source(&name)).unwrap();
    }
    let mut s = setup(Autonomy::Auto, replies(wire)).await;
    let tree = s.flame.status(None).unwrap().tree.id;
    s.flame.set_workspace(Actor::Person, &tree, Some(workspace.path())).unwrap();
    let mut settings = s.agent.settings().clone();
    settings.approval = ApprovalPolicy::default();
    settings.turn_budget.tool_calls = Some(40);
    s.agent = agent_on(&s, wire, settings);
    let outcome = s
        .agent
        .send(Actor::Person, None, "Survey the code", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished, "{outcome:?}");
    assert_eq!(s.server.requests().len(), 16);
    s.server.requests().into_iter().map(|r| r.body).collect()
}

/// The workspace's instructions at its root and in `src/`.
const ROOT_INSTRUCTIONS: &str = "# Rules\nROOT-RULES: run the tests before you finish.\n";
const SRC_INSTRUCTIONS: &str = "SRC-RULES: keep functions short.\n";

/// A request body without Anthropic's cache marks.
pub(super) fn unmarked(body: &str) -> String {
    body.replace(r#","cache_control":{"type":"ephemeral","ttl":"1h"}"#, "")
        .replace(r#","cache_control":{"type":"ephemeral"}"#, "")
}

/// The frame a request is in: the id its opening marks current.
fn frame_of(body: &str) -> String {
    // The preamble names the mark too, but not as an element's.
    let at = body.find(r#" current=\"true\">"#).expect("the opening marks the current frame");
    let start = body[..at].rfind(r#"id=\""#).unwrap() + r#"id=\""#.len();
    body[start..at].split('\\').next().unwrap().to_owned()
}

/// How much of `before` `after` starts with, byte for byte.
fn shared_start(before: &str, after: &str) -> usize {
    before.bytes().zip(after.bytes()).take_while(|(a, b)| a == b).count()
}

async fn requests_stay_cacheable(wire: Wire) {
    let bodies = captured(wire).await;
    let frames: Vec<String> = bodies.iter().map(|b| frame_of(b)).collect();
    let plain: Vec<String> = bodies.iter().map(|b| unmarked(b)).collect();
    // Consecutive requests in one frame.
    let mut shares = Vec::new();
    let mut last_in: std::collections::HashMap<&str, usize> = Default::default();
    for (i, frame) in frames.iter().enumerate() {
        if let Some(&before) = last_in.get(frame.as_str()) {
            let at = shared_start(&plain[before], &plain[i]);
            shares.push(at as f64 / plain[before].len() as f64);
        }
        last_in.insert(frame, i);
    }
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;

    // The project instructions open every request, before the document; the child's carry the
    // root's, then src/'s.
    let parent = &frames[0];
    for (i, body) in plain.iter().enumerate() {
        let document = body.find("<stack-context id=").unwrap();
        let root = body.find("ROOT-RULES").unwrap_or_else(|| panic!("request {i}: {body}"));
        assert!(root < document, "request {i}: the instructions come first");
        match body.find("SRC-RULES") {
            Some(src) => {
                assert_ne!(&frames[i], parent, "request {i}: the parent's opening had no src/");
                assert!(root < src && src < document, "request {i}: the root's, then src/'s");
            }
            None => assert_eq!(&frames[i], parent, "request {i}: the child carries src/'s"),
        }
    }
    let _ = writeln!(std::io::stderr().lock(), "{wire:?}: shares {shares:.3?}, mean {mean:.3}");
    assert!(mean >= 0.90, "{wire:?}: consecutive requests share {mean:.3} on average: {shares:?}");

    // The parent before the push (request 10, whose reply pushes) and after the pop (13).
    assert_eq!(&frames[10], parent);
    assert_ne!(&frames[11], parent, "the child's requests");
    assert_eq!(&frames[13], parent);
    let before = plain[10].strip_suffix("]}").unwrap();
    assert!(
        plain[13].starts_with(before),
        "{wire:?}: the parent's first request after the pop starts with its last one before the push"
    );
    assert!(plain[13].contains("HELPERS-CHECKED"), "the child's results are appended");

    if wire == Wire::Anthropic {
        for body in &bodies {
            assert!(body.matches("cache_control").count() >= 2, "{body}");
        }
    }
    // Masking still masks: of the ten files read first, at most seven are whole at the end.
    let last = &plain[plain.len() - 1];
    let whole = (0..10).filter(|n| last.contains(&format!("BODY-OF-file{n}"))).count();
    assert!(whole <= 7, "{wire:?}: {whole} of ten files are whole in the last request");
}

#[tokio::test]
async fn anthropic_requests_stay_cacheable() {
    requests_stay_cacheable(Wire::Anthropic).await;
}

#[tokio::test]
async fn openai_requests_stay_cacheable() {
    requests_stay_cacheable(Wire::Openai).await;
}

/// The first request of each of two trees, whose workspaces are two folders, over `wire`; and
/// the folders.
async fn first_requests_of_two_trees(wire: Wire) -> ([Value; 2], [String; 2]) {
    let folders = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let replies = vec![scripted(wire, "Hello.", None), scripted(wire, "Hello again.", None)];
    let mut s = setup(Autonomy::Auto, replies).await;
    let first = s.flame.status(None).unwrap().tree;
    s.flame.set_workspace(Actor::Person, &first.id, Some(folders[0].path())).unwrap();
    let second = s
        .flame
        .create_tree(Actor::Person, "Fix the login", "Logging in works", Some(folders[1].path()))
        .unwrap();
    let settings = s.agent.settings().clone();
    s.agent = agent_on(&s, wire, settings);
    for root in [&first.root, &second.root] {
        let cancel = CancellationToken::new();
        let outcome =
            s.agent.send(Actor::Person, Some(root), "Hello", None, &cancel, &mut |_| {}).await;
        assert_eq!(outcome.unwrap().stopped, Stopped::Finished);
    }
    let bodies: Vec<Value> =
        s.server.requests().iter().map(|r| serde_json::from_str(&r.body).unwrap()).collect();
    let folders = folders.map(|f| std::fs::canonicalize(f.path()).unwrap().display().to_string());
    (bodies.try_into().unwrap(), folders)
}

/// The system prompt a request body carries, in `wire`'s shape, as one text.
fn system_text(wire: Wire, body: &Value) -> String {
    match wire {
        Wire::Anthropic => body["system"]
            .as_array()
            .unwrap()
            .iter()
            .map(|block| block["text"].as_str().unwrap())
            .collect(),
        Wire::Openai => body["messages"][0]["content"].as_str().unwrap().to_owned(),
    }
}

async fn two_trees_share_their_first_requests_start(wire: Wire) {
    let (bodies, folders) = first_requests_of_two_trees(wire).await;
    assert_eq!(bodies[0]["tools"], bodies[1]["tools"], "{wire:?}: the same tools, in order");
    let systems = bodies.each_ref().map(|b| system_text(wire, b));
    for (system, folder) in systems.iter().zip(&folders) {
        assert!(system.contains(folder.as_str()), "{wire:?}: {system}");
    }
    // Where the two system prompts part, only the tree's own folder is left: everything that
    // tells the model about frames and tools comes before.
    let at = shared_start(&systems[0], &systems[1]);
    for system in &systems {
        let rest = &system[at..];
        assert!(!rest.contains("run_command") && !rest.contains("frame"), "{wire:?}: {rest}");
    }
    if wire == Wire::Anthropic {
        // The system's mark ends the shared start, so one tree's entry is the other's.
        let marked = bodies.each_ref().map(|b| b["system"][0].clone());
        assert_eq!(marked[0], marked[1]);
        assert!(marked[0].get("cache_control").is_some(), "{marked:?}");
        assert!(!marked[0]["text"].as_str().unwrap().contains(folders[0].as_str()));
    }
}

#[tokio::test]
async fn anthropic_first_requests_of_two_trees_share_their_start() {
    two_trees_share_their_first_requests_start(Wire::Anthropic).await;
}

#[tokio::test]
async fn openai_first_requests_of_two_trees_share_their_start() {
    two_trees_share_their_first_requests_start(Wire::Openai).await;
}
