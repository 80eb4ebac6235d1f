//! Asking the person before a tool call runs: the policy per kind of workspace tool, the question
//! a waiting call puts (with the diff of a change or the exact command), and the answers.
//!
//! A call waits when its kind is set to [`Approval::Ask`] and the person has not allowed that kind
//! for the rest of the tree (`Flame::allowed_kinds`), or when it is a push or pop under
//! [`crate::Autonomy::Ask`]. The question is read back from the stored conversation — the first
//! call of the last assistant message that has no result yet — so it survives a restart.
//!
//! Calls run in order, so the first call without a result is the waiting one; `waiting_request`
//! reads it with its `Preview` (the diff of a write or edit, prepared afresh; the exact command,
//! its folder and its timeout). `answer_request` takes an `Answer`: accept; accept and allow the
//! rest of the tree's calls of that kind (`allow_kind`); or refuse with the person's words, which
//! reach the model as a tool error cut at `MAX_REFUSAL_BYTES`. An accepted write or edit names the
//! file the shown diff was made from (`shown`, the preview's `base`), and a file changed since is
//! asked about again with the change as it would be now, never overwritten. The turn's remaining
//! calls then run, and may wait again. A call that would ask after a push or pop in the same turn
//! is refused with a message telling the model to make it again where the conversation went.

use flame_api::Preview;
use flame_model::{ToolCall, ToolKind};
use serde::Serialize;

/// A tool call the agent is waiting on, and what to show the person about it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct WaitingRequest {
    pub call: ToolCall,
    pub ask: Ask,
}

/// What kind of question a waiting call puts.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ask {
    /// A push or pop the agent wants to make.
    FrameChange,
    /// A workspace tool call, with what it would do.
    Workspace { tool_kind: ToolKind, preview: Preview },
}

