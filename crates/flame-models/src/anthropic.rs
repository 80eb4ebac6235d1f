//! The Anthropic Messages API: the request body, and the streamed events decoded into a turn.

use serde_json::{Value, json};

use crate::sse::SseEvent;
use crate::{ChatMessage, ChatRequest, StopReason, StreamEvent, ToolCall, Turn};

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
    blocks: Vec<Block>,
    pub finished: bool,
}

impl Decoder {
    /// Takes one event; returns what to pass on, or why the stream cannot be read. An `error`
    /// event from the provider comes back as `Err(Err(message))`.
    pub fn event(&mut self, event: SseEvent) -> Result<Vec<StreamEvent>, Result<String, String>> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| Err(format!("an event is not JSON ({e})")))?;
        let kind = data["type"].as_str().unwrap_or_default();
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                let message = &data["message"];
                self.turn.model = message["model"].as_str().unwrap_or_default().to_owned();
                self.usage(&message["usage"]);
            }
            "content_block_start" => {
                let block = &data["content_block"];
                let index = data["index"].as_u64().unwrap_or(self.blocks.len() as u64) as usize;
                let new = match block["type"].as_str() {
                    Some("text") => {
                        let text = block["text"].as_str().unwrap_or_default();
                        if !text.is_empty() {
                            self.turn.text.push_str(text);
                            out.push(StreamEvent::Text(text.to_owned()));
                        }
                        Block::Text
                    }
                    Some("tool_use") => {
                        let id = block["id"].as_str().unwrap_or_default().to_owned();
                        let name = block["name"].as_str().unwrap_or_default().to_owned();
                        out.push(StreamEvent::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Block::Tool { id, name, json: String::new() }
                    }
                    _ => Block::Other,
                };
                if index >= self.blocks.len() {
                    self.blocks.resize_with(index + 1, || Block::Other);
                }
                self.blocks[index] = new;
            }
            "content_block_delta" => {
                let index = data["index"].as_u64().unwrap_or_default() as usize;
                let delta = &data["delta"];
                match (delta["type"].as_str(), self.blocks.get_mut(index)) {
                    (Some("text_delta"), _) => {
                        let text = delta["text"].as_str().unwrap_or_default();
                        self.turn.text.push_str(text);
                        out.push(StreamEvent::Text(text.to_owned()));
                    }
                    (Some("input_json_delta"), Some(Block::Tool { json, .. })) => {
                        json.push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    (Some("input_json_delta"), _) => {
                        return Err(Err(format!(
                            "tool input for block {index}, which is not a tool call"
                        )));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = data["index"].as_u64().unwrap_or_default() as usize;
                if let Some(Block::Tool { id, name, json }) = self.blocks.get(index) {
                    let arguments = if json.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(json).map_err(|e| {
                            Err(format!("the arguments of tool call {name} are not JSON ({e})"))
                        })?
                    };
                    self.turn.tool_calls.push(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments,
                    });
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.turn.stop = match reason {
                        "end_turn" | "stop_sequence" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" => StopReason::MaxTokens,
                        other => StopReason::Other(other.to_owned()),
                    };
                }
                self.usage(&data["usage"]);
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

    fn usage(&mut self, usage: &Value) {
        let read = |key: &str| usage[key].as_u64();
        let u = &mut self.turn.usage;
        if let Some(n) = read("input_tokens") {
            u.input_tokens = n;
        }
        if let Some(n) = read("output_tokens") {
            u.output_tokens = n;
        }
        if let Some(n) = read("cache_read_input_tokens") {
            u.cache_read_tokens = n;
        }
        if let Some(n) = read("cache_creation_input_tokens") {
            u.cache_write_tokens = n;
        }
    }
}
