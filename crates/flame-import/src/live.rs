//! Sessions read while their agent is still writing them: a file's reader is fed each complete
//! line as it is written ([`LiveFile::line`]), and the session's draft is made again from what
//! the files' readers hold whenever it is wanted. Whoever follows the files finds the lines;
//! this module only reads them.
//!
//! What a live read makes differs from an import of the same files in one way each, so that a
//! message, once in a draft, never changes as the file grows: Claude Code's records of one
//! response are messages of their own (`claude_code::ThreadReader::live`), Codex's calls wait
//! for their usage (as they do on import), OpenCode's unfinished steps wait for their end
//! (`opencode::from_rows_live`); and a subagent that has not ended is in progress, one whose
//! file is not there yet no problem.
//!
//! Times are kept in the file's order: a record stamped earlier than the one before it takes
//! that one's time, and when it is earlier by more than [`CLOCK_SLACK_MS`] the report says the
//! clock went back (the agent's clock changed, or the file was written by two machines).
//!
//! Every frame of a session's draft has a `key` (`root`, a segment's first message, a subagent's
//! call or file) that is the same however much of the session was read; the facade finds frames by
//! it.

use std::path::Path;

use flame_model::Timestamp;
use serde_json::Value;

use crate::claude_code::{self, Reading, ThreadReader};
use crate::codex::{self, CodexReader, Liveness};
use crate::jsonl::record_of;
use crate::time::parse_rfc3339;
use crate::{Draft, ImportOptions, ImportReport};

/// How far back a record's time may be from the one before it without the report saying so:
/// Claude Code writes some records a few milliseconds out of order.
pub const CLOCK_SLACK_MS: i64 = 1_000;

/// A JSONL format a live file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveFormat {
    ClaudeCode,
    Codex,
}

#[derive(Debug)]
enum Reader {
    ClaudeCode(Box<ThreadReader>),
    Codex(Box<CodexReader>),
}

/// One file of a session, read as far as its complete lines go.
#[derive(Debug)]
pub struct LiveFile {
    name: String,
    reader: Reader,
    report: ImportReport,
    lines: usize,
    /// The latest time a record stated, as written and as read.
    latest: Option<(String, Timestamp)>,
}

impl LiveFile {
    /// A file named `name` (for the report) in `format`, nothing read yet.
    pub fn new(format: LiveFormat, name: &str) -> LiveFile {
        let reader = match format {
            LiveFormat::ClaudeCode => Reader::ClaudeCode(Box::new(ThreadReader::live())),
            LiveFormat::Codex => Reader::Codex(Box::default()),
        };
        LiveFile {
            name: name.to_owned(),
            reader,
            report: ImportReport::default(),
            lines: 0,
            latest: None,
        }
    }

    /// Reads the next complete line, with or without its newline. A line that cannot be read
    /// is reported by its number, as an import reports it.
    pub fn line(&mut self, bytes: &[u8]) {
        self.lines += 1;
        let Some(mut record) = record_of(&self.name, self.lines, bytes, &mut self.report) else {
            return;
        };
        self.keep_order(&mut record);
        match &mut self.reader {
            Reader::ClaudeCode(r) => r.record(&record),
            Reader::Codex(r) => r.record(&record),
        }
    }

    /// Counts a line that was not read (it was longer than the reader's limit), and reports it.
    pub fn skipped_line(&mut self, why: &str) {
        self.lines += 1;
        self.report.problem(format!("{} line {}: {why}; line skipped", self.name, self.lines));
    }

    /// How many lines were read.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Whether the file has a message yet.
    pub fn has_messages(&self) -> bool {
        match &self.reader {
            Reader::ClaudeCode(r) => !r.thread().messages.is_empty(),
            Reader::Codex(r) => !r.thread().messages.is_empty(),
        }
    }

    /// The ids of the threads a Codex file's `spawn_agent` calls started (none for Claude
    /// Code): the files to follow beside it.
    pub fn spawned_threads(&self) -> Vec<String> {
        match &self.reader {
            Reader::Codex(r) => r.thread().children().map(str::to_owned).collect(),
            Reader::ClaudeCode(_) => Vec::new(),
        }
    }

    /// What reading the file found: its problems, and its records read and skipped by type.
    pub fn report(&self) -> ImportReport {
        let mut report = self.report.clone();
        let (records, skipped) = match &self.reader {
            Reader::ClaudeCode(r) => r.counts(),
            Reader::Codex(r) => r.counts(),
        };
        report.records = records;
        report.skipped = skipped.clone();
        report
    }

    /// Gives a record stamped before the latest time read that time (see the module's notes).
    fn keep_order(&mut self, record: &mut Value) {
        let Some(text) = record["timestamp"].as_str() else { return };
        let Some(at) = parse_rfc3339(text) else { return };
        match &self.latest {
            Some((latest_text, latest)) if at < *latest => {
                if latest - at > CLOCK_SLACK_MS {
                    self.report.problem(format!(
                        "{} line {}: its time {text} is {} s before the line before it ({latest_text}): the clock went back; kept in the file's order",
                        self.name,
                        self.lines,
                        (latest - at) / 1000
                    ));
                }
                record["timestamp"] = Value::String(latest_text.clone());
            }
            _ => self.latest = Some((text.to_owned(), at)),
        }
    }
}

/// The draft of the Claude Code session whose main file `path` is read into `main` and whose
/// subagent files (`agent-<id>.jsonl`) into `agents`, by agent id.
pub fn claude_code_draft(
    path: &Path,
    main: &mut LiveFile,
    agents: &mut [(String, &mut LiveFile)],
    options: &ImportOptions,
) -> Draft {
    let report = session_report(main, agents);
    count_tokens(main, agents);
    fn thread(file: &LiveFile) -> Option<&claude_code::Thread> {
        match &file.reader {
            Reader::ClaudeCode(r) => Some(r.thread()),
            Reader::Codex(_) => None,
        }
    }
    let Some(main_thread) = thread(main) else { return Draft { report, ..Draft::default() } };
    let agents: Vec<_> = agents.iter().filter_map(|(a, f)| Some((a.clone(), thread(f)?))).collect();
    claude_code::draft_session(path, main_thread, &agents, report, options, Reading::Live)
}

/// The draft of the Codex session whose main rollout `path` is read into `main` and whose
/// subagents' rollouts into `children`, by thread id.
pub fn codex_draft(
    path: &Path,
    main: &mut LiveFile,
    children: &mut [(String, &mut LiveFile)],
    options: &ImportOptions,
) -> Draft {
    let report = session_report(main, children);
    count_tokens(main, children);
    fn thread(file: &LiveFile) -> Option<&codex::CodexThread> {
        match &file.reader {
            Reader::Codex(r) => Some(r.thread()),
            Reader::ClaudeCode(_) => None,
        }
    }
    let Some(main_thread) = thread(main) else { return Draft { report, ..Draft::default() } };
    let children: Vec<_> =
        children.iter().filter_map(|(id, f)| Some((id.clone(), thread(f)?))).collect();
    codex::draft_session(path, main_thread, &children, report, options, Liveness::Live)
}

/// What reading a session's files found, all of them.
fn session_report(main: &LiveFile, others: &[(String, &mut LiveFile)]) -> ImportReport {
    let mut report = main.report();
    for (_, file) in others {
        report.absorb(file.report());
    }
    report
}

/// Counts the tokens of every file's messages not yet counted.
fn count_tokens(main: &mut LiveFile, others: &mut [(String, &mut LiveFile)]) {
    for file in std::iter::once(main).chain(others.iter_mut().map(|(_, f)| &mut **f)) {
        match &mut file.reader {
            Reader::ClaudeCode(r) => r.count_tokens(),
            Reader::Codex(r) => r.count_tokens(),
        }
    }
}

/// The folder of a Claude Code session's subagent files, beside its main file `path`.
pub fn claude_code_subagent_dir(path: &Path) -> std::path::PathBuf {
    claude_code::subagent_dir(path)
}

/// The `agent-*.jsonl` files of a Claude Code session whose main file is `path`, by name; a
/// folder that cannot be listed has none.
pub fn claude_code_agent_files(path: &Path) -> Vec<(String, std::path::PathBuf)> {
    claude_code::list_agent_files(&claude_code::subagent_dir(path), &mut ImportReport::default())
        .into_iter()
        .map(|file| (claude_code::agent_of(&file), file))
        .collect()
}

/// What the beginning of a session file says: the session's id, its folder, the thread that
/// spawned it (a Codex subagent's) and the person's first request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    pub id: Option<String>,
    pub folder: Option<String>,
    pub parent: Option<String>,
    pub first_request: Option<String>,
}

/// Reads the beginning of the session file `path` in `format`, no further than its first request
/// or `max_bytes`.
pub fn head(format: LiveFormat, path: &Path, max_bytes: u64) -> std::io::Result<Head> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path)?;
    let mut reader = std::io::BufReader::new(file.take(max_bytes));
    let mut live = LiveFile::new(format, "");
    let mut line = Vec::new();
    let request = |live: &LiveFile| -> Option<String> {
        let messages = match &live.reader {
            Reader::ClaudeCode(r) => &r.thread().messages,
            Reader::Codex(r) => &r.thread().messages,
        };
        messages
            .iter()
            .find(|m| m.starts == Some(crate::SegmentStart::Request))
            .map(|m| m.message.content.clone())
    };
    let mut first_request = None;
    while first_request.is_none() {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 || !line.ends_with(b"\n") {
            break;
        }
        live.line(&line);
        first_request = request(&live);
    }
    Ok(match &live.reader {
        Reader::ClaudeCode(r) => Head {
            id: r.thread().session_id.clone(),
            folder: r.thread().cwd.clone(),
            parent: None,
            first_request,
        },
        Reader::Codex(r) => Head {
            id: r.thread().id.clone(),
            folder: r.thread().cwd.clone(),
            parent: r.thread().parent.clone(),
            first_request,
        },
    })
}
