//! The sessions other coding agents write on this computer — Claude Code, Codex and OpenCode —
//! followed as they are written.
//!
//! - [`AgentHomes`]: where each agent keeps its sessions, from the environment the caller passes,
//!   and the folders to watch for its new ones — the nearest folder that exists while the
//!   agent's own folder does not yet ([`nearest_folder`]).
//! - [`list_sessions`]: the sessions there, with what a person picks one by.
//! - [`LiveSession`]: one followed session's files, each read from where the last read stopped
//!   ([`Tail`]), and its draft tree as read so far (`flame_import::live`).
//! - [`Watcher`]: file-system notifications of the folders that hold followed sessions, so a
//!   session is read when it changes and never on a timer.
//!
//! Nothing here writes another tool's files: they are opened for reading only, OpenCode's
//! database included (its rows come from the caller, which reads it through `flame-store`).
//! Nothing here touches Flame's store either; the facade stores what a read found.
//!
//! `AgentHomes` comes from `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `XDG_DATA_HOME` and the home folder,
//! as the agents read them, passed in. A `LiveSession` looks for subagent files at each read, and a
//! truncated or replaced file makes every file of the session read again from its start. A line
//! longer than `MAX_LINE_BYTES` is skipped and reported without being held whole, and reads of
//! Flame's own (file opens) are not changes.

mod homes;
mod listing;
mod session;
mod tail;
mod watch;

pub use homes::{AgentHomes, nearest_folder};
pub use listing::{FoundSession, Listing, MAX_HEAD_BYTES, MAX_LISTED_SESSIONS, list_sessions};
pub use session::{Cursor, LiveSession, ReadRows, Synced};
pub use tail::{FileIdentity, MAX_LINE_BYTES, Tail, TailLine, TailRead};
pub use watch::{WatchSignal, Watcher};

use serde::{Deserialize, Serialize};

/// A coding agent whose sessions Flame can follow.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    ClaudeCode,
    Codex,
    #[serde(rename = "opencode")]
    OpenCode,
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::OpenCode];

    /// The name the command line and the store use.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::OpenCode => "opencode",
        }
    }

    pub fn parse(text: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.as_str() == text)
    }

    /// The agent's name as a person knows it.
    pub fn label(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
            Agent::OpenCode => "OpenCode",
        }
    }
}

/// Why a followed session could not be read this time. Its tree keeps what was read before.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FollowError {
    /// The session's file or database is gone.
    #[error("{0}")]
    Gone(String),
    /// It is there but could not be read (a folder now, unreadable, locked, not a session).
    #[error("{0}")]
    Unreadable(String),
}
