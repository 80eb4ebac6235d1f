//! What a model is sent, in no provider's format: the conversation's messages, the marks that ask
//! a provider to keep a prefix in its prompt cache, and what Flame keeps of a frame's context so
//! that every request in the frame starts with the one before it (DESIGN.md §3, §11).
//!
//! `flame-context` decides what the messages and marks are; `flame-models` writes them in each
//! provider's wire format; the store keeps a frame's [`FrameContext`] between calls and
//! processes.
//!
//! A `ChatMessage` may carry a `CacheMark` with its `CacheLifetime` (five minutes or an hour). A
//! frame's `FrameContext` is its opening, its omission line, its masking boundary, the digests of
//! what it was told of each frame, and its context notes; the store keeps it as JSON.

use serde::{Deserialize, Serialize};

use crate::{FrameId, MessageId, Timestamp, ToolCall};

/// One message of the conversation sent to a model.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    User(String),
    Assistant { text: String, tool_calls: Vec<ToolCall> },
    ToolResult { call_id: String, content: String, is_error: bool },
}

/// How long a provider is asked to keep a prefix in its prompt cache. Anthropic offers both (a
/// write for the hour costs twice the input price, one for five minutes 1.25 times it, and each
/// read renews the lifetime); other providers cache on their own for minutes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum CacheLifetime {
    /// Five minutes.
    Short,
    /// An hour.
    Long,
}

impl CacheLifetime {
    /// The lifetime in milliseconds.
    pub fn millis(self) -> i64 {
        match self {
            CacheLifetime::Short => 5 * 60 * 1000,
            CacheLifetime::Long => 60 * 60 * 1000,
        }
    }
}

/// A cache breakpoint: the prefix of the request up to and including message `message` (an
/// index into the request's messages) is to be kept for `lifetime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheMark {
    pub message: usize,
    pub lifetime: CacheLifetime,
}

/// Why a frame's opening was made (again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum OpeningReason {
    /// The conversation entered the frame: its first call.
    Entered,
    /// The context no longer fitted the budget, even with every older tool result masked.
    Budget,
    /// The frame's cached prefix had expired, so rewriting it cost nothing more.
    Cold,
    /// The person asked for it.
    Asked,
}

impl OpeningReason {
    /// The reason in words, as the context inspector and the command line say it.
    pub fn describe(self) -> &'static str {
        match self {
            OpeningReason::Entered => "made when the conversation entered the frame",
            OpeningReason::Budget => "made again because the context no longer fitted the budget",
            OpeningReason::Cold => "made again because the frame's cached prefix had expired",
            OpeningReason::Asked => "made again because the person asked",
        }
    }
}

/// What Flame sent a frame's model at the start of the frame's conversation, and what it has
/// appended since, kept so that every later request repeats it byte for byte, in any process.
/// A request in the frame is the tools, the preamble, [`FrameContext::opening`], the omission
/// line if any, then the frame's messages from [`FrameContext::first_message`] on (context
/// notes among them) with tool results up to [`FrameContext::masked_through`] as stubs. It
/// changes only by appending (a note, a message) until the opening is made again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameContext {
    /// 1 for the opening made on entry, one more at each rebuild.
    pub generation: u32,
    /// The `<stack-context>` document as it was sent.
    pub opening: String,
    pub opening_tokens: u64,
    pub reason: OpeningReason,
    pub made_at: Timestamp,
    /// The oldest of the frame's messages that is sent; those before it were left out to fit
    /// the budget when the opening was made. `None`: every message is sent.
    pub first_message: Option<MessageId>,
    /// The line that says how many messages were left out, sent after the opening.
    pub omission: Option<String>,
    /// The context's parts as they were when the opening was made, and what became of each
    /// under the budget: the context inspector's account of the opening.
    pub sections: Vec<Section>,
    /// Tool results up to this message are sent as one-line stubs; later ones whole.
    pub masked_through: Option<MessageId>,
    /// Every frame the model has been told of (by the opening or a note since), with a digest
    /// of what it was told, so that a change is noticed and appended as a note.
    pub told: Vec<ToldFrame>,
    /// The context notes appended since the opening was made.
    pub notes: Vec<MessageId>,
    /// The context notes of earlier openings, which are no longer sent: the opening made since
    /// holds what they said.
    pub superseded_notes: Vec<MessageId>,
    /// The person asked for the opening to be made again at the next call.
    pub rebuild_asked: bool,
    /// What the batches of masking since the opening was made sent again of their requests
    /// (the part the provider had cached), in thousandths of a request, added up.
    pub rewritten_per_mille: u64,
    /// What the frame's model was last told of its budget (`None`: nothing, or that no budget
    /// bounds it), so that a budget note is appended only when it says something new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_told: Option<crate::budget::ToldBudget>,
    /// The project instructions the opening starts with, file by file, read when it was made
    /// (`None`: it was made without looking for them: the person turned them off, or it was made
    /// before Flame read them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Vec<crate::InstructionFileReport>>,
}

/// A frame as the model was last told of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToldFrame {
    pub frame: FrameId,
    /// FNV-1a of the frame's element as the document writes it in full.
    pub digest: u64,
}

/// One part of the context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Section {
    pub kind: SectionKind,
    /// The frame the section is about, if any.
    pub frame: Option<FrameId>,
    pub label: String,
    pub tokens: u64,
    pub state: SectionState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SectionKind {
    Preamble,
    /// The project instructions at the start of the opening (`crate::instructions`).
    Instructions,
    /// A frame on the path from the root to F, F included.
    Ancestor,
    /// A child of an ancestor above F's parent: an uncle, great-uncle and so on.
    Relative,
    /// Another child of F's parent.
    Sibling,
    /// A child of F.
    Child,
    /// F's own messages.
    History,
}

/// What became of a section under the budget.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum SectionState {
    /// Included as it is.
    Full,
    /// A child of F whose full results gave way to its compacted results.
    Compacted,
    /// Shrunk to its title.
    TitleOnly,
    /// An ancestor kept only as the element that holds the path (id and status).
    Bare,
    /// Left out.
    Dropped,
}
