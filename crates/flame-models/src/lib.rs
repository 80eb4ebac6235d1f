//! Talking to models.
//!
//! One provider-neutral request ([`ChatRequest`]: a system prompt, messages, tool definitions)
//! goes to the Anthropic Messages API or to an OpenAI-compatible Chat Completions endpoint (which
//! covers Ollama, llama.cpp's server, vLLM, LM Studio and OpenRouter through a base URL), as a
//! streamed request. Deltas reach the caller as [`StreamEvent`]s while they arrive; the result is
//! one [`Turn`]: the text, the tool calls (arguments reassembled from their fragments), the usage,
//! and why the model stopped.
//!
//! A request that fails before anything streamed is retried with back-off on 429, 5xx and
//! connection errors, honouring `retry-after`. A stream that breaks off keeps what arrived
//! ([`ModelError::partial`]). Keys never appear in errors: provider messages are scrubbed of the
//! key, and a rejected key is reported by where it came from, not by its value.
//!
//! A `Provider` is a kind, a base URL, a key and where the key came from. `Client::stream` retries
//! with doubling back-off or the provider's `retry-after`, and stops at once on cancel. Redirects
//! are followed only within the request's origin (scheme, host and port; at most `MAX_REDIRECTS`),
//! and a redirect to another origin ends the request with an error naming it, since reqwest would
//! keep Anthropic's `x-api-key` across origins. `ModelError` is typed (`NoKey`, `Unauthorized`,
//! `ContextTooLong`, `GaveUp`, `Http`, `Unreachable`, `Dropped`, `Malformed`, `Cancelled`); the
//! three that end a started stream carry what arrived. `ApiKey` never prints itself.
//!
//! A request body is written from typed structs in the order providers cache a prompt, tools,
//! system prompt and messages, so that two requests sharing a prefix share the bytes that start
//! them (`request_body`). Anthropic's gets `cache_control` on the system prompt's block and on the
//! last block of each marked message (`"ttl": "1h"` for an hour); OpenAI's own API gets the
//! request's `prompt_cache_key` (Flame sends the frame's id), and any other OpenAI-compatible
//! server `cache_prompt: true` (llama.cpp's switch, which the others ignore). OpenAI requests carry
//! `max_completion_tokens`, so a looping model stops at its reply's cap. Every reply's usage counts
//! the cache: Anthropic's reads and its writes by lifetime, OpenAI's and llama.cpp's
//! `cached_tokens`; a count that cannot be true (more cached than sent, more written for an hour
//! than written) is clamped, and the turn carries a notice saying so (`Turn::notices`), never an
//! error.
//!
//! Everything from the wire is bounded, and going past a bound ends the stream as `Malformed` with
//! what arrived: an SSE line and event (`MAX_SSE_LINE_BYTES`, `MAX_SSE_EVENT_BYTES`; the parser is
//! linear and holds at most one line), tool calls or content blocks keyed by the server's index
//! (`MAX_TOOL_CALLS`), a turn's text, names and arguments (`MAX_TURN_BYTES`, the store's message
//! cap), names and ids (`MAX_NAME_BYTES`) and token counts (`MAX_USAGE_TOKENS`). Error bodies are
//! read up to `MAX_ERROR_BODY_BYTES` and provider messages cut to `MAX_MESSAGE_CHARS` characters
//! with `…`. The providers' documented wire formats are in `tests/models/wire/`, hostile streams
//! and error bodies in `tests/models/hostile.rs`.

mod anthropic;
mod decode;
pub mod discover;
mod http;
mod limits;
mod openai;
mod provider_models;
#[cfg(feature = "replay")]
pub mod replay;
mod sse;

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use decode::decode_stream;
/// The tool calls and usage a turn brings are the same types a stored message holds, the tools
/// a request offers are described as everywhere else in Flame, and a request's messages and
/// cache marks are what `flame-context` shapes.
pub use flame_model::{CacheLifetime, CacheMark, ChatMessage, ToolCall, ToolSpec, Usage};
pub use http::{Client, MAX_REDIRECTS, RetryPolicy, request_body, use_ring_for_tls};
pub use provider_models::{MAX_PROVIDER_LIST_PAGES, PROVIDER_LIST_TIMEOUT, ProviderModels};
/// The SSE parser the live client reads streams through, for the gateway, which reads the
/// replies it passes on the same way.
pub use sse::{SseEvent, SseParser};
pub use tokio_util::sync::CancellationToken;

/// Which wire format to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    Anthropic,
    /// OpenAI Chat Completions and the servers compatible with it.
    Openai,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "Anthropic",
            ProviderKind::Openai => "OpenAI",
        }
    }

    /// The environment variable the provider's own SDK reads the key from.
    pub fn key_variable(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Openai => "OPENAI_API_KEY",
        }
    }

    /// The environment variable the provider's own SDK reads the base URL from.
    pub fn base_url_variable(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
            ProviderKind::Openai => "OPENAI_BASE_URL",
        }
    }

    /// The base URL when nothing else is set.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Openai => "https://api.openai.com/v1",
        }
    }
}

/// An API key. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced, for anything that might be shown.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() < 8 {
            return text.to_owned();
        }
        text.replace(&self.0, "[key]")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([hidden])")
    }
}

/// Where a provider is and how to reach it.
#[derive(Debug, Clone)]
pub struct Provider {
    pub kind: ProviderKind,
    /// Without a trailing slash, e.g. `https://api.anthropic.com` or `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    pub key: Option<ApiKey>,
    /// Where the key came from (`ANTHROPIC_API_KEY`, `the settings file`), for error messages.
    pub key_source: String,
}

/// A request to stream one turn. It is written to the wire in the order providers cache a
/// prompt — the tools, the system prompt, the messages — so that two requests that share a
/// prefix share the bytes that start them.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    pub cache: PromptCache,
}

/// What a request asks of the provider's prompt cache.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptCache {
    /// Keep the tools and the system prompt (up to `system_shared`) for this long (Anthropic's
    /// `cache_control` on the system prompt's block); `None` asks nothing.
    pub system: Option<CacheLifetime>,
    /// How many bytes the system prompt starts with that are the same in every conversation
    /// offered the same tools (Flame's shared preamble): Anthropic's system mark ends them, and
    /// the rest of the system prompt goes as a block of its own after it, so that conversations
    /// whose system prompts differ after it still share the cached start. `None` (or a count
    /// that does not fall inside the prompt between two characters): the whole prompt.
    pub system_shared: Option<usize>,
    /// Keep the prefix up to these messages (Anthropic's `cache_control` on a message's last
    /// block), in message order; lifetimes never grow along a request.
    pub marks: Vec<CacheMark>,
    /// A key that sends requests sharing a prefix to the same cache: OpenAI's
    /// `prompt_cache_key`, sent to OpenAI's own API only. Flame uses the frame's id.
    pub key: Option<String>,
}

/// What arrives while a turn streams.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    Text(String),
    ToolCallStarted { id: String, name: String },
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    #[default]
    EndTurn,
    /// The model wants its tool calls run.
    ToolUse,
    /// The reply hit `max_tokens`.
    MaxTokens,
    /// Anything else the provider said, as it said it.
    Other(String),
}

/// One streamed turn, whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub stop: StopReason,
    pub model: String,
    /// What was odd about the reply but did not stop it, for the person: a usage count that
    /// could not be true, clamped.
    pub notices: Vec<String>,
}

/// Why a call failed. Every message is fit to show a person and holds no key.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("no API key for {provider}: set {variable} or add a key in Flame's settings")]
    NoKey { provider: &'static str, variable: &'static str },
    #[error("{provider} rejected the API key from {key_source} (HTTP {status}); check that key")]
    Unauthorized { provider: &'static str, key_source: String, status: u16 },
    #[error("the context is too long for {provider}: {message}")]
    ContextTooLong { provider: &'static str, message: String },
    #[error("{provider} kept refusing (HTTP {status}) after {attempts} attempts: {message}")]
    GaveUp { provider: &'static str, status: u16, attempts: u32, message: String },
    #[error("{provider} answered HTTP {status}: {message}")]
    Http { provider: &'static str, status: u16, message: String },
    #[error("cannot reach {provider} at {base_url} after {attempts} attempts: {reason}")]
    Unreachable { provider: &'static str, base_url: String, attempts: u32, reason: String },
    #[error("the reply from {provider} broke off: {reason}")]
    Dropped { provider: &'static str, reason: String, partial: Box<Turn> },
    #[error("{provider} sent a reply Flame cannot read: {detail}")]
    Malformed { provider: &'static str, detail: String, partial: Box<Turn> },
    #[error("the reply was cancelled")]
    Cancelled { partial: Box<Turn> },
}

impl ModelError {
    /// What arrived before the reply stopped, for the errors that end a started stream.
    pub fn partial(&self) -> Option<&Turn> {
        match self {
            ModelError::Dropped { partial, .. }
            | ModelError::Malformed { partial, .. }
            | ModelError::Cancelled { partial } => Some(partial),
            _ => None,
        }
    }
}

/// How long to wait for the first byte of a response, and between two chunks of a stream.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The most tool calls one turn may hold. For Anthropic it counts content blocks of every kind,
/// since any of them could be one. Models call a handful at a time; a stream past this is
/// refused as malformed rather than kept, since each call is indexed by a number the server picks.
pub const MAX_TOOL_CALLS: usize = 128;

/// The longest name the server gives a thing, in bytes: a tool call's name or id, the model's
/// name, a stop reason. Providers' own limits are far lower (64 characters for a tool's name); the
/// bound keeps a name streamed in fragments, which is passed on whole with each fragment, from
/// costing more than its length, and keeps what is stored beside a reply small.
pub const MAX_NAME_BYTES: usize = 1024;

/// The most one turn may hold: its text, tool-call names, ids and arguments together, in bytes.
/// It matches the largest message the store keeps (4 MiB), so a longer reply could not be kept
/// whole anyway; past it the stream ends as malformed, keeping what arrived up to the limit.
pub const MAX_TURN_BYTES: usize = 4 * 1024 * 1024;

/// The longest line of a stream, in bytes. Providers send one event per line of a few hundred
/// bytes; a longer line ends the stream as malformed instead of being buffered without end.
pub const MAX_SSE_LINE_BYTES: usize = 1024 * 1024;

/// The most data one event may gather over its `data:` lines, in bytes: no event can carry more
/// than a whole turn may.
pub const MAX_SSE_EVENT_BYTES: usize = MAX_TURN_BYTES;

/// The most of an error response's body that is read, in bytes; the rest is not read at all.
/// Providers explain an error in a few hundred bytes of JSON.
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The longest message from a provider that is passed on, in characters: the explanation of an
/// error response or of an error event in a stream. Longer ones are cut and end with `…`.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// `message` cut to [`MAX_MESSAGE_CHARS`], ending with `…` if it was cut.
pub(crate) fn shorten(message: &str) -> String {
    let mut chars = message.char_indices();
    match chars.nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message.to_owned(),
    }
}

/// The most tokens a provider may report for one count of one call (input, output, cache reads,
/// cache writes). No model reads or writes near this many; a larger count is a broken or hostile
/// server, and taking it would overflow the sums Flame keeps. Past it the stream ends as
/// malformed.
pub const MAX_USAGE_TOKENS: u64 = 1 << 32;
