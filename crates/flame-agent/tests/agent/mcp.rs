//! MCP servers as the agent's tools, against real servers: the published
//! `@modelcontextprotocol/server-everything` (installed by `npm ci`; the test says it was skipped
//! without it) and `flame-mcp-client`'s scripted server, which misbehaves on purpose. Their tools
//! are offered as `server__tool` in the same list at every call of an opening, called with the
//! person's approval unless the settings allow them, stored, counted and masked like every tool
//! result; a server that fails gives its call a clear error and the turn goes on.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use flame_mcp_client::McpTransport;
use flame_settings::{McpApproval, McpServerSettings};

use super::*;

fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{test}: skipped: {why}");
}

fn node_runs(test: &str) -> bool {
    let runs = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !runs {
        skip(test, "no node on the PATH");
    }
    runs
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn everything(test: &str) -> Option<String> {
    if !node_runs(test) {
        return None;
    }
    let script =
        repo_root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !script.is_file() {
        skip(test, "@modelcontextprotocol/server-everything is not installed (npm ci)");
        return None;
    }
    Some(script.display().to_string())
}

fn scripted_server() -> String {
    repo_root()
        .join("crates/flame-mcp-client/tests/client/scripted-server.js")
        .display()
        .to_string()
}

fn server(
    name: &str,
    args: &[&str],
    env: &[(&str, &str)],
    approval: McpApproval,
) -> McpServerSettings {
    McpServerSettings {
        name: name.to_owned(),
        transport: McpTransport::Stdio {
            command: "node".to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            cwd: None,
        },
        approval,
        tools: BTreeMap::new(),
    }
}

/// A turn calling `name` with `arguments` under the call id `id`.
fn call_turn(text: &str, id: &str, name: &str, arguments: Value) -> Reply {
    let Reply::Stream { body, .. } = turn(text, Some((name, arguments))) else {
        unreachable!("turn streams")
    };
    Reply::stream(body.replace(&format!("toolu_{name}"), id))
}

/// An agent of `s`'s store with `servers`, whose model is `s`'s scripted server, and whose
/// environment has the PATH (to find `node`) and a key no server may see.
fn agent_with(s: &Setup, servers: Vec<McpServerSettings>) -> Agent {
    let settings = Settings {
        default_model: Some("claude-sonnet-4-5".into()),
        turn_budget: FrameBudget { tool_calls: Some(10), ..FrameBudget::default() },
        mcp_servers: servers,
        ..Settings::default()
    };
    let base = s.server.base_url.clone();
    let path = std::env::var("PATH").unwrap_or_default();
    let env = environment(&[
        ("ANTHROPIC_API_KEY", SENTINEL),
        ("ANTHROPIC_BASE_URL", &base),
        ("PATH", &path),
    ]);
    Agent::new(s.flame.clone(), settings, env, RetryPolicy::default())
}

/// The tool results stored in `frame`, in order: (name, text, is_error).
fn results(s: &Setup, frame: &flame_model::FrameId) -> Vec<(String, String, bool)> {
    s.flame
        .messages(frame)
        .unwrap()
        .into_iter()
        .filter_map(|m| {
            let result = m.tool_result?;
            Some((result.name.unwrap_or_default(), m.content, result.is_error))
        })
        .collect()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_servers_tools_are_offered_asked_for_allowed_stored_and_masked() {
    let Some(script) =
        everything("a_real_servers_tools_are_offered_asked_for_allowed_stored_and_masked")
    else {
        return;
    };
    let long = |word: &str| format!("{word} ").repeat(400);
    let s = setup(
        Autonomy::Auto,
        vec![
            call_turn(
                "Echoing.",
                "toolu_echo_1",
                "everything__echo",
                json!({"message": long("first")}),
            ),
            call_turn("Adding.", "toolu_sum", "everything__get-sum", json!({"a": 2, "b": 3})),
            call_turn(
                "Again.",
                "toolu_echo_2",
                "everything__echo",
                json!({"message": long("last")}),
            ),
            turn("All answered.", None),
            turn("Summarised.", None),
        ],
    )
    .await;
    let mut everything = server("everything", &[&script, "stdio"], &[], McpApproval::Ask);
    everything.tools.insert("echo".to_owned(), McpApproval::Allow);
    let agent = agent_with(&s, vec![everything.clone()]);
    let root = s.flame.status(None).unwrap().focus;

    // The echo is allowed by the settings and runs; the sum asks.
    let outcome = agent
        .send(Actor::Person, None, "Echo and add", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let Stopped::AwaitingApproval { request } = outcome.stopped else {
        panic!("the sum waits for the person: {:?}", outcome.stopped)
    };
    assert_eq!(request.ask, Ask::Mcp { server: "everything".into(), tool: "get-sum".into() });
    assert_eq!(request.call.name, "everything__get-sum");
    // The question is read back from the store, as after a restart of the app.
    let read_back = flame_agent::waiting_request_among(&s.flame, &root, &[everything]).unwrap();
    assert_eq!(read_back, Some(request));
    let stored = results(&s, &root);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].1, format!("Echo: {}", long("first")));

    let outcome = agent
        .answer_request(
            &root,
            Answer::Accept { shown: None },
            None,
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    let stored = results(&s, &root);
    assert_eq!(stored.len(), 3);
    let sum = ("everything__get-sum".to_owned(), "The sum of 2 and 3 is 5.".to_owned(), false);
    assert_eq!(stored[1], sum);
    assert_eq!(stored[2].1, format!("Echo: {}", long("last")));
    // Counted like any message.
    let tool_messages: Vec<_> =
        s.flame.messages(&root).unwrap().into_iter().filter(|m| m.role == Role::Tool).collect();
    assert!(tool_messages.iter().all(|m| m.tokens > 0));

    // Offered after the frame tools, sorted, the same list at every call of the opening.
    let requests: Vec<Value> = s.server.requests().iter().map(|r| r.json()).collect();
    let names = tool_names(&requests[0]);
    let mcp: Vec<&String> = names.iter().filter(|n| n.starts_with("everything__")).collect();
    assert!(mcp.len() >= 10, "{names:?}");
    let mut sorted = mcp.clone();
    sorted.sort();
    assert_eq!(mcp, sorted);
    assert!(names.iter().position(|n| n == "push_frame") < names.iter().position(|n| n == mcp[0]));
    for request in &requests[1..] {
        assert_eq!(request["tools"], requests[0]["tools"], "the tools are the same at every call");
    }
    let sum_schema = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "everything__get-sum")
        .unwrap();
    assert_eq!(sum_schema["input_schema"]["type"], "object");
    assert!(sum_schema["input_schema"].get("$schema").is_none(), "mended before it is offered");

    // Masked like any tool result once the opening is made again.
    s.flame.rebuild_context(Actor::Person, &root).unwrap();
    agent
        .send(Actor::Person, None, "Summarise", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let last = s.server.requests().last().unwrap().json();
    let sent: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].to_string())
        .collect();
    assert_eq!(sent.len(), 3);
    assert!(sent[0].contains("masked") && sent[0].contains("everything__echo"), "{}", sent[0]);
    assert!(sent[0].len() < 1_000, "a one-line stub, not the result: {}", sent[0]);
    assert!(sent[0].contains("toolu_echo_1"), "it says how to read it back: {}", sent[0]);
    assert!(sent[2].contains("last last last"), "the newest stays whole: {}", sent[2]);
    agent.stop_mcp_servers().await;
    assert_key_nowhere(&s);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_mcp_call_reaches_the_model_with_the_persons_words() {
    if !node_runs("a_refused_mcp_call_reaches_the_model_with_the_persons_words") {
        return;
    }
    let s = setup(
        Autonomy::Auto,
        vec![
            call_turn("Echoing.", "toolu_echo", "well__echo", json!({"message": "hi"})),
            turn("Understood.", None),
        ],
    )
    .await;
    let agent =
        agent_with(&s, vec![server("well", &[&scripted_server(), "well"], &[], McpApproval::Ask)]);
    let root = s.flame.status(None).unwrap().focus;
    let outcome = agent
        .send(Actor::Person, None, "Echo", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert!(matches!(outcome.stopped, Stopped::AwaitingApproval { .. }));
    let refuse = Answer::Refuse { reason: Some("not now".into()) };
    agent
        .answer_request(&root, refuse, None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(
        results(&s, &root),
        [(
            "well__echo".to_owned(),
            "The person refused this well__echo call. They said: not now".to_owned(),
            true
        )]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_servers_fail_their_calls_clearly_and_the_turn_goes_on() {
    if !node_runs("hostile_servers_fail_their_calls_clearly_and_the_turn_goes_on") {
        return;
    }
    let script = scripted_server();
    let s = setup(
        Autonomy::Auto,
        vec![
            call_turn("Trying.", "toolu_1", "exits__echo", json!({})),
            call_turn("Trying.", "toolu_2", "huge__echo", json!({"message": "x"})),
            call_turn("Trying.", "toolu_3", "malformed__echo", json!({"message": "x"})),
            call_turn("Trying.", "toolu_4", "well__echo", json!({"message": "still working"})),
            call_turn("Trying.", "toolu_5", "well__nope", json!({})),
            turn("Done.", None),
        ],
    )
    .await;
    let allow = McpApproval::Allow;
    let agent = agent_with(
        &s,
        vec![
            server("exits", &[&script, "exit"], &[], allow),
            server("huge", &[&script, "huge"], &[], allow),
            server("malformed", &[&script, "malformed"], &[], allow),
            server("well", &[&script, "well"], &[], allow),
        ],
    );
    let root = s.flame.status(None).unwrap().focus;
    let mut notices = Vec::new();
    let outcome = agent
        .send(Actor::Person, None, "Use the servers", None, &CancellationToken::new(), &mut |e| {
            if let ChatEvent::Notice { text } = e {
                notices.push(text);
            }
        })
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished, "the turn went on to the end");
    let stored = results(&s, &root);
    let text = |n: usize| stored[n].1.as_str();
    assert!(stored[..3].iter().all(|(_, _, is_error)| *is_error), "{stored:?}");
    assert!(
        text(0).contains("the MCP server exits exited (exit code 3)")
            && text(0).contains("cannot be opened"),
        "{}",
        text(0)
    );
    assert!(
        text(1).contains("the MCP server huge sent a message of more than 8388608 bytes"),
        "{}",
        text(1)
    );
    assert!(
        text(2).contains("the MCP server malformed broke the protocol")
            && text(2).contains("not JSON-RPC"),
        "{}",
        text(2)
    );
    assert_eq!(
        stored[3],
        ("well__echo".to_owned(), r#"echo: {"message":"still working"}"#.to_owned(), false)
    );
    assert!(
        text(4).contains("well__nope is not a tool the MCP server well offers now"),
        "{}",
        text(4)
    );
    // The server that could not start was said once, not at every call.
    let said: Vec<&String> =
        notices.iter().filter(|n| n.contains("the MCP server exits")).collect();
    assert_eq!(said.len(), 1, "{notices:?}");

    let views = agent.mcp_servers(Some(&root));
    let view = |name: &str| views.iter().find(|v| v.name == name).unwrap();
    assert_eq!(view("well").offered_in_frame, Some(4));
    assert_eq!(view("exits").offered_in_frame, Some(0));
    assert!(matches!(view("exits").status, flame_mcp_client::ServerStatus::Failed { .. }));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_changes_its_tools_is_listed_again_only_at_the_next_opening() {
    if !node_runs("a_server_that_changes_its_tools_is_listed_again_only_at_the_next_opening") {
        return;
    }
    let pids = tempfile::NamedTempFile::new().unwrap();
    let pids_path = pids.path().display().to_string();
    let s = setup(
        Autonomy::Auto,
        vec![
            call_turn("Echoing.", "toolu_1", "changing__echo", json!({"message": "a"})),
            call_turn("Echoing.", "toolu_2", "changing__echo", json!({"message": "b"})),
            turn("Done.", None),
            call_turn("Echoing.", "toolu_3", "changing__echo", json!({"message": "c"})),
            turn("Done again.", None),
        ],
    )
    .await;
    let agent = agent_with(
        &s,
        vec![server(
            "changing",
            &[&scripted_server(), "changing"],
            &[("FLAME_TEST_PIDS", &pids_path)],
            McpApproval::Allow,
        )],
    );
    let root = s.flame.status(None).unwrap().focus;
    agent
        .send(Actor::Person, None, "Echo twice", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let first: Vec<Value> = s.server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(first.len(), 3);
    for request in &first {
        assert_eq!(request["tools"], first[0]["tools"], "one list for the whole opening");
    }
    assert!(tool_names(&first[0]).contains(&"changing__tool_1".to_owned()));

    // The person has the opening made again: the server is listed again, and the new opening's
    // first request carries its new list.
    s.flame.rebuild_context(Actor::Person, &root).unwrap();
    agent
        .send(Actor::Person, None, "Echo again", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let all: Vec<Value> = s.server.requests().iter().map(|r| r.json()).collect();
    let second = &all[3..];
    assert_eq!(second.len(), 2);
    let names = tool_names(&second[0]);
    assert!(!names.contains(&"changing__tool_1".to_owned()), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("changing__tool_")), "{names:?}");
    assert_eq!(second[1]["tools"], second[0]["tools"], "one list for the new opening too");

    // The servers end with the agent.
    let pids: Vec<u32> = std::fs::read_to_string(pids.path())
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    drop(agent);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let running = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z'))
        })
    };
    while pids.iter().any(running) {
        assert!(std::time::Instant::now() < deadline, "the server outlived its agent: {pids:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
