//! Other tools' agent transcripts — and Flame's own export — as frame trees.
//!
//! Every importer reads files as streams, one record at a time, and returns a [`Draft`]: frames
//! by index with their messages, the model calls the transcript recorded, and an
//! [`ImportReport`] of what carried no message and what could not be read. Nothing here touches
//! the store, a clock or randomness: ids are assigned when the caller materialises the draft with
//! its own `IdSource`, and times come from the transcript. [`replay`] compares what an agent sent
//! with what Flame would have sent, from a draft alone.
//!
//! A `Draft` holds frames by index (parents first), their messages with token counts, the model
//! calls the transcript recorded (with their input tokens including cache reads and writes) and an
//! `ImportReport` (records skipped by type, problems by file and line, at most
//! `MAX_LISTED_PROBLEMS` listed and the rest counted). A line that is truncated, not UTF-8, not
//! JSON or longer than `MAX_RECORD_BYTES` (not held past that) is a problem, and the lines after it
//! are still read. `Draft::materialise(&mut IdSource)` gives ids and positions, checks every title
//! and criteria with `lifecycle::check_identity`, refuses a tree deeper than
//! `flame_model::MAX_DEPTH` and checks `FrameTree::check_invariants`; the facade stores the result
//! with `Store::import_tree_with_trails`. The Flame export reader fits a title the live rules would
//! refuse (`fit_title`), replaces blank criteria and recounts a token count larger than the
//! message's bytes, each with a note in the report, and every sum of tokens from a transcript
//! saturates.
//!
//! Claude Code: the session is the root and its main thread is cut into segments (`segment.rs`);
//! each subagent file becomes a child of the segment whose `Task` call started it (linked by the
//! `agent_progress` records and the tool result's `agentId`, which names a file only when it is a
//! plain name of at most `MAX_AGENT_ID_BYTES`); recorded calls and `Task` calls are sorted by
//! message once and placed a segment at a time, so placing is linear; compaction agents hang under
//! the segment they closed. OpenCode: a session and its child sessions (`parentID`), each child
//! under the frame whose `task` call started it, with one assistant message and one recorded call
//! per step; the JSON layout (`storage/`, before 1.2) is read here, and `opencode.db` (1.2 on) is
//! read by `flame_store::foreign::read_opencode_db` and its rows passed to `opencode::from_rows`,
//! so SQLite stays in `flame-store`. Codex: a rollout file is a thread, one model call is one
//! assistant message with the call's usage, and a `spawn_agent` call's thread is a child frame
//! (`codex.rs`). Each frame's file trail comes from its own successful tool calls (`files.rs`,
//! `Draft::trails`).

mod claude_code;
pub mod codex;
mod draft;
mod files;
pub mod flame_json;
mod jsonl;
pub mod live;
pub mod opencode;
pub mod replay;
pub mod replayer;
#[cfg(feature = "scale")]
pub mod scale;
mod segment;
mod thread;
mod time;
pub mod wire;

use std::path::{Path, PathBuf};

pub use claude_code::{MAX_AGENT_ID_BYTES, tool_result_text};
pub use draft::{
    Draft, DraftFile, DraftFrame, DraftMessage, FrameKind, ImportReport, LIVE_ENCODING,
    MAX_LISTED_PROBLEMS, Materialised, ModelCall, ROOT_KEY, fit_title, title_from,
};
pub use jsonl::MAX_RECORD_BYTES;
pub use thread::SegmentStart;
pub use time::parse_rfc3339;

/// A transcript format Flame can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// A Claude Code session JSONL, with its `subagents/` folder beside it.
    ClaudeCode,
    /// A Codex rollout JSONL (`rollout-….jsonl`), with its subagents' rollouts beside it.
    Codex,
    /// OpenCode's storage: `opencode.db` (1.2 and later) or the JSON files under `storage/`.
    #[serde(rename = "opencode")]
    OpenCode,
    /// Flame's own JSON export (`docs/export-format.md`).
    Flame,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::OpenCode => "opencode",
            Format::Flame => "flame",
        }
    }
}

/// How an import reads its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// Cut a session's main thread into sibling frames (`segment.rs`); otherwise the root
    /// frame holds the whole main thread.
    pub segment: bool,
    /// Which session of a store holding many (OpenCode); the newest top-level one if `None`.
    pub session: Option<String>,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions { segment: true, session: None }
    }
}

/// How far an import has read, reported as it goes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    /// The file being read (its name).
    pub file: String,
    pub bytes_read: u64,
    pub total_bytes: u64,
}

/// Why nothing could be imported. Callers branch on it: a missing file and an unknown format
/// are the person's to fix, the rest says what was wrong with the file.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "cannot tell the format of {}: {why}; name it with --format claude-code|codex|opencode|flame",
        path.display()
    )]
    UnknownFormat { path: PathBuf, why: String },
    /// Nothing could be imported; `problems` are the first few reasons (at most
    /// [`MAX_LISTED_PROBLEMS`]) and `unlisted` counts the rest.
    #[error("{} holds no message to import{}", path.display(), describe(problems, *unlisted))]
    Empty { path: PathBuf, problems: Vec<String>, unlisted: u64 },
    #[error("{} is not a Flame export: {why}", path.display())]
    BadExport { path: PathBuf, why: String },
    #[error("{}: {why}", path.display())]
    BadOpenCode { path: PathBuf, why: String },
    /// An OpenCode database: its rows must be read through `flame-store` and passed to
    /// [`opencode::from_rows`].
    #[error("{} is an SQLite database; read it with flame_store::foreign::read_opencode_db", path.display())]
    NeedsDatabaseReader { path: PathBuf },
}

impl ImportError {
    /// `path` held no message; `report` says what could not be read.
    pub(crate) fn nothing_in(path: &Path, report: &ImportReport) -> ImportError {
        ImportError::Empty {
            path: path.to_owned(),
            problems: report.problems.clone(),
            unlisted: report.unlisted_problems,
        }
    }
}

fn describe(problems: &[String], unlisted: u64) -> String {
    match (problems.len(), unlisted) {
        (0, _) => String::new(),
        (_, 0) => format!(" ({})", problems.join("; ")),
        _ => format!(" ({}; and {unlisted} more)", problems.join("; ")),
    }
}

/// Reads `path` in `format` (detected when `None`) into a draft tree.
pub fn import(
    path: &Path,
    format: Option<Format>,
    options: &ImportOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Draft, ImportError> {
    let format = match format {
        Some(f) => f,
        None => detect(path)?,
    };
    match format {
        Format::ClaudeCode => claude_code::import(path, options, progress),
        Format::Codex => codex::import(path, options, progress),
        Format::Flame => flame_json::read(path, progress),
        Format::OpenCode => match opencode::locate(path) {
            Some(opencode::Source::Storage { storage, session }) => {
                let rows = opencode::read_storage(&storage, progress)?;
                let session = options.session.clone().or(session);
                opencode::from_rows(rows, session.as_deref(), options)
                    .map_err(|why| ImportError::BadOpenCode { path: path.to_owned(), why })
            }
            Some(opencode::Source::Database(db)) => {
                Err(ImportError::NeedsDatabaseReader { path: db })
            }
            None => Err(ImportError::BadOpenCode {
                path: path.to_owned(),
                why: "not an OpenCode data directory, storage/ folder, session file or opencode.db"
                    .to_owned(),
            }),
        },
    }
}

/// Tells the format from the file's first record: a Flame export is one JSON object with
/// `"format": "flame-export"`; a Codex rollout is JSON Lines whose records carry a `payload`
/// and a Codex record `type`; a Claude Code transcript is JSON Lines whose records carry
/// `sessionId` or a Claude Code record `type`.
pub fn detect(path: &Path) -> Result<Format, ImportError> {
    use std::io::Read;
    let io = |source| ImportError::Io { path: path.to_owned(), source };
    if opencode::locate(path).is_some() {
        return Ok(Format::OpenCode);
    }
    if path.is_dir() {
        return Err(ImportError::UnknownFormat {
            path: path.to_owned(),
            why: "it is a folder, but not an OpenCode data directory; name a session file (.jsonl) or an export (.json)".to_owned(),
        });
    }
    let mut head = Vec::with_capacity(64 * 1024);
    std::fs::File::open(path).map_err(io)?.take(64 * 1024).read_to_end(&mut head).map_err(io)?;
    let text = String::from_utf8_lossy(&head);
    let start = text.trim_start();
    if start.is_empty() {
        return Err(ImportError::Empty {
            path: path.to_owned(),
            problems: vec!["the file is empty".to_owned()],
            unlisted: 0,
        });
    }
    if start.starts_with('{') && start.contains("\"flame-export\"") {
        return Ok(Format::Flame);
    }
    let first_line = start.lines().next().unwrap_or_default();
    if let Ok(serde_json::Value::Object(record)) = serde_json::from_str(first_line) {
        let kind = record.get("type").and_then(|t| t.as_str()).unwrap_or_default();
        if record.contains_key("payload")
            && ["session_meta", "response_item", "event_msg", "turn_context"].contains(&kind)
        {
            return Ok(Format::Codex);
        }
        if record.contains_key("sessionId")
            || [
                "user",
                "assistant",
                "summary",
                "file-history-snapshot",
                "progress",
                "system",
                "queue-operation",
            ]
            .contains(&kind)
        {
            return Ok(Format::ClaudeCode);
        }
    }
    Err(ImportError::UnknownFormat {
        path: path.to_owned(),
        why: "its first record is neither a Claude Code nor a Codex record nor a Flame export"
            .to_owned(),
    })
}
