//! A local HTTP server that answers model requests with recorded responses, for tests: Flame's
//! own, and anything that needs a provider without a network. It listens on 127.0.0.1 only,
//! records every request it gets, and plays a queue of [`Reply`]s in order; a request a route
//! matches ([`ReplayServer::route`], by method, path and what its body holds) gets that route's
//! reply instead, every time, which is how a test plays a whole server (Ollama's `/api/tags`, and
//! `/api/show` answering each model its own way).
//!
//! Its replies can be streams, drops, slow streams and JSON errors.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One recorded answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A `200 text/event-stream` response whose body is `body`, sent in pieces of about
    /// `chunk` bytes with `pause` between them, ending with the connection closed.
    Stream { body: String, chunk: usize, pause: Duration },
    /// Like `Stream`, but the connection closes after `cut_at` bytes of the body.
    Dropped { body: String, cut_at: usize },
    /// Sends the head and `first` bytes of `body`, then waits `hold` before closing: for cancel.
    Slow { body: String, first: usize, hold: Duration },
    /// A JSON response with this status and these extra headers.
    Json { status: u16, headers: Vec<(String, String)>, body: String },
    /// A `200 application/json` response without a length whose body never ends: `piece`
    /// repeated until the client goes away, for a reader that must stop at its limit.
    Endless { piece: String },
    /// Reads the request and answers nothing for `hold`, then closes: a server past any timeout.
    Silent { hold: Duration },
}

impl Reply {
    /// A whole stream, sent in small pieces so that events cross chunk boundaries.
    pub fn stream(body: impl Into<String>) -> Reply {
        Reply::Stream { body: body.into(), chunk: 37, pause: Duration::from_millis(1) }
    }

    pub fn json(status: u16, body: impl Into<String>) -> Reply {
        Reply::Json { status, headers: Vec::new(), body: body.into() }
    }
}

/// A reply given to every request that matches.
#[derive(Debug, Clone)]
struct Route {
    method: String,
    path: String,
    body_holds: String,
    reply: Reply,
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// A running replay server.
#[derive(Debug, Clone)]
pub struct ReplayServer {
    pub base_url: String,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    /// Replies answered every time they match, the newest route first.
    routes: Arc<Mutex<Vec<Route>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl ReplayServer {
    /// Starts a server on a free port of 127.0.0.1 on the current tokio runtime. A request
    /// that finds no reply queued gets a 500 that says so.
    pub async fn start() -> std::io::Result<ReplayServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base_url = format!("http://{}", listener.local_addr()?);
        let server = ReplayServer {
            base_url,
            replies: Arc::default(),
            routes: Arc::default(),
            requests: Arc::default(),
        };
        let accepting = server.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let handler = accepting.clone();
                tokio::spawn(async move {
                    let _ = handler.answer(socket).await;
                });
            }
        });
        Ok(server)
    }

    /// Queues replies, answered in order.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        self.replies.lock().expect("not poisoned").extend(replies);
    }

    /// Answers every `method` request for `path` (its query left out) with `reply`, before the
    /// queue is looked at.
    pub fn route(&self, method: &str, path: &str, reply: Reply) {
        self.route_when(method, path, "", reply);
    }

    /// Like [`ReplayServer::route`], for the requests whose body holds `body_holds` alone. A
    /// route given later is matched first.
    pub fn route_when(&self, method: &str, path: &str, body_holds: &str, reply: Reply) {
        let route = Route {
            method: method.to_ascii_uppercase(),
            path: path.to_owned(),
            body_holds: body_holds.to_owned(),
            reply,
        };
        self.routes.lock().expect("not poisoned").insert(0, route);
    }

    /// Where the server listens, as `host:port`.
    pub fn address(&self) -> &str {
        self.base_url.trim_start_matches("http://")
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("not poisoned").clone()
    }

    async fn answer(&self, mut socket: TcpStream) -> std::io::Result<()> {
        let request = read_request(&mut socket).await?;
        let path = request.path.split('?').next().unwrap_or_default();
        let routed = self
            .routes
            .lock()
            .expect("not poisoned")
            .iter()
            .find(|r| {
                r.method.eq_ignore_ascii_case(&request.method)
                    && r.path == path
                    && request.body.contains(&r.body_holds)
            })
            .map(|r| r.reply.clone());
        self.requests.lock().expect("not poisoned").push(request);
        let reply = routed.or_else(|| self.replies.lock().expect("not poisoned").pop_front());
        let head = |status: &str, kind: &str| {
            format!(
                "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
            )
        };
        match reply {
            Some(Reply::Stream { body, chunk, pause }) => {
                socket.write_all(head("200 OK", "text/event-stream").as_bytes()).await?;
                for piece in body.as_bytes().chunks(chunk.max(1)) {
                    socket.write_all(piece).await?;
                    socket.flush().await?;
                    tokio::time::sleep(pause).await;
                }
            }
            Some(Reply::Dropped { body, cut_at }) => {
                socket.write_all(head("200 OK", "text/event-stream").as_bytes()).await?;
                socket.write_all(&body.as_bytes()[..cut_at.min(body.len())]).await?;
                socket.flush().await?;
                // Closing before the reply's last event is the point: the stream just ends.
            }
            Some(Reply::Slow { body, first, hold }) => {
                socket.write_all(head("200 OK", "text/event-stream").as_bytes()).await?;
                socket.write_all(&body.as_bytes()[..first.min(body.len())]).await?;
                socket.flush().await?;
                tokio::time::sleep(hold).await;
            }
            Some(Reply::Json { status, headers, body }) => {
                let mut text = format!(
                    "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\n",
                    reason(status)
                );
                for (name, value) in headers {
                    text.push_str(&format!("{name}: {value}\r\n"));
                }
                text.push_str(&format!(
                    "content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                ));
                socket.write_all(text.as_bytes()).await?;
            }
            Some(Reply::Endless { piece }) => {
                socket.write_all(head("200 OK", "application/json").as_bytes()).await?;
                let piece = if piece.is_empty() { " ".to_owned() } else { piece };
                // Ends when the client closes the connection and a write fails.
                loop {
                    socket.write_all(piece.as_bytes()).await?;
                }
            }
            Some(Reply::Silent { hold }) => {
                tokio::time::sleep(hold).await;
                return Ok(());
            }
            None => {
                let body = r#"{"error":{"message":"the replay server has no reply queued for this request"}}"#;
                let text = format!(
                    "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                socket.write_all(text.as_bytes()).await?;
            }
        }
        socket.shutdown().await
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    }
}

async fn read_request(socket: &mut TcpStream) -> std::io::Result<Recorded> {
    let mut data = Vec::new();
    let mut buffer = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut buffer).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        data.extend_from_slice(&buffer[..n]);
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let (method, path) =
        (first.next().unwrap_or_default().to_owned(), first.next().unwrap_or_default().to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut buffer).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buffer[..n]);
    }
    Ok(Recorded { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() })
}
