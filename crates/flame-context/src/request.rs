//! The shape of a request: what a call sends, in the order providers cache it, and where it
//! asks them to keep it.
//!
//! A request is the tools (one fixed set for the tree, which the caller passes), then the
//! system prompt — the preamble, the same for every frame of the tree — then the frame's
//! opening (the project instructions, if any, and the `<stack-context>` document) as the first
//! user message, the omission line if
//! some messages were left out, and the frame's messages, notes among them, oldest first. Each
//! part is the one before plus what was appended, so a provider's prompt cache keeps what the
//! frame's previous request sent (`opening.rs`). The system prompt starts with the
//! [`crate::shared_preamble`], the same for every tree offered the same tools, and what is
//! particular to the tree follows it ([`Prompt::system_shared`]): the tools and the shared
//! preamble are the same bytes in every tree and session, so a provider's cache serves them to
//! all.
//!
//! The marks ([`CacheMark`]) are where a provider that caches on request (Anthropic) is asked
//! to keep the prefix, at most four: the end of the shared preamble (the tools and the text
//! every tree shares; the tree's own part is kept with the opening), the end of the opening,
//! the end of the frame's previous request (so it is found whatever was appended since) and
//! the newest message. All are kept for the conversation's lifetime, but for the shared start
//! in the requests of a frame that has a child ([`ContextDoc::is_parent`]): the stack says it
//! will be wanted again after the child's work, which may outlast the conversation's lifetime,
//! so it is kept for an hour. The opening is not kept longer than the conversation: a frame
//! whose conversation went cold makes its opening again (`opening.rs`). Replayed (issue 39),
//! the shared sessions cost 0.524 and 0.500 of the linear sessions' input this way, 0.539 and
//! 0.523 with the shared start and the opening kept an hour in every request, 0.540 and 0.500
//! with nothing kept an hour. Lifetimes never grow along a request, as Anthropic requires.
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
    /// How many bytes of `system` are the shared preamble, which every tree offered the same
    /// tools starts with, and how many tokens: the system's mark ends them, and the rest of the
    /// system prompt (the tree's own part) follows.
    pub system_shared: usize,
    pub system_shared_tokens: u64,
    /// How long the tools and the shared preamble are to be kept in the cache.
    pub system_lifetime: CacheLifetime,
    pub messages: Vec<ChatMessage>,
    /// Each message's tokens, as Flame counts them.
    pub tokens: Vec<u64>,
    /// The cache breakpoints among the messages, in order.
    pub marks: Vec<CacheMark>,
}

/// How long a request of `doc` asks the provider to keep its shared start (the tools and the
/// shared preamble): an hour in a frame that has a child, else the conversation's lifetime,
/// which every mark after it asks (see the module's comment).
pub fn system_lifetime(doc: &ContextDoc, conversation: CacheLifetime) -> CacheLifetime {
    if doc.is_parent { CacheLifetime::Long } else { conversation }
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
    let mut marks = vec![CacheMark { message: 0, lifetime: conversation }];
    let previous = doc
        .previous_end
        .and_then(|end| sent_from.iter().rposition(|id| id.is_some_and(|id| id <= end)));
    for at in previous.into_iter().chain([messages.len() - 1]) {
        if marks.last().is_none_or(|last| last.message < at) {
            marks.push(CacheMark { message: at, lifetime: conversation });
        }
    }
    let system_tokens = doc.report.sections.first().map_or(0, |s| s.tokens);
    // No count, or one that does not fall between two characters, marks the system prompt whole.
    let system_shared = Some(doc.system_shared)
        .filter(|&at| at > 0 && doc.system.is_char_boundary(at))
        .unwrap_or(doc.system.len());
    let system_shared_tokens = if system_shared == doc.system.len() {
        system_tokens
    } else {
        crate::memo::count(encoding, &doc.system[..system_shared]).min(system_tokens)
    };
    Prompt {
        system: doc.system.clone(),
        system_tokens,
        system_shared,
        system_shared_tokens,
        system_lifetime: system_lifetime(doc, conversation),
        messages,
        tokens,
        marks,
    }
}
