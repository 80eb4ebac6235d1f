//! The frame model, with no I/O.
//!
//! A tree of frames is a call stack of work: each [`Frame`] is a subtask with an identity
//! (title and success criteria), a [`Status`], its own messages, and — once popped — results.
//! This crate holds the types every other crate shares and the lifecycle rules as pure
//! functions ([`lifecycle`]); `flame-store` applies them inside its transactions, and
//! [`FrameTree::check_invariants`] states what must hold after every operation.
//!
//! `lifecycle/neighbours.rs` holds the rules over a frame's neighbours: a pop waits for every child
//! in progress, a start (and a push under a planned frame) starts the planned ancestors top down
//! and is refused under a blocked or finished one, and resume and retry need an in-progress parent.
//! `allowed_actions` answers all of them at once as `FrameActions` (with `start_target`, what
//! `/start` starts), which the window receives with the frame, so no front end checks a rule
//! itself. The typed `FrameError`'s messages name the frame, its status and what is allowed.
//! `merge_section` merges a frame's partial results by `## Section`, so an update never rewrites
//! the other sections. The property tests call `FrameTree::check_invariants` after every operation.
//!
//! A message's payloads are typed: `ToolCall` (id, name, the model's JSON arguments), `ToolResult`
//! (the call it answers, whether it failed, the tool's name when Flame's agent ran it) and `Usage`.
//! Their fields are in alphabetical order so that their JSON text is what was stored before they
//! were typed, and `stored.rs` reads the older shapes. A `Usage` counts input in parts that do not
//! overlap: read from the cache, written for five minutes, written for an hour
//! (`cache_write_long_tokens`), and the rest. An event's detail is an `EventDetail`
//! (`event_detail.rs`).

pub mod budget;
mod chat;
pub mod cost;
mod error;
mod event_detail;
mod frame;
mod ids;
pub mod instructions;
pub mod lifecycle;
mod message;
pub mod prompt_cache;
pub mod stored;
mod tree;
mod workspace;

pub use chat::{
    CacheLifetime, CacheMark, ChatMessage, FrameContext, OpeningReason, Section, SectionKind,
    SectionState, ToldFrame,
};
pub use error::FrameError;
pub use event_detail::{EventDetail, RollbackRecord};
pub use frame::{
    Actor, Event, EventKind, Frame, FrameOutline, Status, Tree, log_relative_folder,
    log_relative_path,
};
pub use ids::{FrameId, IdSource, MessageId, TreeId};
pub use instructions::{InstructionFile, InstructionFileReport, InstructionScope};
pub use message::{Message, NewMessage, Role, ToolCall, ToolResult, ToolSpec, Usage};
pub use tree::FrameTree;
pub use workspace::{
    CheckpointReason, CommandPlace, FileTrail, LeaveSandbox, ToolDetail, ToolKind,
};

/// Milliseconds since the Unix epoch. Time is always passed in, never read, in the core crates.
pub type Timestamp = i64;

/// The longest title a frame may have, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

/// The deepest a frame may sit below its tree's root (the root is at depth 0). Imports check
/// it, so a hostile or broken file cannot make every later context assembly walk a path of
/// thousands of frames; real trees are a few levels deep. Live operations do not check it yet.
pub const MAX_DEPTH: usize = 256;
