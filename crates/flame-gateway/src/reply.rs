//! The upstream's reply, read as it passes to the client: the reply's items (to read into the
//! thread, `flame_import::wire`), the model and the usage the upstream reported.
//!
//! The tap never holds the reply back: the gateway passes each chunk on first and shows it to
//! the tap after. A streamed reply goes through `flame_models`' SSE parser, which bounds its
//! lines and events; a whole reply is kept up to [`MAX_REPLY_BYTES`] to be read at its end. What
//! the tap gathers of the items is bounded by [`MAX_REPLY_BYTES`] too: past it the reply still
//! reaches the client whole, but is not read into the thread (its usage still is).

use flame_import::wire::WireFormat;
use flame_model::Usage;
use flame_models::{SseEvent, SseParser};
use serde_json::{Value, json};

/// The most of a reply the tap gathers, in bytes: its text and calls, or a whole reply's body.
pub const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// A content block of an Anthropic reply being streamed.
#[derive(Debug, Default)]
struct Block {
    start: Value,
    text: String,
    thinking: String,
    signature: String,
    input: String,
}

impl Block {
    fn finish(self) -> Value {
        let mut block = self.start;
        match block["type"].as_str() {
            Some("text") => block["text"] = Value::String(self.text),
            Some("thinking") => {
                block["thinking"] = Value::String(self.thinking);
                block["signature"] = Value::String(self.signature);
            }
            Some("tool_use" | "server_tool_use") if !self.input.is_empty() => {
                block["input"] = serde_json::from_str(&self.input).unwrap_or_else(|_| json!({}));
            }
            _ => {}
        }
        block
    }
}

/// A Chat Completions tool call being streamed.
#[derive(Debug, Default)]
struct ChatCall {
    id: String,
    name: String,
    arguments: String,
}

/// What the tap has read of the reply.
#[derive(Debug, Default)]
pub(crate) struct Reply {
    /// The reply's items, in the wire's own shape: one assistant message (Anthropic, Chat) or
    /// the output items (Responses).
    pub items: Vec<Value>,
    pub model: Option<String>,
    pub usage: Option<Usage>,
    /// The reply arrived whole: its end was seen and nothing was left unread.
    pub complete: bool,
    /// Why it is not whole, when the tap knows (an error event, a cut stream).
    pub problem: Option<String>,
}

/// Reads one reply as it passes (see the module's comment).
#[derive(Debug)]
pub(crate) struct ReplyTap {
    wire: WireFormat,
    streamed: bool,
    parser: SseParser,
    body: Vec<u8>,
    gathered: usize,
    blocks: Vec<(u64, Block)>,
    role_message: Value,
    chat_text: String,
    chat_calls: Vec<ChatCall>,
    reply: Reply,
}

impl ReplyTap {
    pub fn new(wire: WireFormat, streamed: bool) -> ReplyTap {
        ReplyTap {
            wire,
            streamed,
            parser: SseParser::default(),
            body: Vec::new(),
            gathered: 0,
            blocks: Vec::new(),
            role_message: Value::Null,
            chat_text: String::new(),
            chat_calls: Vec::new(),
            reply: Reply::default(),
        }
    }

    /// Takes the next chunk of the reply's body.
    pub fn push(&mut self, chunk: &[u8]) {
        if !self.streamed {
            if self.body.len() + chunk.len() <= MAX_REPLY_BYTES {
                self.body.extend_from_slice(chunk);
            } else {
                self.too_long();
            }
            return;
        }
        for event in self.parser.push(chunk) {
            self.event(&event);
        }
        if let Some(refusal) = self.parser.refusal() {
            self.reply.problem.get_or_insert_with(|| refusal.to_owned());
        }
    }

    fn too_long(&mut self) {
        self.reply.problem.get_or_insert_with(|| {
            format!("the reply is longer than {} MiB", MAX_REPLY_BYTES / (1024 * 1024))
        });
    }

    /// Counts `bytes` more gathered; false past the limit.
    fn gather(&mut self, bytes: usize) -> bool {
        self.gathered += bytes;
        if self.gathered > MAX_REPLY_BYTES {
            self.too_long();
            return false;
        }
        true
    }

    fn event(&mut self, event: &SseEvent) {
        if event.data.trim() == "[DONE]" {
            self.reply.complete = true;
            return;
        }
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else { return };
        match self.wire {
            WireFormat::Anthropic => self.anthropic(&data),
            WireFormat::Responses => self.responses(&data),
            WireFormat::Chat => self.chat(&data),
        }
    }

    fn anthropic(&mut self, data: &Value) {
        match data["type"].as_str() {
            Some("message_start") => {
                let message = &data["message"];
                self.reply.model = message["model"].as_str().map(str::to_owned);
                self.reply.usage = Some(anthropic_usage(&message["usage"], None));
                self.role_message = json!({"role": "assistant", "id": message["id"]});
            }
            Some("content_block_start") => {
                let index = data["index"].as_u64().unwrap_or(0);
                let start = data["content_block"].clone();
                if self.gather(start.to_string().len()) {
                    self.blocks.push((index, Block { start, ..Block::default() }));
                }
            }
            Some("content_block_delta") => {
                let index = data["index"].as_u64().unwrap_or(0);
                let delta = &data["delta"];
                let piece = |key: &str| delta[key].as_str().unwrap_or_default().to_owned();
                let (kind, text) = match delta["type"].as_str() {
                    Some("text_delta") => (0, piece("text")),
                    Some("thinking_delta") => (1, piece("thinking")),
                    Some("signature_delta") => (2, piece("signature")),
                    Some("input_json_delta") => (3, piece("partial_json")),
                    _ => return,
                };
                if !self.gather(text.len()) {
                    return;
                }
                if let Some((_, block)) = self.blocks.iter_mut().rev().find(|(i, _)| *i == index) {
                    match kind {
                        0 => block.text.push_str(&text),
                        1 => block.thinking.push_str(&text),
                        2 => block.signature.push_str(&text),
                        _ => block.input.push_str(&text),
                    }
                }
            }
            Some("message_delta") => {
                let before = self.reply.usage;
                self.reply.usage = Some(anthropic_usage(&data["usage"], before.as_ref()));
            }
            Some("message_stop") => {
                self.reply.complete = self.reply.problem.is_none();
                let blocks: Vec<Value> =
                    std::mem::take(&mut self.blocks).into_iter().map(|(_, b)| b.finish()).collect();
                let mut message = std::mem::take(&mut self.role_message);
                if message.is_null() {
                    message = json!({"role": "assistant"});
                }
                if let Some(fields) = message.as_object_mut() {
                    fields.remove("id");
                }
                message["content"] = Value::Array(blocks);
                self.reply.items = vec![message];
            }
            Some("error") => {
                let text = data["error"]["message"].as_str().unwrap_or("an error event");
                self.reply.problem = Some(format!("the upstream said: {text}"));
            }
            _ => {}
        }
    }

    fn responses(&mut self, data: &Value) {
        match data["type"].as_str() {
            Some("response.output_item.done") => {
                let item = data["item"].clone();
                if self.gather(item.to_string().len()) {
                    self.reply.items.push(item);
                }
            }
            Some("response.completed" | "response.incomplete") => {
                let response = &data["response"];
                self.reply.model = response["model"].as_str().map(str::to_owned);
                self.reply.usage = Some(openai_usage(&response["usage"]));
                self.reply.complete = data["type"] == "response.completed";
            }
            Some("response.failed" | "error") => {
                let error = if data["response"]["error"].is_object() {
                    &data["response"]["error"]
                } else {
                    &data["error"]
                };
                let text = error["message"].as_str().or(data["message"].as_str());
                self.reply.problem =
                    Some(format!("the upstream said: {}", text.unwrap_or("the response failed")));
            }
            _ => {}
        }
    }

    fn chat(&mut self, data: &Value) {
        if let Some(model) = data["model"].as_str() {
            self.reply.model = Some(model.to_owned());
        }
        if data["usage"].is_object() {
            self.reply.usage = Some(openai_usage(&data["usage"]));
        }
        if data["error"].is_object() {
            let text = data["error"]["message"].as_str().unwrap_or("an error");
            self.reply.problem = Some(format!("the upstream said: {text}"));
        }
        for choice in data["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str()
                && self.gather(text.len())
            {
                self.chat_text.push_str(text);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap_or(0) as usize;
                if index >= flame_models::MAX_TOOL_CALLS {
                    continue;
                }
                while self.chat_calls.len() <= index {
                    self.chat_calls.push(ChatCall::default());
                }
                let piece = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                let (id, name, arguments) = (
                    piece(&call["id"]),
                    piece(&call["function"]["name"]),
                    piece(&call["function"]["arguments"]),
                );
                if !self.gather(id.len() + name.len() + arguments.len()) {
                    continue;
                }
                let held = &mut self.chat_calls[index];
                held.id.push_str(&id);
                held.name.push_str(&name);
                held.arguments.push_str(&arguments);
            }
            if choice["finish_reason"].is_string() {
                self.reply.complete = true;
            }
        }
    }

    /// The reply as far as it was read; `ended` says the body ended (rather than broke off).
    pub fn finish(mut self, ended: bool) -> Reply {
        if !self.streamed {
            self.whole();
        } else if self.wire == WireFormat::Chat {
            let calls: Vec<Value> = self
                .chat_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            let mut message = json!({"role": "assistant", "content": self.chat_text});
            if !calls.is_empty() {
                message["tool_calls"] = Value::Array(calls);
            }
            self.reply.items = vec![message];
        }
        if !ended {
            self.reply.complete = false;
            self.reply.problem.get_or_insert_with(|| "the reply broke off".to_owned());
        }
        if self.reply.problem.is_some() {
            self.reply.complete = false;
        }
        self.reply
    }

    /// Reads a reply that came whole (not streamed).
    fn whole(&mut self) {
        let Ok(body) = serde_json::from_slice::<Value>(&self.body) else {
            self.reply.problem.get_or_insert_with(|| "the reply is not JSON".to_owned());
            return;
        };
        self.reply.model = body["model"].as_str().map(str::to_owned);
        match self.wire {
            WireFormat::Anthropic if body["type"] == "message" => {
                self.reply.usage = Some(anthropic_usage(&body["usage"], None));
                self.reply.items = vec![json!({"role": "assistant", "content": body["content"]})];
                self.reply.complete = true;
            }
            WireFormat::Responses if body["output"].is_array() => {
                self.reply.usage = Some(openai_usage(&body["usage"]));
                self.reply.items = body["output"].as_array().cloned().unwrap_or_default();
                self.reply.complete = true;
            }
            WireFormat::Chat if body["choices"].is_array() => {
                self.reply.usage = Some(openai_usage(&body["usage"]));
                let mut message = body["choices"][0]["message"].clone();
                if let Some(fields) = message.as_object_mut() {
                    fields.retain(|k, _| matches!(k.as_str(), "role" | "content" | "tool_calls"));
                }
                self.reply.items = vec![message];
                self.reply.complete = true;
            }
            _ => {
                let text = body["error"]["message"].as_str().unwrap_or("not a reply");
                self.reply.problem = Some(format!("the upstream said: {text}"));
            }
        }
    }
}

/// A count the upstream reported, if it is a sane one (`flame_models::MAX_USAGE_TOKENS`).
fn count(report: &Value, key: &str) -> Option<u64> {
    report[key].as_u64().filter(|n| *n <= flame_models::MAX_USAGE_TOKENS)
}

/// An Anthropic usage report, over the counts already known (`message_delta` repeats or adds
/// to `message_start`'s).
fn anthropic_usage(report: &Value, before: Option<&Usage>) -> Usage {
    let before = before.copied().unwrap_or_default();
    let written = count(report, "cache_creation_input_tokens");
    let long = report["cache_creation"]["ephemeral_1h_input_tokens"].as_u64();
    let written_total =
        written.unwrap_or(before.cache_write_tokens + before.cache_write_long_tokens);
    let long = long.map_or(before.cache_write_long_tokens, |l| l.min(written_total));
    Usage {
        input_tokens: count(report, "input_tokens").unwrap_or(before.input_tokens),
        output_tokens: count(report, "output_tokens").unwrap_or(before.output_tokens),
        cache_read_tokens: count(report, "cache_read_input_tokens")
            .unwrap_or(before.cache_read_tokens),
        cache_write_tokens: written_total - long,
        cache_write_long_tokens: long,
    }
}

/// An OpenAI usage report (Responses' `input_tokens`, Chat's `prompt_tokens`), whose input
/// counts the cached input too.
fn openai_usage(report: &Value) -> Usage {
    let input = count(report, "input_tokens").or(count(report, "prompt_tokens")).unwrap_or(0);
    let details = if report["input_tokens_details"].is_object() {
        &report["input_tokens_details"]
    } else {
        &report["prompt_tokens_details"]
    };
    let cached = count(details, "cached_tokens").unwrap_or(0).min(input);
    Usage {
        input_tokens: input - cached,
        cache_read_tokens: cached,
        output_tokens: count(report, "output_tokens")
            .or(count(report, "completion_tokens"))
            .unwrap_or(0),
        ..Usage::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse(events: &[Value]) -> Vec<u8> {
        events.iter().map(|e| format!("event: x\ndata: {e}\n\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn an_anthropic_stream_gives_its_message_with_thinking_and_calls_and_its_usage() {
        let bytes = sse(&[
            json!({"type": "message_start", "message": {"id": "m", "model": "claude-x",
                "usage": {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\":"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"a.rs\"}"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ]);
        let mut tap = ReplyTap::new(WireFormat::Anthropic, true);
        for chunk in bytes.chunks(7) {
            tap.push(chunk);
        }
        let reply = tap.finish(true);
        assert!(reply.complete);
        assert_eq!(reply.model.as_deref(), Some("claude-x"));
        assert_eq!(
            reply.usage,
            Some(Usage {
                input_tokens: 3,
                output_tokens: 9,
                cache_read_tokens: 100,
                cache_write_tokens: 20,
                cache_write_long_tokens: 0
            })
        );
        assert_eq!(
            reply.items,
            [json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.rs"}}
            ]})]
        );
    }

    #[test]
    fn a_chat_stream_gives_its_message_and_usage_and_a_cut_one_is_not_whole() {
        let chunk = |v: Value| format!("data: {v}\n\n");
        let text = [
            chunk(json!({"model": "gpt-x", "choices": [{"delta": {"role": "assistant", "content": "Li"}}]})),
            chunk(json!({"choices": [{"delta": {"content": "sting.", "tool_calls": [{"index": 0, "id": "c1", "function": {"name": "bash", "arguments": "{\"cmd\""}}]}}]})),
            chunk(json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": ":\"ls\"}"}}]}, "finish_reason": "tool_calls"}]})),
            chunk(json!({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 40}}})),
            "data: [DONE]\n\n".to_owned(),
        ]
        .concat();
        let mut tap = ReplyTap::new(WireFormat::Chat, true);
        tap.push(text.as_bytes());
        let reply = tap.finish(true);
        assert!(reply.complete);
        assert_eq!(reply.usage.map(|u| (u.input_tokens, u.cache_read_tokens)), Some((10, 40)));
        assert_eq!(reply.items[0]["content"], "Listing.");
        assert_eq!(reply.items[0]["tool_calls"][0]["function"]["arguments"], "{\"cmd\":\"ls\"}");

        let mut cut = ReplyTap::new(WireFormat::Chat, true);
        cut.push(&text.as_bytes()[..40]);
        let reply = cut.finish(false);
        assert!(!reply.complete);
        assert_eq!(reply.problem.as_deref(), Some("the reply broke off"));
    }

    #[test]
    fn a_whole_reply_past_the_limit_is_passed_on_but_not_read() {
        let mut tap = ReplyTap::new(WireFormat::Responses, false);
        let chunk = vec![b' '; 1024 * 1024];
        for _ in 0..=(MAX_REPLY_BYTES / chunk.len()) {
            tap.push(&chunk);
        }
        assert!(tap.body.len() <= MAX_REPLY_BYTES);
        let reply = tap.finish(true);
        assert!(!reply.complete);
        assert_eq!(reply.problem.as_deref(), Some("the reply is longer than 16 MiB"));
    }
}
