//! What Flame allows a server: how long it may take to start, list its tools and answer a call,
//! how much it may send, and how many tools of what size it may offer. A server past a limit
//! gets a clear error on that call (or its tools are not offered, with the reason) and every
//! other server, and the agent, keep working.

use std::time::Duration;

/// How long a server has to start and answer `initialize`: long enough for `npx` to start a
/// package it already has, short enough that a server that never answers holds nothing up for
/// long (Codex waits 10 s by default, Claude Code 30 s).
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a server has to list its tools, every page of them.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(15);

/// How long one tool call may take before it is abandoned (the server is told it was cancelled):
/// as long as a workspace command's default timeout.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The largest message a server may send (one line of JSON-RPC over stdio, one response or
/// event over HTTP). A larger one is not read: the call gets an error saying so, and a stdio
/// server is stopped (its output can no longer be followed) and starts again at the next use.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// The most of a result's text the model is sent; the rest is cut, with a line saying how long
/// the result was. As much as a command's output shows, twice over.
pub const MAX_RESULT_TEXT_BYTES: usize = 64 * 1024;

/// The most a stdio server may write to its standard output that is not JSON-RPC (a banner, a
/// log line printed to the wrong stream) before it is taken for broken and stopped.
pub const MAX_NOISE_BYTES: usize = 64 * 1024;

/// The most of a server's standard error kept (its end), to say why it failed.
pub const MAX_STDERR_TAIL_BYTES: usize = 1024;

/// The most tools one server may offer; past it the rest are left out, and the person is told.
pub const MAX_TOOLS_PER_SERVER: usize = 128;

/// The most pages of tools a server's list may come in.
pub const MAX_LIST_PAGES: usize = 16;

/// The most servers the settings may list.
pub const MAX_SERVERS: usize = 32;

/// The longest tool description sent to the model; a longer one is cut.
pub const MAX_TOOL_DESCRIPTION_BYTES: usize = 2 * 1024;

/// The largest tool schema offered (as JSON, after the check that makes it one every provider
/// and llama.cpp accept); a tool with a larger one is not offered.
pub const MAX_SCHEMA_BYTES: usize = 16 * 1024;

/// How deep a tool schema may nest; a deeper one is not offered.
pub const MAX_SCHEMA_DEPTH: usize = 24;

/// How long a stopped server has to exit after its input is closed and it is asked to
/// (`SIGTERM`), before its whole process group is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// How long after a failed start a server is not tried again: a server that cannot start would
/// otherwise cost its start timeout at every frame's opening.
pub const RETRY_START_AFTER: Duration = Duration::from_secs(60);

/// The longest text of an error a server caused (its standard error, what it wrote instead of
/// JSON-RPC, its error message); the rest is cut.
pub const MAX_ERROR_TEXT_BYTES: usize = 1024;

/// The limits one set of servers works under: [`Limits::DEFAULT`] in the app, shorter times in
/// tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub start: Duration,
    pub list: Duration,
    pub call: Duration,
    pub max_message_bytes: usize,
    pub max_result_text_bytes: usize,
    pub max_noise_bytes: usize,
    pub stop_grace: Duration,
    pub retry_start_after: Duration,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        start: START_TIMEOUT,
        list: LIST_TIMEOUT,
        call: CALL_TIMEOUT,
        max_message_bytes: MAX_MESSAGE_BYTES,
        max_result_text_bytes: MAX_RESULT_TEXT_BYTES,
        max_noise_bytes: MAX_NOISE_BYTES,
        stop_grace: STOP_GRACE,
        retry_start_after: RETRY_START_AFTER,
    };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// `text` cut to at most `limit` bytes on a character boundary.
pub(crate) fn cut(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut to [`MAX_ERROR_TEXT_BYTES`], with "…" when it was cut.
pub(crate) fn error_text(text: &str) -> String {
    let trimmed = text.trim();
    let kept = cut(trimmed, MAX_ERROR_TEXT_BYTES);
    if kept.len() < trimmed.len() { format!("{kept}…") } else { kept.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_text_in_an_error_is_cut_and_says_so() {
        let long = "ü".repeat(MAX_ERROR_TEXT_BYTES);
        let cut_text = error_text(&long);
        assert!(cut_text.ends_with('…'));
        assert!(cut_text.len() <= MAX_ERROR_TEXT_BYTES + '…'.len_utf8());
        assert_eq!(error_text("  short  "), "short");
    }
}
