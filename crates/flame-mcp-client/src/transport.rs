//! JSON-RPC over a stdio server's standard input and output, one message a line, read within
//! limits: a line longer than the message limit is not read, a line that opens JSON but is not a
//! JSON-RPC message is not skipped, and more output that is not JSON at all (a banner, logs
//! printed to the wrong stream) than [`crate::MAX_NOISE_BYTES`] is not tolerated. Each of those
//! ends the reading, which closes the connection at once: the call waiting on it gets an error
//! that says what the server did ([`OutputWatch::broken`]) rather than waiting for its timeout,
//! and the server is stopped. A little output that is not JSON is skipped, and its first line is
//! kept to say why a server that never answers did not.
//!
//! Reading is cancel-safe (the service polls it inside a `select!`): a partial line stays in the
//! transport's buffer until the rest arrives. A notification the client does not know is
//! skipped, as rmcp's own reader does.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::limits::{cut, error_text};

/// Why a server's output stopped being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Broken {
    /// A message longer than the limit.
    TooLarge,
    /// More output that is not JSON than the limit; with its start.
    Noise(String),
    /// A message that opens JSON but is not JSON-RPC; with its start and why.
    Malformed(String),
}

/// What the reader of a server's output saw: whether it broke off, and the start of the first
/// line that was not JSON.
#[derive(Debug, Default)]
pub(crate) struct OutputWatch {
    broken: Mutex<Option<Broken>>,
    noise_sample: Mutex<Option<String>>,
}

impl OutputWatch {
    pub fn broken(&self) -> Option<Broken> {
        self.broken.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The start of the first line the server wrote that was not JSON, if any.
    pub fn noise_sample(&self) -> Option<String> {
        self.noise_sample.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn break_off(&self, why: Broken) {
        let mut broken = self.broken.lock().unwrap_or_else(PoisonError::into_inner);
        broken.get_or_insert(why);
    }
}

/// The most of a line that is not JSON-RPC kept to show the person.
const SAMPLE_BYTES: usize = 200;

/// A stdio server's output and input as an rmcp transport.
pub(crate) struct LineTransport<R, W> {
    reader: BufReader<R>,
    writer: Arc<tokio::sync::Mutex<Option<W>>>,
    watch: Arc<OutputWatch>,
    max_line: usize,
    max_noise: usize,
    line: Vec<u8>,
    /// How much output that is not JSON was skipped so far.
    noise: usize,
}

impl<R: AsyncRead, W> LineTransport<R, W> {
    pub fn new(
        reader: R,
        writer: W,
        watch: Arc<OutputWatch>,
        max_line: usize,
        max_noise: usize,
    ) -> Self {
        LineTransport {
            reader: BufReader::new(reader),
            writer: Arc::new(tokio::sync::Mutex::new(Some(writer))),
            watch,
            max_line,
            max_noise,
            line: Vec::new(),
            noise: 0,
        }
    }
}

/// What one line was.
enum Line {
    Message(Box<RxJsonRpcMessage<RoleClient>>),
    Skipped,
    Broken(Broken),
}

impl<R: AsyncRead + Unpin, W> LineTransport<R, W> {
    /// Reads up to the end of the next line into `self.line`; `Ok(false)` at the end of the
    /// output, `Err` when the line is over the limit.
    async fn read_line(&mut self) -> io::Result<Result<bool, Broken>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(Ok(false));
            }
            let (take, ends) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if self.line.len() + take > self.max_line + 1 {
                return Ok(Err(Broken::TooLarge));
            }
            self.line.extend_from_slice(&available[..take]);
            self.reader.consume(take);
            if ends {
                return Ok(Ok(true));
            }
        }
    }

    /// What the line read is.
    fn classify(&mut self) -> Line {
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        let Some(first) = line.iter().find(|b| !b.is_ascii_whitespace()) else {
            return Line::Skipped;
        };
        if *first != b'{' && *first != b'[' {
            self.noise += line.len();
            let mut sample = self.watch.noise_sample.lock().unwrap_or_else(PoisonError::into_inner);
            let text = sample_of(line);
            sample.get_or_insert(text.clone());
            if self.noise > self.max_noise {
                return Line::Broken(Broken::Noise(text));
            }
            return Line::Skipped;
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
            Ok(message) => Line::Message(Box::new(message)),
            Err(err) => match serde_json::from_slice::<serde_json::Value>(line) {
                // A notification the client does not know: nothing waits on it.
                Ok(value) if value.get("method").is_some() && value.get("id").is_none() => {
                    Line::Skipped
                }
                _ => Line::Broken(Broken::Malformed(format!(
                    "{} ({})",
                    sample_of(line),
                    error_text(&err.to_string())
                ))),
            },
        }
    }
}

fn sample_of(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(cut_bytes(line, SAMPLE_BYTES * 2));
    let kept = cut(text.trim(), SAMPLE_BYTES);
    if kept.len() < text.trim().len() { format!("{kept}…") } else { kept.to_owned() }
}

fn cut_bytes(bytes: &[u8], limit: usize) -> &[u8] {
    &bytes[..bytes.len().min(limit)]
}

impl<R, W> Transport<RoleClient> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(io::Error::other)?;
            bytes.push(b'\n');
            let mut writer = writer.lock().await;
            let Some(writer) = writer.as_mut() else {
                return Err(io::Error::new(io::ErrorKind::NotConnected, "the server was closed"));
            };
            writer.write_all(&bytes).await?;
            writer.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.watch.broken().is_some() {
            return None;
        }
        loop {
            match self.read_line().await {
                Ok(Ok(true)) => {}
                Ok(Ok(false)) | Err(_) => return None,
                Ok(Err(broken)) => {
                    self.watch.break_off(broken);
                    return None;
                }
            }
            let line = self.classify();
            self.line.clear();
            match line {
                Line::Message(message) => return Some(*message),
                Line::Skipped => {}
                Line::Broken(broken) => {
                    self.watch.break_off(broken);
                    return None;
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), io::Error>> + Send {
        let writer = Arc::clone(&self.writer);
        async move {
            // Closing the server's input is the protocol's way of asking it to exit.
            if let Some(mut writer) = writer.lock().await.take() {
                let _ = writer.shutdown().await;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn received(
        input: &[u8],
        max_line: usize,
        max_noise: usize,
    ) -> (usize, Arc<OutputWatch>) {
        let watch = Arc::new(OutputWatch::default());
        let input = io::Cursor::new(input.to_vec());
        let mut transport =
            LineTransport::new(input, tokio::io::sink(), Arc::clone(&watch), max_line, max_noise);
        let mut count = 0;
        while Transport::<RoleClient>::receive(&mut transport).await.is_some() {
            count += 1;
        }
        (count, watch)
    }

    const RESPONSE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

    fn lines(parts: &[&[u8]]) -> Vec<u8> {
        parts.iter().flat_map(|p| p.iter().copied().chain([b'\n'])).collect()
    }

    #[tokio::test]
    async fn messages_are_read_line_by_line_and_empty_lines_skipped() {
        let input = lines(&[
            RESPONSE,
            b"",
            br#"{"jsonrpc":"2.0","method":"notifications/made_up","params":{}}"#,
            RESPONSE,
        ]);
        let (count, watch) = received(&input, 1024, 1024).await;
        assert_eq!(count, 3, "a notification the client does not know is its to ignore");
        assert_eq!(watch.broken(), None);
    }

    #[tokio::test]
    async fn a_line_past_the_limit_ends_the_reading() {
        let input = lines(&[RESPONSE, RESPONSE]);
        let (count, watch) = received(&input, RESPONSE.len() - 1, 1024).await;
        assert_eq!(count, 0);
        assert_eq!(watch.broken(), Some(Broken::TooLarge));
        // At the limit is fine.
        let (count, watch) = received(&input, RESPONSE.len(), 1024).await;
        assert_eq!((count, watch.broken()), (2, None));
    }

    #[tokio::test]
    async fn some_noise_is_remembered_and_too_much_ends_the_reading() {
        let input = lines(&[b"Server running on stdio", RESPONSE]);
        let (count, watch) = received(&input, 1024, 1024).await;
        assert_eq!(count, 1);
        assert_eq!(watch.noise_sample().as_deref(), Some("Server running on stdio"));
        let noise = "garbage ".repeat(200);
        let input = lines(&[noise.as_bytes(), RESPONSE]);
        let (count, watch) = received(&input, 1 << 20, 1024).await;
        assert_eq!(count, 0);
        match watch.broken() {
            Some(Broken::Noise(sample)) => {
                assert!(sample.starts_with("garbage garbage"), "{sample}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn json_that_is_not_json_rpc_ends_the_reading() {
        for bad in [&br#"{"hello": "world"}"#[..], b"{not json", br#"{"jsonrpc":"2.0","id":1}"#] {
            let input = lines(&[bad, RESPONSE]);
            let (count, watch) = received(&input, 1024, 1024).await;
            assert_eq!(count, 0, "{}", String::from_utf8_lossy(bad));
            assert!(matches!(watch.broken(), Some(Broken::Malformed(_))), "{:?}", watch.broken());
        }
    }
}
