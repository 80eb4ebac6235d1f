//! OpenCode sessions, from either storage layout:
//! - before 1.2, JSON files under `storage/`: `session/<project>/<session>.json`,
//!   `message/<session>/<message>.json` and `part/<message>/<part>.json`;
//! - from 1.2, the `session`, `message` and `part` tables of `opencode.db`, whose `data` columns
//!   hold the same message and part objects as JSON. This crate does not open SQLite: the
//!   facade reads the rows through `flame-store` (the only crate that talks to SQLite) and
//!   passes them to [`from_rows`].
//!
//! A session becomes a frame; a child session (`parentID`) becomes a child of its parent's
//! frame, titled from the `task` tool call that started it (found by the call's
//! `state.metadata.sessionId`) or from its own title, with the call's output as its results.
//! Each assistant *step* (`step-start` … `step-finish`) is one model call: its text, reasoning
//! and tool calls become one assistant message, each tool's output a `tool` message after it,
//! and the step's recorded tokens (input plus cache reads and writes) the call's context size.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use flame_model::{NewMessage, Role, Status, Timestamp, ToolCall, ToolResult, Usage};
use flame_tokens::{Encoding, count_message};
use serde_json::Value;

use crate::draft::{Draft, DraftFrame, FrameKind, title_from};
use crate::files::{self, FileTouch};
use crate::segment;
use crate::thread::{RecordedCall, SegmentStart, ThreadMessage};
use crate::{ImportError, ImportOptions, ImportReport, MAX_RECORD_BYTES, Progress};

/// A session row or file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub parent_id: Option<String>,
    pub title: String,
    pub directory: Option<String>,
    pub time_created: Timestamp,
}

/// A message row or file: `data` is the message object (role, time, tokens…).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub id: String,
    pub session_id: String,
    pub time_created: Timestamp,
    pub data: Value,
}

/// A part row or file: `data` is the part object (type, text, tool state…).
#[derive(Debug, Clone, PartialEq)]
pub struct PartRow {
    pub id: String,
    pub message_id: String,
    pub time_created: Timestamp,
    pub data: Value,
}

/// Everything read from one OpenCode data directory or database.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rows {
    pub sessions: Vec<SessionRow>,
    pub messages: Vec<MessageRow>,
    pub parts: Vec<PartRow>,
    /// What could not be read on the way.
    pub problems: Vec<String>,
}

/// Where an OpenCode source is: the database, or the `storage/` folder of the JSON layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Database(PathBuf),
    Storage { storage: PathBuf, session: Option<String> },
}

/// Finds the source `path` names: `opencode.db`, an OpenCode data directory (with
/// `opencode.db` or `storage/`), a `storage/` folder, or one session's JSON file (whose
/// session is then the one imported).
pub fn locate(path: &Path) -> Option<Source> {
    if path.is_file() {
        if is_sqlite(path) {
            return Some(Source::Database(path.to_owned()));
        }
        // storage/session/<project>/<session>.json
        let project = path.parent()?;
        let sessions = project.parent()?;
        let storage = sessions.parent()?;
        if sessions.file_name()? == "session" && storage.join("message").is_dir() {
            let session = path.file_stem()?.to_string_lossy().into_owned();
            return Some(Source::Storage { storage: storage.to_owned(), session: Some(session) });
        }
        return None;
    }
    if path.join("opencode.db").is_file() {
        return Some(Source::Database(path.join("opencode.db")));
    }
    for storage in [path.join("storage"), path.to_owned()] {
        if storage.join("session").is_dir() && storage.join("message").is_dir() {
            return Some(Source::Storage { storage, session: None });
        }
    }
    None
}

/// Whether a file starts with SQLite's header.
pub fn is_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok()
        && &head == b"SQLite format 3\0"
}

/// Reads the JSON layout under `storage`, file by file; a file that cannot be read or parsed
/// is a problem and the rest is read.
pub fn read_storage(
    storage: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Rows, ImportError> {
    let mut rows = Rows::default();
    let io = |path: &Path, source| ImportError::Io { path: path.to_owned(), source };
    let sessions = storage.join("session");
    let projects = std::fs::read_dir(&sessions).map_err(|e| io(&sessions, e))?;
    let mut files = Vec::new();
    for project in projects.flatten() {
        files.extend(json_files(&project.path(), &mut rows.problems));
    }
    let total = files.len() as u64;
    for (n, file) in files.iter().enumerate() {
        progress(Progress { file: "sessions".into(), bytes_read: n as u64, total_bytes: total });
        let Some(s) = read_json(file, &mut rows.problems) else { continue };
        rows.sessions.push(SessionRow {
            id: s["id"].as_str().unwrap_or_default().to_owned(),
            parent_id: s["parentID"].as_str().map(str::to_owned),
            title: s["title"].as_str().unwrap_or_default().to_owned(),
            directory: s["directory"].as_str().map(str::to_owned),
            time_created: s["time"]["created"].as_i64().unwrap_or(0),
        });
    }
    for session in rows.sessions.clone() {
        for file in json_files(&storage.join("message").join(&session.id), &mut rows.problems) {
            let Some(m) = read_json(&file, &mut rows.problems) else { continue };
            let id = m["id"].as_str().unwrap_or_default().to_owned();
            for part_file in json_files(&storage.join("part").join(&id), &mut rows.problems) {
                let Some(p) = read_json(&part_file, &mut rows.problems) else { continue };
                rows.parts.push(PartRow {
                    id: p["id"].as_str().unwrap_or_default().to_owned(),
                    message_id: id.clone(),
                    time_created: p["time"]["start"].as_i64().unwrap_or(0),
                    data: p,
                });
            }
            rows.messages.push(MessageRow {
                id,
                session_id: session.id.clone(),
                time_created: m["time"]["created"].as_i64().unwrap_or(0),
                data: m,
            });
        }
        progress(Progress { file: session.id.clone(), bytes_read: total, total_bytes: total });
    }
    Ok(rows)
}

fn json_files(dir: &Path, problems: &mut Vec<String>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| match e {
            Ok(e) => Some(e.path()),
            Err(err) => {
                problems.push(format!("{}: {err}", dir.display()));
                None
            }
        })
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn read_json(path: &Path, problems: &mut Vec<String>) -> Option<Value> {
    // One byte past the limit tells a file too large to be one record, which is not held.
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path)
        .and_then(|file| file.take(MAX_RECORD_BYTES as u64 + 1).read_to_end(&mut bytes));
    if let Err(err) = read {
        problems.push(format!("{}: {err}; skipped", path.display()));
        return None;
    }
    if bytes.len() > MAX_RECORD_BYTES {
        problems.push(format!(
            "{}: more than the {MAX_RECORD_BYTES} bytes a record may be; skipped",
            path.display()
        ));
        return None;
    }
    if bytes.is_empty() {
        problems.push(format!("{}: the file is empty; skipped", path.display()));
        return None;
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(v @ Value::Object(_)) => Some(v),
        Ok(_) => {
            problems.push(format!("{}: not a JSON object; skipped", path.display()));
            None
        }
        Err(err) => {
            problems.push(format!("{}: {err}; skipped", path.display()));
            None
        }
    }
}

/// Builds the tree of `session` (default: the newest session without a parent) and its child
/// sessions from `rows`.
pub fn from_rows(
    rows: Rows,
    session: Option<&str>,
    options: &ImportOptions,
) -> Result<Draft, String> {
    draft_rows(rows, session, options, false)
}

/// [`from_rows`] for a session OpenCode may still be writing: a step is left out until it is
/// finished (its `step-finish`, or its message completed), so each message is made once, whole,
/// and a child session that has not ended is in progress rather than blocked.
pub fn from_rows_live(rows: Rows, session: &str, options: &ImportOptions) -> Result<Draft, String> {
    draft_rows(rows, Some(session), options, true)
}

fn draft_rows(
    rows: Rows,
    session: Option<&str>,
    options: &ImportOptions,
    live: bool,
) -> Result<Draft, String> {
    let Rows { sessions, messages, parts, problems } = rows;
    let root = match session {
        Some(id) => {
            sessions.iter().find(|s| s.id == id).ok_or_else(|| format!("no session {id}"))?
        }
        None => sessions
            .iter()
            .filter(|s| s.parent_id.is_none())
            .max_by_key(|s| (s.time_created, s.id.clone()))
            .ok_or("no session to import")?,
    };
    let mut parts_of: HashMap<&str, Vec<&PartRow>> = HashMap::new();
    for p in &parts {
        parts_of.entry(p.message_id.as_str()).or_default().push(p);
    }
    for list in parts_of.values_mut() {
        // OpenCode ids sort in creation order.
        list.sort_by(|a, b| a.id.cmp(&b.id));
    }
    let mut messages_of: HashMap<&str, Vec<&MessageRow>> = HashMap::new();
    for m in &messages {
        messages_of.entry(m.session_id.as_str()).or_default().push(m);
    }
    for list in messages_of.values_mut() {
        list.sort_by(|a, b| (a.time_created, &a.id).cmp(&(b.time_created, &b.id)));
    }
    let mut draft = Draft { title: title_from(&root.title), ..Draft::default() };
    for problem in problems {
        draft.report.problem(problem);
    }
    draft.report.records = (sessions.len() + messages.len() + parts.len()) as u64;

    let thread = read_session(root, &messages_of, &parts_of, &mut draft.report, live);
    let mut root_frame = DraftFrame::new(
        None,
        FrameKind::Session,
        &root.title,
        &format!(
            "OpenCode session {}{}: {}",
            root.id,
            root.directory.as_deref().map(|d| format!(" in {d}")).unwrap_or_default(),
            thread.first_request.as_deref().unwrap_or(&root.title)
        ),
        root.time_created,
    );
    root_frame.criteria = root_frame.criteria.trim().to_owned();
    root_frame.key = crate::ROOT_KEY.to_owned();
    let root_index = draft.push_frame(root_frame);
    let mut task_calls: HashMap<String, TaskCall> = HashMap::new();
    let frames_of_thread =
        place_thread(&mut draft, root_index, thread, options.segment, &mut task_calls);
    draft.focus = frames_of_thread.last().map(|(f, _)| *f);

    // Child sessions, breadth first, each under the frame of its parent's thread that was
    // current when it started.
    let mut queue: Vec<(String, Vec<(usize, Timestamp)>)> =
        vec![(root.id.clone(), frames_of_thread)];
    // Each session is placed once: a session listed as its own ancestor (a loop of `parentID`s,
    // or two rows with one id) would otherwise be placed again and again until memory ran out.
    let mut placed_sessions: HashSet<&str> = HashSet::from([root.id.as_str()]);
    while let Some((parent_id, parent_frames)) = queue.pop() {
        let mut children: Vec<&SessionRow> = sessions
            .iter()
            .filter(|s| s.parent_id.as_deref() == Some(parent_id.as_str()))
            .collect();
        children.sort_by_key(|s| s.time_created);
        for child in children {
            if !placed_sessions.insert(child.id.as_str()) {
                draft.report.problem(format!(
                    "session {} is listed as a descendant of itself (its parentID leads back to it); it is imported once",
                    child.id
                ));
                continue;
            }
            let call = task_calls.remove(&child.id);
            let parent = parent_frames
                .iter()
                .rev()
                .find(|(_, from)| *from <= child.time_created)
                .or(parent_frames.first())
                .map_or(root_index, |(f, _)| *f);
            let thread = read_session(child, &messages_of, &parts_of, &mut draft.report, live);
            let (title, criteria) = match &call {
                Some(c) => (c.description.clone(), c.prompt.clone()),
                None => (child.title.clone(), thread.first_request.clone().unwrap_or_default()),
            };
            let mut frame = DraftFrame::new(
                Some(parent),
                FrameKind::Subagent,
                &title,
                &criteria,
                child.time_created,
            );
            frame.key = format!("session:{}", child.id);
            let parent_open = live || draft.frames[parent].status == Status::InProgress;
            match call.as_ref().and_then(|c| c.result.clone()) {
                Some((text, false, at)) => {
                    frame.status = Status::Completed;
                    frame.results = Some(text);
                    frame.ended_at = Some(at);
                }
                Some((text, true, at)) => {
                    frame.status = Status::Failed;
                    frame.status_reason = Some(text);
                    frame.ended_at = Some(at);
                }
                None if parent_open => {}
                None => {
                    frame.status = Status::Blocked;
                    frame.status_reason =
                        Some("the parent session records no result of this session".to_owned());
                }
            }
            let index = draft.push_frame(frame);
            let placed = place_thread(&mut draft, index, thread, false, &mut task_calls);
            queue.push((child.id.clone(), placed));
        }
    }
    Ok(draft)
}

/// A `task` tool call of a parent session: what it asked and what came back.
#[derive(Debug, Clone)]
struct TaskCall {
    description: String,
    prompt: String,
    /// `(output or error, is_error, time)`.
    result: Option<(String, bool, Timestamp)>,
}

struct SessionThread {
    messages: Vec<ThreadMessage>,
    calls: Vec<RecordedCall>,
    tasks: Vec<(String, TaskCall)>,
    first_request: Option<String>,
}

fn read_session(
    session: &SessionRow,
    messages_of: &HashMap<&str, Vec<&MessageRow>>,
    parts_of: &HashMap<&str, Vec<&PartRow>>,
    report: &mut ImportReport,
    live: bool,
) -> SessionThread {
    let mut t = SessionThread {
        messages: Vec::new(),
        calls: Vec::new(),
        tasks: Vec::new(),
        first_request: None,
    };
    let mut model: Option<String> = None;
    let mut pending_start: Option<SegmentStart> = None;
    let mut push = |t: &mut SessionThread,
                    message: NewMessage,
                    at: Timestamp,
                    start: &mut Option<SegmentStart>| {
        t.messages.push(ThreadMessage {
            message: message.into(),
            at,
            tokens: 0,
            starts: start.take(),
            closes: None,
            files: Vec::new(),
        });
        t.messages.len() - 1
    };
    for m in messages_of.get(session.id.as_str()).into_iter().flatten() {
        let role = m.data["role"].as_str().unwrap_or_default();
        let parts = parts_of.get(m.id.as_str()).cloned().unwrap_or_default();
        let at = m.time_created;
        if role == "user" {
            let mut texts = Vec::new();
            for p in &parts {
                match p.data["type"].as_str() {
                    Some("text") => {
                        texts.push(p.data["text"].as_str().unwrap_or_default().to_owned())
                    }
                    Some("file") => texts.push(format!(
                        "[file: {}]",
                        p.data["filename"].as_str().or(p.data["url"].as_str()).unwrap_or("?")
                    )),
                    Some("compaction") => {
                        pending_start = Some(SegmentStart::Compaction);
                        push(
                            &mut t,
                            NewMessage::text(Role::Note, "Conversation compacted"),
                            at,
                            &mut pending_start,
                        );
                    }
                    Some(other) => report.skip(format!("part:{other}")),
                    None => report.skip("part:(no type)"),
                }
            }
            if !texts.is_empty() {
                let text = texts.join("\n\n");
                if pending_start.is_none() {
                    pending_start = Some(SegmentStart::Request);
                }
                t.first_request.get_or_insert_with(|| text.clone());
                push(&mut t, NewMessage::text(Role::User, text), at, &mut pending_start);
            }
            continue;
        }
        if role != "assistant" {
            report.skip(format!("message:{role}"));
            continue;
        }
        if model.is_none() {
            model = m.data["modelID"].as_str().map(str::to_owned);
        }
        // One step at a time: text, reasoning and tool calls until `step-finish`.
        let mut step = Step::default();
        for p in &parts {
            let d = &p.data;
            match d["type"].as_str() {
                Some("step-start") => {
                    step.flush(&mut t, m, at, &mut push, &mut pending_start, None)
                }
                Some("text") => step.text.push(d["text"].as_str().unwrap_or_default().to_owned()),
                Some("reasoning") => {
                    let r = d["text"].as_str().unwrap_or_default();
                    if !r.is_empty() {
                        step.text.push(format!("<thinking>{r}</thinking>"));
                    }
                }
                Some("tool") => {
                    let call_id = d["callID"].as_str().unwrap_or_default().to_owned();
                    let state = &d["state"];
                    step.calls.push(ToolCall {
                        arguments: state["input"].clone(),
                        id: call_id.clone(),
                        name: d["tool"].as_str().unwrap_or_default().to_owned(),
                    });
                    let is_error = state["status"] == "error";
                    let output =
                        if is_error { state["error"].as_str() } else { state["output"].as_str() }
                            .unwrap_or_default()
                            .to_owned();
                    let ended = state["time"]["end"].as_i64().unwrap_or(at);
                    if d["tool"] == "task" {
                        let input = &state["input"];
                        let finished =
                            matches!(state["status"].as_str(), Some("completed" | "error"));
                        let call = TaskCall {
                            description: input["description"]
                                .as_str()
                                .unwrap_or("Subagent")
                                .to_owned(),
                            prompt: input["prompt"].as_str().unwrap_or_default().to_owned(),
                            result: finished.then(|| (output.clone(), is_error, ended)),
                        };
                        let child =
                            state["metadata"]["sessionId"].as_str().unwrap_or_default().to_owned();
                        t.tasks.push((child, call));
                    }
                    if state["status"] == "completed" {
                        step.files.extend(files::opencode(
                            d["tool"].as_str().unwrap_or_default(),
                            &state["input"],
                            session.directory.as_deref(),
                        ));
                    }
                    step.results.push((call_id, output, is_error));
                }
                Some("step-finish") => {
                    let usage = usage_of(&d["tokens"]);
                    step.flush(&mut t, m, at, &mut push, &mut pending_start, usage);
                }
                Some(other) => report.skip(format!("part:{other}")),
                None => report.skip("part:(no type)"),
            }
        }
        // A step still being written (no `step-finish`, the message not completed) is left
        // for a later read when the session is followed: what a step will hold is only known
        // at its end, and a stored message never changes.
        let finished = m.data["time"]["completed"].is_number() || m.data["error"].is_object();
        if live && !finished {
            continue;
        }
        // A message without step parts (older versions) is one call with the message's tokens.
        let recorded = usage_of(&m.data["tokens"]).filter(|_| !step.any_call);
        step.flush(&mut t, m, at, &mut push, &mut pending_start, recorded);
    }
    let encoding = model.as_deref().map_or(Encoding::O200kBase, Encoding::for_model);
    for m in &mut t.messages {
        m.tokens = count_message(encoding, &m.message);
    }
    t
}

/// A step's recorded tokens as Flame's usage, or none when it recorded none: OpenCode's
/// `input` leaves out the input read from and written to the cache, as Flame's does, and its
/// reasoning tokens are billed as output.
fn usage_of(tokens: &Value) -> Option<Usage> {
    let field = |v: &Value| v.as_u64().unwrap_or(0);
    let usage = Usage {
        cache_read_tokens: field(&tokens["cache"]["read"]),
        cache_write_tokens: field(&tokens["cache"]["write"]),
        input_tokens: field(&tokens["input"]),
        output_tokens: field(&tokens["output"]).saturating_add(field(&tokens["reasoning"])),
        ..Usage::default()
    };
    (usage != Usage::default()).then_some(usage)
}

/// The assistant output of one step, waiting for its `step-finish`.
#[derive(Default)]
struct Step {
    text: Vec<String>,
    calls: Vec<ToolCall>,
    results: Vec<(String, String, bool)>,
    /// The files the step's finished, successful tool calls touched.
    files: Vec<FileTouch>,
    /// Whether any step of the message recorded its tokens.
    any_call: bool,
}

impl Step {
    fn flush(
        &mut self,
        t: &mut SessionThread,
        m: &MessageRow,
        at: Timestamp,
        push: &mut impl FnMut(
            &mut SessionThread,
            NewMessage,
            Timestamp,
            &mut Option<SegmentStart>,
        ) -> usize,
        start: &mut Option<SegmentStart>,
        usage: Option<Usage>,
    ) {
        if self.text.is_empty() && self.calls.is_empty() && usage.is_none() {
            return;
        }
        let mut message = NewMessage::text(Role::Assistant, self.text.join("\n\n"));
        message.model = m.data["modelID"].as_str().map(str::to_owned);
        message.usage = usage;
        if !self.calls.is_empty() {
            message.tool_calls = Some(std::mem::take(&mut self.calls));
        }
        let index = push(t, message, at, start);
        t.messages[index].files = std::mem::take(&mut self.files);
        if let Some(u) = usage {
            let input = u
                .input_tokens
                .saturating_add(u.cache_read_tokens)
                .saturating_add(u.cache_write_tokens);
            t.calls.push((index, at, input));
            self.any_call = true;
        }
        for (id, output, is_error) in self.results.drain(..) {
            let mut result = NewMessage::text(Role::Tool, output);
            result.tool_result =
                Some(ToolResult { detail: None, is_error, name: None, tool_call_id: id });
            push(t, result, at, start);
        }
        self.text.clear();
    }
}

/// Adds a session's messages under `frame` (cut into segments when asked) and returns the
/// frames that hold them with their start times.
fn place_thread(
    draft: &mut Draft,
    frame: usize,
    thread: SessionThread,
    segment: bool,
    tasks: &mut HashMap<String, TaskCall>,
) -> Vec<(usize, Timestamp)> {
    tasks.extend(thread.tasks);
    segment::place(draft, frame, &thread.messages, &thread.calls, segment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_storage_session_file_names_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let storage = dir.path().join("storage");
        std::fs::create_dir_all(storage.join("session/proj")).unwrap();
        std::fs::create_dir_all(storage.join("message")).unwrap();
        let file = storage.join("session/proj/ses_1.json");
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(
            locate(&file),
            Some(Source::Storage { storage: storage.clone(), session: Some("ses_1".into()) })
        );
        assert_eq!(locate(dir.path()), Some(Source::Storage { storage, session: None }));
        assert_eq!(locate(&dir.path().join("nothing")), None);
    }
}
