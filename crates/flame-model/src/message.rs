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

/// A tool call an assistant message made, as every provider's call is kept.
///
/// The fields of the payload types are in alphabetical order: serialized, they are then the
/// same JSON text as the untyped maps (which sort their keys) stored before the payloads were
/// typed, so token counts and frame logs of live messages did not change. What earlier versions
/// stored under other names reads through [`crate::stored`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ToolCall {
    /// The arguments the model wrote: a JSON document meant to match the tool's schema, which
    /// Flame checks only when it runs the tool.
    pub arguments: serde_json::Value,
    /// The provider's id of the call, which its result names.
    pub id: String,
    pub name: String,
}

/// The key under which a provider's decoder keeps arguments that were not JSON: a reply cut off
/// at its token limit in the middle of a call, or a model that wrote something else. The call is
/// kept, and the model hears back as a tool error why it did not run, rather than the whole turn
/// failing (a small model against a real server does this).
pub const UNREADABLE_ARGUMENTS: &str = "flame_unreadable_arguments";

/// The most of unreadable arguments a call keeps, so the note stays small.
const UNREADABLE_KEPT_BYTES: usize = 1024;

impl ToolCall {
    /// A call whose arguments `raw` were not JSON, for the reason `why`: they are kept as text
    /// (their first kilobyte) under [`UNREADABLE_ARGUMENTS`], so the call can be stored, shown and
    /// answered with a tool error.
    pub fn unreadable(id: String, name: String, raw: &str, why: &str) -> ToolCall {
        let mut end = raw.len().min(UNREADABLE_KEPT_BYTES);
        while !raw.is_char_boundary(end) {
            end -= 1;
        }
        let mut arguments = serde_json::Map::new();
        arguments.insert(
            UNREADABLE_ARGUMENTS.to_owned(),
            serde_json::Value::String(format!("{why}; they began: {}", &raw[..end])),
        );
        ToolCall { arguments: serde_json::Value::Object(arguments), id, name }
    }

    /// Why the arguments could not be read, for a call made by [`ToolCall::unreadable`].
    pub fn unreadable_arguments(&self) -> Option<&str> {
        self.arguments.get(UNREADABLE_ARGUMENTS)?.as_str()
    }
}

/// What a tool message answers: the call it is the result of, and whether the tool failed.
/// Its text is the message's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ToolResult {
    /// What a workspace tool's result was, for the window's tool card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<crate::ToolDetail>,
    pub is_error: bool,
    /// The tool's name. Flame's agent records it with every result it stores; results imported
    /// from other tools' transcripts do not have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub tool_call_id: String,
}

/// Tokens a provider reports for one call. Input is counted in three parts that do not overlap:
/// what was read from the provider's prompt cache, what was written to it, and the rest.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type,
)]
pub struct Usage {
    /// Input read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Input written to the cache for an hour (Anthropic's one-hour lifetime). Usage stored
    /// before Flame knew of it is read by `stored::usage`, as none.
    pub cache_write_long_tokens: u64,
    /// Input written to the cache for its short lifetime (Anthropic's five minutes; providers
    /// that cache without being asked write nothing here).
    pub cache_write_tokens: u64,
    /// Input neither read from nor written to the cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    /// Every input token the call sent, however the cache treated it.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
            .saturating_add(self.cache_write_long_tokens)
    }

    /// Adds `more`, each count saturating: counts come from providers and transcripts, and a
    /// long run of calls adds them up.
    pub fn add(&mut self, more: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(more.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(more.output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(more.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(more.cache_write_tokens);
        self.cache_write_long_tokens =
            self.cache_write_long_tokens.saturating_add(more.cache_write_long_tokens);
    }

    /// What `self`, a running total, gained since `before`, each count saturating at nothing:
    /// a session file's totals that only grow, read at two moments.
    pub fn since(&self, before: &Usage) -> Usage {
        Usage {
            cache_read_tokens: self.cache_read_tokens.saturating_sub(before.cache_read_tokens),
            cache_write_long_tokens: self
                .cache_write_long_tokens
                .saturating_sub(before.cache_write_long_tokens),
            cache_write_tokens: self.cache_write_tokens.saturating_sub(before.cache_write_tokens),
            input_tokens: self.input_tokens.saturating_sub(before.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(before.output_tokens),
        }
    }

    /// Both lifetimes' cache writes.
    pub fn cache_written_tokens(&self) -> u64 {
        self.cache_write_tokens.saturating_add(self.cache_write_long_tokens)
    }
}

/// A tool a model may call: what a request offers a provider, and what an MCP server lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The JSON Schema (draft 2020-12) of the arguments: a schema document, which Flame writes
    /// and providers read, so it stays JSON rather than a type of Flame's.
    pub schema: serde_json::Value,
}

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Message {
    pub id: MessageId,
    pub frame: FrameId,
    pub role: Role,
    pub content: String,
    /// Tool calls the assistant made.
    pub tool_calls: Option<Vec<ToolCall>>,
    /// The call a tool message answers.
    pub tool_result: Option<ToolResult>,
    /// The message's tokens, counted once when it was added.
    pub tokens: u64,
    pub model: Option<String>,
    /// The provider's usage report for the call that produced this message.
    pub usage: Option<Usage>,
    pub created_at: Timestamp,
    /// The reply stopped before it was complete (cancelled, dropped, or the app crashed).
    pub interrupted: bool,
}

/// A message to add.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub role: Role,
    pub content: String,
    pub tool_calls: Option<Vec<ToolCall>>,
    pub tool_result: Option<ToolResult>,
    pub model: Option<String>,
    pub usage: Option<Usage>,
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
