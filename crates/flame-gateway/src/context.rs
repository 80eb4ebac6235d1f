//! Context mode: the request the gateway sends instead of the client's linear history.
//!
//! The request keeps every field the client sent, its tools and its system prompt unchanged
//! and first (Anthropic's `tools` and `system`; a Responses request's `tools`, `instructions`
//! and opening `developer` items; a Chat request's `tools` and opening `system` messages), then
//! Flame's preamble, then the call's frame's context exactly as `flame replay` prices it
//! (`flame_import::replayer`): the frame's opening (its `<stack-context>`), and the frame's own
//! items as the client sent them, in their order, with what Flame changed:
//!
//! - a tool result masked by Flame is sent as its stub, and a call whose long arguments were cut
//!   is sent with the cut arguments (never in the conversation's last assistant turn, whose
//!   thinking blocks and calls go as they came, signatures and all);
//! - a result whose call is not among what is sent (it was made in an earlier frame) goes as
//!   text, and a call whose result is not sent is left out, so every result follows its call;
//! - a note Flame appends (a child finished, a sibling changed) goes as a user message after
//!   the message it follows;
//! - Anthropic's cache marks are Flame's: none of the client's, one at the end of the preamble
//!   and one at the end of the opening (an hour), one where the frame's previous request ended
//!   and one at the end (five minutes) — four at most.
//!
//! An item Flame does not change is sent as the client's own bytes; a changed one is written
//! from its parsed JSON (keys in order), so the same linear request always gives the same bytes.
//! What a changed item was written as is kept for the session's next call (`rewritten.rs`), by
//! everything its rewrite reads: on a long conversation most changed items are masked results
//! that stay the same from call to call, and reading and writing them again was the larger part
//! of what the gateway added to a call.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::Hasher;
use std::sync::Arc;

use bytes::Bytes;
use flame_api::Rewrite;
use flame_import::replayer::{CallSite, FrameIds, ReplayedCall, frame_message_of};
use flame_import::wire::{WireFormat, WireThread};
use flame_model::{CacheLifetime, FrameId, Message, OpeningReason, Timestamp};
use serde_json::{Value, json};

use crate::request::Request;
use crate::rewritten::Rewritten;
use crate::sessions::{Placed, Sessions};

/// A request made of Flame's context.
#[derive(Debug)]
pub(crate) struct Built {
    pub body: Bytes,
    pub rewrite: Option<Rewrite>,
}

/// What to send in place of one item of the conversation.
#[derive(Debug)]
enum Emit {
    /// The client's own bytes, by item position.
    Raw(usize),
    /// An item Flame changed, as written.
    Rewritten(Arc<str>),
    /// A note Flame adds.
    Note(Value),
}

/// The request to send for `placed` in context mode; `None` sends the client's own (a side
/// call, a session whose frames are not all stored yet, a frame Flame cannot assemble).
pub(crate) fn request(
    sessions: &mut Sessions,
    placed: &Placed,
    request: &Request<'_>,
    at: Timestamp,
    log_root: &str,
) -> Option<Built> {
    let thread_index = placed.thread?;
    let fixed = sessions.get_mut(placed.session).client_cache.fixed_tokens(request);
    let session = sessions.get_mut(placed.session);
    let tree = session.stored.as_ref()?.tree.clone()?;
    let wire = &placed.draft;
    let thread = &session.wire.threads[thread_index].thread;
    let last = thread.messages().len().checked_sub(1)?;
    let (frame, ordinal) = wire.frame_of(thread_index, last)?;
    let held = wire.holders[frame].as_ref()?.messages.clone();
    let ids: Vec<FrameId> = wire
        .draft
        .frames
        .iter()
        .map(|f| session.frames.get(&f.key).cloned())
        .collect::<Option<_>>()?;
    let site = CallSite { frame, before: ordinal + 1, at, fixed };
    let frames = FrameIds { tree: &tree, frames: &ids, log_root: Some(log_root) };
    let call = match session.replayer.call(&wire.draft, Some(frames), site) {
        Ok(call) => call,
        Err(err) => {
            tracing::warn!("the gateway could not assemble the context of {}: {err}", placed.id);
            return None;
        }
    };
    let thread = &session.wire.threads[thread_index].thread;
    let conversation = session.replayer.conversation();
    let body = render(request, thread, &held, &call, conversation, &mut session.rewritten)?;
    let opening = &call.doc.report.opening;
    let rewrite = if opening.made_now {
        Some(match opening.reason {
            OpeningReason::Cold => Rewrite::Cold,
            _ => Rewrite::Opening,
        })
    } else if opening.newly_masked > 0 {
        Some(Rewrite::Masking)
    } else if placed.growth.restarted {
        Some(Rewrite::Client)
    } else {
        None
    };
    Some(Built { body, rewrite })
}

/// Where each of the thread's messages came from: its item and block.
fn origins(thread: &WireThread) -> HashMap<usize, (usize, Option<usize>)> {
    let mut origins = HashMap::new();
    for item in 0..thread.items() {
        for made in thread.made(item) {
            origins.insert(made.message, (item, made.block));
        }
    }
    origins
}

/// The request's body in its wire format (see the module's comment).
fn render(
    request: &Request<'_>,
    thread: &WireThread,
    held: &[usize],
    call: &ReplayedCall,
    lifetime: CacheLifetime,
    rewritten: &mut Rewritten,
) -> Option<Bytes> {
    let wire = request.wire;
    let messages = thread.messages();
    let origins = origins(thread);
    // The doc's messages by the thread message they send, and the notes by the message after
    // which they go.
    let mut sent: HashMap<usize, &Message> = HashMap::new();
    let mut notes: Vec<(Option<usize>, &str)> = Vec::new();
    let mut last_sent: Option<usize> = None;
    for m in &call.doc.messages {
        match frame_message_of(m.id) {
            Some(n) => {
                let index = *held.get(n)?;
                sent.insert(index, m);
                last_sent = Some(index);
            }
            None => notes.push((last_sent, &m.content)),
        }
    }
    let called: HashSet<&str> = sent
        .keys()
        .flat_map(|&i| messages[i].message.tool_calls.iter().flatten().map(|c| c.id.as_str()))
        .collect();
    let answered: HashSet<&str> = sent
        .keys()
        .filter_map(|&i| messages[i].message.tool_result.as_ref().map(|r| r.tool_call_id.as_str()))
        .collect();
    let conversation = request.conversation();
    let first_item = sent.keys().filter_map(|m| origins.get(m)).map(|(item, _)| *item).min()?;
    let mut emitted: Vec<Emit> = Vec::new();
    let mut previous_end: Option<usize> = None;
    let note = |text: &str| -> Value {
        let text = format!("[note] {text}");
        match wire {
            WireFormat::Anthropic => {
                json!({"role": "user", "content": [{"type": "text", "text": text}]})
            }
            WireFormat::Responses => json!({"type": "message", "role": "user",
                                            "content": [{"type": "input_text", "text": text}]}),
            WireFormat::Chat => json!({"role": "user", "content": text}),
        }
    };
    for (_, text) in notes.iter().filter(|(after, _)| after.is_none()) {
        emitted.push(Emit::Note(note(text)));
    }
    let mut kept = HashMap::new();
    for p in first_item..conversation.len() {
        let made = thread.made(p);
        let here: Vec<usize> =
            made.iter().map(|m| m.message).filter(|m| sent.contains_key(m)).collect();
        if !made.is_empty() && here.is_empty() {
            continue;
        }
        // An assistant message with thinking goes as it came, calls and all: its thinking is
        // signed, and the same message must be sent the same way at every later call. A
        // conversation's last item, when it is the assistant's (a reply begun for the model),
        // keeps its calls though their results are still to come.
        let frozen = made.iter().any(|m| {
            let message = &messages[m.message].message;
            message.role == flame_model::Role::Assistant
                && (message.content.contains("<thinking>")
                    || message.content.contains("redacted_thinking"))
        });
        let trailing = p + 1 == conversation.len();
        let edit =
            Edit { messages, sent: &sent, called: &called, answered: &answered, frozen, trailing };
        let raw = conversation[p].raw.get();
        // An Anthropic text given as a string is sent as a text block, the form a cache mark
        // needs, so that the message's bytes do not change when a mark comes or goes.
        let text_message = made.iter().any(|m| {
            m.block.is_none() && messages[m.message].message.role == flame_model::Role::User
        });
        let changed = made.iter().any(|m| edit.changes(m.message))
            || (wire == WireFormat::Anthropic
                && (conversation[p].marked || (text_message && !raw.contains("\"content\":["))));
        if changed {
            let rewrite = || -> Option<Option<Arc<str>>> {
                let mut value: Value = serde_json::from_str(raw).ok()?;
                Some(edit.apply(wire, &mut value, made).map(|v| Arc::from(v.to_string())))
            };
            let key = edit.key(wire, conversation[p].hash, made);
            let written = match rewritten.items.remove(&key) {
                Some(kept) => {
                    // A kept rewrite is the one made now: every test build checks it.
                    debug_assert_eq!(Some(&kept), rewrite().as_ref(), "a kept rewrite differs");
                    kept
                }
                None => rewrite()?,
            };
            if let Some(text) = &written {
                emitted.push(Emit::Rewritten(text.clone()));
            }
            kept.insert(key, written);
        } else {
            emitted.push(Emit::Raw(p));
        }
        if call
            .doc
            .previous_end
            .and_then(frame_message_of)
            .and_then(|n| held.get(n))
            .is_some_and(|index| here.contains(index))
        {
            previous_end = Some(emitted.len() - 1);
        }
        for (_, text) in notes.iter().filter(|(after, _)| after.is_some_and(|a| here.contains(&a)))
        {
            emitted.push(Emit::Note(note(text)));
        }
    }
    rewritten.items = kept;
    Some(write(request, call, lifetime, &emitted, previous_end))
}

/// What one item's edit knows.
struct Edit<'a> {
    messages: &'a [flame_import::wire::ThreadMessage],
    sent: &'a HashMap<usize, &'a Message>,
    called: &'a HashSet<&'a str>,
    answered: &'a HashSet<&'a str>,
    /// An assistant item with thinking, whose calls go as they came.
    frozen: bool,
    /// The conversation's last item, whose calls wait for their results.
    trailing: bool,
}

impl Edit<'_> {
    /// Whether thread message `m` is sent otherwise than the client sent it.
    fn changes(&self, m: usize) -> bool {
        let original = &self.messages[m].message;
        let Some(sent) = self.sent.get(&m) else { return true };
        if let Some(result) = &original.tool_result {
            return sent.content != original.content
                || !self.called.contains(result.tool_call_id.as_str());
        }
        let cut = !self.frozen && sent.tool_calls != original.tool_calls;
        let unanswered = !self.trailing
            && original.tool_calls.iter().flatten().any(|c| !self.answered.contains(c.id.as_str()));
        cut || unanswered
    }

    /// What the rewrite of an item whose bytes hash to `item`, read into the messages `made`,
    /// depends on, hashed: everything [`Edit::apply`] reads.
    fn key(&self, wire: WireFormat, item: u64, made: &[flame_import::wire::Made]) -> u64 {
        let mut hasher = rustc_hash::FxHasher::default();
        hasher.write_u64(item);
        hasher.write_u8(match wire {
            WireFormat::Anthropic => 0,
            WireFormat::Responses => 1,
            WireFormat::Chat => 2,
        });
        hasher.write_u8(u8::from(self.frozen) | (u8::from(self.trailing) << 1));
        let text = |hasher: &mut rustc_hash::FxHasher, text: &str| {
            hasher.write(text.as_bytes());
            hasher.write_usize(text.len());
        };
        for m in made {
            hasher.write_usize(m.block.map_or(usize::MAX, |b| b));
            let original = &self.messages[m.message].message;
            match self.sent.get(&m.message) {
                None => hasher.write_u8(0),
                Some(sent) => {
                    hasher.write_u8(1);
                    text(&mut hasher, &sent.content);
                    for call in sent.tool_calls.iter().flatten() {
                        text(&mut hasher, &call.id);
                        text(&mut hasher, &call.arguments.to_string());
                    }
                }
            }
            if let Some(result) = &original.tool_result {
                hasher.write_u8(u8::from(self.called.contains(result.tool_call_id.as_str())));
            }
            for call in original.tool_calls.iter().flatten() {
                hasher.write_u8(u8::from(self.answered.contains(call.id.as_str())));
            }
        }
        hasher.finish()
    }

    /// The item as Flame sends it, or `None` when nothing of it is sent.
    fn apply(
        &self,
        wire: WireFormat,
        value: &mut Value,
        made: &[flame_import::wire::Made],
    ) -> Option<Value> {
        let sent_result = |id: &str| -> Option<(&Message, bool)> {
            made.iter()
                .filter_map(|m| self.sent.get(&m.message).map(|s| (m.message, *s)))
                .find(|(i, _)| {
                    self.messages[*i]
                        .message
                        .tool_result
                        .as_ref()
                        .is_some_and(|r| r.tool_call_id == id)
                })
                .map(|(_, s)| (s, self.called.contains(id)))
        };
        let sent_call = |id: &str| -> Option<Value> {
            made.iter()
                .filter_map(|m| self.sent.get(&m.message))
                .flat_map(|s| s.tool_calls.iter().flatten())
                .find(|c| c.id == id)
                .map(|c| c.arguments.clone())
        };
        let keeps_call = |id: &str| self.trailing || self.answered.contains(id);
        let text_sent =
            made.iter().filter(|m| m.block.is_none()).any(|m| self.sent.contains_key(&m.message));
        match wire {
            WireFormat::Anthropic => {
                strip_cache_marks(value);
                if let Some(text) = value["content"].as_str().map(str::to_owned) {
                    value["content"] = json!([{"type": "text", "text": text}]);
                }
                let assistant = value["role"] == "assistant";
                let Some(blocks) = value["content"].as_array_mut() else {
                    return text_sent.then(|| value.clone());
                };
                let mut kept = Vec::with_capacity(blocks.len());
                for block in blocks.drain(..) {
                    match block["type"].as_str() {
                        Some("tool_result") => {
                            let id = block["tool_use_id"].as_str().unwrap_or_default().to_owned();
                            match sent_result(&id) {
                                Some((result, true)) => {
                                    let mut block = block;
                                    if flame_import::tool_result_text(&block["content"])
                                        != result.content
                                    {
                                        block["content"] = Value::String(result.content.clone());
                                    }
                                    kept.push(block);
                                }
                                Some((result, false)) => kept.push(json!({"type": "text",
                                    "text": format!("[tool result] {}", result.content)})),
                                None => {}
                            }
                        }
                        Some("tool_use") if assistant => {
                            let id = block["id"].as_str().unwrap_or_default().to_owned();
                            if !keeps_call(&id) {
                                continue;
                            }
                            let mut block = block;
                            if !self.frozen
                                && let Some(arguments) = sent_call(&id)
                            {
                                block["input"] = arguments;
                            }
                            kept.push(block);
                        }
                        _ if assistant || text_sent => kept.push(block),
                        _ => {}
                    }
                }
                if kept.is_empty() {
                    return None;
                }
                *blocks = kept;
                Some(value.clone())
            }
            WireFormat::Responses => match value["type"].as_str() {
                Some("function_call_output" | "custom_tool_call_output") => {
                    let id = value["call_id"].as_str().unwrap_or_default().to_owned();
                    match sent_result(&id)? {
                        (result, true) => {
                            value["output"] = Value::String(result.content.clone());
                            Some(value.clone())
                        }
                        (result, false) => Some(json!({"type": "message", "role": "user",
                            "content": [{"type": "input_text", "text": format!("[tool result] {}", result.content)}]})),
                    }
                }
                Some(
                    "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call",
                ) => {
                    let id = value["call_id"]
                        .as_str()
                        .or(value["id"].as_str())
                        .unwrap_or_default()
                        .to_owned();
                    if !keeps_call(&id) {
                        return None;
                    }
                    if !self.frozen
                        && value["type"] == "function_call"
                        && let Some(arguments) = sent_call(&id)
                    {
                        value["arguments"] = Value::String(arguments.to_string());
                    }
                    Some(value.clone())
                }
                _ => text_sent.then(|| value.clone()),
            },
            WireFormat::Chat => match value["role"].as_str() {
                Some("tool") => {
                    let id = value["tool_call_id"].as_str().unwrap_or_default().to_owned();
                    match sent_result(&id)? {
                        (result, true) => {
                            value["content"] = Value::String(result.content.clone());
                            Some(value.clone())
                        }
                        (result, false) => Some(json!({"role": "user",
                            "content": format!("[tool result] {}", result.content)})),
                    }
                }
                Some("assistant") => {
                    if let Some(calls) = value["tool_calls"].as_array_mut() {
                        calls.retain(|c| keeps_call(c["id"].as_str().unwrap_or_default()));
                        for c in calls.iter_mut() {
                            let id = c["id"].as_str().unwrap_or_default().to_owned();
                            if !self.frozen
                                && let Some(arguments) = sent_call(&id)
                            {
                                c["function"]["arguments"] = Value::String(arguments.to_string());
                            }
                        }
                        if calls.is_empty() {
                            if let Some(fields) = value.as_object_mut() {
                                fields.remove("tool_calls");
                            }
                            let empty =
                                value["content"].as_str().is_none_or(|c| c.trim().is_empty());
                            if empty {
                                return None;
                            }
                        }
                    }
                    Some(value.clone())
                }
                _ => text_sent.then(|| value.clone()),
            },
        }
    }
}

/// Removes every `cache_control` of a message or a list of blocks: the marks are Flame's.
fn strip_cache_marks(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.remove("cache_control");
            fields.values_mut().for_each(strip_cache_marks);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_marks),
        _ => {}
    }
}

/// An Anthropic cache mark for an hour, or for five minutes.
fn mark(long: bool) -> Value {
    if long { json!({"type": "ephemeral", "ttl": "1h"}) } else { json!({"type": "ephemeral"}) }
}

/// Puts a cache mark on the last block of an Anthropic message.
fn mark_last_block(message: &mut Value, long: bool) {
    if let Some(text) = message["content"].as_str().map(str::to_owned) {
        message["content"] = json!([{"type": "text", "text": text}]);
    }
    if let Some(last) = message["content"].as_array_mut().and_then(|b| b.last_mut()) {
        last["cache_control"] = mark(long);
    }
}

/// Writes the request: the client's fields in their order, the conversation replaced.
fn write(
    request: &Request<'_>,
    call: &ReplayedCall,
    conversation: CacheLifetime,
    emitted: &[Emit],
    previous_end: Option<usize>,
) -> Bytes {
    let (wire, doc) = (request.wire, &call.doc);
    // The lifetimes `flame_context::request` gives the marks: the shared start's, and the
    // conversation's for the opening and every mark after it.
    let system_long =
        flame_context::request::system_lifetime(doc, conversation) == CacheLifetime::Long;
    let opening_long = conversation == CacheLifetime::Long;
    let conversation_long = opening_long;
    let conversation = request.conversation();
    let preamble = flame_context::AGENT_PREAMBLE;
    let mut opening: Vec<Value> = Vec::new();
    match wire {
        WireFormat::Anthropic => {
            let mut blocks = vec![json!({"type": "text", "text": doc.xml})];
            if let Some(omission) = &doc.omission {
                blocks.push(json!({"type": "text", "text": omission}));
            }
            let mut message = json!({"role": "user", "content": blocks});
            mark_last_block(&mut message, opening_long);
            opening.push(message);
        }
        WireFormat::Responses => {
            opening.push(json!({"type": "message", "role": "developer",
                                "content": [{"type": "input_text", "text": preamble}]}));
            let mut text = doc.xml.clone();
            if let Some(omission) = &doc.omission {
                text.push_str("\n\n");
                text.push_str(omission);
            }
            opening.push(json!({"type": "message", "role": "user",
                                "content": [{"type": "input_text", "text": text}]}));
        }
        WireFormat::Chat => {
            opening.push(json!({"role": "system", "content": preamble}));
            let mut text = doc.xml.clone();
            if let Some(omission) = &doc.omission {
                text.push_str("\n\n");
                text.push_str(omission);
            }
            opening.push(json!({"role": "user", "content": text}));
        }
    }
    // The conversation's last message and where the frame's previous request ended carry
    // Anthropic's five-minute marks.
    let last = emitted.len().checked_sub(1);
    // The items are written into the body once, borrowed where they go as the client sent them:
    // on a long conversation the body is most of a megabyte, and every copy of it shows.
    let mut items: Vec<Cow<'_, str>> = request.items[..request.fixed_items]
        .iter()
        .map(|item| Cow::Borrowed(item.raw.get()))
        .collect();
    items.extend(opening.iter().map(|value| Cow::Owned(value.to_string())));
    for (i, emit) in emitted.iter().enumerate() {
        let marked = wire == WireFormat::Anthropic && (Some(i) == last || Some(i) == previous_end);
        let text = match emit {
            Emit::Raw(p) => Cow::Borrowed(conversation[*p].raw.get()),
            Emit::Rewritten(text) => Cow::Borrowed(&**text),
            Emit::Note(value) if !marked => Cow::Owned(value.to_string()),
            Emit::Note(value) => {
                let mut value = value.clone();
                mark_last_block(&mut value, conversation_long);
                Cow::Owned(value.to_string())
            }
        };
        // A marked item is read again to take its mark: a written item reads back as the value
        // it was written from, so it is written the same as before it was kept.
        let text = match (emit, marked) {
            (Emit::Raw(_) | Emit::Rewritten(_), true) => {
                let mut value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                mark_last_block(&mut value, conversation_long);
                Cow::Owned(value.to_string())
            }
            _ => text,
        };
        items.push(text);
    }
    let write_items = |out: &mut String| {
        out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(item);
        }
        out.push(']');
    };
    let items_key = match wire {
        WireFormat::Responses => "input",
        WireFormat::Anthropic | WireFormat::Chat => "messages",
    };
    let items_len: usize = items.iter().map(|item| item.len() + 1).sum();
    let mut out = String::with_capacity(items_len + 4096);
    out.push('{');
    let mut first = true;
    let mut wrote_items = false;
    let mut wrote_system = false;
    for (key, value) in &request.fields.0 {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&serde_json::to_string(key.as_ref()).unwrap_or_default());
        out.push(':');
        match (wire, key.as_ref()) {
            (_, k) if k == items_key => {
                wrote_items = true;
                write_items(&mut out);
            }
            (WireFormat::Anthropic, "system") => {
                wrote_system = true;
                out.push_str(&anthropic_system(value.get(), preamble, system_long));
            }
            (WireFormat::Anthropic, "tools") if value.get().contains("\"cache_control\"") => {
                let mut tools: Value = serde_json::from_str(value.get()).unwrap_or(Value::Null);
                strip_cache_marks(&mut tools);
                out.push_str(&tools.to_string());
            }
            _ => out.push_str(value.get()),
        }
    }
    if wire == WireFormat::Anthropic && !wrote_system {
        out.push_str(&format!(",\"system\":{}", anthropic_system("[]", preamble, system_long)));
    }
    if !wrote_items {
        out.push_str(&format!(",\"{items_key}\":"));
        write_items(&mut out);
    }
    out.push('}');
    Bytes::from(out)
}

/// An Anthropic `system` (a text or blocks) with its cache marks taken off and Flame's preamble
/// after it, marked (for an hour when `long`): the end of the part every frame of the session
/// shares.
fn anthropic_system(raw: &str, preamble: &str, long: bool) -> String {
    let mut blocks = match serde_json::from_str::<Value>(raw) {
        Ok(Value::String(text)) => vec![json!({"type": "text", "text": text})],
        Ok(Value::Array(blocks)) => blocks,
        _ => Vec::new(),
    };
    for block in &mut blocks {
        strip_cache_marks(block);
    }
    blocks.push(json!({"type": "text", "text": preamble, "cache_control": mark(long)}));
    Value::Array(blocks).to_string()
}
