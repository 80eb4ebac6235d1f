//! Server-sent events, parsed incrementally from a byte stream.

use crate::{MAX_SSE_EVENT_BYTES, MAX_SSE_LINE_BYTES};

/// One event: its `event:` name (if any) and its `data:` lines joined with newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Collects bytes and hands out whole events. Lines may end in `\n` or `\r\n`; an event ends at
/// a blank line; comment lines (`:`) are ignored.
///
/// Parsing is linear in the bytes pushed: the unfinished line's bytes are scanned once, however
/// many chunks it arrives in. A line longer than [`MAX_SSE_LINE_BYTES`], or an event whose data
/// passes [`MAX_SSE_EVENT_BYTES`], is refused: the parser drops what it holds, says why in
/// [`SseParser::refusal`], and takes nothing more.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The unfinished line.
    buffer: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    /// The bytes of `data`, newlines between its lines included.
    data_bytes: usize,
    refusal: Option<String>,
}

impl SseParser {
    /// Adds a chunk and returns the events it completed. Events completed before a refusal are
    /// returned; check [`SseParser::refusal`] after handling them.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if self.refusal.is_some() {
            return events;
        }
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (line_end, next) = rest.split_at(end);
            rest = &next[1..];
            let line = if self.buffer.is_empty() {
                self.check_line(line_end.len());
                line_end
            } else {
                self.check_line(self.buffer.len() + line_end.len());
                self.buffer.extend_from_slice(line_end);
                &self.buffer[..]
            };
            if self.refusal.is_some() {
                return self.refuse(events);
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = String::from_utf8_lossy(line).into_owned();
            self.buffer.clear();
            self.line(&line, &mut events);
            if self.refusal.is_some() {
                return self.refuse(events);
            }
        }
        self.check_line(self.buffer.len() + rest.len());
        if self.refusal.is_some() {
            return self.refuse(events);
        }
        self.buffer.extend_from_slice(rest);
        events
    }

    /// Why the stream was refused, once it was.
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    fn check_line(&mut self, length: usize) {
        if length > MAX_SSE_LINE_BYTES {
            self.refusal = Some(format!(
                "a line of the stream is longer than {} MiB",
                MAX_SSE_LINE_BYTES / (1024 * 1024)
            ));
        }
    }

    /// Drops what is held once the stream is refused, so that it holds nothing more.
    fn refuse(&mut self, events: Vec<SseEvent>) -> Vec<SseEvent> {
        self.buffer = Vec::new();
        self.data = Vec::new();
        self.data_bytes = 0;
        self.event = None;
        events
    }

    /// Takes one whole line, without its line ending.
    fn line(&mut self, line: &str, events: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if !self.data.is_empty() || self.event.is_some() {
                events.push(SseEvent { event: self.event.take(), data: self.data.join("\n") });
                self.data.clear();
                self.data_bytes = 0;
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                self.data_bytes += value.len() + usize::from(!self.data.is_empty());
                if self.data_bytes > MAX_SSE_EVENT_BYTES {
                    self.refusal = Some(format!(
                        "an event of the stream is longer than {} MiB",
                        MAX_SSE_EVENT_BYTES / (1024 * 1024)
                    ));
                    return;
                }
                self.data.push(value.to_owned());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_come_out_whole() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"event: ping\r\nda").is_empty());
        let events = parser.push(b"ta: {\"a\":1}\r\n\r\n: comment\n\ndata: one\ndata: two\n\n");
        assert_eq!(
            events,
            [
                SseEvent { event: Some("ping".into()), data: "{\"a\":1}".into() },
                SseEvent { event: None, data: "one\ntwo".into() },
            ]
        );
    }

    #[test]
    fn a_line_without_a_newline_is_refused_past_the_limit_and_not_held() {
        let mut parser = SseParser::default();
        let chunk = [b'x'; 4096];
        assert!(parser.push(b"data: ").is_empty());
        let mut pushed = 6;
        for _ in 0..(10_000_000 / chunk.len()) {
            assert!(parser.push(&chunk).is_empty());
            pushed += chunk.len();
            assert!(
                parser.buffer.len() <= MAX_SSE_LINE_BYTES,
                "the parser holds {} bytes",
                parser.buffer.len()
            );
            assert_eq!(
                parser.refusal().is_some(),
                pushed > MAX_SSE_LINE_BYTES,
                "after {pushed} bytes"
            );
        }
        assert_eq!(parser.refusal(), Some("a line of the stream is longer than 1 MiB"));
        assert_eq!(parser.buffer.capacity(), 0, "what was held is dropped");
        assert!(parser.push(b"\n\ndata: later\n\n").is_empty(), "nothing after a refusal");
    }

    #[test]
    fn a_long_line_in_one_chunk_is_refused_after_the_events_before_it() {
        let mut parser = SseParser::default();
        let mut chunk = b"data: first\n\ndata: ".to_vec();
        chunk.extend(std::iter::repeat_n(b'x', MAX_SSE_LINE_BYTES));
        chunk.extend_from_slice(b"\n\n");
        let events = parser.push(&chunk);
        assert_eq!(events, [SseEvent { event: None, data: "first".into() }]);
        assert!(parser.refusal().is_some());
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_taken() {
        let mut parser = SseParser::default();
        let value = "x".repeat(MAX_SSE_LINE_BYTES - "data: ".len());
        assert!(parser.push(format!("data: {}", &value[..1000]).as_bytes()).is_empty());
        let events = parser.push(format!("{}\n\n", &value[1000..]).as_bytes());
        assert_eq!(parser.refusal(), None);
        assert_eq!(events[0].data.len(), value.len());
    }

    #[test]
    fn an_event_of_many_lines_is_refused_past_the_limit_and_not_held() {
        let mut parser = SseParser::default();
        let line = format!("data: {}\n", "y".repeat(64 * 1024 - 1));
        for _ in 0..(MAX_SSE_EVENT_BYTES / (64 * 1024)) {
            assert!(parser.push(line.as_bytes()).is_empty());
        }
        assert_eq!(parser.refusal(), None, "exactly the limit is taken");
        assert_eq!(parser.data_bytes, MAX_SSE_EVENT_BYTES - 1);
        assert!(parser.push(b"data: zz\n").is_empty());
        assert_eq!(parser.refusal(), Some("an event of the stream is longer than 4 MiB"));
        assert!(parser.data.is_empty());
    }
}
