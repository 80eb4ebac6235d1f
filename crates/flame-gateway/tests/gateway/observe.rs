//! Observe mode: every request goes upstream byte for byte, the session's tree appears and grows
//! with each call's billed usage, and a budget refuses the next call in the provider's shape.

use flame_gateway::Mode;
use flame_model::budget::FrameBudget;
use flame_model::{Actor, Role};
use serde_json::{Value, json};

use crate::upstream::{Upstream, anthropic_reply, chat_reply, responses_reply};
use crate::{Harness, SENTINEL_KEY};

const CLAUDE: [(&str, &str); 4] = [
    ("x-claude-code-session-id", "5e0c1f7a-aaaa-4bbb-8ccc-000000000001"),
    ("x-api-key", SENTINEL_KEY),
    ("anthropic-version", "2023-06-01"),
    ("user-agent", "claude-cli/2.1.328 (external, cli)"),
];

fn claude_request(messages: Value) -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "system": [{"type": "text", "text": "You are Claude Code.\nWorking directory: /w\n", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "Read", "description": "Reads a file", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}],
        "messages": messages,
        "metadata": {"user_id": "user_x_account_y_session_5e0c1f7a-aaaa-4bbb-8ccc-000000000001"},
        "stream": true,
        "some_field_flame_does_not_know": {"kept": [1, 2, 3]}
    })
}

fn usage(input: u64, read: u64, written: u64) -> Value {
    json!({"input_tokens": input, "cache_read_input_tokens": read, "cache_creation_input_tokens": written, "output_tokens": 1})
}

fn first_turn() -> Value {
    json!([{"role": "user", "content": [{"type": "text", "text": "Fix the bug in src/a.rs"}]}])
}

fn second_turn() -> Value {
    json!([
        {"role": "user", "content": [{"type": "text", "text": "Fix the bug in src/a.rs"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/w/src/a.rs"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn a() { bug }"}]}
    ])
}

async fn claude_upstream() -> Upstream {
    Upstream::start(|_, n| match n {
        0 => anthropic_reply(
            "",
            &[("toolu_1", "Read", json!({"file_path": "/w/src/a.rs"}))],
            usage(3, 0, 2_000),
        ),
        _ => anthropic_reply("Fixed it.", &[], usage(5, 2_000, 40)),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_sends_each_request_byte_for_byte_and_the_session_becomes_a_tree() {
    let gateway = Harness::start(Mode::Observe, claude_upstream().await).await;
    let bodies =
        [claude_request(first_turn()).to_string(), claude_request(second_turn()).to_string()];
    let mut replies = Vec::new();
    for body in &bodies {
        let (status, reply) = gateway.post("/v1/messages?beta=true", &CLAUDE, body.clone()).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&reply));
        replies.push(reply);
    }
    let received = gateway.upstream.received();
    assert_eq!(received.len(), 2);
    for (sent, got) in bodies.iter().zip(&received) {
        assert_eq!(got.body, sent.as_bytes(), "the upstream gets the client's bytes");
        assert_eq!(got.path, "/v1/messages?beta=true");
        assert_eq!(got.headers["x-api-key"], SENTINEL_KEY, "the key goes to the upstream");
        assert_eq!(got.headers["anthropic-version"], "2023-06-01");
    }
    assert!(String::from_utf8_lossy(&replies[1]).contains("Fixed it."));

    let sessions = gateway.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].0, "claude-code:5e0c1f7a-aaaa-4bbb-8ccc-000000000001");
    let tree = sessions[0].1.clone().expect("the session has a tree");
    let frames = gateway.tree(&tree);
    assert_eq!(frames.len(), 2, "the session and its one segment");
    let (segment, messages) = &frames[1];
    assert_eq!(segment.title, "Fix the bug in src/a.rs");
    let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    let billed: Vec<u64> =
        messages.iter().filter_map(|m| m.usage).map(|u| u.prompt_tokens()).collect();
    assert_eq!(billed, [2_003, 2_045], "each call's billed usage is on its reply");
    assert_eq!(messages[3].content, "Fixed it.");

    let report = gateway.flame.gateway_report(&tree).unwrap().expect("calls were recorded");
    assert_eq!(report.total.calls, 2);
    assert_eq!(report.total.billed.usage.cache_read_tokens, 2_000);
    assert_eq!(
        report.total.billed, report.total.client,
        "observe mode sends the client's own request"
    );
    assert!(gateway.files_holding(SENTINEL_KEY).is_empty(), "no file holds the key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_budget_refuses_the_next_call_in_the_providers_shape_and_sends_nothing() {
    let gateway = Harness::start(Mode::Observe, claude_upstream().await).await;
    let (status, _) =
        gateway.post_json("/v1/messages", &CLAUDE, &claude_request(first_turn())).await;
    assert_eq!(status, 200);
    let tree = gateway.sessions()[0].1.clone().unwrap();
    let root = gateway.flame.tree(&tree).unwrap().root;
    let budget = FrameBudget { tool_calls: Some(1), ..FrameBudget::default() };
    gateway.flame.set_budget(Actor::Person, &root, Some(budget)).unwrap();

    let (status, body) =
        gateway.post_json("/v1/messages", &CLAUDE, &claude_request(second_turn())).await;
    assert_eq!(status, 400, "a 4xx the client does not retry");
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains(root.as_str()), "{message}");
    assert!(message.contains("1 tool call of 1"), "it says what was spent: {message}");
    assert_eq!(gateway.upstream.received().len(), 1, "nothing was sent");
    let report = gateway.flame.gateway_report(&tree).unwrap().unwrap();
    assert_eq!((report.total.calls, report.total.refused), (2, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opencode_session_and_its_subagent_become_a_tree_with_a_child_frame() {
    let upstream = Upstream::start(|got, _| {
        let body = got.json();
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        let subagent = messages.iter().any(|m| m["content"] == "Count the lines of notes.txt");
        match (subagent, last["role"].as_str()) {
            (false, Some("user")) => chat_reply(
                "",
                &[(
                    "call_1",
                    "task",
                    json!({"description": "Count lines", "prompt": "Count the lines of notes.txt"}),
                )],
                900,
                0,
            ),
            (true, Some("user")) => chat_reply("notes.txt has 3 lines.", &[], 500, 0),
            _ => chat_reply("It has 3 lines.", &[], 1_000, 896),
        }
    })
    .await;
    let gateway = Harness::start(Mode::Observe, upstream).await;
    let system = json!({"role": "system", "content": "You are opencode."});
    let tools = json!([{"type": "function", "function": {"name": "task", "parameters": {"type": "object"}}}]);
    let main = [
        ("user-agent", "opencode/1.18.33"),
        ("x-session-id", "ses_main"),
        ("authorization", "Bearer k"),
    ];
    let child = [
        ("user-agent", "opencode/1.18.33"),
        ("x-session-id", "ses_child"),
        ("x-parent-session-id", "ses_main"),
        ("authorization", "Bearer k"),
    ];
    let ask = json!({"role": "user", "content": "How long is notes.txt?"});
    let call = json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "task", "arguments": "{\"description\":\"Count lines\",\"prompt\":\"Count the lines of notes.txt\"}"}}]});
    let requests = [
        (
            &main[..],
            json!({"model": "gpt-4.1", "stream": true, "tools": tools, "messages": [system, ask]}),
        ),
        (
            &child[..],
            json!({"model": "gpt-4.1", "stream": true, "tools": tools, "messages": [system,
            {"role": "user", "content": "Count the lines of notes.txt"}]}),
        ),
        (
            &main[..],
            json!({"model": "gpt-4.1", "stream": true, "tools": tools, "messages": [system, ask, call,
            {"role": "tool", "tool_call_id": "call_1", "content": "notes.txt has 3 lines."}]}),
        ),
        // A title: no tools, a side call.
        (
            &main[..],
            json!({"model": "gpt-4.1", "stream": true, "messages": [
            {"role": "system", "content": "You are a title generator."}, {"role": "user", "content": "How long is notes.txt?"}]}),
        ),
    ];
    for (headers, body) in &requests {
        let (status, reply) = gateway.post_json("/v1/chat/completions", headers, body).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&reply));
    }
    for (sent, got) in requests.iter().zip(gateway.upstream.received()) {
        assert_eq!(got.body, sent.1.to_string().as_bytes());
        assert_eq!(got.path, "/v1/chat/completions");
    }
    let sessions = gateway.sessions();
    assert_eq!(sessions.len(), 1, "the subagent is in its parent's session: {sessions:?}");
    assert_eq!(sessions[0].0, "opencode:ses_main");
    let frames = gateway.tree(sessions[0].1.as_ref().unwrap());
    let titles: Vec<&str> = frames.iter().map(|(f, _)| f.title.as_str()).collect();
    assert_eq!(titles, ["How long is notes.txt?", "How long is notes.txt?", "Count lines"]);
    assert_eq!(
        frames[2].0.parent.as_ref(),
        Some(&frames[1].0.id),
        "the subagent is under its call"
    );
    assert_eq!(frames[2].0.results.as_deref(), Some("notes.txt has 3 lines."));
    let report = gateway.flame.gateway_report(sessions[0].1.as_ref().unwrap()).unwrap().unwrap();
    assert_eq!(report.total.calls, 4, "the side call is recorded too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_session_s_threads_are_told_apart_by_its_headers() {
    let upstream = Upstream::start(|got, _| {
        let body = got.json();
        let input = body["input"].as_array().unwrap();
        if input.iter().any(|i| i["type"] == "function_call_output") {
            responses_reply(vec![json!({"type": "message", "role": "assistant", "id": "m2",
                "content": [{"type": "output_text", "text": "Done."}]})], 2_000, 1_024)
        } else {
            responses_reply(vec![
                json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"}),
                json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command",
                       "arguments": "{\"cmd\":\"ls\"}"}),
            ], 1_500, 0)
        }
    })
    .await;
    let gateway = Harness::start(Mode::Observe, upstream).await;
    let headers = [
        ("originator", "codex_exec"),
        ("session-id", "019a-session"),
        ("thread-id", "019a-session"),
        ("authorization", "Bearer k"),
    ];
    let developer = json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]});
    let user = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List the folder"}]});
    let first = json!({"model": "gpt-5", "stream": true, "store": false, "tools": [{"type": "function", "name": "exec_command"}],
        "input": [developer, user], "prompt_cache_key": "019a-session"});
    let second = json!({"model": "gpt-5", "stream": true, "store": false, "tools": [{"type": "function", "name": "exec_command"}],
        "input": [developer, user,
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "notes.txt"}],
        "prompt_cache_key": "019a-session"});
    for body in [&first, &second] {
        let (status, reply) = gateway.post_json("/v1/responses", &headers, body).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&reply));
    }
    let received = gateway.upstream.received();
    assert_eq!(received[1].body, second.to_string().as_bytes());
    assert_eq!(received[1].path, "/v1/responses");
    let sessions = gateway.sessions();
    assert_eq!(sessions[0].0, "codex:019a-session");
    let frames = gateway.tree(sessions[0].1.as_ref().unwrap());
    let messages = &frames[1].1;
    let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    assert_eq!(messages[1].usage.map(|u| u.cache_read_tokens + u.input_tokens), Some(1_500));
    assert_eq!(messages[3].usage.map(|u| u.cache_read_tokens), Some(1_024));
}
