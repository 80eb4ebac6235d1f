//! A thread: one transcript's messages in order — a Claude Code file, an OpenCode session —
//! each with the marks that segmentation reads.
//!
//! The importers read their formats into threads; `segment.rs` cuts a thread where the work
//! changes and places it in the draft. This module sits below both, so that neither format's
//! reader and the segmentation depend on each other.

use flame_model::{NewMessage, Timestamp};

use crate::files::FileTouch;

/// Why a segment begins where it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentStart {
    Request,
    Compaction,
    Item {
        title: String,
        criteria: String,
    },
    /// The message after a successful `git commit`: the agent said a unit of work is done.
    Commit,
}

/// One message of a thread with what segmentation and linking need to know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadMessage {
    pub message: NewMessage,
    pub at: Timestamp,
    pub tokens: u64,
    /// A new segment of the main thread begins at this message.
    pub starts: Option<SegmentStart>,
    /// The agent closed a work item here, with this reason (`bd close --reason`).
    pub closes: Option<String>,
    /// The files this message's tool calls read and changed, from the calls whose result was
    /// not an error.
    pub files: Vec<FileTouch>,
}

/// A model call a thread recorded: `(index of the message it produced, time, input tokens)`.
pub type RecordedCall = (usize, Timestamp, u64);

/// The person's first request in a thread (else its first message's text): what a session is
/// titled by.
pub fn first_request(messages: &[ThreadMessage]) -> String {
    messages
        .iter()
        .find(|m| matches!(m.starts, Some(SegmentStart::Request)))
        .or(messages.first())
        .map(|m| m.message.content.clone())
        .unwrap_or_default()
}
