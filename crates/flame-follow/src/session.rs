//! One followed session: its files, each with a [`Tail`] and the reader of what it holds, and
//! its draft tree as read so far.
//!
//! A Claude Code session is its main file and the `agent-*.jsonl` files of its `subagents/`
//! folder, looked for at every read; a Codex session is its main rollout and the rollouts of the
//! threads its `spawn_agent` calls started, found by thread id once a call names one. Each read
//! hands the new complete lines of every file to its reader. When a file was truncated or
//! replaced, every file of the session is read again from its start ([`Synced::restarted`]).
//! OpenCode keeps a session in rows of its database, which change in place (a step is written
//! part by part), so each read takes the session's rows again ([`ReadRows`]).

use std::path::{Path, PathBuf};

use flame_import::live::{self, LiveFile, LiveFormat};
use flame_import::{Draft, ImportOptions, ImportReport, codex, opencode};

use crate::tail::{FileIdentity, MAX_LINE_BYTES, Tail, TailLine, TailRead};
use crate::{Agent, FollowError};

/// How a caller reads OpenCode's database (`flame-store`, the crate that opens SQLite): the rows
/// of the database at the path, or why they could not be read.
pub type ReadRows<'a> = &'a dyn Fn(&Path) -> Result<opencode::Rows, String>;

/// Where a file of a followed session was read up to, as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub path: PathBuf,
    pub identity: FileIdentity,
    pub offset: u64,
}

/// What a read of a session found.
#[derive(Debug)]
pub struct Synced {
    /// The session's tree as read so far; `None` while it holds no message yet.
    pub draft: Option<Draft>,
    /// What reading its files found that could not be read (the draft's report, when there is
    /// a draft).
    pub report: ImportReport,
    /// Where each file was read up to.
    pub cursors: Vec<Cursor>,
    /// Why the session's files were read again from their start, when they were: a file was
    /// truncated or replaced.
    pub restarted: Option<String>,
}

/// One file of a JSONL session.
#[derive(Debug)]
struct Followed {
    /// The subagent's id (Claude Code's agent id, Codex's thread id); empty for the main file.
    name: String,
    tail: Tail,
    file: LiveFile,
}

impl Followed {
    fn new(format: LiveFormat, name: &str, path: &Path) -> Followed {
        let label = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        Followed {
            name: name.to_owned(),
            tail: Tail::new(path),
            file: LiveFile::new(format, &label),
        }
    }

    /// Reads what was written since the last read.
    fn read(&mut self) -> Result<TailRead, FollowError> {
        let Followed { tail, file, .. } = self;
        let got = tail.read(&mut |line| match line {
            TailLine::Complete(bytes) => file.line(bytes),
            TailLine::TooLong(n) => file.skipped_line(&format!(
                "{n} bytes long, over the limit of {MAX_LINE_BYTES} bytes a line may have"
            )),
        });
        got.map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => FollowError::Gone(format!(
                "{} is gone (deleted or moved); the tree keeps what was read of it",
                tail.path.display()
            )),
            std::io::ErrorKind::IsADirectory => FollowError::Unreadable(err.to_string()),
            _ => FollowError::Unreadable(format!("cannot read {}: {err}", tail.path.display())),
        })
    }

    fn cursor(&self) -> Option<Cursor> {
        Some(Cursor {
            path: self.tail.path.clone(),
            identity: self.tail.identity?,
            offset: self.tail.offset,
        })
    }
}

/// A session being followed.
#[derive(Debug)]
pub struct LiveSession {
    agent: Agent,
    /// The main file, or OpenCode's database.
    source: PathBuf,
    /// The agent's id of the session (which session of OpenCode's database).
    session: String,
    options: ImportOptions,
    main: Option<Followed>,
    others: Vec<Followed>,
}

impl LiveSession {
    /// A session to read from its start.
    pub fn new(agent: Agent, source: &Path, session: &str, options: ImportOptions) -> LiveSession {
        let mut live = LiveSession {
            agent,
            source: source.to_owned(),
            session: session.to_owned(),
            options,
            main: None,
            others: Vec::new(),
        };
        live.start_over();
        live
    }

    fn format(&self) -> Option<LiveFormat> {
        match self.agent {
            Agent::ClaudeCode => Some(LiveFormat::ClaudeCode),
            Agent::Codex => Some(LiveFormat::Codex),
            Agent::OpenCode => None,
        }
    }

    fn start_over(&mut self) {
        self.main = self.format().map(|format| Followed::new(format, "", &self.source));
        self.others.clear();
    }

    /// Checks that every file is the one a store's `cursors` were read from and at least as long,
    /// so that reading it from its start finds what was stored; otherwise says why not (the
    /// caller then takes the session as replaced).
    pub fn check(cursors: &[Cursor]) -> Result<(), String> {
        for c in cursors {
            let Ok(metadata) = std::fs::metadata(&c.path) else { continue };
            use std::os::unix::fs::MetadataExt;
            let identity = FileIdentity { device: metadata.dev(), inode: metadata.ino() };
            if metadata.is_file() && identity != c.identity {
                return Err(format!("{} was replaced by another file", c.path.display()));
            }
            if metadata.is_file() && metadata.len() < c.offset {
                return Err(format!(
                    "{} was cut to {} bytes, shorter than the {} already read",
                    c.path.display(),
                    metadata.len(),
                    c.offset
                ));
            }
        }
        Ok(())
    }

    /// The folders whose changes may change this session: to watch, not recursively.
    pub fn folders(&self) -> Vec<PathBuf> {
        let mut folders: Vec<PathBuf> = Vec::new();
        let mut add = |p: &Path| {
            if !folders.iter().any(|f| f == p) {
                folders.push(p.to_owned());
            }
        };
        if let Some(parent) = self.source.parent() {
            add(parent);
        }
        match self.agent {
            Agent::ClaudeCode => {
                let session = self.source.with_extension("");
                add(&session);
                add(&live::claude_code_subagent_dir(&self.source));
            }
            Agent::Codex => {
                for other in &self.others {
                    if let Some(parent) = other.tail.path.parent() {
                        add(parent);
                    }
                }
            }
            Agent::OpenCode => {}
        }
        folders
    }

    /// Whether a change of `path` may change this session.
    pub fn concerns(&self, path: &Path) -> bool {
        match self.agent {
            Agent::ClaudeCode => {
                path == self.source || path.starts_with(self.source.with_extension(""))
            }
            Agent::Codex => {
                path == self.source
                    || self.others.iter().any(|o| o.tail.path == path)
                    || path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("rollout-") && path.parent() == self.source.parent()
                    })
            }
            // OpenCode writes its database and its write-ahead log; the shared-memory file is
            // not a change of the session (Flame's own reads touch it).
            Agent::OpenCode => {
                path == self.source || path.as_os_str() == wal(&self.source).as_os_str()
            }
        }
    }

    /// Reads what was written since the last read and returns the session's draft.
    pub fn sync(&mut self, read_rows: ReadRows<'_>) -> Result<Synced, FollowError> {
        match self.agent {
            Agent::OpenCode => self.sync_rows(read_rows),
            Agent::ClaudeCode | Agent::Codex => {
                let restarted = match self.read_files() {
                    Ok(()) => None,
                    Err(Reread::Failed(err)) => return Err(err),
                    Err(Reread::Replaced(why)) => {
                        self.start_over();
                        self.read_files().map_err(|again| match again {
                            Reread::Failed(err) => err,
                            // Replaced again while it was read: the next change reads it.
                            Reread::Replaced(why) => FollowError::Unreadable(why),
                        })?;
                        Some(why)
                    }
                };
                let cursors = std::iter::once(self.main.as_ref())
                    .flatten()
                    .chain(&self.others)
                    .filter_map(Followed::cursor)
                    .collect();
                let draft = self.draft();
                let report = match &draft {
                    Some(draft) => draft.report.clone(),
                    None => self.report(),
                };
                Ok(Synced { draft, report, cursors, restarted })
            }
        }
    }

    fn sync_rows(&mut self, read_rows: ReadRows<'_>) -> Result<Synced, FollowError> {
        if !self.source.exists() {
            return Err(FollowError::Gone(format!(
                "{} is gone; the tree keeps what was read of the session",
                self.source.display()
            )));
        }
        let rows = read_rows(&self.source).map_err(FollowError::Unreadable)?;
        let has_messages = rows.messages.iter().any(|m| m.session_id == self.session);
        let draft = if has_messages {
            Some(
                opencode::from_rows_live(rows, &self.session, &self.options)
                    .map_err(FollowError::Unreadable)?,
            )
        } else if rows.sessions.iter().any(|s| s.id == self.session) {
            None
        } else {
            return Err(FollowError::Gone(format!(
                "{} holds no session {} any more; the tree keeps what was read of it",
                self.source.display(),
                self.session
            )));
        };
        let report = draft.as_ref().map(|d| d.report.clone()).unwrap_or_default();
        Ok(Synced { draft, report, cursors: Vec::new(), restarted: None })
    }

    /// Reads every file's new lines, and finds the subagent files that appeared.
    fn read_files(&mut self) -> Result<(), Reread> {
        let Some(format) = self.format() else { return Ok(()) };
        let main = self.main.as_mut().expect("a JSONL session has a main file");
        if let TailRead::Replaced(why) = main.read().map_err(Reread::Failed)? {
            return Err(Reread::Replaced(why));
        }
        match self.agent {
            Agent::ClaudeCode => {
                for (name, path) in live::claude_code_agent_files(&self.source) {
                    if !self.others.iter().any(|o| o.name == name) {
                        self.others.push(Followed::new(format, &name, &path));
                    }
                }
            }
            Agent::Codex => {
                // A subagent's thread may start its own; new ids come from every file read.
                let mut known: Vec<String> = self.others.iter().map(|o| o.name.clone()).collect();
                let mut wanted = main.file.spawned_threads();
                for other in &self.others {
                    wanted.extend(other.file.spawned_threads());
                }
                while let Some(id) = wanted.pop() {
                    if known.contains(&id) {
                        continue;
                    }
                    if let Some(path) = codex::find_thread_file(&self.source, &id) {
                        let mut child = Followed::new(format, &id, &path);
                        read_other(&mut child)?;
                        wanted.extend(child.file.spawned_threads());
                        known.push(id);
                        self.others.push(child);
                    }
                }
            }
            Agent::OpenCode => {}
        }
        for other in &mut self.others {
            read_other(other)?;
        }
        Ok(())
    }

    /// What reading every file found.
    fn report(&self) -> ImportReport {
        let mut report = ImportReport::default();
        for file in self.main.iter().chain(&self.others) {
            report.absorb(file.file.report());
        }
        report
    }

    fn draft(&mut self) -> Option<Draft> {
        let main = self.main.as_mut()?;
        if !main.file.has_messages() {
            return None;
        }
        let mut others: Vec<(String, &mut LiveFile)> =
            self.others.iter_mut().map(|o| (o.name.clone(), &mut o.file)).collect();
        Some(match self.agent {
            Agent::ClaudeCode => {
                live::claude_code_draft(&self.source, &mut main.file, &mut others, &self.options)
            }
            _ => live::codex_draft(&self.source, &mut main.file, &mut others, &self.options),
        })
    }
}

/// Why the files were not read: one was replaced, or could not be read at all.
enum Reread {
    Replaced(String),
    Failed(FollowError),
}

/// Reads a subagent's file; one that went away keeps what was read of it.
fn read_other(other: &mut Followed) -> Result<(), Reread> {
    match other.read() {
        Ok(TailRead::Lines(_)) | Err(FollowError::Gone(_)) => Ok(()),
        Ok(TailRead::Replaced(why)) => Err(Reread::Replaced(why)),
        Err(err) => Err(Reread::Failed(err)),
    }
}

/// The write-ahead log beside an SQLite database: `<database>-wal`.
fn wal(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}
