//! OpenAI Chat Completions (and compatible servers): the request body, and the streamed chunks
//! decoded into a turn.

use serde_json::{Value, json};

use std::collections::BTreeMap;

use crate::decode::{Stop, TurnBytes, name, tokens};
use crate::sse::SseEvent;
use crate::{
    ChatMessage, ChatRequest, MAX_NAME_BYTES, MAX_TOOL_CALLS, StopReason, StreamEvent, ToolCall,
    Turn,
};

pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/chat/completions")
}

/// The request body. The reply is capped with `max_completion_tokens`, the field OpenAI's newer
/// models require (they refuse the older `max_tokens`) and llama.cpp and vLLM read; a server that
/// does not know it ignores it. Without a cap a local server writes until its context is full: a
/// small model caught in a loop did so against llama-server for minutes.
pub(crate) fn body(request: &ChatRequest) -> Value {
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User(text) => json!({"role": "user", "content": text}),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut m = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !tool_calls.is_empty() {
                    m["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
                        .collect();
                }
                m
            }
            ChatMessage::ToolResult { call_id, content, is_error } => {
                let content = if *is_error { format!("Error: {content}") } else { content.clone() };
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_completion_tokens": request.max_tokens,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}}))
            .collect();
    }
    body
}

pub(crate) fn is_context_too_long(status: u16, body: &str) -> bool {
    status == 400
        && (body.contains("context_length_exceeded") || body.contains("maximum context length"))
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Decodes one streamed completion.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    pub turn: Turn,
    /// The calls being streamed, by the index the server gives them. The index is the server's
    /// choice of number, so the calls are kept in a map (in index order) of at most
    /// [`MAX_TOOL_CALLS`], never in a vector as long as the index.
    calls: BTreeMap<u64, PartialCall>,
    bytes: TurnBytes,
    /// `[DONE]` arrived, or a finish reason did (some compatible servers end without `[DONE]`).
    pub finished: bool,
    done: bool,
}

impl Decoder {
    /// Takes one event; returns what to pass on, or why the stream cannot be read. An error
    /// object from the server comes back as `Err(Ok(message))`.
    pub fn event(&mut self, event: SseEvent) -> Result<Vec<StreamEvent>, Stop> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            self.finished = true;
            return self.close().map(|()| Vec::new());
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| Err(format!("a chunk is not JSON ({e})")))?;
        if let Some(error) = chunk.get("error") {
            return Err(Ok(error["message"].as_str().unwrap_or("an error").to_owned()));
        }
        if let Some(model) = chunk["model"].as_str() {
            self.turn.model = name(model, "the model's name")?;
        }
        let mut out = Vec::new();
        if let Some(choice) = chunk["choices"].as_array().and_then(|c| c.first()) {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                self.bytes.add(text.len())?;
                self.turn.text.push_str(text);
                out.push(StreamEvent::Text(text.to_owned()));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                out.extend(self.call_fragment(call)?);
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.turn.stop = match reason {
                    "stop" => StopReason::EndTurn,
                    "tool_calls" | "function_call" => StopReason::ToolUse,
                    "length" => StopReason::MaxTokens,
                    other => StopReason::Other(name(other, "the finish reason")?),
                };
                self.finished = true;
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let prompt = tokens(usage, "prompt_tokens")?.unwrap_or_default();
            let cached =
                tokens(&usage["prompt_tokens_details"], "cached_tokens")?.unwrap_or_default();
            // Like Anthropic's, `input_tokens` counts the input that was not read from the cache.
            self.turn.usage.input_tokens = prompt.saturating_sub(cached);
            self.turn.usage.cache_read_tokens = cached;
            self.turn.usage.output_tokens = tokens(usage, "completion_tokens")?.unwrap_or_default();
        }
        Ok(out)
    }

    /// Adds one fragment of a tool call to the call of its index. A fragment without an index
    /// starts a call after the last one.
    fn call_fragment(&mut self, call: &Value) -> Result<Option<StreamEvent>, Stop> {
        let next = self.calls.last_key_value().map_or(0, |(last, _)| last.saturating_add(1));
        let index = call["index"].as_u64().unwrap_or(next);
        if !self.calls.contains_key(&index) && self.calls.len() >= MAX_TOOL_CALLS {
            return Err(Err(format!("more than {MAX_TOOL_CALLS} tool calls in one turn")));
        }
        let partial = self.calls.entry(index).or_default();
        // Some compatible servers repeat an empty id and name in every fragment after the first.
        if let Some(id) = call["id"].as_str().filter(|id| !id.is_empty()) {
            partial.id = name(id, &format!("the id of tool call {index}"))?;
        }
        let mut started = None;
        if let Some(fragment) = call["function"]["name"].as_str().filter(|n| !n.is_empty()) {
            if partial.name.len() + fragment.len() > MAX_NAME_BYTES {
                return Err(Err(format!(
                    "the name of tool call {index} is longer than {MAX_NAME_BYTES} bytes"
                )));
            }
            self.bytes.add(fragment.len())?;
            partial.name.push_str(fragment);
            started = Some(StreamEvent::ToolCallStarted {
                id: partial.id.clone(),
                name: partial.name.clone(),
            });
        }
        if let Some(arguments) = call["function"]["arguments"].as_str() {
            self.bytes.add(arguments.len())?;
            partial.arguments.push_str(arguments);
        }
        Ok(started)
    }

    /// Turns the accumulated tool-call fragments into calls, in the order of their index, once.
    pub fn close(&mut self) -> Result<(), Stop> {
        for call in std::mem::take(&mut self.calls).into_values() {
            let tool_call = if call.arguments.trim().is_empty() {
                ToolCall { id: call.id, name: call.name, arguments: json!({}) }
            } else {
                match serde_json::from_str(&call.arguments) {
                    Ok(arguments) => ToolCall { id: call.id, name: call.name, arguments },
                    Err(e) => ToolCall::unreadable(
                        call.id,
                        call.name,
                        &call.arguments,
                        &format!("not JSON ({e})"),
                    ),
                }
            };
            self.turn.tool_calls.push(tool_call);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_caps_the_reply_with_max_completion_tokens() {
        let request = ChatRequest {
            model: "smollm2".to_owned(),
            system: "s".to_owned(),
            messages: vec![ChatMessage::User("hi".to_owned())],
            tools: Vec::new(),
            max_tokens: 192,
        };
        let body = body(&request);
        assert_eq!(body["max_completion_tokens"], 192);
        assert!(body.get("max_tokens").is_none(), "{body}");
    }
}
