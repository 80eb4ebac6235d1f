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

use flame_model::{ToolCall, ToolKind};
use serde::{Deserialize, Serialize};

/// Whether calls of one kind run at once or wait for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    Auto,
    Ask,
}

/// The approval policy for the workspace tools, per kind: reading runs at once, changing and
/// running ask, unless the settings say otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ApprovalPolicy {
    /// `read_file`, `list_files`, `search`.
    pub read: Approval,
    /// `write_file`, `edit_file`.
    pub change: Approval,
    /// `run_command`.
    pub run: Approval,
}

impl Default for ApprovalPolicy {
    fn default() -> ApprovalPolicy {
        ApprovalPolicy { read: Approval::Auto, change: Approval::Ask, run: Approval::Ask }
    }
}

impl ApprovalPolicy {
    pub fn for_kind(&self, kind: ToolKind) -> Approval {
        match kind {
            ToolKind::Reading => self.read,
            ToolKind::Changing => self.change,
            ToolKind::Running => self.run,
        }
    }

    /// The policy with `kinds` set to run at once: the command line's `--approve`.
    pub fn allowing(mut self, kinds: &[ToolKind]) -> ApprovalPolicy {
        for kind in kinds {
            match kind {
                ToolKind::Reading => self.read = Approval::Auto,
                ToolKind::Changing => self.change = Approval::Auto,
                ToolKind::Running => self.run = Approval::Auto,
            }
        }
        self
    }
}

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

/// What a waiting workspace call would do, computed when the question is read.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Preview {
    /// A write or edit: the unified diff it would apply (capped), whether it creates the file,
    /// and the file it was made from (`flame_workspace::PreparedChange::base`), which the answer
    /// hands back so that only this change, on this file, is applied.
    Change { path: String, created: bool, diff: String, base: String },
    /// A command, exactly as it would run, in `folder`, with its timeout. Commands are not
    /// sandboxed: the window says so beside this.
    Command { command: String, folder: String, timeout_seconds: u64 },
    /// A read, list or search, in words.
    Reading { summary: String },
    /// The call cannot run as it is (arguments that do not fit, a path outside the workspace,
    /// an edit whose text is not found). Such a call is not put to the person: the agent runs
    /// it at once and the model reads the error. Only a question stored by an older version
    /// carries it; accepting that one sends the model this error.
    Invalid { message: String },
}

/// The person's answer to a waiting call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// Run this call. For a write or edit, `shown` is the `base` of the change the person was
    /// shown ([`Preview::Change`]): if the file changed since (or `shown` is missing), nothing is
    /// written and the person is asked again with the change as it would be now.
    Accept {
        #[serde(default)]
        #[specta(optional)]
        shown: Option<String>,
    },
    /// Run this call and, without asking, the rest of the tree's calls of its kind; `shown` as
    /// for [`Answer::Accept`].
    AcceptKind {
        #[serde(default)]
        #[specta(optional)]
        shown: Option<String>,
    },
    /// Do not run it; the model gets a tool error with the person's words, if any.
    Refuse { reason: Option<String> },
}

/// The longest reason for a refusal passed to the model, in bytes; the rest is cut.
pub const MAX_REFUSAL_BYTES: usize = 4 * 1024;
