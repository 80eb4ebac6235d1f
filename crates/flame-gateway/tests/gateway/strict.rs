//! Strict scripted upstreams: each refuses, with 400 and the reason, any request its real
//! provider would refuse — a tool result whose call is not just before it, a call whose result
//! does not follow, a thinking block changed since the upstream sent it (its signature no longer
//! matches), more than four cache breakpoints, an hour's mark after a five minutes' one — and
//! bills what it accepts through the provider's prompt cache as pure code
//! (`flame_model::prompt_cache`), so the usage it reports is what the provider would charge.

use std::sync::{Arc, Mutex};

use flame_model::prompt_cache::{Block, CacheRules, PromptCache, text_hash};
use flame_model::{CacheLifetime, Usage};
use flame_tokens::Encoding;
use serde_json::{Value, json};

use crate::upstream::{Answer, Received};

/// A thinking block's signature as the strict upstream makes it: a digest of its text.
pub fn signature(thinking: &str) -> String {
    format!("sig-{:016x}", text_hash("thinking", thinking))
}

/// The tokens of an Anthropic message's or block's text, as the strict upstream counts them:
/// its texts, the calls' inputs and the results, each message 4 tokens more. Counts are kept
/// by the text's hash, since a conversation sends the same messages again and again.
fn tokens_of(value: &Value) -> u64 {
    static COUNTS: std::sync::LazyLock<Mutex<std::collections::HashMap<u64, u64>>> =
        std::sync::LazyLock::new(Mutex::default);
    let mut text = String::new();
    collect_text(value, &mut text);
    let key = text_hash("count", &text);
    if let Some(n) = COUNTS.lock().unwrap().get(&key) {
        return *n;
    }
    let n = flame_tokens::count(Encoding::ClaudeEstimate, &text) + 4;
    COUNTS.lock().unwrap().insert(key, n);
    n
}

/// The tokens of a list of messages, as the strict upstream counts them.
pub fn tokens_of_messages(messages: &Value) -> u64 {
    messages.as_array().into_iter().flatten().map(tokens_of).sum()
}

fn collect_text(value: &Value, into: &mut String) {
    match value {
        Value::String(s) => {
            into.push_str(s);
            into.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| collect_text(v, into)),
        Value::Object(fields) => {
            for (key, v) in fields {
                if key != "cache_control" && key != "type" && key != "signature" {
                    collect_text(v, into);
                }
            }
        }
        other => {
            into.push_str(&other.to_string());
            into.push('\n');
        }
    }
}

fn lifetime(mark: &Value) -> Option<CacheLifetime> {
    if mark.is_null() {
        return None;
    }
    Some(if mark["ttl"] == "1h" { CacheLifetime::Long } else { CacheLifetime::Short })
}

/// Checks an Anthropic Messages request as the API does; the request's blocks for the cache.
pub fn check_anthropic(body: &Value) -> Result<Vec<Block>, String> {
    let messages = body["messages"].as_array().ok_or("messages: not a list")?;
    if messages.first().is_none_or(|m| m["role"] != "user") {
        return Err("messages: the first message must be the user's".into());
    }
    let mut marks: Vec<CacheLifetime> = Vec::new();
    let mut blocks = Vec::new();
    // The tools and the system prompt, one block each way the cache sees them.
    let system: Vec<Value> = match &body["system"] {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(b) => b.clone(),
        _ => Vec::new(),
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        if let Some(l) = lifetime(&tool["cache_control"]) {
            marks.push(l);
        }
    }
    // The tools with the system prompt's first block, then each other block of it.
    for (i, b) in system.iter().enumerate() {
        let mark = lifetime(&b["cache_control"]);
        marks.extend(mark);
        let bare = strip(std::slice::from_ref(b));
        let part = if i == 0 { json!({"tools": body["tools"], "system": bare}) } else { bare };
        blocks.push(Block {
            hash: text_hash("prefix", &part.to_string()),
            tokens: tokens_of(&part) - 4,
            mark,
        });
    }
    if system.is_empty() {
        let part = json!({"tools": body["tools"]});
        blocks.push(Block {
            hash: text_hash("prefix", &part.to_string()),
            tokens: tokens_of(&part),
            mark: None,
        });
    }
    let mut pending_calls: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let content: Vec<Value> = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(b) => b.clone(),
            _ => return Err(format!("messages.{i}.content: not text or blocks")),
        };
        let mut mark = None;
        for (k, block) in content.iter().enumerate() {
            if let Some(l) = lifetime(&block["cache_control"]) {
                marks.push(l);
                mark = Some(l);
            }
            match (m["role"].as_str(), block["type"].as_str()) {
                (Some("user"), Some("tool_result")) => {
                    let id = block["tool_use_id"].as_str().unwrap_or_default();
                    if !pending_calls.iter().any(|c| c == id) {
                        return Err(format!(
                            "messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                        ));
                    }
                    pending_calls.retain(|c| c != id);
                }
                (Some("assistant"), Some("thinking")) => {
                    let text = block["thinking"].as_str().unwrap_or_default();
                    if block["signature"].as_str() != Some(signature(text).as_str()) {
                        return Err(format!(
                            "messages.{i}.content.{k}: Invalid `signature` in `thinking` block"
                        ));
                    }
                }
                _ => {}
            }
        }
        if m["role"] == "assistant" {
            if !pending_calls.is_empty() {
                return Err(format!(
                    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}",
                    pending_calls.join(", ")
                ));
            }
            pending_calls = content
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap_or_default().to_owned())
                .collect();
        } else if !pending_calls.is_empty() && i + 1 < messages.len() {
            // Anthropic wants every result of the calls in the message right after them.
            return Err(format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}",
                pending_calls.join(", ")
            ));
        }
        blocks.push(Block {
            hash: text_hash(
                "message",
                &json!({"role": m["role"], "content": strip(&content)}).to_string(),
            ),
            tokens: tokens_of(&json!(content)),
            mark,
        });
    }
    if marks.len() > 4 {
        return Err(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {}.",
            marks.len()
        ));
    }
    if marks.windows(2).any(|w| w[0] == CacheLifetime::Short && w[1] == CacheLifetime::Long) {
        return Err(
            "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"
                .into(),
        );
    }
    Ok(blocks)
}

/// Blocks without their cache marks, as the cache hashes them.
fn strip(content: &[Value]) -> Value {
    let mut v = Value::Array(content.to_vec());
    fn go(v: &mut Value) {
        match v {
            Value::Object(f) => {
                f.remove("cache_control");
                f.values_mut().for_each(go);
            }
            Value::Array(a) => a.iter_mut().for_each(go),
            _ => {}
        }
    }
    go(&mut v);
    v
}

/// A strict Anthropic upstream: each request checked, billed through the cache at `clock`'s
/// time, and answered by `script` (the reply's content blocks, given the request's number and
/// body).
pub struct StrictAnthropic {
    pub cache: Mutex<PromptCache>,
    pub billed: Mutex<Vec<Usage>>,
    pub refused: Mutex<Vec<String>>,
}

impl StrictAnthropic {
    pub fn new() -> Arc<StrictAnthropic> {
        Arc::new(StrictAnthropic {
            cache: Mutex::new(PromptCache::new(CacheRules::ANTHROPIC)),
            billed: Mutex::default(),
            refused: Mutex::default(),
        })
    }

    /// Answers `got` at `at`: refused with the reason, or `content` streamed with the usage
    /// the cache gives.
    pub fn answer(&self, got: &Received, at: i64, content: Vec<Value>) -> Answer {
        self.answer_holding(got, at, content, false)
    }

    /// [`StrictAnthropic::answer`], with the request's tools and system prompt held in the
    /// cache first when `held`: other sessions of the agent, which start with the same bytes,
    /// wrote them (`PromptCache::hold`, as a replay grants it where the recorded call read them).
    pub fn answer_holding(
        &self,
        got: &Received,
        at: i64,
        content: Vec<Value>,
        held: bool,
    ) -> Answer {
        let body = got.json();
        let blocks = match check_anthropic(&body) {
            Ok(blocks) => blocks,
            Err(why) => {
                self.refused.lock().unwrap().push(why.clone());
                return Answer::json(
                    400,
                    json!({"type": "error", "error": {"type": "invalid_request_error", "message": why}}),
                );
            }
        };
        let mut cache = self.cache.lock().unwrap();
        if held {
            cache.hold(at, &blocks[..1]);
        }
        let used = cache.send(at, &blocks).usage();
        drop(cache);
        let usage = Usage { output_tokens: 10, ..used };
        self.billed.lock().unwrap().push(usage);
        stream_anthropic(content, usage)
    }
}

/// An Anthropic stream of whole content blocks with `usage`.
pub fn stream_anthropic(content: Vec<Value>, usage: Usage) -> Answer {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut chunks = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {
        "id": "msg", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "usage": {"input_tokens": usage.input_tokens, "cache_read_input_tokens": usage.cache_read_tokens,
                  "cache_creation_input_tokens": usage.cache_write_tokens + usage.cache_write_long_tokens,
                  "cache_creation": {"ephemeral_1h_input_tokens": usage.cache_write_long_tokens,
                                     "ephemeral_5m_input_tokens": usage.cache_write_tokens},
                  "output_tokens": 1}}}),
    )];
    let calls = content.iter().any(|b| b["type"] == "tool_use");
    for (i, block) in content.into_iter().enumerate() {
        let mut start = block.clone();
        let delta = match block["type"].as_str() {
            Some("text") => {
                start["text"] = json!("");
                json!({"type": "text_delta", "text": block["text"]})
            }
            Some("thinking") => {
                start["thinking"] = json!("");
                start["signature"] = json!("");
                chunks.push(event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": start}),
                ));
                chunks.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i,
                    "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}),
                ));
                chunks.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i,
                    "delta": {"type": "signature_delta", "signature": block["signature"]}}),
                ));
                chunks.push(event(
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": i}),
                ));
                continue;
            }
            _ => {
                start["input"] = json!({});
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()})
            }
        };
        chunks.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": start}),
        ));
        chunks.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i, "delta": delta}),
        ));
        chunks.push(event("content_block_stop", json!({"type": "content_block_stop", "index": i})));
    }
    chunks.push(event("message_delta", json!({"type": "message_delta",
        "delta": {"stop_reason": if calls { "tool_use" } else { "end_turn" }}, "usage": {"output_tokens": usage.output_tokens}})));
    chunks.push(event("message_stop", json!({"type": "message_stop"})));
    Answer::sse(chunks)
}

#[test]
fn the_strict_upstream_refuses_what_anthropic_refuses() {
    let ok = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": signature("t")},
                                          {"type": "tool_use", "id": "a", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]}
    ]});
    assert!(check_anthropic(&ok).is_ok());
    let mut unpaired = ok.clone();
    unpaired["messages"][2]["content"][0]["tool_use_id"] = json!("b");
    assert!(check_anthropic(&unpaired).unwrap_err().contains("unexpected `tool_use_id`"));
    let mut changed = ok.clone();
    changed["messages"][1]["content"][0]["thinking"] = json!("other");
    assert!(check_anthropic(&changed).unwrap_err().contains("signature"));
    let mut orphan = ok.clone();
    orphan["messages"].as_array_mut().unwrap().insert(2, json!({"role": "user", "content": "hm"}));
    assert!(check_anthropic(&orphan).unwrap_err().contains("without `tool_result`"));
    let mut many = ok.clone();
    for i in 0..3 {
        many["messages"][i]["content"] =
            json!([{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]);
    }
    many["system"] = json!([{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}},
                            {"type": "text", "text": "t", "cache_control": {"type": "ephemeral"}}]);
    assert!(check_anthropic(&many).unwrap_err().contains("maximum of 4"));
    let mut order = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]});
    assert!(check_anthropic(&order).unwrap_err().contains("ttl"));
    order["messages"][0]["content"][1]["cache_control"] = json!({"type": "ephemeral"});
    assert!(check_anthropic(&order).is_ok());
}

/// Checks a Responses request as OpenAI does: each call's output after its call, each call
/// answered before the next message (but the last), and reasoning carried whole.
pub fn check_responses(body: &Value) -> Result<(), String> {
    let input = match &body["input"] {
        Value::Array(items) => items.clone(),
        Value::String(_) => return Ok(()),
        _ => return Err("input: not a list".into()),
    };
    let mut called: Vec<String> = Vec::new();
    let mut open: Vec<String> = Vec::new();
    for (i, item) in input.iter().enumerate() {
        match item["type"].as_str().unwrap_or("message") {
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let id = item["call_id"].as_str().unwrap_or_default().to_owned();
                called.push(id.clone());
                open.push(id);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let id = item["call_id"].as_str().unwrap_or_default();
                if !called.iter().any(|c| c == id) {
                    return Err(format!(
                        "input[{i}]: No tool call found for function call output with call_id {id}."
                    ));
                }
                open.retain(|c| c != id);
            }
            "reasoning" => {
                if item["encrypted_content"].as_str().is_some_and(|e| !e.starts_with("enc-")) {
                    return Err(format!(
                        "input[{i}]: the encrypted content of a reasoning item was changed"
                    ));
                }
            }
            _ => {
                if !open.is_empty() {
                    return Err(format!(
                        "input[{i}]: No tool output found for function call {}.",
                        open.join(", ")
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Checks a Chat Completions request as OpenAI does: tool messages right after the assistant
/// message whose calls they answer, every call answered.
pub fn check_chat(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().ok_or("messages: not a list")?;
    let mut open: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        match m["role"].as_str() {
            Some("tool") => {
                let id = m["tool_call_id"].as_str().unwrap_or_default();
                if !open.iter().any(|c| c == id) {
                    return Err(format!(
                        "messages.[{i}].role: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' ({id})"
                    ));
                }
                open.retain(|c| c != id);
            }
            _ => {
                if !open.is_empty() {
                    return Err(format!(
                        "messages.[{i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id': {}",
                        open.join(", ")
                    ));
                }
                open = m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| c["id"].as_str().unwrap_or_default().to_owned())
                    .collect();
            }
        }
    }
    Ok(())
}

#[test]
fn the_strict_openai_checks_refuse_unpaired_calls() {
    let ok = json!({"input": [
        {"type": "message", "role": "user", "content": "go"},
        {"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "x"}]});
    assert!(check_responses(&ok).is_ok());
    let mut orphan = ok.clone();
    orphan["input"][2]["call_id"] = json!("b");
    assert!(check_responses(&orphan).unwrap_err().contains("No tool call found"));
    let chat = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "x"}]});
    assert!(check_chat(&chat).is_ok());
    let mut unanswered = chat.clone();
    unanswered["messages"].as_array_mut().unwrap().remove(2);
    unanswered["messages"].as_array_mut().unwrap().push(json!({"role": "user", "content": "?"}));
    assert!(check_chat(&unanswered).unwrap_err().contains("must be followed by tool messages"));
}
