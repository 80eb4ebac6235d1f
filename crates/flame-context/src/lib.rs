//! Context assembly: exactly what the model receives for a focused frame, and an account of how
//! it was built (DESIGN.md §3).
//!
//! For the focused frame F the model gets a short preamble, a `<stack-context>` XML document
//! (F's *opening*), and F's own messages. The document holds the path from the root to F and, for every frame on
//! it, its children: finished ones with their (compacted) results, artifacts, decisions, the files
//! their own tool calls read and changed, and log path; planned ones with their compacted criteria; other in-progress branches with title and
//! status; invalidated ones not at all. F's own children report with their full results. Nothing
//! below an off-path frame appears, and no message of any frame but F is ever included — the
//! assembler is not even given any.
//!
//! The assembly is pure: the caller reads the frames and messages and passes them in, with the
//! budget and the encoding. When everything does not fit, parts give way in the fixed order of
//! [`budget`]; the [`ContextReport`] says what each section cost and what was left out.
//!
//! Providers cache the prefix of a request, so a frame's requests are kept append-only
//! ([`next_call`], `opening.rs`): the opening is written once, when the conversation enters the
//! frame, and kept by the caller ([`FrameContext`]); what changes around F later is appended as
//! a note, and the opening is made again only by the rules of `opening.rs`. [`request`] puts the
//! result in the order a request sends it, with the marks that ask a provider to cache it.
//!
//! Before fitting, F's tool results older than the newest [`ContextInput::keep_tool_results`]
//! are sent as one-line stubs (observation masking): the tool, its arguments, the result's size,
//! and how to read it back with `read_frame_log`. The newest result and any result the model has
//! not answered yet are always sent in full; the report says how many were masked and what that
//! saved.
//!
//! `next_call(&ContextInput, stored, &CallRules, kept)` gives what the next call in a frame sends,
//! from the frame's context as stored (`FrameContext`, none before its first call), and what the
//! caller must store before sending it (`ContextUpdate`: an opening made, a note to append as a
//! message, a batch of results masked); `assemble(&ContextInput)` is a fresh opening's context. The
//! caller passes the frames on the path with their children (`Store::path_with_children`), the
//! focused frame's messages (shared as `Arc<Message>`, so a message the document does not change is
//! sent without a copy), the encoding, the `Budget` and the log paths. It gets the system prompt,
//! the messages that fit, an omission line if some did not, and a `ContextReport` (tokens per
//! section, what gave way, the linear chat's total, what masking saved): the context inspector's
//! data. The live agent (through `Flame::prepare_call`) and `flame replay` use the same rules.
//!
//! The system prompt is `preamble(workspace)`: the `shared_preamble` — `PREAMBLE` and one
//! sentence on the workspace tools, or saying there is no workspace and that the person should
//! choose one; byte for byte the same in every tree offered the same tools, so that providers
//! cache it across trees and sessions — and then what is particular to the tree, after a blank
//! line: the sentence naming its workspace folder (and whatever else a tree adds later, never
//! before it). The project instructions (`AGENTS.md`, `CLAUDE.md`, the person's own), whose
//! texts the caller hands in when an opening is made ([`ContextInput::instructions`]), open the
//! opening as a `<project-instructions>` block (`instructions.rs`): after the system prompt, so the
//! prefix shared by every tree is untouched, and kept with the opening, so they change only when
//! it is made again. A finished frame shown with its results lists
//! `<files><changed>…</changed><read>…</read></files>` from its subtree's trail
//! (`ContextInput::trails`, sorted without repeats as `FileTrail::new` makes them):
//! comma-separated, changed paths its artifacts already name left out, each list cut at
//! `MAX_LISTED_FILES` with ", and N more"; it goes with the rest when the frame gives way to its
//! title. A frame on the path above the focus lists, the same way, the files its own tool calls
//! touched (`ContextInput::path_trails`): what the work that led to the focus touched before it
//! began, which no finished frame names. The golden files in `tests/context/golden/` hold the spec tree's document for every focus
//! (`make bless` writes them again after an intended change).
//!
//! `next_call` with `Some((&mut KeptParts, settled))` gives exactly what it gives without, while
//! keeping parts for the caller's next assembly: each unit's text and count by frame and state
//! (`render::KeptUnits`), and the masked forms of `messages[..settled]` by message id
//! (`mask::KeptMasks`); what an assembly did not use is dropped. After
//! `KeptParts::trust_frames_unchanged`, the caller's promise that frames, log paths and trails are
//! the last assembly's, the texts are taken without their keys, for the same focus and encoding
//! only.

pub mod budget;
mod instructions;
mod mask;
mod memo;
mod opening;
mod render;
pub mod request;

use std::collections::HashMap;
use std::sync::Arc;

use flame_model::{FileTrail, Frame, FrameId, Message, MessageId, OpeningReason, Timestamp};
use flame_tokens::Encoding;
use serde::Serialize;

pub use budget::Budget;
pub use flame_model::{FrameContext, Section, SectionKind, SectionState};
pub use mask::{
    DEFAULT_KEEP_TOOL_RESULTS, MAX_STUB_ARGUMENTS, MAX_STUB_PATH_BYTES, MAX_STUB_VALUE_BYTES,
    ReadBack,
};
pub use opening::{
    CacheEconomics, CachePolicy, CallRules, ContextUpdate, MASKING_HORIZON,
    MAX_REWRITTEN_PER_MILLE, NextCall, UNSTORED_NOTE, next_call, opening_due,
};

/// The preamble that opens every context. It is the same for every frame of a tree, so that a
/// provider caches it once for all of them; what is particular to a frame follows it.
pub const PREAMBLE: &str = "You are working inside Flame, which organises work as a call stack of frames \
instead of one long chat. Each frame is a subtask with a title, success criteria and a status. The \
<stack-context> document that opens the conversation shows the path from the root goal to your current \
frame (marked current=\"true\"), what finished frames handed back (results, artifacts, decisions), what \
is planned, and where each frame's full log is; later changes to those frames arrive as notes from Flame, \
which replace what was said of them before. You see only your current frame's own conversation; other \
frames appear only as these summaries, and their logs can be read when the detail matters. Push a child \
frame for a distinct subtask, pop the current frame when its success criteria are met, and plan frames \
to sketch the work ahead.";

/// The sentence after [`PREAMBLE`] for a tree without a workspace folder.
const NO_WORKSPACE_SENTENCE: &str = "This tree has no workspace folder, so you have no tools to read \
files or run commands; if the task needs them, ask the person to choose a workspace folder for the tree.";

/// The sentence after [`PREAMBLE`] for a tree with a workspace folder, which is named after the
/// shared preamble.
const WORKSPACE_SENTENCE: &str = "This tree has a workspace folder, named below: the workspace tools \
(read_file, list_files, search, write_file, edit_file, run_command) work in it, with paths relative to it.";

/// The start of the system prompt, byte for byte the same for every tree offered the same tools
/// (with or without the workspace tools): [`PREAMBLE`] and a sentence on the workspace tools.
/// Providers cache a prompt's prefix across conversations, so the tools and this text are read
/// from the cache by every tree and session, and whatever is particular to a tree comes after
/// it (see [`preamble`]); a request's system cache mark ends it ([`request`]).
pub fn shared_preamble(with_workspace: bool) -> String {
    let sentence = if with_workspace { WORKSPACE_SENTENCE } else { NO_WORKSPACE_SENTENCE };
    format!("{PREAMBLE} {sentence}")
}

/// The system prompt: the [`shared_preamble`], then what is particular to the tree, each part
/// after a blank line — today its workspace folder. Whatever differs between trees or sessions
/// goes after the shared preamble, never into it.
pub fn preamble(workspace: Option<&str>) -> String {
    let shared = shared_preamble(workspace.is_some());
    match workspace {
        Some(folder) => format!("{shared}\n\nThis tree's workspace is the folder {folder}."),
        None => shared,
    }
}

/// The preamble for an agent that works with its own tools, not Flame's (a client of Flame's
/// gateway, and a session `flame replay` prices): it is told how to read the opening and that it
/// may read a frame's log or call a tool again with those tools. It follows the agent's own
/// system prompt.
pub const AGENT_PREAMBLE: &str = "This conversation reaches you through Flame, which keeps the \
work as a call stack of frames instead of one long history. The <stack-context> document that opens \
the conversation shows the path from the session's first request to the part of the work you are in \
now (marked current=\"true\"), what earlier parts handed back (results, the files they read and \
changed, decisions) and where each part's full log is; later changes arrive as notes from Flame. You \
see only the current part's own messages: earlier parts appear only as these summaries, and their logs \
can be read with your file tools when the detail matters. A tool result marked [Flame] was shortened; \
if you need it again, call the same tool again (read the file again, run the command again).";

/// How many paths of each list of a finished frame's files the document names; the rest are
/// counted ("and N more"). A frame's full trail is in its log and in the store.
pub const MAX_LISTED_FILES: usize = 20;

/// Tokens each message costs beyond its content (role and framing), as providers count them.
pub const MESSAGE_OVERHEAD: u64 = 4;

/// What the assembler needs, read by the caller.
#[derive(Debug, Clone, Copy)]
pub struct ContextInput<'a> {
    pub focus: &'a FrameId,
    /// The frames on the path from the root to the focus, and every child of each of them.
    /// Other frames may be present and are ignored.
    pub frames: &'a [Frame],
    /// The focused frame's messages, oldest first. They are shared so that the document sends
    /// them without copying them: a long frame's messages are most of an assembly's bytes.
    pub messages: &'a [Arc<Message>],
    pub encoding: Encoding,
    pub budget: Budget,
    /// Where each frame's log lives, as the model should see the path: frame → path.
    pub log_paths: &'a HashMap<FrameId, String>,
    /// The tokens of every message in the tree: what a linear chat of the same work sends.
    pub linear_message_tokens: u64,
    /// The tree's workspace folder, absolute; `None` when the tree has none.
    pub workspace: Option<&'a str>,
    /// The files each finished frame's work read and changed: its own tool calls' and those of
    /// every frame under it, since the frames under a finished frame are not shown. A frame
    /// without an entry touched none. Finished frames shown with their results list them.
    /// Each list is sorted without repeats, as `FileTrail::new` and the store make them.
    pub trails: &'a HashMap<FrameId, FileTrail>,
    /// The files each frame on the path above the focus read and changed by its own tool calls:
    /// what the work that led to the focus had touched when it began (the frames under them are
    /// listed with their own). Each lists them in its element; a frame without an entry touched
    /// none. Each list is sorted without repeats.
    pub path_trails: &'a HashMap<FrameId, FileTrail>,
    /// How many of the focus's newest tool results stay whole when older ones are masked:
    /// masked results are sent as a one-line stub naming the tool, its arguments, the result's
    /// size and where to read it back. Masking happens when an opening is made and in batches
    /// between ([`next_call`]). `None` sends every result in full.
    pub keep_tool_results: Option<usize>,
    /// What the focus has left of the budgets on its path (`flame_model::budget`), when the
    /// caller keeps budgets: a call appends a note telling the model of it when it says
    /// something new ([`next_call`]). `None` tells the model nothing of budgets.
    pub allowance: Option<&'a flame_model::budget::Allowance>,
    /// The project instructions a new opening starts with (`instructions.rs`), in the order
    /// they are sent; `None` when the caller did not look for them (the person turned them off,
    /// or the call keeps its opening: see [`opening_due`]). A kept opening sends what it was
    /// made with, whatever this says.
    pub instructions: Option<&'a [flame_model::InstructionFile]>,
    /// How a masked result's stub says to get it again: from the frame's log (Flame's own
    /// agent) or by making the call again (an agent with its own tools).
    pub read_back: ReadBack,
}

/// The assembled context.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ContextDoc {
    /// The system prompt: the preamble, the same for every frame of the tree.
    pub system: String,
    /// The `<stack-context>` document: the frame's opening, the conversation's first message.
    pub xml: String,
    /// When older messages were left out, the line that says so; it comes after the opening
    /// and before `messages`.
    pub omission: Option<String>,
    /// F's messages that are included, oldest first: the input's own where sent as they are.
    pub messages: Vec<Arc<Message>>,
    /// The newest of `messages` that the frame's previous request ended with, when this
    /// request starts with that one (the same opening, nothing masked since): where the cached
    /// prefix ends.
    pub previous_end: Option<MessageId>,
    /// How many bytes `system` starts with that every tree offered the same tools shares (the
    /// [`shared_preamble`]): where [`request`] puts the system's cache mark.
    #[serde(skip)]
    #[specta(skip)]
    pub system_shared: usize,
    /// Whether F has a child (planned, in progress or finished) among the frames given: its
    /// requests' start will be wanted again after the child's work, so [`request`] asks the
    /// provider to keep it longer.
    #[serde(skip)]
    #[specta(skip)]
    pub is_parent: bool,
    pub report: ContextReport,
}

/// How the context was built: the data of the context inspector.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ContextReport {
    pub focus: FrameId,
    /// The tokens available for the context (window − reply reserve − tool schemas).
    pub budget: u64,
    /// The tokens the assembled context costs.
    pub total_tokens: u64,
    /// Whether it fits; `false` only when even what is never dropped does not.
    pub fits: bool,
    /// Every section in document order, with its cost and what became of it.
    pub sections: Vec<Section>,
    /// How many of F's oldest messages were left out.
    pub omitted_messages: u32,
    /// What a linear chat of the same work would send: the preamble and every message of
    /// the tree.
    pub linear_tokens: u64,
    /// How many of the included tool results were sent as a one-line stub.
    pub masked_results: u32,
    /// How many of the included tool calls (those whose results were masked) had their long
    /// arguments cut.
    pub masked_calls: u32,
    /// The tokens those stubs saved against the results in full.
    pub masked_tokens_saved: u64,
    /// The opening this context sends, and what this call appends to what came before.
    pub opening: OpeningReport,
    /// Of the input the frame's replies so far recorded, the thousandths the provider read from
    /// its cache; `None` until a reply recorded usage, and in a context made for a call (the
    /// caller fills it in for the inspector).
    pub cache_hit_per_mille: Option<u32>,
}

/// A context's opening and what the call does to the frame's cached prefix: the context
/// inspector's account of the cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct OpeningReport {
    /// 1 for the opening made when the conversation entered the frame, one more each time it
    /// was made again.
    pub generation: u32,
    pub reason: OpeningReason,
    /// The reason in words, as the inspector and the command line say it.
    pub reason_text: String,
    pub made_at: Timestamp,
    /// Whether this call makes the opening (for the first time, or again for `reason`).
    pub made_now: bool,
    pub tokens: u64,
    /// How many frames this call tells of in a note after the newest message, since they
    /// changed after the model was last told of them.
    pub noted_frames: u32,
    /// How many tool results this call masks that the frame's earlier calls sent whole.
    pub newly_masked: u32,
    /// What the call should read from the provider's cache, in tokens: the tool schemas, the
    /// preamble and, while the frame's previous request is still cached, what it started with.
    pub cache_read_tokens: u64,
    /// What the call sends that is not in the cache: the rest.
    pub cache_written_tokens: u64,
    /// The project instructions the opening starts with, file by file, read when it was made
    /// (`made_at`); `None` when it was made without looking for them.
    pub instructions: Option<Vec<flame_model::InstructionFileReport>>,
}

/// Whether `input`'s focus has a child that is not invalidated ([`ContextDoc::is_parent`]).
fn focus_is_parent(input: &ContextInput<'_>) -> bool {
    input.frames.iter().any(|f| {
        f.parent.as_ref() == Some(input.focus) && f.status != flame_model::Status::Invalidated
    })
}

/// Why the context could not be assembled at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error("the frames given do not include the focused frame {0}")]
    NoFocus(FrameId),
    #[error("the frames given do not reach the root from {0}: its ancestor {1} is missing")]
    BrokenPath(FrameId, FrameId),
}

/// Assembles the context of a fresh opening for `input.focus`: what the first call in the
/// frame sends (see [`next_call`] for the calls after it).
pub fn assemble(input: &ContextInput<'_>) -> Result<ContextDoc, ContextError> {
    let plan = render::Plan::new(input, None)?;
    let masked = mask::mask(
        input.messages,
        input.keep_tool_results,
        input.focus,
        input.read_back,
        input.encoding,
    );
    Ok(budget::fit(input, &plan, masked))
}

/// Parts of one caller's assemblies kept for its next ones ([`next_call`]): each frame's
/// XML with its token count, and the masked forms of the focus's settled messages. A chat
/// assembles before every model call, and between two calls few of these change. Bounded by
/// what the last assembly used: the parts of frames and messages it did not show are dropped.
#[derive(Debug, Default)]
pub struct KeptParts {
    units: Option<render::KeptUnits>,
    masks: mask::KeptMasks,
}

impl KeptParts {
    /// Forgets the masked forms of messages, for when a message id given as settled may name
    /// another message from now on.
    pub fn forget_messages(&mut self) {
        self.masks = mask::KeptMasks::default();
    }

    /// Promises that the next assembly's frames, log paths and trails (both kinds) are, for
    /// every frame it shows, what the last assembly with these parts was given; its frames' texts are then
    /// taken again without checking what they were made from (when its focus and encoding are
    /// the last one's). A caller that knows nothing changed (as the facade does from the
    /// store's events) saves writing and comparing a key for every frame.
    pub fn trust_frames_unchanged(&mut self) {
        if let Some(units) = &mut self.units {
            units.trust();
        }
    }
}
