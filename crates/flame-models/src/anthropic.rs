//! The Anthropic Messages API: the request body, and the streamed events decoded into a turn.

use serde_json::{Value, json};

use std::collections::BTreeMap;

use crate::decode::{Stop, TurnBytes, name, tokens};
use crate::sse::SseEvent;
use crate::{ChatMessage, ChatRequest, MAX_TOOL_CALLS, StopReason, StreamEvent, ToolCall, Turn};

/// The API version Flame speaks (sent as `anthropic-version`).
pub(crate) const VERSION: &str = "2023-06-01";

pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/v1/messages")
}

/// The request body. Consecutive messages of one role are merged, since the API wants roles to
/// alternate; tool results travel in a user message.
pub(crate) fn body(request: &ChatRequest) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message {
            ChatMessage::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}));
                }
                ("assistant", blocks)
            }
            ChatMessage::ToolResult { call_id, content, is_error } => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}),
                ],
            ),
        };
        match messages.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "stream": true,
        "messages": messages.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect::<Vec<_>>(),
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(
                |t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}),
            )
            .collect();
    }
    body
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

    fn usage(&mut self, usage: &Value) -> Result<(), Stop> {
        let u = &mut self.turn.usage;
        for (key, count) in [
            ("input_tokens", &mut u.input_tokens),
            ("output_tokens", &mut u.output_tokens),
            ("cache_read_input_tokens", &mut u.cache_read_tokens),
            ("cache_creation_input_tokens", &mut u.cache_write_tokens),
        ] {
            if let Some(n) = tokens(usage, key)? {
                *count = n;
            }
        }
        Ok(())
    }
}
