//! Context mode on the shared Claude Code sessions (`tests/fixtures/claude-code/`), sent through
//! the gateway request by request: each recorded model call becomes the request Claude Code sent
//! (the thread's messages up the record chain), at the time it was made, to a strict upstream
//! that bills what it receives through Anthropic's cache and answers with the recorded reply. What
//! the gateway sent must be accepted, cost what `flame replay` says Flame's context costs, stay
//! under the linear session's dollars, and keep a frame's requests cache-true.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use flame_api::{DataDir, Env, Flame, FlameConfig};
use flame_gateway::{Gateway, GatewayConfig, Mode, Upstreams};
use flame_import::replay::{ReplayOptions, replay};
use flame_model::Usage;
use flame_model::cost::{PriceTable, cost_picodollars, round_to_micro_usd};
use flame_model::prompt_cache::text_hash;
use serde_json::{Value, json};

use crate::strict::{StrictAnthropic, signature, tokens_of_messages};
use crate::upstream::Upstream;

/// One recorded model call.
#[derive(Debug, Clone)]
struct Call {
    thread: usize,
    at: i64,
    /// What Claude Code sent: the thread's messages up the record chain.
    messages: Vec<Value>,
    /// The reply's content blocks, as recorded.
    reply: Vec<Value>,
    /// The recorded input: fresh, read from the cache and written to it.
    input: u64,
    /// What of it the recorded call read from the cache.
    read: u64,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code")
}

/// A thinking block signed as the strict upstream signs it, so that it takes its own
/// signatures back.
fn resign(mut block: Value) -> Value {
    if block["type"] == "thinking" {
        let text = block["thinking"].as_str().unwrap_or_default().to_owned();
        block["signature"] = json!(signature(&text));
    }
    block
}

fn content_of(record: &Value) -> Vec<Value> {
    match &record["message"]["content"] {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(b) => b.iter().cloned().map(resign).collect(),
        _ => Vec::new(),
    }
}

/// Every model call of one transcript, with the request that made it.
fn calls_of(path: &Path, thread: usize) -> Vec<Call> {
    let records: Vec<Value> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let by_uuid: HashMap<&str, &Value> =
        records.iter().filter_map(|r| r["uuid"].as_str().map(|u| (u, r))).collect();
    let mut calls = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for record in &records {
        if record["type"] != "assistant" {
            continue;
        }
        let id = record["message"]["id"].as_str().unwrap_or_default().to_owned();
        if let Some(&call) = seen.get(&id) {
            let call: &mut Call = &mut calls[call];
            call.reply.extend(content_of(record));
            continue;
        }
        let usage = &record["message"]["usage"];
        let field = |k: &str| usage[k].as_u64().unwrap_or(0);
        let input = field("input_tokens")
            + field("cache_read_input_tokens")
            + field("cache_creation_input_tokens");
        if input == 0 {
            continue;
        }
        // The request: the chain of user and assistant records above this one, responses whole.
        let mut chain: Vec<&Value> = Vec::new();
        let mut parent = record["parentUuid"].as_str();
        while let Some(uuid) = parent {
            let Some(r) = by_uuid.get(uuid) else { break };
            if r["type"] == "user" || r["type"] == "assistant" {
                chain.push(r);
            }
            parent = r["parentUuid"].as_str();
        }
        chain.reverse();
        // As Claude Code sends them: a response's records are one assistant message, and the
        // results of its calls, recorded between them, one user message after it.
        let mut messages: Vec<Value> = Vec::new();
        let mut open: Option<(String, usize)> = None;
        for r in chain {
            let blocks = content_of(r);
            let response = r["message"]["id"].as_str().map(str::to_owned);
            if r["type"] == "assistant" {
                match (&open, &response) {
                    (Some((id, at)), Some(this)) if id == this => {
                        messages[*at]["content"].as_array_mut().unwrap().extend(blocks);
                    }
                    _ => {
                        messages.push(json!({"role": "assistant", "content": blocks}));
                        open = response.map(|id| (id, messages.len() - 1));
                    }
                }
                continue;
            }
            let results = !blocks.is_empty() && blocks.iter().all(|b| b["type"] == "tool_result");
            match &open {
                Some((_, at)) if results => {
                    if messages.len() == at + 1 {
                        messages.push(json!({"role": "user", "content": []}));
                    }
                    messages[at + 1]["content"].as_array_mut().unwrap().extend(blocks);
                }
                _ => {
                    open = None;
                    messages.push(json!({"role": "user", "content": blocks}));
                }
            }
        }
        if messages.first().is_none_or(|m| m["role"] != "user") {
            continue;
        }
        let at = record["timestamp"].as_str().and_then(flame_import::parse_rfc3339).unwrap_or(0);
        seen.insert(id, calls.len());
        let read = field("cache_read_input_tokens");
        calls.push(Call { thread, at, messages, reply: content_of(record), input, read });
    }
    calls
}

/// A system prompt of about `tokens` tokens, as the strict upstream counts them, standing for
/// the agent's own (its size is what the first call recorded beyond the messages).
fn system_of(thread: usize, tokens: u64) -> String {
    let phrase = format!("Agent {thread} instructions: follow the project conventions carefully. ");
    let count = |text: &str| flame_tokens::count(flame_tokens::Encoding::ClaudeEstimate, text);
    let guess = (tokens / count(&phrase).max(1)).max(1) as usize;
    // Counted together, repeated phrases weigh a little less than apart: measure and correct.
    let measured = count(&phrase.repeat(guess)).max(1);
    let reps = (guess as u64 * tokens / measured).max(1) as usize;
    phrase.repeat(reps)
}

/// The figures of one session through the gateway.
#[derive(Debug)]
struct Figures {
    calls: usize,
    billed_micro_usd: u64,
    prefix_share: f64,
}

async fn through_gateway(session: &str) -> Figures {
    let main = fixtures().join(format!("{session}.jsonl"));
    let mut files = vec![main];
    let mut agents: Vec<PathBuf> = std::fs::read_dir(fixtures().join(session).join("subagents"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().contains("acompact"))
        .collect();
    agents.sort();
    files.extend(agents);
    let mut calls: Vec<Call> = Vec::new();
    for (thread, file) in files.iter().enumerate() {
        calls.extend(calls_of(file, thread));
    }
    calls.sort_by_key(|c| c.at);
    // Each thread's fixed prompt: its first call's recorded input beyond its messages. A call
    // that read at least that much from the cache found it there, written by other sessions of
    // the agent, which start with the same bytes: the upstream holds it for that call, as
    // `flame replay` grants it.
    // Its part that the first call read is what other sessions had written (the agent's own
    // prompt); the rest is this session's. Both are blocks of the system prompt.
    let mut systems: HashMap<usize, (Value, u64)> = HashMap::new();
    for call in &calls {
        systems.entry(call.thread).or_insert_with(|| {
            let counted = tokens_of_messages(&json!(call.messages));
            let tokens = call.input.saturating_sub(counted);
            let shared = call.read.min(tokens);
            let mut blocks = vec![json!({"type": "text", "text": system_of(call.thread, shared)})];
            if tokens > shared {
                blocks.push(
                    json!({"type": "text", "text": system_of(call.thread + 1000, tokens - shared)}),
                );
            }
            blocks.last_mut().unwrap()["cache_control"] = json!({"type": "ephemeral"});
            (Value::Array(blocks), shared)
        });
    }
    let held: Vec<bool> =
        calls.iter().map(|c| c.read >= systems[&c.thread].1 && systems[&c.thread].1 > 0).collect();
    let now = Arc::new(AtomicI64::new(0));
    let clock = now.clone();
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let env = Env::with_clock(Box::new(move || clock.load(Ordering::SeqCst)), 3);
    let flame = Arc::new(Flame::open_with(data, FlameConfig::default(), env).unwrap());
    let strict = StrictAnthropic::new();
    let (replies, at): (Vec<Vec<Value>>, Vec<i64>) =
        calls.iter().map(|c| (c.reply.clone(), c.at)).unzip();
    let answering = strict.clone();
    let upstream = Upstream::start(move |got, n| {
        answering.answer_holding(got, at[n], replies[n].clone(), held[n])
    })
    .await;
    let config = GatewayConfig {
        port: 0,
        mode: Mode::Context,
        upstreams: Upstreams { anthropic: upstream.base(), openai: upstream.base() },
    };
    let gateway = Gateway::bind(config, flame.clone()).await.unwrap();
    let base = format!("http://{}/v1/messages", gateway.address());
    tokio::spawn(gateway.serve(std::future::pending()));
    let client = crate::http_client();
    for call in &calls {
        now.store(call.at, Ordering::SeqCst);
        let body = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 32000,
            "stream": true,
            "system": systems[&call.thread].0,
            "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
            "messages": call.messages,
        });
        let response = client
            .post(&base)
            .header("x-claude-code-session-id", session)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert_eq!(status, 200, "{}", text.chars().take(500).collect::<String>());
    }
    let refused = strict.refused.lock().unwrap().clone();
    assert!(refused.is_empty(), "the strict upstream refused: {refused:?}");
    let price = PriceTable::default().get("claude-sonnet-4-5").unwrap().price();
    let billed: u128 = strict
        .billed
        .lock()
        .unwrap()
        .iter()
        .map(|u| cost_picodollars(&Usage { output_tokens: 0, ..*u }, &price))
        .sum();
    // Consecutive requests with the same opening are one frame's: how much of each request
    // its next one starts with, message for message, marks aside.
    let bodies: Vec<Value> = upstream.received().iter().map(|r| r.json()).collect();
    let mut last_of_frame: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    let mut shares: Vec<f64> = Vec::new();
    for body in &bodies {
        let messages = body["messages"].as_array().unwrap();
        let blocks: Vec<(u64, u64)> = messages
            .iter()
            .map(|m| {
                let bare = crate::context::unmarked(m);
                (text_hash("m", &bare.to_string()), tokens_of_messages(&json!([bare])))
            })
            .collect();
        let opening = blocks[0].0;
        if let Some(previous) = last_of_frame.get(&opening) {
            let common: u64 = previous
                .iter()
                .zip(&blocks)
                .take_while(|(a, b)| a.0 == b.0)
                .map(|(a, _)| a.1)
                .sum();
            let whole: u64 = previous.iter().map(|b| b.1).sum();
            shares.push(common as f64 / whole.max(1) as f64);
        }
        last_of_frame.insert(opening, blocks);
    }
    Figures {
        calls: calls.len(),
        billed_micro_usd: round_to_micro_usd(billed),
        prefix_share: shares.iter().sum::<f64>() / shares.len().max(1) as f64,
    }
}

async fn check(session: &str) {
    let figures = through_gateway(session).await;
    let path = fixtures().join(format!("{session}.jsonl"));
    let draft = flame_import::import(&path, None, &Default::default(), &mut |_| {}).unwrap();
    let replayed = replay(&draft, &ReplayOptions::default()).unwrap();
    let ratio = |a: u64, b: u64| a as f64 / b.max(1) as f64;
    let linear = ratio(figures.billed_micro_usd, replayed.linear_micro_usd);
    let floor = ratio(figures.billed_micro_usd, replayed.floor_micro_usd);
    let versus_replay = ratio(figures.billed_micro_usd, replayed.flame_micro_usd);
    eprintln!(
        "GATEWAY {session}: {} calls, billed ${:.2}, replay ${:.2} (×{versus_replay:.3}), linear ${:.2} (×{linear:.3}), floor ×{floor:.3}, prefix share {:.3}",
        figures.calls,
        figures.billed_micro_usd as f64 / 1e6,
        replayed.flame_micro_usd as f64 / 1e6,
        replayed.linear_micro_usd as f64 / 1e6,
        figures.prefix_share,
    );
    assert!(
        (0.9..=1.1).contains(&versus_replay),
        "billed ×{versus_replay:.3} what flame replay prices the same calls at"
    );
    assert!(linear <= 0.60, "billed ×{linear:.3} the linear session");
    assert!(floor <= 1.15, "billed ×{floor:.3} the floor");
    assert!(figures.prefix_share >= 0.90, "prefix share {:.3}", figures.prefix_share);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_4d5611e5_through_the_gateway_in_context_mode() {
    check("4d5611e5-241a-462a-8d15-5122611a9569").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_fa812bfe_through_the_gateway_in_context_mode() {
    check("fa812bfe-b295-4cca-9c2f-fdf01028cb46").await;
}
