//! Messages: everything said in a frame.

use serde::{Deserialize, Serialize};

use crate::{FrameId, MessageId, Timestamp};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// A tool's result.
    Tool,
    /// A note from the system or a person, not part of the conversation with the model.
    Note,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Note => "note",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        [Role::User, Role::Assistant, Role::Tool, Role::Note]
            .into_iter()
            .find(|r| r.as_str() == text)
    }
}

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Message {
    pub id: MessageId,
    pub frame: FrameId,
    pub role: Role,
    pub content: String,
    /// Tool calls the assistant made, in the provider-neutral JSON shape.
    pub tool_calls: Option<serde_json::Value>,
    /// The result a tool message carries, as JSON.
    pub tool_result: Option<serde_json::Value>,
    /// The message's tokens, counted once when it was added.
    pub tokens: u64,
    pub model: Option<String>,
    /// The provider's usage report for the call that produced this message.
    pub usage: Option<serde_json::Value>,
    pub created_at: Timestamp,
    /// The reply stopped before it was complete (cancelled, dropped, or the app crashed).
    pub interrupted: bool,
}

/// A message to add.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub role: Role,
    pub content: String,
    pub tool_calls: Option<serde_json::Value>,
    pub tool_result: Option<serde_json::Value>,
    pub model: Option<String>,
    pub usage: Option<serde_json::Value>,
    pub interrupted: bool,
}

impl NewMessage {
    /// A plain text message with no tool calls, model or usage.
    pub fn text(role: Role, content: impl Into<String>) -> NewMessage {
        NewMessage {
            role,
            content: content.into(),
            tool_calls: None,
            tool_result: None,
            model: None,
            usage: None,
            interrupted: false,
        }
    }
}
