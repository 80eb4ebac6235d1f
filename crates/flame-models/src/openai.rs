//! OpenAI Chat Completions (and compatible servers): the request body, and the streamed chunks
//! decoded into a turn.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

use std::collections::BTreeMap;

use crate::limits::{Stop, TurnBytes, name, tokens};
use crate::sse::SseEvent;
use crate::{
    ChatMessage, ChatRequest, MAX_NAME_BYTES, MAX_TOOL_CALLS, StopReason, StreamEvent, ToolCall,
    Turn,
};

pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/chat/completions")
}

/// The request body, written in the order a prompt is processed: the tools, then the messages
/// (the system prompt first). The reply is capped with `max_completion_tokens`, the field
/// OpenAI's newer models require (they refuse the older `max_tokens`) and llama.cpp and vLLM
/// read; a server that does not know it ignores it. Without a cap a local server writes until
/// its context is full: a small model caught in a loop did so against llama-server for minutes.
///
/// OpenAI caches a prompt's prefix on its own; `prompt_cache_key` (the request's cache key)
/// sends requests sharing a prefix to the same cache, and goes to OpenAI's own API only, which
/// knows it. Other servers get `cache_prompt: true`, llama.cpp's switch for reusing the prefix
/// it still holds; servers that do not know it ignore it.
pub(crate) fn body(request: &ChatRequest, base_url: &str) -> String {
    let official = is_openai(base_url);
    let mut messages = vec![Message::text("system", &request.system)];
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User(text) => Message::text("user", text),
            ChatMessage::Assistant { text, tool_calls } => Message {
                role: "assistant",
                content: (!text.is_empty()).then_some(Cow::Borrowed(text.as_str())),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| Call {
                        id: &c.id,
                        kind: "function",
                        function: Function { name: &c.name, arguments: c.arguments.to_string() },
                    })
                    .collect(),
                tool_call_id: None,
            },
            ChatMessage::ToolResult { call_id, content, is_error } => Message {
                role: "tool",
                content: Some(if *is_error {
                    Cow::Owned(format!("Error: {content}"))
                } else {
                    Cow::Borrowed(content.as_str())
                }),
                tool_calls: Vec::new(),
                tool_call_id: Some(call_id),
            },
        });
    }
    let body = Body {
        model: &request.model,
        stream: true,
        stream_options: StreamOptions { include_usage: true },
        max_completion_tokens: request.max_tokens,
        prompt_cache_key: request.cache.key.as_deref().filter(|_| official),
        cache_prompt: (!official).then_some(true),
        tools: request
            .tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                function: ToolFunction {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.schema,
                },
            })
            .collect(),
        messages,
    };
    serde_json::to_string(&body).expect("a request body serialises")
}

/// Whether `base_url` is OpenAI's own API rather than a server compatible with it.
fn is_openai(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, rest)| rest);
    rest.split(['/', ':']).next() == Some("api.openai.com")
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    max_completion_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_prompt: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    messages: Vec<Message<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunction<'a>,
}

#[derive(Serialize)]
struct ToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    /// `null` for an assistant message that only calls tools.
    content: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Call<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

impl<'a> Message<'a> {
    fn text(role: &'static str, text: &'a str) -> Message<'a> {
        Message {
            role,
            content: Some(Cow::Borrowed(text)),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: String,
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
            let mut cached =
                tokens(&usage["prompt_tokens_details"], "cached_tokens")?.unwrap_or_default();
            if cached > prompt {
                // A cache miss or an odd count is never an error: the count is clamped, and
                // the person is told.
                self.turn.notices.push(format!(
                    "the server reported {cached} cached tokens of a {prompt}-token prompt; counted as {prompt}"
                ));
                cached = prompt;
            }
            // Like Anthropic's, `input_tokens` counts the input that was not read from the cache.
            self.turn.usage.input_tokens = prompt - cached;
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
            cache: crate::PromptCache::default(),
        };
        let body: Value =
            serde_json::from_str(&body(&request, "http://127.0.0.1:8080/v1")).unwrap();
        assert_eq!(body["max_completion_tokens"], 192);
        assert!(body.get("max_tokens").is_none(), "{body}");
    }
}
