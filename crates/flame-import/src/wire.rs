//! The conversations a gateway forwards (issue 37), read as threads and a draft tree.
//!
//! An agent that talks to its provider through Flame's gateway sends its whole conversation with
//! every request: an Anthropic Messages request its `messages`, an OpenAI Responses request its
//! `input` items, a Chat Completions request its `messages`. A [`WireThread`] is one such
//! conversation followed from request to request. Each request's *items* (a message, an input
//! item) are compared with the ones the thread has seen by a hash of their bytes: the items it
//! already holds are skipped, the new ones are read into messages, once. When a request no longer
//! starts with what the thread has seen (the client compacted its conversation or rewound it),
//! the thread keeps every message it read and reads the new items after them, opening a new
//! segment.
//!
//! The upstream's reply is read into the thread as soon as it is whole ([`WireThread::reply`]),
//! with the usage the upstream reported, so that every call's billed usage is on a message; the
//! client sends the reply back in its next request, where it takes the place the reply was given
//! whatever its bytes (a client may drop a thinking block, or write a call's arguments again).
//!
//! Items become messages as the importers make them from the same agents' files, so that a
//! session reached through the gateway is the tree its files would give: Anthropic messages
//! through Claude Code's reader (`claude_code.rs`, which knows its task list, its subagents and
//! its commits), Responses items and Chat messages through [`ItemReader`]. A [`WireSession`] is a
//! client's session: its main thread and its subagents' threads. Its [`WireSession::draft`] cuts
//! the main thread into segments (`segment.rs`) — or, when the agent pushes and pops frames with
//! Flame's frame tools (`flame mcp`), makes those frames, each holding what came between its push
//! and its pop — and hangs each subagent's thread under the
//! segment whose call started it — the call whose arguments hold the subagent's first request —
//! with the draft keys a followed session's frames carry, so the facade stores each read as it
//! stores a followed session's. Every frame says which thread and which of its messages it holds
//! ([`WireDraft::holders`], [`Holder`]): what the gateway needs to send a frame's context in the
//! client's own items.

use flame_model::{NewMessage, Role, Status, Timestamp, ToolCall, ToolResult, Usage};
use flame_tokens::{Encoding, count_message};
use serde_json::Value;

use crate::claude_code::ThreadReader;
use crate::draft::{Draft, DraftFrame, FrameKind, ImportReport, title_from};
use crate::files::{self, FileTouch};
use crate::segment;
pub use crate::thread::ThreadMessage;
use crate::thread::{RecordedCall, SegmentStart, first_request};

/// The most items a thread follows: a conversation of more (a client sending a hundred thousand
/// messages) is refused rather than read, since each is hashed and kept.
pub const MAX_THREAD_ITEMS: usize = 100_000;

/// The most threads a session holds (its main thread and every subagent's); past it a new
/// subagent's requests are forwarded but not recorded.
pub const MAX_SESSION_THREADS: usize = 1_000;

/// A provider API's wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// Anthropic's Messages API (`/v1/messages`).
    Anthropic,
    /// OpenAI's Responses API (`/v1/responses`), which Codex speaks.
    Responses,
    /// OpenAI's Chat Completions API (`/v1/chat/completions`), which OpenCode speaks.
    Chat,
}

impl WireFormat {
    /// The name the gateway's records and errors give the format.
    pub fn as_str(self) -> &'static str {
        match self {
            WireFormat::Anthropic => "anthropic",
            WireFormat::Responses => "responses",
            WireFormat::Chat => "chat",
        }
    }

    /// The encoding its models' tokens are counted in.
    pub fn encoding(self) -> Encoding {
        match self {
            WireFormat::Anthropic => Encoding::ClaudeEstimate,
            WireFormat::Responses | WireFormat::Chat => Encoding::O200kBase,
        }
    }
}

/// One item of a request's conversation: its bytes' hash, and its JSON (an Anthropic message, a
/// Responses input item, a Chat message), which is read only when the thread has not seen it.
#[derive(Debug, Clone, Copy)]
pub struct WireItem<'a> {
    pub hash: u64,
    pub json: &'a Value,
}

/// A thread message an item made, and the block of the item it came from (a tool result of an
/// Anthropic user message); `None` for the item as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Made {
    pub block: Option<usize>,
    pub message: usize,
}

/// An item of the conversation as the thread last saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    /// The hash of its bytes; `None` for a reply the thread read from the upstream, which the
    /// client's next request holds in its place.
    hash: Option<u64>,
    made: Vec<Made>,
}

/// What one request did to a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Growth {
    /// Items the thread had seen, at the start of the request.
    pub known: usize,
    /// Items read for the first time.
    pub new: usize,
    /// The request did not start with what the thread had seen: it was cut after `known`.
    pub restarted: bool,
}

/// Why a request's conversation was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("the conversation has {0} items, more than the {MAX_THREAD_ITEMS} Flame follows")]
    TooLong(usize),
}

/// Responses items and Chat messages read into thread messages.
#[derive(Debug, Default)]
struct ItemReader {
    messages: Vec<ThreadMessage>,
    calls: Vec<RecordedCall>,
    /// Tool calls that touch files: call id → (message index, files), recorded on the message
    /// once the call's result says it did not fail.
    pending_files: std::collections::HashMap<String, (usize, Vec<FileTouch>)>,
    next_start: Option<SegmentStart>,
    cwd: Option<String>,
}

impl ItemReader {
    fn push(&mut self, message: NewMessage, at: Timestamp, encoding: Encoding) -> usize {
        let tokens = count_message(encoding, &message);
        self.messages.push(ThreadMessage {
            message: message.into(),
            at,
            tokens,
            starts: self.next_start.take(),
            closes: None,
            files: Vec::new(),
        });
        self.messages.len() - 1
    }

    fn call(&mut self, call: ToolCall, at: Timestamp, encoding: Encoding) -> usize {
        let touched = files::opencode(&call.name, &call.arguments, self.cwd.as_deref());
        let id = call.id.clone();
        let mut message = NewMessage::text(Role::Assistant, "");
        message.tool_calls = Some(vec![call]);
        let index = self.push(message, at, encoding);
        if !touched.is_empty() {
            self.pending_files.insert(id, (index, touched));
        }
        index
    }

    fn result(
        &mut self,
        call_id: String,
        text: String,
        failed: bool,
        at: Timestamp,
        encoding: Encoding,
    ) -> usize {
        let mut message = NewMessage::text(Role::Tool, text);
        message.tool_result =
            Some(ToolResult { detail: None, is_error: failed, name: None, tool_call_id: call_id });
        let id = message.tool_result.as_ref().map(|r| r.tool_call_id.clone()).unwrap_or_default();
        let index = self.push(message, at, encoding);
        if let Some((call, touched)) = self.pending_files.remove(&id)
            && !failed
        {
            self.messages[call].files.extend(touched);
        }
        index
    }

    /// Reads a Responses input item; returns the messages it made.
    fn responses_item(&mut self, item: &Value, at: Timestamp) -> Vec<Made> {
        let encoding = WireFormat::Responses.encoding();
        let whole = |message| vec![Made { block: None, message }];
        match item["type"].as_str().unwrap_or("message") {
            "message" => {
                let text = parts_text(&item["content"]);
                match item["role"].as_str() {
                    Some("assistant") => {
                        whole(self.push(NewMessage::text(Role::Assistant, text), at, encoding))
                    }
                    Some("user") => {
                        if is_request(&text) && self.next_start.is_none() {
                            self.next_start = Some(SegmentStart::Request);
                        }
                        whole(self.push(NewMessage::text(Role::User, text), at, encoding))
                    }
                    // Instructions sent among the messages (permissions, a changed folder).
                    _ => whole(self.push(NewMessage::text(Role::Note, text), at, encoding)),
                }
            }
            kind @ ("function_call" | "custom_tool_call" | "local_shell_call"
            | "web_search_call") => {
                let call = responses_call(kind, item);
                whole(self.call(call, at, encoding))
            }
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = item["call_id"].as_str().unwrap_or_default().to_owned();
                let (text, failed) = output_text(&item["output"]);
                whole(self.result(call_id, text, failed, at, encoding))
            }
            // Reasoning, images and references carry no message; they go to the upstream as
            // they came.
            _ => Vec::new(),
        }
    }

    /// Reads a Chat Completions message; returns the messages it made.
    fn chat_message(&mut self, message: &Value, at: Timestamp) -> Vec<Made> {
        let encoding = WireFormat::Chat.encoding();
        let text = parts_text(&message["content"]);
        let whole = |message| vec![Made { block: None, message }];
        match message["role"].as_str() {
            Some("assistant") => {
                let calls: Vec<ToolCall> = message["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| ToolCall {
                        arguments: arguments_of(&c["function"]["arguments"]),
                        id: c["id"].as_str().unwrap_or_default().to_owned(),
                        name: c["function"]["name"].as_str().unwrap_or_default().to_owned(),
                    })
                    .collect();
                let mut m = NewMessage::text(Role::Assistant, text);
                let touched: Vec<(String, Vec<FileTouch>)> = calls
                    .iter()
                    .map(|c| {
                        (c.id.clone(), files::opencode(&c.name, &c.arguments, self.cwd.as_deref()))
                    })
                    .filter(|(_, t)| !t.is_empty())
                    .collect();
                if !calls.is_empty() {
                    m.tool_calls = Some(calls);
                }
                let index = self.push(m, at, encoding);
                for (id, t) in touched {
                    self.pending_files.insert(id, (index, t));
                }
                whole(index)
            }
            Some("tool") => {
                let call_id = message["tool_call_id"].as_str().unwrap_or_default().to_owned();
                whole(self.result(call_id, text, false, at, encoding))
            }
            Some("user") => {
                if is_request(&text) && self.next_start.is_none() {
                    self.next_start = Some(SegmentStart::Request);
                }
                whole(self.push(NewMessage::text(Role::User, text), at, encoding))
            }
            _ => whole(self.push(NewMessage::text(Role::Note, text), at, encoding)),
        }
    }
}

/// How a thread's items become messages.
#[derive(Debug)]
enum Reader {
    Anthropic(Box<ThreadReader>),
    Items(ItemReader),
}

/// One conversation followed through the requests that carry it (see the module's comment).
#[derive(Debug)]
pub struct WireThread {
    format: WireFormat,
    reader: Reader,
    seen: Vec<Seen>,
}

impl WireThread {
    /// A thread of `format` whose tool calls' paths are relative to `cwd` when inside it.
    pub fn new(format: WireFormat, cwd: Option<&str>) -> WireThread {
        let reader = match format {
            WireFormat::Anthropic => Reader::Anthropic(Box::new(ThreadReader::wire(cwd))),
            WireFormat::Responses | WireFormat::Chat => {
                Reader::Items(ItemReader { cwd: cwd.map(str::to_owned), ..ItemReader::default() })
            }
        };
        WireThread { format, reader, seen: Vec::new() }
    }

    pub fn format(&self) -> WireFormat {
        self.format
    }

    /// The thread's messages, in the order they were read.
    pub fn messages(&self) -> &[ThreadMessage] {
        match &self.reader {
            Reader::Anthropic(r) => &r.thread().messages,
            Reader::Items(r) => &r.messages,
        }
    }

    /// The model calls whose usage is on a message: `(message index, time, input tokens)`.
    pub fn calls(&self) -> &[RecordedCall] {
        match &self.reader {
            Reader::Anthropic(r) => &r.thread().calls,
            Reader::Items(r) => &r.calls,
        }
    }

    /// The messages each item of the conversation, as last seen, made (by item position).
    pub fn made(&self, item: usize) -> &[Made] {
        self.seen.get(item).map_or(&[], |s| &s.made)
    }

    /// How many items the conversation had, as last seen.
    pub fn items(&self) -> usize {
        self.seen.len()
    }

    /// Reads a request's conversation sent at `at` (see the module's comment).
    pub fn update(&mut self, items: &[WireItem<'_>], at: Timestamp) -> Result<Growth, WireError> {
        if items.len() > MAX_THREAD_ITEMS {
            return Err(WireError::TooLong(items.len()));
        }
        let mut same = 0;
        while same < items.len() && same < self.seen.len() {
            match self.seen[same].hash {
                Some(hash) if hash != items[same].hash => break,
                Some(_) => {}
                None => self.seen[same].hash = Some(items[same].hash),
            }
            same += 1;
        }
        let growth =
            Growth { known: same, new: items.len() - same, restarted: same < self.seen.len() };
        if growth.restarted {
            self.seen.truncate(same);
            self.restart();
        }
        for item in &items[same..] {
            let made = self.read(item.json, at);
            self.seen.push(Seen { hash: Some(item.hash), made });
        }
        self.count_tokens();
        Ok(growth)
    }

    /// Reads the upstream's reply to the last request, whole: its items (the assistant message
    /// of an Anthropic or Chat reply, a Responses reply's output items), the model that wrote
    /// it and the usage the upstream reported, which goes on the first message it made.
    pub fn reply(&mut self, items: &[Value], model: Option<&str>, usage: Usage, at: Timestamp) {
        let first = self.messages().len();
        for (i, item) in items.iter().enumerate() {
            let made = match (&mut self.reader, i) {
                // Claude Code's reader takes the usage and the model as its transcripts state
                // them, on the message itself.
                (Reader::Anthropic(_), 0) => {
                    let mut item = item.clone();
                    item["usage"] = anthropic_usage(&usage);
                    if let Some(model) = model {
                        item["model"] = Value::String(model.to_owned());
                    }
                    self.read(&item, at)
                }
                _ => self.read(item, at),
            };
            self.seen.push(Seen { hash: None, made });
        }
        if let Reader::Items(reader) = &mut self.reader
            && let Some(message) = reader.messages.get_mut(first)
        {
            let message = std::sync::Arc::make_mut(&mut message.message);
            message.usage = Some(usage);
            message.model = model.map(str::to_owned);
            reader.calls.push((first, at, usage.prompt_tokens()));
        }
        self.count_tokens();
    }

    fn read(&mut self, json: &Value, at: Timestamp) -> Vec<Made> {
        match (&mut self.reader, self.format) {
            (Reader::Anthropic(reader), _) => {
                let before = reader.thread().messages.len();
                reader.wire_message(json, at);
                let after = reader.thread().messages.len();
                // A user message makes one message per tool result, in block order, then one
                // for its text; an assistant message makes one.
                let results: Vec<usize> = json["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .filter(|(_, b)| b["type"] == "tool_result")
                    .map(|(i, _)| i)
                    .collect();
                let is_user = json["role"] != "assistant";
                (before..after)
                    .enumerate()
                    .map(|(n, message)| Made {
                        block: if is_user { results.get(n).copied() } else { None },
                        message,
                    })
                    .collect()
            }
            (Reader::Items(reader), WireFormat::Responses) => reader.responses_item(json, at),
            (Reader::Items(reader), _) => reader.chat_message(json, at),
        }
    }

    fn restart(&mut self) {
        match &mut self.reader {
            Reader::Anthropic(r) => r.restart(),
            Reader::Items(r) => r.next_start = Some(SegmentStart::Compaction),
        }
    }

    fn count_tokens(&mut self) {
        if let Reader::Anthropic(r) = &mut self.reader {
            r.count_tokens();
        }
    }

    /// The text of the thread's first request (else its first user message): what a subagent
    /// was asked, which names the call that started it. Text an agent put before it (Codex's
    /// environment) is not what was asked.
    pub fn first_request(&self) -> Option<&str> {
        let users = || self.messages().iter().filter(|m| m.message.role == Role::User);
        users()
            .find(|m| matches!(m.starts, Some(SegmentStart::Request)))
            .or_else(|| users().next())
            .map(|m| m.message.content.as_str())
    }
}

/// A client's session: its main thread first, then its subagents' threads, each after its
/// parent.
#[derive(Debug)]
pub struct WireSession {
    /// Who the client is, as the root's criteria name it ("Claude Code", "Codex").
    pub agent: String,
    /// The client's id of the session, or the gateway's when the client gives none.
    pub id: String,
    pub folder: Option<String>,
    pub threads: Vec<SessionThread>,
}

/// A thread of a session.
#[derive(Debug)]
pub struct SessionThread {
    pub thread: WireThread,
    /// The thread that started this one (a subagent's parent); `None` for the main thread.
    pub parent: Option<usize>,
    /// The thread's draft key: the same at every read.
    pub key: String,
    pub started_at: Timestamp,
}

/// The messages of one thread a frame holds, by index in the thread, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub thread: usize,
    pub messages: Vec<usize>,
}

/// A session's draft, and where each frame's messages come from.
#[derive(Debug, Clone, PartialEq)]
pub struct WireDraft {
    pub draft: Draft,
    /// For each frame of the draft, the thread messages it holds, its `n`-th message being the
    /// thread's `messages[n]`; `None` for a frame that holds none (the root of a main thread cut
    /// into segments).
    pub holders: Vec<Option<Holder>>,
}

impl WireDraft {
    /// The frame that holds message `message` of thread `thread`, and its index among the
    /// frame's messages.
    pub fn frame_of(&self, thread: usize, message: usize) -> Option<(usize, usize)> {
        self.holders.iter().enumerate().find_map(|(frame, holder)| {
            let holder = holder.as_ref().filter(|h| h.thread == thread)?;
            holder.messages.binary_search(&message).ok().map(|n| (frame, n))
        })
    }
}

/// The frame tool `name` is, when it is one of Flame's (`flame mcp`'s, as an agent names it:
/// `push_frame`, `mcp__flame__push_frame`, `flame_pop_frame`).
fn frame_tool(name: &str) -> Option<FrameTool> {
    let is = |tool: &str| name == tool || name.ends_with(&format!("_{tool}"));
    if is("push_frame") {
        Some(FrameTool::Push)
    } else if is("pop_frame") {
        Some(FrameTool::Pop)
    } else {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameTool {
    Push,
    Pop,
}

/// Places a main thread whose agent pushes and pops frames with Flame's frame tools: its frames
/// are the ones it pushed (titled and judged as it said, finished as it popped them), each
/// under the one it was pushed from, holding the messages from its push's result to its pop's;
/// the rest is the root's. Returns each frame's messages.
fn place_pushed(
    draft: &mut Draft,
    root: usize,
    messages: &[ThreadMessage],
    calls: &[RecordedCall],
) -> Vec<(usize, Vec<usize>)> {
    let mut stack = vec![root];
    let mut held: Vec<(usize, Vec<usize>)> = vec![(root, Vec::new())];
    let mut pending: std::collections::HashMap<String, (FrameTool, Value)> =
        std::collections::HashMap::new();
    let mut draft_index = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let top = *stack.last().expect("the root stays");
        let index = draft.messages.len();
        draft_index.push(index);
        draft.files.extend(m.files.iter().map(|f| crate::draft::DraftFile {
            frame: top,
            message: index,
            at: m.at,
            path: f.path.clone(),
            changed: f.changed,
        }));
        draft.messages.push(crate::draft::DraftMessage {
            frame: top,
            message: m.message.clone(),
            tokens: m.tokens,
            at: m.at,
        });
        if let Some((_, list)) = held.iter_mut().find(|(f, _)| *f == top) {
            list.push(i);
        }
        for call in m.message.tool_calls.iter().flatten() {
            if let Some(tool) = frame_tool(&call.name) {
                pending.insert(call.id.clone(), (tool, call.arguments.clone()));
            }
        }
        let Some(result) = m.message.tool_result.as_ref().filter(|r| !r.is_error) else { continue };
        match pending.remove(&result.tool_call_id) {
            Some((FrameTool::Push, arguments)) => {
                let text = |key: &str| arguments[key].as_str().unwrap_or_default().to_owned();
                let criteria = [text("success_criteria"), text("criteria")].concat();
                let mut frame =
                    DraftFrame::new(Some(top), FrameKind::Segment, &text("title"), &criteria, m.at);
                frame.key = format!("push:{}", result.tool_call_id);
                let pushed = draft.push_frame(frame);
                stack.push(pushed);
                held.push((pushed, Vec::new()));
            }
            Some((FrameTool::Pop, arguments)) if stack.len() > 1 => {
                let popped = stack.pop().expect("more than the root");
                let frame = &mut draft.frames[popped];
                let status = arguments["status"].as_str().unwrap_or("completed");
                let text = |key: &str| arguments[key].as_str().map(str::to_owned);
                match status {
                    "failed" => frame.status = Status::Failed,
                    "blocked" => frame.status = Status::Blocked,
                    _ => frame.status = Status::Completed,
                }
                if frame.status == Status::Completed {
                    frame.results = Some(text("results").unwrap_or_default());
                } else {
                    frame.status_reason = text("reason").or_else(|| text("results"));
                }
                frame.ended_at = Some(m.at);
            }
            _ => {}
        }
    }
    for &(index, at, input) in calls {
        let Some(&message) = draft_index.get(index) else { continue };
        let frame = draft.messages[message].frame;
        draft.calls.push(crate::draft::ModelCall { frame, message, at, input_tokens: input });
    }
    draft.focus = stack.last().copied();
    held
}

impl WireSession {
    /// The session as a draft tree (see the module's comment). The root holds the session, the
    /// main thread's segments are its children (or, when its agent pushes and pops frames with
    /// Flame's frame tools, those frames: `place_pushed`), and each subagent's thread is one
    /// frame under the frame of its parent's thread that holds the call that started it (or that
    /// was current when it began, when no call names its request).
    pub fn draft(&self) -> WireDraft {
        let main = self.threads.first();
        let start = main.map_or(0, |t| t.started_at);
        let first = main.map(|t| first_request(t.thread.messages())).unwrap_or_default();
        let mut draft = Draft::of_session(
            &self.agent,
            &self.id,
            self.folder.as_deref(),
            &first,
            start,
            ImportReport::default(),
        );
        let mut holders: Vec<Option<Holder>> = vec![None];
        let set = |holders: &mut Vec<Option<Holder>>, frame: usize, holder: Holder| {
            while holders.len() <= frame {
                holders.push(None);
            }
            holders[frame] = Some(holder);
        };
        let mut focus = None;
        for (t, thread) in self.threads.iter().enumerate() {
            let messages = thread.thread.messages();
            let calls = thread.thread.calls();
            let Some(parent) = thread.parent.filter(|&p| p < t) else {
                // The main thread (a second thread without a parent is kept out of the tree).
                if t > 0 {
                    continue;
                }
                let pushes = messages.iter().any(|m| {
                    m.message.tool_calls.iter().flatten().any(|c| frame_tool(&c.name).is_some())
                });
                if pushes {
                    for (frame, held) in place_pushed(&mut draft, 0, messages, calls) {
                        set(&mut holders, frame, Holder { thread: t, messages: held });
                    }
                    focus = draft.focus;
                    continue;
                }
                let _ = segment::place_with(
                    &mut draft,
                    0,
                    messages,
                    calls,
                    true,
                    |_, frame, seg, _| {
                        let held = Holder { thread: t, messages: (seg.start..seg.end).collect() };
                        set(&mut holders, frame, held);
                        focus = Some(frame);
                        Ok::<(), std::convert::Infallible>(())
                    },
                );
                continue;
            };
            let request = thread.thread.first_request().unwrap_or_default();
            let parent_thread = &self.threads[parent].thread;
            let call = spawning_call(parent_thread.messages(), request, thread.started_at);
            let parent_messages = parent_thread.messages();
            // The frame holding the parent thread's message `index` (or its nearest before it).
            let holder_of = |index: usize| {
                (0..=index)
                    .rev()
                    .find_map(|i| {
                        holders.iter().enumerate().find_map(|(frame, h)| {
                            let h = h.as_ref().filter(|h| h.thread == parent)?;
                            h.messages.binary_search(&i).ok().map(|_| frame)
                        })
                    })
                    .unwrap_or(0)
            };
            let (parent_frame, title) = match &call {
                Some((index, call)) => {
                    let title = call.arguments["description"]
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| first_line(request));
                    (holder_of(*index), title)
                }
                None => {
                    let current = parent_messages
                        .iter()
                        .rposition(|m| m.at <= thread.started_at)
                        .unwrap_or(0);
                    (holder_of(current), first_line(request))
                }
            };
            let mut frame = DraftFrame::new(
                Some(parent_frame),
                FrameKind::Subagent,
                &title,
                request,
                thread.started_at,
            );
            frame.key = thread.key.clone();
            let answered = call.as_ref().and_then(|(_, call)| {
                parent_messages.iter().find(|m| {
                    m.message.tool_result.as_ref().is_some_and(|r| r.tool_call_id == call.id)
                })
            });
            if let Some(result) = answered {
                let answer = messages
                    .iter()
                    .rev()
                    .find(|m| {
                        m.message.role == Role::Assistant && !m.message.content.trim().is_empty()
                    })
                    .map_or_else(|| result.message.content.clone(), |m| m.message.content.clone());
                let failed = result.message.tool_result.as_ref().is_some_and(|r| r.is_error);
                if failed {
                    frame.status = Status::Failed;
                    frame.status_reason = Some(result.message.content.clone());
                } else {
                    frame.status = Status::Completed;
                    frame.results = Some(answer);
                }
                frame.ended_at = Some(result.at);
            } else if draft.frames[parent_frame].status != Status::InProgress {
                // Its parent's frame finished without its answer: it cannot go on there.
                frame.status = Status::Blocked;
                frame.status_reason =
                    Some("the conversation that started it went on without its answer".into());
            }
            let index = draft.push_frame(frame);
            set(&mut holders, index, Holder { thread: t, messages: (0..messages.len()).collect() });
            segment::place(&mut draft, index, messages, calls, false);
        }
        while holders.len() < draft.frames.len() {
            holders.push(None);
        }
        draft.focus = focus;
        WireDraft { draft, holders }
    }
}

/// The call of a thread's messages that started a subagent asked `request`: the latest one made
/// before the subagent began whose arguments hold the request as one of their texts.
fn spawning_call(
    messages: &[ThreadMessage],
    request: &str,
    began: Timestamp,
) -> Option<(usize, ToolCall)> {
    let request = request.trim();
    if request.is_empty() {
        return None;
    }
    messages.iter().enumerate().rev().filter(|(_, m)| m.at <= began).find_map(|(i, m)| {
        m.message
            .tool_calls
            .iter()
            .flatten()
            .find(|c| holds_text(&c.arguments, request))
            .map(|c| (i, c.clone()))
    })
}

/// Whether one of `value`'s strings is `text`, or holds it whole (a subagent's first message may
/// wrap what it was asked).
fn holds_text(value: &Value, text: &str) -> bool {
    match value {
        Value::String(s) => {
            let s = s.trim();
            !s.is_empty() && (s == text || text.contains(s) && s.len() * 2 >= text.len())
        }
        Value::Array(items) => items.iter().any(|v| holds_text(v, text)),
        Value::Object(fields) => fields.values().any(|v| holds_text(v, text)),
        _ => false,
    }
}

fn first_line(text: &str) -> String {
    title_from(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("Subagent"))
}

/// Whether a user message is a person's request rather than text an agent put in the
/// conversation (its folder's environment, instructions, a reminder).
fn is_request(text: &str) -> bool {
    let t = text.trim_start();
    !t.is_empty() && !t.starts_with('<') && !t.starts_with("# AGENTS.md")
}

/// The text of a message's content: a string, or parts with texts (`text`, `input_text`,
/// `output_text`; images as `[image]`).
fn parts_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p["type"].as_str() {
                Some("input_image" | "image_url" | "image") => "[image]".to_owned(),
                _ => p["text"].as_str().map_or_else(|| p.to_string(), str::to_owned),
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A call's arguments: JSON when they are JSON text, else the text.
fn arguments_of(arguments: &Value) -> Value {
    match arguments {
        Value::String(text) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        other => other.clone(),
    }
}

/// A Responses call item as a tool call.
fn responses_call(kind: &str, item: &Value) -> ToolCall {
    let id = item["call_id"].as_str().or(item["id"].as_str()).unwrap_or_default().to_owned();
    match kind {
        "local_shell_call" => {
            ToolCall { arguments: item["action"].clone(), id, name: "shell".into() }
        }
        "web_search_call" => {
            ToolCall { arguments: item["action"].clone(), id, name: "web_search".into() }
        }
        _ => ToolCall {
            arguments: arguments_of(if item["arguments"].is_null() {
                &item["input"]
            } else {
                &item["arguments"]
            }),
            id,
            name: item["name"].as_str().unwrap_or_default().to_owned(),
        },
    }
}

/// A Responses call output as text, and whether it failed.
fn output_text(output: &Value) -> (String, bool) {
    match output {
        Value::String(s) => (s.clone(), false),
        Value::Object(o) => {
            let failed = o.get("success").and_then(Value::as_bool) == Some(false);
            let text = o.get("content").map(parts_text).unwrap_or_else(|| output.to_string());
            (text, failed)
        }
        other => (parts_text(other), false),
    }
}

/// A usage in the shape Anthropic reports it, for Claude Code's reader.
fn anthropic_usage(usage: &Usage) -> Value {
    serde_json::json!({
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens + usage.cache_write_long_tokens,
        "cache_creation": { "ephemeral_1h_input_tokens": usage.cache_write_long_tokens },
    })
}

/// The paths of `thread`'s files it read and changed, for a test's sake.
#[cfg(test)]
fn touched(thread: &WireThread) -> std::collections::HashSet<String> {
    thread.messages().iter().flat_map(|m| m.files.iter().map(|f| f.path.clone())).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn items(values: &[Value]) -> Vec<WireItem<'_>> {
        values
            .iter()
            .map(|v| WireItem {
                hash: flame_model::prompt_cache::text_hash("t", &v.to_string()),
                json: v,
            })
            .collect()
    }

    #[test]
    fn a_thread_reads_each_item_once_and_takes_its_reply_back() {
        let mut thread = WireThread::new(WireFormat::Anthropic, Some("/w"));
        let first = vec![json!({"role": "user", "content": "Fix the bug in src/a.rs"})];
        let growth = thread.update(&items(&first), 10).unwrap();
        assert_eq!((growth.known, growth.new, growth.restarted), (0, 1, false));
        let reply = json!({"role": "assistant", "content": [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/w/src/a.rs"}}
        ]});
        let usage = Usage { input_tokens: 12, output_tokens: 5, ..Usage::default() };
        thread.reply(std::slice::from_ref(&reply), Some("claude-sonnet-4-5"), usage, 11);
        assert_eq!(thread.calls().len(), 1, "the reply's usage is a recorded call");
        // The client sends the reply back as it kept it (here without its text) and the result.
        let echoed = json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/w/src/a.rs"}}
        ]});
        let second = vec![
            first[0].clone(),
            echoed,
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn a() {}"}]}),
        ];
        let growth = thread.update(&items(&second), 20).unwrap();
        assert_eq!((growth.known, growth.new, growth.restarted), (2, 1, false));
        let roles: Vec<Role> = thread.messages().iter().map(|m| m.message.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool]);
        assert_eq!(thread.made(2), [Made { block: Some(0), message: 2 }]);
        assert_eq!(touched(&thread), std::collections::HashSet::from(["src/a.rs".to_owned()]));
        assert_eq!(thread.messages()[1].message.usage, Some(usage));

        // The same request again reads nothing new; a rewound one reads on after what it read.
        assert_eq!(thread.update(&items(&second), 21).unwrap().new, 0);
        let rewound = vec![json!({"role": "user", "content": "Start again"})];
        let growth = thread.update(&items(&rewound), 30).unwrap();
        assert_eq!((growth.known, growth.new, growth.restarted), (0, 1, true));
        assert_eq!(thread.messages().len(), 4);
        assert!(thread.messages()[3].starts.is_some(), "a new segment begins");
        assert_eq!(thread.made(0), [Made { block: None, message: 3 }]);
    }

    #[test]
    fn a_conversation_longer_than_the_limit_is_refused() {
        let one = json!({"role": "user", "content": "x"});
        let many: Vec<Value> = vec![one; MAX_THREAD_ITEMS + 1];
        let mut thread = WireThread::new(WireFormat::Chat, None);
        assert_eq!(thread.update(&items(&many), 0), Err(WireError::TooLong(MAX_THREAD_ITEMS + 1)));
        assert_eq!(thread.items(), 0);
    }

    #[test]
    fn a_session_cuts_its_main_thread_and_hangs_a_subagent_under_its_call() {
        let mut main = WireThread::new(WireFormat::Chat, None);
        let requests = [
            json!({"role": "user", "content": "Count the lines of notes.txt"}),
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "task", "arguments": "{\"description\":\"Count lines\",\"prompt\":\"Count the lines of notes.txt and report\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "3 lines"}),
            json!({"role": "assistant", "content": "notes.txt has 3 lines."}),
            json!({"role": "user", "content": "Now read its first line"}),
        ];
        main.update(&items(&requests), 100).unwrap();
        let mut child = WireThread::new(WireFormat::Chat, None);
        let asked = [
            json!({"role": "user", "content": "Count the lines of notes.txt and report"}),
            json!({"role": "assistant", "content": "3"}),
        ];
        child.update(&items(&asked), 100).unwrap();
        let session = WireSession {
            agent: "OpenCode".into(),
            id: "ses_1".into(),
            folder: None,
            threads: vec![
                SessionThread {
                    thread: main,
                    parent: None,
                    key: "thread:ses_1".into(),
                    started_at: 100,
                },
                SessionThread {
                    thread: child,
                    parent: Some(0),
                    key: "thread:ses_2".into(),
                    started_at: 100,
                },
            ],
        };
        let wire = session.draft();
        let titles: Vec<&str> = wire.draft.frames.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(titles[1], "Count the lines of notes.txt");
        assert_eq!(titles[2], "Now read its first line");
        assert_eq!(titles[3], "Count lines");
        assert_eq!(wire.draft.frames[3].parent, Some(1), "under the segment that made the call");
        assert_eq!(wire.draft.frames[3].status, Status::Completed);
        assert_eq!(wire.draft.frames[3].results.as_deref(), Some("3"));
        let held: Vec<Option<(usize, Vec<usize>)>> = wire
            .holders
            .iter()
            .map(|h| h.as_ref().map(|h| (h.thread, h.messages.clone())))
            .collect();
        assert_eq!(
            held,
            [None, Some((0, vec![0, 1, 2, 3])), Some((0, vec![4])), Some((1, vec![0, 1]))]
        );
        assert_eq!(wire.frame_of(0, 4), Some((2, 0)));
        assert_eq!(wire.frame_of(0, 3), Some((1, 3)));
        assert_eq!(wire.frame_of(1, 1), Some((3, 1)));
        let keys: Vec<&str> = wire.draft.frames.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["root", "root/0", "root/4", "thread:ses_2"]);
        assert!(wire.draft.materialise(&mut flame_model::IdSource::seeded(1)).is_ok());
    }

    /// An agent with Flame's frame tools makes the frames itself: each push a child of the frame
    /// it was made in, holding what follows its result until its pop, which finishes it.
    #[test]
    fn an_agent_that_pushes_and_pops_frames_makes_the_sessions_frames() {
        let call = |id: &str, name: &str, arguments: Value| json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": arguments}]});
        let result = |id: &str, text: &str| json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]});
        let conversation = [
            json!({"role": "user", "content": "Build the parser"}),
            call(
                "p1",
                "mcp__flame__push_frame",
                json!({"title": "Tokenizer", "success_criteria": "Tokens out"}),
            ),
            result("p1", "pushed frame f1"),
            call("r1", "Read", json!({"file_path": "/w/lex.rs"})),
            result("r1", "fn lex() {}"),
            call(
                "o1",
                "mcp__flame__pop_frame",
                json!({"status": "completed", "results": "Tokenizer done"}),
            ),
            result("o1", "popped"),
            json!({"role": "assistant", "content": [{"type": "text", "text": "Now the grammar."}]}),
        ];
        let mut thread = WireThread::new(WireFormat::Anthropic, Some("/w"));
        thread.update(&items(&conversation), 5).unwrap();
        let session = WireSession {
            agent: "Claude Code".into(),
            id: "s".into(),
            folder: Some("/w".into()),
            threads: vec![SessionThread {
                thread,
                parent: None,
                key: "main".into(),
                started_at: 5,
            }],
        };
        let wire = session.draft();
        let titles: Vec<&str> = wire.draft.frames.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(titles, ["Build the parser", "Tokenizer"]);
        let pushed = &wire.draft.frames[1];
        assert_eq!((pushed.parent, pushed.status), (Some(0), Status::Completed));
        assert_eq!(pushed.results.as_deref(), Some("Tokenizer done"));
        assert_eq!(pushed.criteria, "Tokens out");
        // The push's call and result are the root's; the frame holds the read to the pop.
        assert_eq!(wire.holders[1].as_ref().unwrap().messages, [3, 4, 5, 6]);
        assert_eq!(wire.holders[0].as_ref().unwrap().messages, [0, 1, 2, 7]);
        assert_eq!(wire.frame_of(0, 7), Some((0, 3)));
        assert_eq!(wire.draft.focus, Some(0), "the conversation is back in the root");
        assert!(wire.draft.materialise(&mut flame_model::IdSource::seeded(1)).is_ok());
    }
}
