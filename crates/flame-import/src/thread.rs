//! A thread: one transcript's messages in order — a Claude Code file, an OpenCode session —
//! each with the marks that segmentation reads.
//!
//! The importers read their formats into threads; `segment.rs` cuts a thread where the work
//! changes and places it in the draft. This module sits below both, so that neither format's
//! reader and the segmentation depend on each other.

use std::sync::Arc;

use flame_model::{NewMessage, Timestamp};
use flame_tokens::{Encoding, count_message};

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
    /// Shared with the drafts made from the thread, which are made again at every call a live
    /// session makes (`wire.rs`): a message is copied once, when it is read.
    pub message: Arc<NewMessage>,
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

/// Counts the tokens of `messages` in the encoding of the model the thread was made with, or in
/// `fallback` when the transcript names none: each importer's default is the encoding of the
/// models its agent runs.
pub fn count_tokens(messages: &mut [ThreadMessage], model: Option<&str>, fallback: Encoding) {
    let encoding = model.map_or(fallback, Encoding::for_model);
    for m in messages {
        m.tokens = count_message(encoding, &m.message);
    }
}

#[cfg(test)]
mod tests {
    use flame_model::Role;

    use super::*;

    fn message(text: &str) -> ThreadMessage {
        ThreadMessage {
            message: NewMessage::text(Role::User, text).into(),
            at: 0,
            tokens: 0,
            starts: None,
            closes: None,
            files: Vec::new(),
        }
    }

    /// The thread's model chooses the encoding; without one the importer's fallback does.
    #[test]
    fn tokens_are_counted_in_the_models_encoding_else_the_fallback() {
        let text = "Counting the tokens of a transcript's messages, once each.";
        let mut messages = vec![message(text), message("")];
        count_tokens(&mut messages, None, Encoding::ClaudeEstimate);
        let claude = count_message(Encoding::ClaudeEstimate, &messages[0].message);
        assert_eq!(messages[0].tokens, claude);
        assert_eq!(
            messages[1].tokens,
            count_message(Encoding::ClaudeEstimate, &messages[1].message)
        );

        count_tokens(&mut messages, Some("gpt-4o"), Encoding::ClaudeEstimate);
        let o200k = count_message(Encoding::O200kBase, &messages[0].message);
        assert_eq!(messages[0].tokens, o200k);
        assert_ne!(o200k, claude, "the two encodings differ on this text");
    }
}
