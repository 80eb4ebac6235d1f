//! The Anthropic Messages API: the request body, and the streamed events decoded into a turn.

use serde::Serialize;
use serde_json::{Value, json};

use std::collections::BTreeMap;

use crate::limits::{Stop, TurnBytes, name, tokens};
use crate::sse::SseEvent;
use crate::{
    CacheLifetime, ChatMessage, ChatRequest, MAX_TOOL_CALLS, StopReason, StreamEvent, ToolCall,
    Turn,
};

/// The API version Flame speaks (sent as `anthropic-version`).
pub(crate) const VERSION: &str = "2023-06-01";

pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/v1/messages")
}

/// The request body, written in the order Anthropic caches a prompt: the tools, the system
/// prompt, the messages. Consecutive messages of one role are merged, since the API wants roles
/// to alternate; tool results travel in a user message. A cache mark becomes `cache_control`
/// on the last block of its message (on the system prompt's block for the system's mark).
pub(crate) fn body(request: &ChatRequest) -> String {
    let mut messages: Vec<WireMessage<'_>> = Vec::new();
    for (i, message) in request.messages.iter().enumerate() {
        let (role, mut blocks) = match message {
            ChatMessage::User(text) => {
                ("user", vec![WireBlock::Text { text, cache_control: None }])
            }
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(WireBlock::Text { text, cache_control: None });
                }
                for call in tool_calls {
                    blocks.push(WireBlock::ToolUse {
                        id: &call.id,
                        name: &call.name,
                        input: &call.arguments,
                        cache_control: None,
                    });
                }
                ("assistant", blocks)
            }
            ChatMessage::ToolResult { call_id, content, is_error } => (
                "user",
                vec![WireBlock::ToolResult {
                    tool_use_id: call_id,
                    content,
                    is_error: *is_error,
                    cache_control: None,
                }],
            ),
        };
        if let Some(mark) = request.cache.marks.iter().find(|m| m.message == i)
            && let Some(last) = blocks.last_mut()
        {
            last.mark(mark.lifetime);
        }
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => messages.push(WireMessage { role, content: blocks }),
        }
    }
    let body = Body {
        model: &request.model,
        max_tokens: request.max_tokens,
        stream: true,
        tools: request
            .tools
            .iter()
            .map(|t| Tool { name: &t.name, description: &t.description, input_schema: &t.schema })
            .collect(),
        system: system_blocks(request),
        messages,
    };
    serde_json::to_string(&body).expect("a request body serialises")
}

/// The system prompt as Anthropic's blocks: the part every conversation shares, carrying the
/// system's cache mark, then the rest (see `PromptCache::system_shared`).
fn system_blocks(request: &ChatRequest) -> Vec<WireBlock<'_>> {
    let system = request.system.as_str();
    let cache_control = || request.cache.system.map(CacheControl::of);
    let split = request
        .cache
        .system_shared
        .filter(|&at| at > 0 && at < system.len() && system.is_char_boundary(at));
    match split {
        Some(at) => vec![
            WireBlock::Text { text: &system[..at], cache_control: cache_control() },
            WireBlock::Text { text: &system[at..], cache_control: None },
        ],
        None => vec![WireBlock::Text { text: system, cache_control: cache_control() }],
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    system: Vec<WireBlock<'a>>,
    messages: Vec<WireMessage<'a>>,
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl WireBlock<'_> {
    fn mark(&mut self, lifetime: CacheLifetime) {
        let (WireBlock::Text { cache_control, .. }
        | WireBlock::ToolUse { cache_control, .. }
        | WireBlock::ToolResult { cache_control, .. }) = self;
        *cache_control = Some(CacheControl::of(lifetime));
    }
}

/// Anthropic's `cache_control`: `ephemeral`, for five minutes unless `ttl` says an hour.
#[derive(Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<&'static str>,
}

impl CacheControl {
    fn of(lifetime: CacheLifetime) -> CacheControl {
        let ttl = match lifetime {
            CacheLifetime::Short => None,
            CacheLifetime::Long => Some("1h"),
        };
        CacheControl { kind: "ephemeral", ttl }
    }
}

/// Whether an error response says the prompt is longer than the model's window.
pub(crate) fn is_context_too_long(status: u16, message: &str) -> bool {
    status == 400
        && (message.contains("prompt is too long")
            || message.contains("context window")
            || message.contains("too many tokens"))
}

/// A content block being streamed.
#[derive(Debug)]
enum Block {
    Text,
    Tool { id: String, name: String, json: String },
    Other,
}

/// Decodes one streamed message.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    pub turn: Turn,
    /// The blocks started and not yet stopped, by the index the server gives them. The index is
    /// the server's choice of number, so the blocks are kept in a map, never in a vector as long
    /// as the index; at most [`MAX_TOOL_CALLS`] blocks may start in one turn.
    blocks: BTreeMap<u64, Block>,
    started: usize,
    bytes: TurnBytes,
    pub finished: bool,
}

impl Decoder {
    /// Takes one event; returns what to pass on, or why the stream cannot be read. An `error`
    /// event from the provider comes back as `Err(Ok(message))`.
    pub fn event(&mut self, event: SseEvent) -> Result<Vec<StreamEvent>, Stop> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| Err(format!("an event is not JSON ({e})")))?;
        let kind = data["type"].as_str().unwrap_or_default();
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                let message = &data["message"];
                self.turn.model =
                    name(message["model"].as_str().unwrap_or_default(), "the model's name")?;
                self.usage(&message["usage"])?;
            }
            "content_block_start" => {
                if self.started >= MAX_TOOL_CALLS {
                    return Err(Err(format!(
                        "more than {MAX_TOOL_CALLS} content blocks in one turn"
                    )));
                }
                self.started += 1;
                let block = &data["content_block"];
                let next =
                    self.blocks.last_key_value().map_or(0, |(last, _)| last.saturating_add(1));
                let index = data["index"].as_u64().unwrap_or(next);
                let new = match block["type"].as_str() {
                    Some("text") => {
                        let text = block["text"].as_str().unwrap_or_default();
                        if !text.is_empty() {
                            self.bytes.add(text.len())?;
                            self.turn.text.push_str(text);
                            out.push(StreamEvent::Text(text.to_owned()));
                        }
                        Block::Text
                    }
                    Some("tool_use") => {
                        let id =
                            name(block["id"].as_str().unwrap_or_default(), "a tool call's id")?;
                        let name =
                            name(block["name"].as_str().unwrap_or_default(), "a tool call's name")?;
                        self.bytes.add(id.len() + name.len())?;
                        out.push(StreamEvent::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Block::Tool { id, name, json: String::new() }
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index, new);
            }
            "content_block_delta" => {
                let index = data["index"].as_u64().unwrap_or_default();
                let delta = &data["delta"];
                match (delta["type"].as_str(), self.blocks.get_mut(&index)) {
                    (Some("text_delta"), _) => {
                        let text = delta["text"].as_str().unwrap_or_default();
                        self.bytes.add(text.len())?;
                        self.turn.text.push_str(text);
                        out.push(StreamEvent::Text(text.to_owned()));
                    }
                    (Some("input_json_delta"), Some(Block::Tool { json, .. })) => {
                        let fragment = delta["partial_json"].as_str().unwrap_or_default();
                        self.bytes.add(fragment.len())?;
                        json.push_str(fragment);
                    }
                    (Some("input_json_delta"), _) => {
                        return Err(Err(format!(
                            "tool input for block {index}, which is not a tool call being streamed"
                        )));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                // A block is done once stopped: a second stop for its index finds nothing, so a
                // call is made once however often the server repeats itself.
                let index = data["index"].as_u64().unwrap_or_default();
                if let Some(Block::Tool { id, name, json }) = self.blocks.remove(&index) {
                    let call = if json.trim().is_empty() {
                        ToolCall { id, name, arguments: json!({}) }
                    } else {
                        match serde_json::from_str(&json) {
                            Ok(arguments) => ToolCall { id, name, arguments },
                            Err(e) => {
                                ToolCall::unreadable(id, name, &json, &format!("not JSON ({e})"))
                            }
                        }
                    };
                    self.turn.tool_calls.push(call);
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.turn.stop = match reason {
                        "end_turn" | "stop_sequence" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" => StopReason::MaxTokens,
                        other => StopReason::Other(name(other, "the stop reason")?),
                    };
                }
                self.usage(&data["usage"])?;
            }
            "message_stop" => self.finished = true,
            "error" => {
                let error = &data["error"];
                return Err(Ok(format!(
                    "{} ({})",
                    error["message"].as_str().unwrap_or("an error"),
                    error["type"].as_str().unwrap_or("error")
                )));
            }
            // `ping` and event types added later carry nothing Flame needs.
            _ => {}
        }
        Ok(out)
    }

    /// Takes a usage report (`message_start` carries the input's, `message_delta` the output's;
    /// a later count replaces an earlier one). The cache writes are split by lifetime: Anthropic
    /// counts every write in `cache_creation_input_tokens` and the hour's again in
    /// `cache_creation.ephemeral_1h_input_tokens`.
    fn usage(&mut self, usage: &Value) -> Result<(), Stop> {
        let u = &mut self.turn.usage;
        for (key, count) in [
            ("input_tokens", &mut u.input_tokens),
            ("output_tokens", &mut u.output_tokens),
            ("cache_read_input_tokens", &mut u.cache_read_tokens),
        ] {
            if let Some(n) = tokens(usage, key)? {
                *count = n;
            }
        }
        if let Some(written) = tokens(usage, "cache_creation_input_tokens")? {
            let long = tokens(&usage["cache_creation"], "ephemeral_1h_input_tokens")?.unwrap_or(0);
            if long > written {
                self.turn.notices.push(format!(
                    "Anthropic reported {long} tokens written to the cache for an hour, more than the {written} it wrote in all; counted as {written}"
                ));
            }
            let long = long.min(written);
            u.cache_write_long_tokens = long;
            u.cache_write_tokens = written - long;
        }
        Ok(())
    }
}
