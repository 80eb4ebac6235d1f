//! Writing to standard output and reading standard input, safely.
//!
//! Titles and messages come from people, models and imported files, so they may carry terminal
//! escape sequences (`ESC [ 31 m` recolours the terminal, `ESC ] 0 ; … BEL` retitles its
//! window). What is shown to a person has every control character but the newline and the tab
//! written out as an escape (`\x1b`, `\u{9b}`), so the text reads as what it is and does nothing
//! to the terminal. A reader that goes away (`flame status | head -1`) ends the command quietly
//! instead of panicking.

use std::borrow::Cow;
use std::io::{ErrorKind, Read, Write};

use flame_api::ApiError;

/// The most `flame append ID -` reads from standard input: the store's cap on a message
/// (`flame_store::MAX_MESSAGE_BYTES`, which the store checks again). Reading stops one byte
/// past it, so a larger input is refused without being held whole.
pub const MAX_STDIN_BYTES: usize = 4 * 1024 * 1024;

/// `text` with every C0 control character but `\n` and `\t`, DEL and every C1 control character
/// written as an escape: `\x1b` for the C0 ones and DEL, `\u{9b}` for the C1 ones.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let is_control = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !is_control(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// Writes `text` and a newline to standard output. When the reader has gone (a broken pipe),
/// nothing more can be shown and the command's work is done: the process exits with status 0,
/// as a pipeline like `flame status | head -1` expects, without a message.
pub fn print_line(text: &str) -> Result<(), ApiError> {
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_all(text.as_bytes()).and_then(|()| {
        stdout.write_all(b"\n")?;
        stdout.flush()
    });
    match written {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == ErrorKind::BrokenPipe => std::process::exit(0),
        Err(err) => Err(ApiError::internal("write to standard output", err)),
    }
}

/// A message's text from standard input, up to [`MAX_STDIN_BYTES`], as UTF-8.
pub fn read_stdin_message() -> Result<String, ApiError> {
    read_message(std::io::stdin().lock())
}

fn read_message(input: impl Read) -> Result<String, ApiError> {
    let mut bytes = Vec::new();
    input
        .take(MAX_STDIN_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ApiError::internal("read standard input", e))?;
    if bytes.len() > MAX_STDIN_BYTES {
        return Err(flame_model::FrameError::Invalid(format!(
            "standard input holds more than {MAX_STDIN_BYTES} bytes, the limit of a message"
        ))
        .into());
    }
    String::from_utf8(bytes).map_err(|e| {
        flame_model::FrameError::Invalid(format!(
            "standard input is not UTF-8 text (bad byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_as_escapes_and_text_is_kept() {
        assert_eq!(
            escape_controls("a\x1b[31mred\x1b]0;pwned\x07 \u{9b}2J\r\x7f"),
            "a\\x1b[31mred\\x1b]0;pwned\\x07 \\u{9b}2J\\x0d\\x7f"
        );
        assert!(matches!(escape_controls("line\n\tindented — ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn standard_input_is_read_up_to_the_cap() {
        let at_cap = "é".repeat(MAX_STDIN_BYTES / 2);
        assert_eq!(read_message(at_cap.as_bytes()).unwrap().len(), MAX_STDIN_BYTES);
        let over = format!("{at_cap}x");
        let err = read_message(over.as_bytes()).unwrap_err();
        assert!(err.message.contains("more than 4194304 bytes"), "{}", err.message);
        let err = read_message(&b"caf\xe9"[..]).unwrap_err();
        assert!(err.message.contains("not UTF-8"), "{}", err.message);
    }
}
