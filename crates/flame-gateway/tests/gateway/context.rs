//! Context mode against the strict upstream: what is sent stays a request the provider accepts,
//! starts with the client's tools and system prompt, carries the frame's context instead of the
//! linear history, and keeps a frame's requests cache-true.

use std::sync::Arc;

use flame_gateway::Mode;
use serde_json::{Value, json};

use crate::Harness;
use crate::strict::{StrictAnthropic, signature};
use crate::upstream::Upstream;

const HEADERS: [(&str, &str); 2] =
    [("x-claude-code-session-id", "ctx-1"), ("anthropic-version", "2023-06-01")];

/// The client's side of a Claude Code-like session: its requests, each the whole history.
struct Client {
    messages: Vec<Value>,
}

impl Client {
    fn request(&self) -> Value {
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1000,
            "stream": true,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "system": [{"type": "text", "text": "You are a coding agent.\nWorking directory: /w\n",
                        "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            "tools": [{"name": "Read", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}],
            "messages": self.messages,
        })
    }

    /// Reads a streamed Anthropic reply back into the history, as Claude Code keeps it.
    fn take_reply(&mut self, reply: &[u8]) {
        let text = String::from_utf8_lossy(reply);
        let mut blocks: Vec<Value> = Vec::new();
        for line in text.lines() {
            let Some(data) = line.strip_prefix("data: ") else { continue };
            let event: Value = serde_json::from_str(data).unwrap();
            match event["type"].as_str() {
                Some("content_block_start") => blocks.push(event["content_block"].clone()),
                Some("content_block_delta") => {
                    let block = blocks.last_mut().unwrap();
                    let delta = &event["delta"];
                    match delta["type"].as_str() {
                        Some("text_delta") => {
                            let t = format!(
                                "{}{}",
                                block["text"].as_str().unwrap_or(""),
                                delta["text"].as_str().unwrap()
                            );
                            block["text"] = json!(t);
                        }
                        Some("thinking_delta") => block["thinking"] = delta["thinking"].clone(),
                        Some("signature_delta") => block["signature"] = delta["signature"].clone(),
                        Some("input_json_delta") => {
                            block["input"] =
                                serde_json::from_str(delta["partial_json"].as_str().unwrap())
                                    .unwrap()
                        }
                        _ => {}
                    }
                }
                Some("error") => panic!("the stream ended with an error: {event}"),
                _ => {}
            }
        }
        self.messages.push(json!({"role": "assistant", "content": blocks}));
    }
}

/// `value` without its cache marks.
pub fn unmarked(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), unmarked(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

fn thought(text: &str) -> Value {
    json!({"type": "thinking", "thinking": text, "signature": signature(text)})
}

fn read(id: &str, path: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": path}})
}

fn result(id: &str, text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]})
}

/// The replies of the scripted model, by request.
fn script(n: usize) -> Vec<Value> {
    match n {
        0 => vec![thought("Look at a.rs first."), read("t1", "/w/src/a.rs")],
        1 => vec![thought("Now b.rs."), read("t2", "/w/src/b.rs")],
        2 => vec![
            thought("Done reading."),
            json!({"type": "text", "text": "Fixed the bug in a.rs."}),
        ],
        3 => vec![thought("Tests next."), read("t3", "/w/tests/a.rs")],
        _ => vec![json!({"type": "text", "text": "Added the test."})],
    }
}

async fn strict_gateway() -> (Harness, Arc<StrictAnthropic>) {
    let strict = StrictAnthropic::new();
    let upstream_strict = strict.clone();
    let upstream = Upstream::start(move |got, n| {
        upstream_strict.answer(got, 1_795_307_601_000 + 1_000 * n as i64, script(n))
    })
    .await;
    (Harness::start(Mode::Context, upstream).await, strict)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_mode_sends_the_frames_context_as_a_request_the_provider_accepts() {
    let (gateway, strict) = strict_gateway().await;
    let mut client =
        Client { messages: vec![json!({"role": "user", "content": "Fix the bug in src/a.rs"})] };
    let long = "fn a() {}\n".repeat(2_000);
    let turns: Vec<Option<Value>> = vec![
        None,
        Some(result("t1", &long)),
        Some(result("t2", "fn b() {}")),
        Some(json!({"role": "user", "content": "Now add a test for it"})),
        Some(result("t3", "#[test] fn t() {}")),
    ];
    for (n, turn) in turns.into_iter().enumerate() {
        if let Some(turn) = turn {
            client.messages.push(turn);
        }
        let (status, reply) = gateway.post_json("/v1/messages", &HEADERS, &client.request()).await;
        assert_eq!(status, 200, "call {n}: {}", String::from_utf8_lossy(&reply));
        client.take_reply(&reply);
    }
    assert!(strict.refused.lock().unwrap().is_empty(), "{:?}", strict.refused.lock().unwrap());
    let sent: Vec<Value> = gateway.upstream.received().iter().map(|r| r.json()).collect();
    assert_eq!(sent.len(), 5);
    for body in &sent {
        // The client's tools and system prompt first, unchanged but for the marks, then Flame's.
        assert_eq!(body["tools"], client.request()["tools"]);
        assert_eq!(body["system"][0]["text"], "You are a coding agent.\nWorking directory: /w\n");
        assert!(
            body["system"][1]["text"]
                .as_str()
                .unwrap()
                .starts_with("This conversation reaches you through Flame")
        );
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 1024}),
            "unknown fields pass through"
        );
        let opening = body["messages"][0]["content"][0]["text"].as_str().unwrap();
        assert!(opening.trim_start().starts_with("<stack-context"), "{opening}");
    }
    // A frame's requests are cache-true: each starts with the one before it, but for the cache
    // marks, which move to the newest message (the provider's cache keys the content, not them).
    for pair in sent[..3].windows(2) {
        let (a, b) = (unmarked(&pair[0]["messages"]), unmarked(&pair[1]["messages"]));
        let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let short = |v: &Value| v.to_string().chars().take(300).collect::<String>();
            assert_eq!(x, y, "message {i} differs: {} / {}", short(x), short(y));
        }
    }
    // The second request of the session is a new segment: its opening tells of the first, whose
    // messages are not sent.
    let fourth = &sent[3];
    let opening = fourth["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(opening.contains("Fix the bug in src/a.rs"), "{opening}");
    assert!(opening.contains("Fixed the bug in a.rs."), "the first segment's results: {opening}");
    let text = fourth["messages"].to_string();
    assert!(!text.contains("fn a() {}"), "the first segment's results are not sent again");
    assert_eq!(fourth["messages"].as_array().unwrap().len(), 2, "the opening and the new request");
    // Flame billed less than the client's own requests would have cost.
    let tree = gateway.sessions()[0].1.clone().unwrap();
    let report = gateway.flame.gateway_report(&tree).unwrap().unwrap();
    assert_eq!(report.total.context_calls, 5);
    assert!(
        report.total.billed.usage.prompt_tokens() < report.total.client.usage.prompt_tokens(),
        "{report:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_linear_requests_give_the_same_bytes() {
    let mut bodies: Vec<Vec<bytes::Bytes>> = Vec::new();
    for _ in 0..2 {
        let (gateway, _) = strict_gateway().await;
        let mut client = Client {
            messages: vec![json!({"role": "user", "content": "Fix the bug in src/a.rs"})],
        };
        for turn in [None, Some(result("t1", "fn a() {}")), Some(result("t2", "fn b() {}"))] {
            if let Some(turn) = turn {
                client.messages.push(turn);
            }
            let (status, reply) =
                gateway.post_json("/v1/messages", &HEADERS, &client.request()).await;
            assert_eq!(status, 200);
            client.take_reply(&reply);
        }
        // The logs the opening names are under each gateway's own data directory.
        let home = gateway.dir.path().display().to_string();
        bodies.push(
            gateway
                .upstream
                .received()
                .into_iter()
                .map(|r| {
                    bytes::Bytes::from(String::from_utf8_lossy(&r.body).replace(&home, "<home>"))
                })
                .collect(),
        );
    }
    assert_eq!(bodies[0], bodies[1]);
}
