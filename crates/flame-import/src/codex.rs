//! Codex sessions: the rollout files Codex writes under `$CODEX_HOME/sessions/YYYY/MM/DD/`,
//! `rollout-<time>-<thread id>.jsonl`, one per thread.
//!
//! Each line is `{"timestamp", "type", "payload"}`. The types read:
//! - `session_meta`: the thread's id, folder, Codex version, and for a subagent's thread its
//!   parent's id (`parent_thread_id`, or `source.subagent.thread_spawn.parent_thread_id`);
//! - `turn_context`: the model the turn's calls use;
//! - `response_item`: what was sent and received — `message` (the person's `user` messages,
//!   the model's `assistant` text; `developer` instructions carry no message), `reasoning`
//!   (its summary, as `<thinking>`), `function_call`, `custom_tool_call`, `local_shell_call`,
//!   `web_search_call`, and the outputs of calls (`function_call_output`,
//!   `custom_tool_call_output`);
//! - `token_usage_record` (newer versions: one per response) and `event_msg` `token_count` (the
//!   thread's running totals), the usage of each model call;
//! - `event_msg` `task_complete` (the turn's end and its last answer), `turn_aborted`,
//!   `context_compacted` and the `compacted` record (compaction), `error`.
//!
//! Everything else (`world_state`, the `event_msg`s that repeat response items for a screen)
//! is counted as skipped.
//!
//! One model call is one assistant message: its reasoning, text and calls, with the call's
//! usage — input not read from the cache, cached input, cache writes and output (Codex's
//! `input_tokens` counts the cached input too, as OpenAI's do). A response is written as several
//! lines and its usage after them, and in older versions after the outputs of its calls, so the
//! reader holds a response, and any call outputs that follow it, until its usage arrives (or the
//! next request, the turn's end or the end of the file): a message is made once, whole.
//!
//! A subagent (`spawn_agent`, whose output names the new thread's `agent_id`) is a thread of its
//! own in its own rollout file; it becomes a child frame of the segment whose call started it,
//! titled and judged by the message it was given, holding the child thread's messages, with the
//! child's last answer as its results once its turn is complete.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use flame_model::{NewMessage, Role, Status, Timestamp, ToolCall, ToolResult, Usage};
use flame_tokens::Encoding;
use serde_json::Value;

use crate::draft::{Draft, DraftFrame, FrameKind, title_from};
use crate::jsonl::for_each_record;
use crate::segment;
use crate::thread::{RecordedCall, SegmentStart, ThreadMessage, count_tokens, first_request};
use crate::time::parse_rfc3339;
use crate::{ImportError, ImportOptions, ImportReport, Progress};

/// The most rollout files looked at while finding the file of a subagent's thread outside its
/// parent's day folder: the sessions folder of a long-used Codex holds thousands.
pub const MAX_ROLLOUTS_SEARCHED: usize = 100_000;

/// How a thread's last turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The turn completed; the agent's last answer, when it gave one.
    Completed(Option<String>),
    Failed(String),
}

/// A `spawn_agent` call: which message made it and what the subagent was asked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spawn {
    call_id: String,
    index: usize,
    prompt: String,
}

/// One rollout file read: its messages and what links it to the threads around it.
#[derive(Debug, Default)]
pub(crate) struct CodexThread {
    pub messages: Vec<ThreadMessage>,
    pub calls: Vec<RecordedCall>,
    /// The thread's id (`session_meta`).
    pub id: Option<String>,
    /// The thread that spawned this one.
    pub parent: Option<String>,
    pub nickname: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    spawns: Vec<Spawn>,
    /// `spawn_agent` call id → the thread it started.
    spawned: HashMap<String, String>,
    pub ended: Option<Ended>,
    first_at: Option<Timestamp>,
}

impl CodexThread {
    /// The ids of the threads this one spawned.
    pub(crate) fn children(&self) -> impl Iterator<Item = &str> {
        self.spawns.iter().filter_map(|s| self.spawned.get(&s.call_id)).map(String::as_str)
    }
}

/// A model call being read: its reasoning, text and calls, and its usage once known.
#[derive(Debug, Default)]
struct Pending {
    text: Vec<String>,
    calls: Vec<ToolCall>,
    /// `(call id, prompt)` of its `spawn_agent` calls.
    spawns: Vec<(String, String)>,
    at: Timestamp,
}

/// Reads rollout records one at a time into a [`CodexThread`].
#[derive(Debug, Default)]
pub(crate) struct CodexReader {
    thread: CodexThread,
    records: u64,
    skipped: BTreeMap<String, u64>,
    pending: Option<Pending>,
    /// Call outputs read after the pending call, waiting for it to be made a message.
    held: Vec<(NewMessage, Timestamp)>,
    next_start: Option<SegmentStart>,
    last_at: Timestamp,
    /// Whether the file has `token_usage_record`s, which then state each call's usage and the
    /// running totals of `token_count` are not needed.
    usage_records: bool,
    /// The running total the last `token_count` stated.
    total: Usage,
    /// How many of the thread's messages have their tokens counted.
    counted: usize,
}

impl CodexReader {
    /// Counts the tokens of the messages read since the last count (each message once).
    pub(crate) fn count_tokens(&mut self) {
        let model = self.thread.model.as_deref();
        count_tokens(&mut self.thread.messages[self.counted..], model, Encoding::O200kBase);
        self.counted = self.thread.messages.len();
    }

    /// The thread read so far; a call still waiting for its usage is not in it yet.
    pub(crate) fn thread(&self) -> &CodexThread {
        &self.thread
    }

    /// Records read, and those skipped by type.
    pub(crate) fn counts(&self) -> (u64, &BTreeMap<String, u64>) {
        (self.records, &self.skipped)
    }

    /// Makes the call still waiting a message, without usage: the file ended (it was read
    /// whole) before its usage was written.
    pub(crate) fn finish(&mut self) {
        self.flush(None);
    }

    fn skip(&mut self, what: impl Into<String>) {
        *self.skipped.entry(what.into()).or_default() += 1;
    }

    fn push(&mut self, message: NewMessage, at: Timestamp) -> usize {
        self.thread.messages.push(ThreadMessage {
            message: message.into(),
            at,
            tokens: 0,
            starts: self.next_start.take(),
            closes: None,
            files: Vec::new(),
        });
        self.thread.messages.len() - 1
    }

    /// Makes the waiting call a message with `usage`, then the outputs held behind it.
    fn flush(&mut self, usage: Option<Usage>) {
        if let Some(pending) = self.pending.take() {
            let mut message = NewMessage::text(Role::Assistant, pending.text.join("\n\n"));
            message.model = self.thread.model.clone();
            message.usage = usage;
            if !pending.calls.is_empty() {
                message.tool_calls = Some(pending.calls);
            }
            let index = self.push(message, pending.at);
            if let Some(u) = usage {
                let input = u
                    .input_tokens
                    .saturating_add(u.cache_read_tokens)
                    .saturating_add(u.cache_write_tokens);
                self.thread.calls.push((index, pending.at, input));
            }
            for (call_id, prompt) in pending.spawns {
                self.thread.spawns.push(Spawn { call_id, index, prompt });
            }
        }
        for (message, at) in std::mem::take(&mut self.held) {
            self.push(message, at);
        }
    }

    fn pending(&mut self) -> &mut Pending {
        if self.pending.is_none() && !self.held.is_empty() {
            // Outputs were held behind a call whose usage never came, and a new call begins.
            self.flush(None);
        }
        let at = self.last_at;
        self.pending.get_or_insert_with(|| Pending { at, ..Pending::default() })
    }

    pub(crate) fn record(&mut self, r: &Value) {
        self.records += 1;
        if let Some(at) = r["timestamp"].as_str().and_then(parse_rfc3339) {
            self.last_at = at;
            self.thread.first_at.get_or_insert(at);
        }
        let payload = &r["payload"];
        match r["type"].as_str().unwrap_or("(no type)") {
            "session_meta" if self.thread.id.is_none() => {
                let text = |v: &Value| v.as_str().map(str::to_owned);
                self.thread.id = text(&payload["id"]);
                self.thread.cwd = text(&payload["cwd"]);
                self.thread.nickname = text(&payload["agent_nickname"]);
                self.thread.parent = text(&payload["parent_thread_id"]).or_else(|| {
                    text(&payload["source"]["subagent"]["thread_spawn"]["parent_thread_id"])
                });
            }
            "turn_context" => {
                if let Some(model) = payload["model"].as_str() {
                    self.thread.model = Some(model.to_owned());
                }
                self.skip("turn_context");
            }
            "response_item" => self.response_item(payload),
            "event_msg" => self.event(payload),
            "token_usage_record" => {
                self.usage_records = true;
                self.flush(Some(usage_of(&payload["usage"])));
            }
            "compacted" => {
                self.flush(None);
                self.next_start = Some(SegmentStart::Compaction);
                self.push(NewMessage::text(Role::Note, "Conversation compacted"), self.last_at);
                if let Some(summary) = payload["message"].as_str().filter(|s| !s.is_empty()) {
                    self.push(NewMessage::text(Role::User, summary), self.last_at);
                }
            }
            other => self.skip(other.to_owned()),
        }
    }

    fn response_item(&mut self, item: &Value) {
        let kind = item["type"].as_str().unwrap_or("(no type)");
        match kind {
            "message" => {
                let text = content_text(&item["content"]);
                match item["role"].as_str() {
                    Some("assistant") => {
                        if !text.is_empty() {
                            self.pending().text.push(text);
                        }
                    }
                    Some("user") => {
                        self.flush(None);
                        if is_request(&text) && self.next_start.is_none() {
                            self.next_start = Some(SegmentStart::Request);
                        }
                        self.push(NewMessage::text(Role::User, text), self.last_at);
                    }
                    role => self.skip(format!("response_item:message:{}", role.unwrap_or("?"))),
                }
            }
            "reasoning" => {
                let mut thoughts: Vec<String> = Vec::new();
                for key in ["summary", "content"] {
                    for part in item[key].as_array().into_iter().flatten() {
                        if let Some(t) = part["text"].as_str().filter(|t| !t.is_empty()) {
                            thoughts.push(t.to_owned());
                        }
                    }
                }
                if !thoughts.is_empty() {
                    let thought = format!("<thinking>{}</thinking>", thoughts.join("\n\n"));
                    self.pending().text.push(thought);
                }
            }
            "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => {
                let call = tool_call(kind, item);
                if call.name == "spawn_agent" {
                    let prompt = spawn_prompt(&call.arguments);
                    self.pending().spawns.push((call.id.clone(), prompt));
                }
                self.pending().calls.push(call);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = item["call_id"].as_str().unwrap_or_default().to_owned();
                let (text, failed) = output_text(&item["output"]);
                if let Some(spawn) = self.spawn_of(&call_id)
                    && let Ok(Value::Object(out)) = serde_json::from_str::<Value>(&text)
                    && let Some(agent) = out.get("agent_id").and_then(Value::as_str)
                {
                    self.thread.spawned.insert(spawn, agent.to_owned());
                }
                let mut message = NewMessage::text(Role::Tool, text);
                message.tool_result = Some(ToolResult {
                    detail: None,
                    is_error: failed,
                    name: None,
                    tool_call_id: call_id,
                });
                if self.pending.is_some() || !self.held.is_empty() {
                    self.held.push((message, self.last_at));
                } else {
                    self.push(message, self.last_at);
                }
            }
            other => self.skip(format!("response_item:{other}")),
        }
    }

    /// The `spawn_agent` call `call_id`, whether it is still waiting or already a message.
    fn spawn_of(&self, call_id: &str) -> Option<String> {
        let waiting = self.pending.iter().flat_map(|p| &p.spawns).map(|(id, _)| id);
        let made = self.thread.spawns.iter().map(|s| &s.call_id);
        waiting.chain(made).find(|id| *id == call_id).cloned()
    }

    fn event(&mut self, event: &Value) {
        let kind = event["type"].as_str().unwrap_or("(no type)");
        match kind {
            "token_count" if !event["info"].is_object() => self.skip("event_msg:token_count"),
            "token_count" => {
                let total = usage_of(&event["info"]["total_token_usage"]);
                let grew = total.input_tokens + total.cache_read_tokens + total.output_tokens
                    > self.total.input_tokens
                        + self.total.cache_read_tokens
                        + self.total.output_tokens;
                // The call's usage is what the total grew by; a total that did not grow is a
                // repeat, and one that fell (a count started over) leaves only the last call's.
                let usage = if total.input_tokens >= self.total.input_tokens
                    && total.cache_read_tokens >= self.total.cache_read_tokens
                    && total.output_tokens >= self.total.output_tokens
                {
                    total.since(&self.total)
                } else {
                    usage_of(&event["info"]["last_token_usage"])
                };
                self.total = total;
                if !self.usage_records && grew && self.pending.is_some() {
                    self.flush(Some(usage));
                } else {
                    self.skip("event_msg:token_count");
                }
            }
            "task_complete" => {
                self.flush(None);
                let failed = event["error"]["message"].as_str().map(str::to_owned);
                self.thread.ended = Some(match failed {
                    Some(why) => Ended::Failed(why),
                    None => {
                        Ended::Completed(event["last_agent_message"].as_str().map(str::to_owned))
                    }
                });
            }
            "turn_aborted" => {
                self.flush(None);
                let reason = event["reason"].as_str().unwrap_or("interrupted");
                self.push(
                    NewMessage::text(Role::Note, format!("Turn aborted ({reason})")),
                    self.last_at,
                );
            }
            "context_compacted" => {
                self.flush(None);
                self.next_start = Some(SegmentStart::Compaction);
                self.push(NewMessage::text(Role::Note, "Conversation compacted"), self.last_at);
            }
            "error" => {
                let text = event["message"].as_str().unwrap_or("an error");
                self.push(
                    NewMessage::text(Role::Note, format!("Codex reported: {text}")),
                    self.last_at,
                );
            }
            "item_completed"
                if event["item"]["type"] == "CollabAgentToolCall"
                    && event["item"]["tool"] == "spawn_agent" =>
            {
                let call = event["item"]["id"].as_str().unwrap_or_default();
                if let Some(thread) = event["item"]["receiver_thread_ids"][0].as_str()
                    && let Some(spawn) = self.spawn_of(call)
                {
                    self.thread.spawned.entry(spawn).or_insert_with(|| thread.to_owned());
                }
                self.skip("event_msg:item_completed");
            }
            other => self.skip(format!("event_msg:{other}")),
        }
    }
}

/// A usage report of Codex as Flame's: `input_tokens` counts the cached input and cache
/// writes too, which Flame counts apart.
fn usage_of(report: &Value) -> Usage {
    let field = |k: &str| report[k].as_u64().unwrap_or(0);
    let cached = field("cached_input_tokens");
    let written = field("cache_write_input_tokens");
    Usage {
        cache_read_tokens: cached,
        cache_write_tokens: written,
        input_tokens: field("input_tokens").saturating_sub(cached).saturating_sub(written),
        output_tokens: field("output_tokens"),
        ..Usage::default()
    }
}

/// The text of a message's content parts (`input_text`, `output_text`, images as `[image]`).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p["type"].as_str() {
                Some("input_image") => "[image]".to_owned(),
                _ => p["text"].as_str().map_or_else(|| p.to_string(), str::to_owned),
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A call item as a tool call: its arguments as JSON when they are JSON text, else as the text;
/// a shell call's command and a web search's action as they were given.
fn tool_call(kind: &str, item: &Value) -> ToolCall {
    let id = item["call_id"].as_str().or(item["id"].as_str()).unwrap_or_default().to_owned();
    let (name, arguments) = match kind {
        "local_shell_call" => ("shell".to_owned(), item["action"].clone()),
        "web_search_call" => ("web_search".to_owned(), item["action"].clone()),
        _ => {
            let name = item["name"].as_str().unwrap_or_default().to_owned();
            let text = item["arguments"].as_str().or(item["input"].as_str()).unwrap_or_default();
            let arguments = serde_json::from_str::<Value>(text)
                .unwrap_or_else(|_| Value::String(text.to_owned()));
            (name, arguments)
        }
    };
    ToolCall { arguments, id, name }
}

/// What a `spawn_agent` call asked of the subagent: its `message`, or its items' texts.
fn spawn_prompt(arguments: &Value) -> String {
    if let Some(message) = arguments["message"].as_str() {
        return message.to_owned();
    }
    arguments["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A call's output as text, and whether it failed: a plain string, `{content, success}` (older
/// versions), or content parts.
fn output_text(output: &Value) -> (String, bool) {
    match output {
        Value::String(s) => (s.clone(), false),
        Value::Object(o) => {
            let failed = o.get("success").and_then(Value::as_bool) == Some(false);
            let text = o.get("content").map(content_text).unwrap_or_else(|| output.to_string());
            (text, failed)
        }
        other => (content_text(other), false),
    }
}

/// Whether a user message is the person's request rather than text Codex put in the
/// conversation (the folder's environment, instructions, a subagent's notification).
fn is_request(text: &str) -> bool {
    let t = text.trim_start();
    !t.is_empty() && !t.starts_with('<') && !t.starts_with("# AGENTS.md")
}

/// Reads one rollout file whole into a thread.
pub(crate) fn read_thread(
    path: &Path,
    report: &mut ImportReport,
    progress: &mut dyn FnMut(Progress),
) -> Result<CodexThread, ImportError> {
    let mut reader = CodexReader::default();
    let mut local = ImportReport::default();
    for_each_record(path, &mut local, progress, |_, record| reader.record(&record))?;
    reader.finish();
    reader.count_tokens();
    local.records = reader.records;
    local.skipped = std::mem::take(&mut reader.skipped);
    report.absorb(local);
    Ok(reader.thread)
}

/// Reads a Codex rollout file, and the rollout files of the subagents it spawned, into a draft.
pub fn import(
    path: &Path,
    options: &ImportOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Draft, ImportError> {
    let mut report = ImportReport::default();
    let main = read_thread(path, &mut report, progress)?;
    if main.messages.is_empty() {
        return Err(ImportError::nothing_in(path, &report));
    }
    let mut children: Vec<(String, CodexThread)> = Vec::new();
    let mut wanted: Vec<String> = main.children().map(str::to_owned).collect();
    while let Some(id) = wanted.pop() {
        if children.iter().any(|(c, _)| *c == id) || children.len() > flame_model::MAX_DEPTH * 64 {
            continue;
        }
        match find_thread_file(path, &id) {
            Some(file) => {
                let thread = read_thread(&file, &mut report, progress)?;
                wanted.extend(thread.children().map(str::to_owned));
                children.push((id, thread));
            }
            None => report.problem(format!(
                "subagent thread {id}: no rollout file of it was found beside {}; its frame has no messages",
                path.display()
            )),
        }
    }
    let children: Vec<(String, &CodexThread)> =
        children.iter().map(|(id, t)| (id.clone(), t)).collect();
    Ok(draft_session(path, &main, &children, report, options, Liveness::Whole))
}

/// The sessions folder a rollout file is in: `…/sessions/YYYY/MM/DD/rollout-….jsonl`.
pub fn sessions_root(path: &Path) -> Option<&Path> {
    path.ancestors().skip(1).find(|a| a.file_name().is_some_and(|n| n == "sessions"))
}

/// The rollout file of thread `id`: in `beside`'s folder first (a subagent starts the day its
/// parent runs, nearly always), else anywhere under the sessions folder, looking at no more
/// than [`MAX_ROLLOUTS_SEARCHED`] files.
pub fn find_thread_file(beside: &Path, id: &str) -> Option<PathBuf> {
    let suffix = format!("-{id}.jsonl");
    let matches = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix))
    };
    if let Some(dir) = beside.parent()
        && let Ok(entries) = std::fs::read_dir(dir)
        && let Some(found) = entries.flatten().map(|e| e.path()).find(|p| matches(p))
    {
        return Some(found);
    }
    let mut seen = 0usize;
    let mut folders = vec![sessions_root(beside)?.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).ok()?.flatten() {
            seen += 1;
            if seen > MAX_ROLLOUTS_SEARCHED {
                return None;
            }
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                folders.push(path);
            } else if matches(&path) {
                return Some(path);
            }
        }
    }
    None
}

/// Whether a session's files were read whole or are followed while Codex may still write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Liveness {
    Whole,
    /// A subagent whose thread has not ended is in progress, not blocked, and a thread whose
    /// file is not found yet is not a problem.
    Live,
}

/// The draft of the session whose main thread is `main` and whose subagents' threads are
/// `children` (by thread id, any depth).
pub(crate) fn draft_session(
    path: &Path,
    main: &CodexThread,
    children: &[(String, &CodexThread)],
    report: ImportReport,
    options: &ImportOptions,
    liveness: Liveness,
) -> Draft {
    let id = main.id.clone().unwrap_or_else(|| {
        path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned())
    });
    let first_request = first_request(&main.messages);
    let start = main.first_at.unwrap_or(0);
    let mut draft =
        Draft::of_session("Codex", &id, main.cwd.as_deref(), &first_request, start, report);
    let root = 0;
    let mut placed = vec![main.id.clone().unwrap_or_default()];
    let segments =
        place_thread(&mut draft, root, main, children, options.segment, liveness, &mut placed);
    draft.focus = segments.last().map(|(f, _)| *f);
    draft
}

/// Places `thread` under `frame` and, under the frame holding each `spawn_agent` call, the
/// thread it started; each thread is placed once (`placed`).
fn place_thread(
    draft: &mut Draft,
    frame: usize,
    thread: &CodexThread,
    children: &[(String, &CodexThread)],
    segmented: bool,
    liveness: Liveness,
    placed: &mut Vec<String>,
) -> Vec<(usize, Timestamp)> {
    let holders = segment::place(draft, frame, &thread.messages, &thread.calls, segmented);
    for spawn in &thread.spawns {
        let holder = holders
            .iter()
            .rev()
            .find(|(_, from)| *from <= thread.messages[spawn.index].at)
            .or(holders.first())
            .map_or(frame, |(f, _)| *f);
        let mut child = DraftFrame::new(
            Some(holder),
            FrameKind::Subagent,
            &spawn.prompt,
            &spawn.prompt,
            thread.messages[spawn.index].at,
        );
        // Call ids are the model's, unique within a thread only.
        child.key = format!("spawn:{}/{}", thread.id.as_deref().unwrap_or_default(), spawn.call_id);
        let started = thread.spawned.get(&spawn.call_id);
        let found = started
            .filter(|id| !placed.contains(id))
            .and_then(|id| children.iter().find(|(c, _)| c == id).map(|(_, t)| *t));
        if let Some(name) = found.and_then(|t| t.nickname.as_deref()) {
            child.title = title_from(&format!("{name}: {}", spawn.prompt));
        }
        let parent_open = draft.frames[holder].status == Status::InProgress;
        match found.and_then(|t| t.ended.clone()) {
            Some(Ended::Completed(answer)) => {
                child.status = Status::Completed;
                child.results = Some(answer.unwrap_or_else(|| {
                    "(the subagent's thread records no final answer)".to_owned()
                }));
                child.ended_at = found.and_then(|t| t.messages.last()).map(|m| m.at);
            }
            Some(Ended::Failed(why)) => {
                child.status = Status::Failed;
                child.status_reason = Some(why);
                child.ended_at = found.and_then(|t| t.messages.last()).map(|m| m.at);
            }
            None if parent_open || liveness == Liveness::Live => {}
            None => {
                child.status = Status::Blocked;
                child.status_reason =
                    Some("the session records no end of this subagent's turn".to_owned());
            }
        }
        let child = draft.push_frame(child);
        match (started, found) {
            (Some(id), Some(t)) => {
                placed.push(id.clone());
                place_thread(draft, child, t, children, false, liveness, placed);
            }
            _ if liveness == Liveness::Live => {}
            (Some(id), None) if placed.contains(id) => {}
            (Some(_), None) => {} // reported when its file was looked for
            (None, _) => draft.report.problem(format!(
                "spawn_agent call {}: its output names no thread; its frame has no messages",
                spawn.call_id
            )),
        }
    }
    holders
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(lines: &[Value]) -> CodexReader {
        let mut reader = CodexReader::default();
        for line in lines {
            reader.record(line);
        }
        reader
    }

    fn item(payload: Value) -> Value {
        json!({"timestamp": "2026-11-26T18:57:27.690Z", "type": "response_item", "payload": payload})
    }

    fn usage_record(input: u64, cached: u64, output: u64) -> Value {
        json!({"type": "token_usage_record", "payload": {"usage": {"input_tokens": input, "cached_input_tokens": cached, "output_tokens": output}}})
    }

    fn token_count(input: u64, cached: u64, output: u64) -> Value {
        let total =
            json!({"input_tokens": input, "cached_input_tokens": cached, "output_tokens": output});
        json!({"type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": total, "last_token_usage": total}}})
    }

    #[test]
    fn a_response_is_one_message_made_once_its_usage_is_known() {
        let call = item(
            json!({"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}", "call_id": "c1"}),
        );
        let output =
            item(json!({"type": "function_call_output", "call_id": "c1", "output": "a.txt"}));
        let mut reader = read(&[
            item(
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list it"}]}),
            ),
            item(
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Look first."}]}),
            ),
            item(
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Listing."}]}),
            ),
            call,
        ]);
        // The call waits for its usage, and so does the output that follows it.
        assert_eq!(reader.thread().messages.len(), 1);
        reader.record(&output);
        assert_eq!(reader.thread().messages.len(), 1);
        reader.record(&token_count(3_100, 1_024, 21));
        let thread = reader.thread();
        let roles: Vec<Role> = thread.messages.iter().map(|m| m.message.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool]);
        let reply = &thread.messages[1].message;
        assert_eq!(reply.content, "<thinking>Look first.</thinking>\n\nListing.");
        assert_eq!(reply.tool_calls.as_ref().unwrap()[0].arguments, json!({"cmd": "ls"}));
        assert_eq!(
            reply.usage,
            Some(Usage {
                input_tokens: 2_076,
                cache_read_tokens: 1_024,
                cache_write_tokens: 0,
                output_tokens: 21,
                ..Usage::default()
            })
        );
        assert_eq!(thread.calls, [(1, thread.messages[1].at, 3_100)]);
        assert_eq!(thread.messages[0].starts, Some(SegmentStart::Request));
    }

    #[test]
    fn usage_records_are_taken_and_the_running_totals_then_left() {
        let reader = read(&[
            item(
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "one"}]}),
            ),
            usage_record(100, 40, 5),
            token_count(100, 40, 5),
            item(
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "two"}]}),
            ),
            usage_record(150, 100, 7),
            token_count(250, 140, 12),
        ]);
        let usage: Vec<_> =
            reader.thread().messages.iter().map(|m| m.message.usage.unwrap()).collect();
        assert_eq!(usage[0].input_tokens + usage[0].cache_read_tokens, 100);
        assert_eq!(
            usage[1],
            Usage {
                input_tokens: 50,
                cache_read_tokens: 100,
                cache_write_tokens: 0,
                output_tokens: 7,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn running_totals_give_each_call_what_it_added_and_a_repeat_nothing() {
        let reader = read(&[
            item(
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "one"}]}),
            ),
            token_count(100, 0, 5),
            token_count(100, 0, 5),
            item(
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "two"}]}),
            ),
            token_count(260, 90, 12),
        ]);
        let usage: Vec<_> =
            reader.thread().messages.iter().map(|m| m.message.usage.unwrap()).collect();
        assert_eq!(
            usage[0],
            Usage {
                input_tokens: 100,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
                output_tokens: 5,
                ..Usage::default()
            }
        );
        assert_eq!(
            usage[1],
            Usage {
                input_tokens: 70,
                cache_read_tokens: 90,
                cache_write_tokens: 0,
                output_tokens: 7,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn a_spawn_call_names_the_thread_its_output_started() {
        let reader = read(&[
            item(
                json!({"type": "function_call", "name": "spawn_agent", "namespace": "multi_agent_v1", "arguments": "{\"message\":\"Count the lines\"}", "call_id": "c2"}),
            ),
            usage_record(10, 0, 1),
            item(
                json!({"type": "function_call_output", "call_id": "c2", "output": "{\"agent_id\":\"t-child\",\"nickname\":\"Pascal\"}"}),
            ),
        ]);
        let thread = reader.thread();
        assert_eq!(thread.children().collect::<Vec<_>>(), ["t-child"]);
        assert_eq!(thread.spawns[0].prompt, "Count the lines");
    }

    #[test]
    fn injected_user_text_is_not_a_request() {
        assert!(is_request("Look at this folder"));
        assert!(!is_request("<environment_context>\n  <cwd>/tmp</cwd>"));
        assert!(!is_request("# AGENTS.md instructions for /tmp"));
    }
}
