//! Claude Code sessions: `<session>.jsonl` and its `<session>/subagents/agent-*.jsonl`.
//!
//! Each file is a *thread* of records linked by `uuid`/`parentUuid`. A thread becomes a list of
//! messages (assistant records sharing `message.id` merged into one response, tool results as
//! `tool` messages, compaction boundaries as notes) plus the marks segmentation needs and the
//! model calls with their recorded usage. The session becomes the root frame, the main thread
//! is cut into segments (`segment.rs`), and each subagent becomes a child of the segment whose
//! `Task` call started it, with the call's description as title, its prompt as criteria and
//! what it returned as results.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use flame_model::{NewMessage, Role, Status, Timestamp, ToolCall, ToolResult, Usage};
use flame_tokens::Encoding;
use serde_json::Value;

use crate::draft::{Draft, DraftFrame, FrameKind};
use crate::files::{self, FileTouch};
use crate::jsonl::for_each_record;
use crate::segment;
use crate::thread::{RecordedCall, SegmentStart, ThreadMessage, count_tokens, first_request};
use crate::time::parse_rfc3339;
use crate::{ImportError, ImportOptions, ImportReport, Progress};

/// The tool that starts a subagent (renamed `Agent` in later versions; both are accepted).
const SUBAGENT_TOOLS: [&str; 2] = ["Task", "Agent"];

/// The longest subagent id read; Claude Code's are a few characters (`a2898e3`,
/// `acompact-…`).
pub const MAX_AGENT_ID_BYTES: usize = 128;

/// Whether a subagent id is a plain name — ASCII letters, digits, `-` and `_`, at most
/// [`MAX_AGENT_ID_BYTES`] — which is all that goes into the name of the file read for it: an id
/// is a name, never a path (`../` in one read a transcript from outside the session's folder).
fn is_agent_name(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_AGENT_ID_BYTES
        && id.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

/// A `Task` call's result as the parent received it.
#[derive(Debug, Clone, PartialEq)]
struct TaskResult {
    text: String,
    is_error: bool,
    at: Timestamp,
    agent: Option<String>,
}

/// A thread read from one file.
#[derive(Debug, Default)]
pub struct Thread {
    pub messages: Vec<ThreadMessage>,
    /// `(message index, time, input tokens)` of each recorded model call.
    pub calls: Vec<RecordedCall>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    /// Subagent calls: tool-use id → (message index, description, prompt).
    tasks: Vec<(String, usize, String, String)>,
    results: HashMap<String, TaskResult>,
    /// Tool-use id → agent id, from `agent_progress` records.
    agents: HashMap<String, String>,
    first_at: Option<Timestamp>,
    last_at: Timestamp,
}

/// Reads a Claude Code session (or a lone subagent transcript) into a draft tree.
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
    let mut agents = Vec::new();
    for file in list_agent_files(&subagent_dir(path), &mut report) {
        let thread = read_thread(&file, &mut report, progress)?;
        agents.push((agent_of(&file), thread));
    }
    let agents: Vec<(String, &Thread)> = agents.iter().map(|(a, t)| (a.clone(), t)).collect();
    Ok(draft_session(path, &main, &agents, report, options, Reading::Whole))
}

/// Whether a session's files were read whole, or are being followed while the agent may still
/// write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    Whole,
    /// The session may still grow: a subagent file that no `Task` call names yet is left out
    /// while a `Task` call is waiting for the subagent it started, which that file may turn out
    /// to be once the call's link is written; a call whose subagent is not known yet is not a
    /// problem.
    Live,
}

/// The draft of a session whose main thread is `main` and whose subagent files hold `agents`
/// (by agent id, in the order of their file names), with `report` as what reading them found.
pub(crate) fn draft_session(
    path: &Path,
    main: &Thread,
    agents: &[(String, &Thread)],
    report: ImportReport,
    options: &ImportOptions,
    reading: Reading,
) -> Draft {
    let session = main.session_id.clone().unwrap_or_else(|| stem(path));
    let start = main.first_at.unwrap_or(0);
    let first_request = first_request(&main.messages);
    let mut draft = Draft::of_session(
        "Claude Code",
        &session,
        main.cwd.as_deref(),
        &first_request,
        start,
        report,
    );
    let root = 0;

    let subagent_dir = subagent_dir(path);
    let mut used_agents: HashSet<&str> = HashSet::new();
    // The subagent calls in message order, taken a segment at a time (see `segment::place_with`).
    let mut tasks: Vec<&(String, usize, String, String)> = main.tasks.iter().collect();
    tasks.sort_by_key(|(_, index, _, _)| *index);
    let mut next_task = 0;
    let segment_frames = segment::place_with(
        &mut draft,
        root,
        &main.messages,
        &main.calls,
        options.segment,
        |draft, frame, seg, parent_open| {
            while let Some(&(tool_use, index, description, prompt)) = tasks.get(next_task)
                && *index < seg.end
            {
                next_task += 1;
                let result = main.results.get(tool_use);
                let agent = main
                    .agents
                    .get(tool_use)
                    .cloned()
                    .or_else(|| result.and_then(|r| r.agent.clone()));
                let mut child = DraftFrame::new(
                    Some(frame),
                    FrameKind::Subagent,
                    description,
                    prompt,
                    main.messages[*index].at,
                );
                child.key = format!("task:{tool_use}");
                match result {
                    Some(r) if r.is_error => {
                        child.status = Status::Failed;
                        child.status_reason = Some(r.text.clone());
                        child.ended_at = Some(r.at);
                    }
                    Some(r) => {
                        child.status = Status::Completed;
                        child.results = Some(r.text.clone());
                        child.ended_at = Some(r.at);
                    }
                    None if parent_open => {}
                    None => {
                        child.status = Status::Blocked;
                        child.status_reason =
                            Some("the transcript records no result of this subagent".to_owned());
                    }
                }
                let child = draft.push_frame(child);
                match agent {
                    Some(agent) if !is_agent_name(&agent) => {
                        let shown: String = agent.chars().take(MAX_AGENT_ID_BYTES).collect();
                        draft.report.problem(format!(
                            "tool call {tool_use}: the subagent id {shown:?} is not a plain name (letters, digits, - and _, at most {MAX_AGENT_ID_BYTES} bytes), so no file is read for it; its frame has no messages"
                        ));
                    }
                    Some(agent) => match agents.iter().find(|(a, _)| *a == agent) {
                        Some((name, thread)) => {
                            segment::place(draft, child, &thread.messages, &thread.calls, false);
                            used_agents.insert(name);
                        }
                        None if reading == Reading::Live => {}
                        None => draft.report.problem(format!(
                            "subagent {agent} (tool call {tool_use}): {} is missing; its frame has no messages",
                            subagent_dir.join(format!("agent-{agent}.jsonl")).display()
                        )),
                    },
                    None if reading == Reading::Live => {}
                    None => draft.report.problem(format!(
                        "tool call {tool_use} (\"{description}\"): no record names the subagent it started; its frame has no messages"
                    )),
                }
            }
            Ok::<(), std::convert::Infallible>(())
        },
    );
    let Ok(segment_frames) = segment_frames;

    // Transcripts in the subagents folder that no `Task` call named: compaction agents and any
    // other. Each hangs under the segment that was current when it started.
    let waiting_task = main.tasks.iter().any(|(tool_use, ..)| {
        !main.agents.contains_key(tool_use) && !main.results.contains_key(tool_use)
    });
    for (agent, thread) in agents {
        if used_agents.contains(agent.as_str()) {
            continue;
        }
        let compaction = agent.starts_with("acompact");
        if reading == Reading::Live && waiting_task && !compaction {
            continue;
        }
        // A compaction agent's file begins with old messages of the conversation it summarises,
        // so it is placed by when it ended: under the segment that the compaction closed.
        let at = if thread.last_at > 0 { thread.last_at } else { thread.first_at.unwrap_or(start) };
        let parent = segment_frames
            .iter()
            .rev()
            .find(|(_, from)| *from <= at)
            .or(segment_frames.first())
            .map_or(root, |(f, _)| *f);
        let (title, criteria) = if compaction {
            (
                "Compaction".to_owned(),
                "Summarise the conversation so far so that the session can continue".to_owned(),
            )
        } else {
            let prompt =
                thread.messages.first().map(|m| m.message.content.clone()).unwrap_or_default();
            (format!("Subagent {agent}"), prompt)
        };
        let mut frame = DraftFrame::new(
            Some(parent),
            if compaction { FrameKind::Compaction } else { FrameKind::Subagent },
            &title,
            &criteria,
            thread.first_at.unwrap_or(at),
        );
        frame.key = format!("agent:{agent}");
        let answer = thread
            .messages
            .iter()
            .rev()
            .find(|m| m.message.role == Role::Assistant && !m.message.content.trim().is_empty())
            .map(|m| m.message.content.clone());
        let parent_open = draft.frames[parent].status == Status::InProgress;
        match answer {
            Some(text) => {
                frame.status = Status::Completed;
                frame.results = Some(text);
                frame.ended_at = thread.messages.last().map(|m| m.at);
            }
            None if parent_open => {}
            None => {
                frame.status = Status::Blocked;
                frame.status_reason = Some("the transcript records no answer".to_owned());
            }
        }
        if !compaction {
            draft.report.problem(format!(
                "{}: no Task call of the session names this subagent; imported under the segment current when it started",
                subagent_dir.join(format!("agent-{agent}.jsonl")).display()
            ));
        }
        let frame = draft.push_frame(frame);
        segment::place(&mut draft, frame, &thread.messages, &thread.calls, false);
    }
    draft.focus = segment_frames.last().map(|(f, _)| *f);
    draft
}

/// The folder of a session's subagent files: `<session>/subagents/` beside `<session>.jsonl`.
pub(crate) fn subagent_dir(path: &Path) -> PathBuf {
    path.with_extension("").join("subagents")
}

/// The agent id an `agent-<id>.jsonl` file holds.
pub(crate) fn agent_of(file: &Path) -> String {
    stem(file).trim_start_matches("agent-").to_owned()
}

fn merge_report(into: &mut ImportReport, from: ImportReport) {
    into.absorb(from);
}

pub(crate) fn list_agent_files(dir: &Path, report: &mut ImportReport) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| match e {
            Ok(e) => Some(e.path()),
            Err(err) => {
                report.problem(format!("{}: {err}", dir.display()));
                None
            }
        })
        .filter(|p| {
            p.extension().is_some_and(|e| e == "jsonl")
                && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
        })
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

/// Reads one file into a thread.
pub fn read_thread(
    path: &Path,
    report: &mut ImportReport,
    progress: &mut dyn FnMut(Progress),
) -> Result<Thread, ImportError> {
    let mut reader = ThreadReader::default();
    let mut local = ImportReport::default();
    for_each_record(path, &mut local, progress, |_, record| reader.record(&record))?;
    local.records = reader.records;
    local.merged_records = reader.merged;
    local.skipped = std::mem::take(&mut reader.skipped);
    merge_report(report, local);
    Ok(reader.finish())
}

#[derive(Debug, Default)]
pub(crate) struct ThreadReader {
    thread: Thread,
    /// Each assistant record is a message of its own, with the usage its response gained since
    /// the record before (see [`ThreadReader::live`]).
    split: bool,
    /// `message.id` → the usage its latest record stated, when `split`.
    usage_seen: HashMap<String, Usage>,
    /// How many of the thread's messages have their tokens counted.
    counted: usize,
    records: u64,
    merged: u64,
    skipped: std::collections::BTreeMap<String, u64>,
    /// `message.id` → index of the response it belongs to.
    responses: HashMap<String, usize>,
    /// Tool-use ids of tracker calls that start a work item, with the item.
    pending_items: HashMap<String, (String, String)>,
    /// `bd close` calls: tool-use id → reason.
    pending_closes: HashMap<String, String>,
    /// Tool calls that touch files: tool-use id → (index of the message that made the call, the
    /// files), recorded on that message once the result says the call did not fail.
    pending_files: HashMap<String, (usize, Vec<FileTouch>)>,
    /// Tool-use ids of `git commit` commands, which end a segment when they succeed.
    pending_commits: HashSet<String>,
    /// A segment start waiting for the next message.
    next_start: Option<SegmentStart>,
    current_item: Option<String>,
    last_at: Timestamp,
    /// Messages come from requests to the Messages API (`wire.rs`) rather than from a
    /// transcript: no record says which user text the tool injected, so a user message is a
    /// request when any of its text blocks reads as one.
    wire: bool,
}

impl ThreadReader {
    /// A reader for a file that is still being written. Claude Code writes one record per
    /// content block of a response as the block arrives, all under the response's
    /// `message.id`, each stating the response's usage so far; the last says it all. A response
    /// is never known to be over (the next record may continue it, seconds later), so each record
    /// becomes a message as soon as it is read, and carries the usage its response gained since
    /// the record before: the messages of a response add up to its usage, and a stored message
    /// never changes.
    pub(crate) fn live() -> ThreadReader {
        ThreadReader { split: true, ..ThreadReader::default() }
    }

    /// A reader of the messages of requests to the Messages API (see `wire.rs`), whose tool
    /// calls' paths are relative to `cwd` when inside it.
    pub(crate) fn wire(cwd: Option<&str>) -> ThreadReader {
        let mut reader = ThreadReader { wire: true, ..ThreadReader::default() };
        reader.thread.cwd = cwd.map(str::to_owned);
        reader
    }

    /// Reads one message of a request (`{"role", "content"}`, as the Messages API takes it)
    /// sent at `at`: a user message or an assistant message, which is one response.
    pub(crate) fn wire_message(&mut self, message: &Value, at: Timestamp) {
        self.records += 1;
        self.last_at = at;
        self.thread.last_at = at;
        self.thread.first_at.get_or_insert(at);
        let record = serde_json::json!({ "message": message });
        match message["role"].as_str() {
            Some("assistant") => {
                self.assistant(&record);
            }
            _ => self.user(&record),
        }
    }

    /// Opens a new segment at the next message: the client's conversation no longer starts
    /// with what it sent before (it was compacted, or rewound).
    pub(crate) fn restart(&mut self) {
        self.next_start = Some(SegmentStart::Compaction);
    }

    /// Counts the tokens of the messages read since the last count (each message once).
    pub(crate) fn count_tokens(&mut self) {
        let model = self.thread.model.as_deref();
        count_tokens(&mut self.thread.messages[self.counted..], model, Encoding::ClaudeEstimate);
        self.counted = self.thread.messages.len();
    }

    /// The thread read so far.
    pub(crate) fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Records read, and those skipped by type.
    pub(crate) fn counts(&self) -> (u64, &std::collections::BTreeMap<String, u64>) {
        (self.records, &self.skipped)
    }

    pub(crate) fn record(&mut self, r: &Value) {
        self.records += 1;
        let kind = r["type"].as_str().unwrap_or("(no type)");
        if let Some(at) = r["timestamp"].as_str().and_then(parse_rfc3339) {
            self.last_at = at;
            self.thread.last_at = at;
            self.thread.first_at.get_or_insert(at);
        }
        if self.thread.session_id.is_none() {
            self.thread.session_id = r["sessionId"].as_str().map(str::to_owned);
        }
        if self.thread.cwd.is_none() {
            self.thread.cwd = r["cwd"].as_str().map(str::to_owned);
        }
        match kind {
            "user" => self.user(r),
            "assistant" => {
                if self.assistant(r) {
                    self.merged += 1;
                }
            }
            "system" if r["subtype"] == "compact_boundary" => {
                let meta = &r["compactMetadata"];
                let detail = match (meta["trigger"].as_str(), meta["preTokens"].as_u64()) {
                    (Some(t), Some(n)) => format!(" ({t}, {n} tokens before)"),
                    _ => String::new(),
                };
                self.next_start = Some(SegmentStart::Compaction);
                self.push(NewMessage::text(Role::Note, format!("Conversation compacted{detail}")));
            }
            "system" if r["subtype"] == "local_command" => {
                let text = r["content"].as_str().unwrap_or_default();
                self.push(NewMessage::text(Role::Note, text));
            }
            "system" => self.skip(format!("system:{}", r["subtype"].as_str().unwrap_or("?"))),
            "progress" => {
                let data = &r["data"];
                if data["type"] == "agent_progress"
                    && let (Some(tool), Some(agent)) =
                        (r["parentToolUseID"].as_str(), data["agentId"].as_str())
                {
                    self.thread.agents.entry(tool.to_owned()).or_insert_with(|| agent.to_owned());
                }
                self.skip(format!("progress:{}", data["type"].as_str().unwrap_or("?")));
            }
            other => self.skip(other.to_owned()),
        }
    }

    fn skip(&mut self, what: String) {
        *self.skipped.entry(what).or_default() += 1;
    }

    fn push(&mut self, message: NewMessage) -> usize {
        self.thread.messages.push(ThreadMessage {
            message: message.into(),
            at: self.last_at,
            tokens: 0,
            starts: self.next_start.take(),
            closes: None,
            files: Vec::new(),
        });
        self.thread.messages.len() - 1
    }

    fn user(&mut self, r: &Value) {
        let message = &r["message"];
        let compact_summary = r["isCompactSummary"].as_bool().unwrap_or(false);
        let meta = r["isMeta"].as_bool().unwrap_or(false);
        let mut texts: Vec<String> = Vec::new();
        match &message["content"] {
            Value::String(s) => texts.push(s.clone()),
            Value::Array(items) => {
                for item in items {
                    match item["type"].as_str() {
                        Some("tool_result") => self.tool_result(r, item),
                        Some("text") => {
                            texts.push(item["text"].as_str().unwrap_or_default().to_owned())
                        }
                        Some("image") => texts.push("[image]".to_owned()),
                        _ => texts.push(item.to_string()),
                    }
                }
            }
            _ => {}
        }
        if texts.is_empty() {
            return;
        }
        let request = if self.wire {
            texts.iter().any(|t| is_request(t))
        } else {
            is_request(&texts.join("\n\n"))
        };
        let text = texts.join("\n\n");
        if compact_summary {
            // The compaction boundary before it already opened a segment.
        } else if !meta && request {
            self.next_start = Some(SegmentStart::Request);
        }
        self.push(NewMessage::text(Role::User, text));
    }

    fn tool_result(&mut self, r: &Value, item: &Value) {
        let id = item["tool_use_id"].as_str().unwrap_or_default().to_owned();
        let is_error = item["is_error"].as_bool().unwrap_or(false);
        let text = tool_result_text(&item["content"]);
        let mut message = NewMessage::text(Role::Tool, text.clone());
        message.tool_result =
            Some(ToolResult { detail: None, is_error, name: None, tool_call_id: id.clone() });
        let index = self.push(message);
        if self.thread.tasks.iter().any(|t| t.0 == id) {
            let agent = r["toolUseResult"]["agentId"].as_str().map(str::to_owned);
            self.thread
                .results
                .insert(id.clone(), TaskResult { text, is_error, at: self.last_at, agent });
        }
        if let Some((title, criteria)) = self.pending_items.remove(&id)
            && !is_error
        {
            self.next_start = Some(SegmentStart::Item { title, criteria });
        }
        if let Some(reason) = self.pending_closes.remove(&id)
            && !is_error
        {
            self.thread.messages[index].closes = Some(reason);
        }
        if let Some((call, touched)) = self.pending_files.remove(&id)
            && !is_error
        {
            self.thread.messages[call].files.extend(touched);
        }
        if self.pending_commits.remove(&id) && !is_error {
            // A request or work item already waiting to open the next segment says more.
            self.next_start.get_or_insert(SegmentStart::Commit);
        }
    }

    /// Adds an assistant record; returns whether it was merged into an earlier one.
    fn assistant(&mut self, r: &Value) -> bool {
        let message = &r["message"];
        let id = message["id"].as_str().map(str::to_owned);
        let earlier = id.as_ref().and_then(|id| self.responses.get(id)).copied();
        let existing = earlier.filter(|_| !self.split);
        let index = match existing {
            Some(i) => i,
            None => {
                let mut m = NewMessage::text(Role::Assistant, "");
                m.model = message["model"].as_str().map(str::to_owned);
                let i = self.push(m);
                if let Some(id) = &id {
                    self.responses.insert(id.clone(), i);
                }
                // A later record of a response already begun (read split) made no new call.
                if earlier.is_none() {
                    if self.thread.model.is_none() {
                        self.thread.model = message["model"]
                            .as_str()
                            .filter(|m| !m.starts_with('<'))
                            .map(str::to_owned);
                    }
                    if let Some(input) = input_tokens(&message["usage"]) {
                        self.thread.calls.push((i, self.last_at, input));
                    }
                }
                i
            }
        };
        let mut calls: Vec<ToolCall> = Vec::new();
        let mut text = String::new();
        if let Value::Array(items) = &message["content"] {
            for item in items {
                match item["type"].as_str() {
                    Some("text") => text.push_str(item["text"].as_str().unwrap_or_default()),
                    Some("thinking") => {
                        let thought = item["thinking"].as_str().unwrap_or_default();
                        if !thought.is_empty() {
                            text.push_str(&format!("<thinking>{thought}</thinking>"));
                        }
                    }
                    Some("tool_use") => {
                        self.tool_use(item, index);
                        calls.push(tool_call(item, "id", "name", "input"));
                    }
                    _ => text.push_str(&item.to_string()),
                }
            }
        } else if let Some(s) = message["content"].as_str() {
            text.push_str(s);
        }
        let target = std::sync::Arc::make_mut(&mut self.thread.messages[index].message);
        if !text.is_empty() {
            if !target.content.is_empty() {
                target.content.push_str("\n\n");
            }
            target.content.push_str(&text);
        }
        if !calls.is_empty() {
            target.tool_calls.get_or_insert_default().extend(calls);
        }
        if message["usage"].is_object() {
            target.usage = usage(&message["usage"]);
        }
        if self.split
            && let (Some(id), Some(now)) = (&id, target.usage)
        {
            let before = self.usage_seen.insert(id.clone(), now).unwrap_or_default();
            target.usage = Some(now.since(&before)).filter(|u| *u != Usage::default());
        }
        existing.is_some()
    }

    fn tool_use(&mut self, item: &Value, index: usize) {
        let id = item["id"].as_str().unwrap_or_default().to_owned();
        let name = item["name"].as_str().unwrap_or_default();
        let input = &item["input"];
        let touched = files::claude_code(name, input, self.thread.cwd.as_deref());
        if !touched.is_empty() {
            self.pending_files.insert(id.clone(), (index, touched));
        }
        if SUBAGENT_TOOLS.contains(&name) {
            let description = input["description"].as_str().unwrap_or("Subagent").to_owned();
            let prompt = input["prompt"].as_str().unwrap_or_default().to_owned();
            self.thread.tasks.push((id, index, description, prompt));
        } else if name == "TodoWrite" {
            let todos = input["todos"].as_array().cloned().unwrap_or_default();
            let active = todos.iter().find(|t| t["status"] == "in_progress");
            if let Some(active) = active {
                let content = active["content"].as_str().unwrap_or_default().to_owned();
                if self.current_item.as_deref() != Some(&content) {
                    self.current_item = Some(content.clone());
                    let title = active["activeForm"].as_str().unwrap_or(&content).to_owned();
                    self.pending_items.insert(id, (title, content));
                }
            }
        } else if name == "Bash" {
            let command = input["command"].as_str().unwrap_or_default();
            if let Some(item) = beads_started(command) {
                if self.current_item.as_deref() != Some(&item) {
                    self.current_item = Some(item.clone());
                    self.pending_items.insert(
                        id.clone(),
                        (
                            format!("Work item {item}"),
                            format!("Finish work item {item} (bd issue tracker)"),
                        ),
                    );
                }
            } else if let Some(reason) = beads_closed(command) {
                self.pending_closes.insert(id.clone(), reason);
            }
            if runs_git_commit(command) {
                self.pending_commits.insert(id);
            }
        }
    }

    fn finish(mut self) -> Thread {
        let model = self.thread.model.as_deref();
        count_tokens(&mut self.thread.messages, model, Encoding::ClaudeEstimate);
        self.thread
    }
}

/// A tool call as a transcript records it, under the key names it uses. An id or name that is
/// not a string (a broken file) is kept as empty.
pub(crate) fn tool_call(item: &Value, id: &str, name: &str, arguments: &str) -> ToolCall {
    let text = |key: &str| item[key].as_str().unwrap_or_default().to_owned();
    ToolCall { arguments: item[arguments].clone(), id: text(id), name: text(name) }
}

/// The token counts of an Anthropic usage report, or none when it is not an object. A count
/// that is not a whole number (a broken file) is taken as zero; what else Anthropic reports
/// (its service tier, server tool use) Flame does not use. Its cache writes are split by
/// lifetime (`cache_creation`), since an hour's cost more than five minutes'.
pub(crate) fn usage(report: &Value) -> Option<Usage> {
    let field = |k: &str| report[k].as_u64().unwrap_or(0);
    let written = field("cache_creation_input_tokens");
    let long = report["cache_creation"]["ephemeral_1h_input_tokens"].as_u64().unwrap_or(0);
    let long = long.min(written);
    report.is_object().then(|| Usage {
        cache_read_tokens: field("cache_read_input_tokens"),
        cache_write_long_tokens: long,
        cache_write_tokens: written - long,
        input_tokens: field("input_tokens"),
        output_tokens: field("output_tokens"),
    })
}

/// The context a call sent: fresh input plus what was read from and written to the cache.
fn input_tokens(usage: &Value) -> Option<u64> {
    let field = |k: &str| usage[k].as_u64().unwrap_or(0);
    let total = field("input_tokens")
        .saturating_add(field("cache_read_input_tokens"))
        .saturating_add(field("cache_creation_input_tokens"));
    (total > 0).then_some(total)
}

/// Whether a user message is a person's request rather than text the tool injected (command
/// echoes, background-task notifications, interruption markers, reminders).
fn is_request(text: &str) -> bool {
    let t = text.trim_start();
    !t.is_empty()
        && ![
            "<task-notification>",
            "<command-name>",
            "<command-message>",
            "<local-command-",
            "<system-reminder>",
            "<bash-",
            "Caveat:",
            "[Request interrupted",
        ]
        .iter()
        .any(|p| t.starts_with(p))
}

/// The item a `bd update ITEM --status in_progress` command starts (beads, the issue tracker
/// the shared sessions keep their task list in).
fn beads_started(command: &str) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let at = words.windows(2).position(|w| w == ["bd", "update"])?;
    let rest = &words[at + 2..];
    let item = rest.first().filter(|w| !w.starts_with('-'))?;
    let flag = rest.contains(&"--status=in_progress")
        || rest.windows(2).any(|w| w == ["--status", "in_progress"]);
    flag.then(|| (*item).to_owned())
}

/// Whether a shell command runs `git commit` (and not, say, `git commit-tree`), anywhere in
/// it: after `&&`, `;` or a `cd`.
fn runs_git_commit(command: &str) -> bool {
    command.match_indices("git commit").any(|(at, text)| {
        let before = command[..at].chars().next_back();
        let after = command[at + text.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric() && c != '-' && c != '_')
            && after.is_none_or(char::is_whitespace)
    })
}

/// The reason of a `bd close ITEM --reason="…"` command.
fn beads_closed(command: &str) -> Option<String> {
    let at = command.find("bd close ")?;
    let rest = &command[at..];
    let reason = rest
        .split_once("--reason=")
        .map(|(_, r)| r)
        .or_else(|| rest.split_once("--reason ").map(|(_, r)| r));
    Some(match reason {
        Some(r) => {
            let r = r.trim_start();
            match r.chars().next() {
                Some(q @ ('"' | '\'')) => r[1..].split(q).next().unwrap_or_default().to_owned(),
                _ => r.split_whitespace().next().unwrap_or_default().to_owned(),
            }
        }
        None => rest.split_whitespace().nth(2).map(|i| format!("Closed {i}")).unwrap_or_default(),
    })
}

/// The text of an Anthropic `tool_result` block's content, as a thread holds it: its text parts
/// joined by lines, an image as `[image]`, any other part as its JSON. The gateway compares what
/// a client sends with this to know whether Flame changed a result.
pub fn tool_result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p["type"].as_str() {
                Some("text") => p["text"].as_str().unwrap_or_default().to_owned(),
                Some("image") => "[image]".to_owned(),
                _ => p.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn recognises_tracker_commands() {
        assert_eq!(
            beads_started("bd update spotter-a0y.1 --status in_progress"),
            Some("spotter-a0y.1".into())
        );
        assert_eq!(beads_started("cd x && bd update a.2 --status=in_progress"), Some("a.2".into()));
        assert_eq!(beads_started("bd update a.2 --status closed"), None);
        assert_eq!(beads_started("bd show a.2"), None);
        assert_eq!(
            beads_closed("bd close a.1 --reason=\"Done: it works\""),
            Some("Done: it works".into())
        );
        assert_eq!(beads_closed("bd close a.1"), Some("Closed a.1".into()));
        assert_eq!(beads_closed("bd ready"), None);
    }

    #[test]
    fn recognises_git_commit_commands() {
        assert!(runs_git_commit("git commit -m \"Fix it\""));
        assert!(runs_git_commit("cd /w && git add -A && git commit -q -m x"));
        assert!(runs_git_commit("git commit"));
        assert!(!runs_git_commit("git commit-tree abc"));
        assert!(!runs_git_commit("git log --oneline"));
        assert!(!runs_git_commit("legit commit"));
    }

    #[test]
    fn injected_text_is_not_a_request() {
        assert!(is_request("continue until all are done"));
        assert!(!is_request("<task-notification>\n<task-id>1</task-id>"));
        assert!(!is_request("[Request interrupted by user]"));
        assert!(!is_request("  "));
    }

    #[test]
    fn usage_counts_cache_reads_and_writes() {
        let usage = json!({"input_tokens": 3, "cache_creation_input_tokens": 8216, "cache_read_input_tokens": 17842, "output_tokens": 9});
        assert_eq!(input_tokens(&usage), Some(26_061));
        assert_eq!(input_tokens(&json!({})), None);
    }
}
