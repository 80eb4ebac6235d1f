//! The question a waiting tool call puts the person, read back from the stored conversation —
//! the first call of the last assistant message that has no result yet — so it survives a
//! restart. A workspace call waits when the facade says so (`Flame::run_workspace_call`, which
//! holds the approval policy's decision, the preview and the rules for answers); a push or pop
//! waits under [`crate::Autonomy::Ask`], and a call of an MCP server's tool unless the settings
//! allow it (`mcp_tools.rs`). `answer_request` takes the person's `Answer`, and the
//! turn's remaining calls then run, and may wait again.

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
    /// A call of an MCP server's tool (its own name), which the settings do not allow to run
    /// without asking; the call's arguments say what it would do.
    Mcp { server: String, tool: String },
}
