//! The shape of a request: what a call sends, in the order providers cache it, and where it
//! asks them to keep it.
//!
//! A request is the tools (one fixed set for the tree, which the caller passes), then the
//! system prompt — the preamble, the same for every frame of the tree — then the frame's
//! opening (the project instructions, if any, and the `<stack-context>` document) as the first
//! user message, the omission line if
//! some messages were left out, and the frame's messages, notes among them, oldest first. Each
//! part is the one before plus what was appended, so a provider's prompt cache keeps what the
//! frame's previous request sent (`opening.rs`).
//!
//! The marks ([`CacheMark`]) are where a provider that caches on request (Anthropic) is asked
//! to keep the prefix, at most four: the end of the system prompt (the tools and the preamble,
//! shared by every frame of the tree) and the end of the opening, both for an hour, since a
//! parent's requests outlive its children's and the stack says they will be needed again; then
//! the end of the frame's previous request (so it is found whatever was appended since) and
//! the newest message, for the conversation's lifetime. Lifetimes never grow along a request,
//! as Anthropic requires.
//!
//! Notes go to the model as the person's words, marked `[note]`; tool calls that never got a
//! result are left out, and a result whose call was left out goes as plain text.

use flame_model::{CacheLifetime, CacheMark, ChatMessage, MessageId, Role, ToolCall};
use flame_tokens::Encoding;

use crate::{ContextDoc, MESSAGE_OVERHEAD};

/// A request's parts as Flame sends them.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// The system prompt.
    pub system: String,
    pub system_tokens: u64,
    /// How long the tools and the system prompt are to be kept in the cache.
    pub system_lifetime: CacheLifetime,
    pub messages: Vec<ChatMessage>,
    /// Each message's tokens, as Flame counts them.
    pub tokens: Vec<u64>,
    /// The cache breakpoints among the messages, in order.
    pub marks: Vec<CacheMark>,
}

/// The request `doc` makes (assembled with `encoding`), with the frame's conversation kept for
/// `conversation`.
pub fn prompt(doc: &ContextDoc, encoding: Encoding, conversation: CacheLifetime) -> Prompt {
    let mut messages = vec![ChatMessage::User(doc.xml.clone())];
    let mut tokens = vec![doc.report.opening.tokens + MESSAGE_OVERHEAD];
    // The stored message each one sends, to find where the previous request ended.
    let mut sent_from: Vec<Option<MessageId>> = vec![None];
    if let Some(omission) = &doc.omission {
        messages.push(ChatMessage::User(omission.clone()));
        tokens.push(crate::memo::count(encoding, omission) + MESSAGE_OVERHEAD);
        sent_from.push(None);
    }
    let answered: Vec<&str> = doc
        .messages
        .iter()
        .filter_map(|m| m.tool_result.as_ref().filter(|r| r.name.is_some()))
        .map(|r| r.tool_call_id.as_str())
        .collect();
    let mut called: Vec<&str> = Vec::new();
    for m in &doc.messages {
        let sent = match m.role {
            Role::User => Some(ChatMessage::User(m.content.clone())),
            Role::Note => Some(ChatMessage::User(format!("[note] {}", m.content))),
            Role::Assistant => {
                let calls: Vec<ToolCall> = m
                    .tool_calls
                    .iter()
                    .flatten()
                    .filter(|c| answered.contains(&c.id.as_str()))
                    .cloned()
                    .collect();
                called.extend(
                    m.tool_calls
                        .iter()
                        .flatten()
                        .filter(|c| answered.contains(&c.id.as_str()))
                        .map(|c| c.id.as_str()),
                );
                (!m.content.is_empty() || !calls.is_empty())
                    .then(|| ChatMessage::Assistant { text: m.content.clone(), tool_calls: calls })
            }
            Role::Tool => Some(
                match m.tool_result.as_ref().filter(|r| called.contains(&r.tool_call_id.as_str())) {
                    Some(result) => ChatMessage::ToolResult {
                        call_id: result.tool_call_id.clone(),
                        content: m.content.clone(),
                        is_error: result.is_error,
                    },
                    None => ChatMessage::User(format!("[tool result] {}", m.content)),
                },
            ),
        };
        if let Some(sent) = sent {
            messages.push(sent);
            tokens.push(m.tokens + MESSAGE_OVERHEAD);
            sent_from.push(Some(m.id));
        }
    }
    let mut marks = vec![CacheMark { message: 0, lifetime: CacheLifetime::Long }];
    let previous = doc
        .previous_end
        .and_then(|end| sent_from.iter().rposition(|id| id.is_some_and(|id| id <= end)));
    for at in previous.into_iter().chain([messages.len() - 1]) {
        if marks.last().is_none_or(|last| last.message < at) {
            marks.push(CacheMark { message: at, lifetime: conversation });
        }
    }
    Prompt {
        system: doc.system.clone(),
        system_tokens: doc.report.sections.first().map_or(0, |s| s.tokens),
        system_lifetime: CacheLifetime::Long,
        messages,
        tokens,
        marks,
    }
}
