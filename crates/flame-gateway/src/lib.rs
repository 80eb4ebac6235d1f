//! The gateway (issue 37, DESIGN.md §12): Flame beside the agents people already run.
//!
//! An agent points its base URL at the gateway — `ANTHROPIC_BASE_URL` for Claude Code, a
//! `model_providers` entry for Codex, a provider's `baseURL` for OpenCode — and the gateway
//! forwards each of its model calls to the provider, streaming the reply back chunk by chunk as
//! it arrives. It speaks Anthropic's Messages API (`/v1/messages`, streamed and not, and
//! `/v1/messages/count_tokens`), OpenAI's Responses API (`/v1/responses`) and Chat Completions
//! (`/v1/chat/completions`), and forwards each to the upstream configured for its provider
//! (`forward.rs`): never anywhere else, and it listens on 127.0.0.1 only.
//!
//! Each client session becomes a tree, live (`sessions.rs`, `flame_import::wire`): its main
//! thread cut into the segments `flame replay` cuts, its subagents' threads child frames, each
//! call's billed usage on the message it produced, stored through the facade as a followed
//! session is (`flame_api`'s `gateway.rs`). Before a call goes upstream the budgets on its
//! frame's path are checked, and a call over a budget is refused in the provider's own error
//! shape (`errors.rs`), with the facade's words naming the frame, the budget and what was
//! spent; nothing is sent. Each call is recorded with what the upstream billed and what the
//! client's own request would have cost under the same prompt-cache model (`client_cost.rs`).
//!
//! In [`Mode::Observe`] (the default) every request goes upstream byte for byte. In
//! [`Mode::Context`] the request keeps the client's tools and system prompt unchanged and first,
//! and carries the current frame's cache-true context instead of the linear history
//! (`context.rs`).
//!
//! Everything from outside is bounded: a request body by [`MAX_REQUEST_BYTES`], a conversation
//! by `flame_import::wire::MAX_THREAD_ITEMS`, the sessions kept by [`sessions::MAX_SESSIONS`], a
//! reply's events by `flame_models`' SSE limits and what is read of it by
//! [`reply::MAX_REPLY_BYTES`], an upstream that stops sending by [`forward::IDLE_TIMEOUT`]. A
//! request that breaks a limit or cannot be read gets a clear error and changes no tree; an
//! upstream that goes away mid-stream ends the client's stream with an error event, never a hang.
//! The client's key goes to the upstream in the headers it came in and nowhere else: no error,
//! log line or row holds it.

mod call;
mod client_cost;
mod context;
mod errors;
pub mod forward;
pub mod reply;
mod request;
mod rewritten;
pub mod sessions;

use std::convert::Infallible;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use flame_api::Flame;
use flame_import::wire::WireFormat;
use http::Method;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

pub use forward::Upstreams;

use crate::errors::ClientError;

/// The largest request body the gateway takes, in bytes: Anthropic's own limit for a Messages
/// request (32 MB); a larger body is refused with 413 and nothing is read of it past the limit.
pub const MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;

/// The port the gateway listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 8788;

/// What the gateway sends upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every request byte for byte; budgets checked, usage recorded.
    #[default]
    Observe,
    /// The client's tools and system prompt, then Flame's context for the current frame.
    Context,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Observe => "observe",
            Mode::Context => "context",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "observe" => Some(Mode::Observe),
            "context" => Some(Mode::Context),
            _ => None,
        }
    }
}

/// How a gateway runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GatewayConfig {
    /// 0 for any free port.
    pub port: u16,
    pub mode: Mode,
    pub upstreams: Upstreams,
}

/// Why the gateway could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Listen { port: u16, source: std::io::Error },
    #[error("{0}")]
    Setup(String),
}

/// What every request handler shares.
#[derive(Debug)]
struct State {
    flame: Arc<Flame>,
    mode: Mode,
    forwarder: forward::Forwarder,
    sessions: Mutex<sessions::Sessions>,
    notices: tokio::sync::broadcast::Sender<CallNotice>,
}

/// What the gateway did with one call, for a front end to show as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallNotice {
    /// The session's id (`claude-code:…`).
    pub session: String,
    pub wire: WireFormat,
    /// The status the client received; 0 when the upstream could not be reached.
    pub status: u16,
    /// Why the gateway refused the call, when it did.
    pub refused: Option<String>,
    /// Whether Flame's context was sent.
    pub context: bool,
    /// What the upstream reported for what was sent.
    pub billed: flame_model::Usage,
    /// What the client's own request would have used of the cache (input only).
    pub client: flame_model::Usage,
}

/// How many notices wait for a slow reader before the oldest are dropped.
const NOTICES_KEPT: usize = 256;

/// A bound gateway, ready to serve.
#[derive(Debug)]
pub struct Gateway {
    listener: TcpListener,
    address: SocketAddr,
    state: Arc<State>,
}

/// A line to paste so that an agent talks to the gateway.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, specta::Type)]
pub struct ClientSetting {
    pub agent: &'static str,
    pub line: String,
}

/// The settings that point each agent at a gateway listening on `address`.
pub fn client_settings(address: SocketAddr) -> Vec<ClientSetting> {
    let base = format!("http://{address}");
    vec![
        ClientSetting { agent: "Claude Code", line: format!("export ANTHROPIC_BASE_URL={base}") },
        ClientSetting {
            agent: "Codex",
            line: format!(
                "codex -c model_provider=flame -c 'model_providers.flame={{name=\"Flame\",base_url=\"{base}/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}}'"
            ),
        },
        ClientSetting {
            agent: "OpenCode",
            line: format!(
                "\"provider\": {{\"openai\": {{\"options\": {{\"baseURL\": \"{base}/v1\"}}}}, \"anthropic\": {{\"options\": {{\"baseURL\": \"{base}/v1\"}}}}}}"
            ),
        },
        ClientSetting { agent: "OpenAI SDKs", line: format!("export OPENAI_BASE_URL={base}/v1") },
    ]
}

/// The upstream of `upstreams` that is the gateway itself, listening on `port`: forwarding there
/// would send each request back to the gateway, without end. `None` when neither is.
pub fn upstream_to_itself(upstreams: &Upstreams, port: u16) -> Option<&str> {
    let own = ["127.0.0.1", "localhost", "0.0.0.0"].map(|host| format!("http://{host}:{port}"));
    [upstreams.anthropic.as_str(), upstreams.openai.as_str()].into_iter().find(|url| {
        let url = url.trim_end_matches('/').to_ascii_lowercase();
        own.iter().any(|own| url == *own || url.starts_with(&format!("{own}/")))
    })
}

impl Gateway {
    /// Listens on 127.0.0.1 at `config.port` (any free port for 0), over `flame`'s data
    /// directory.
    pub async fn bind(config: GatewayConfig, flame: Arc<Flame>) -> Result<Gateway, GatewayError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port))
            .await
            .map_err(|source| GatewayError::Listen { port: config.port, source })?;
        let address = listener
            .local_addr()
            .map_err(|source| GatewayError::Listen { port: config.port, source })?;
        let forwarder = forward::Forwarder::new(config.upstreams).map_err(GatewayError::Setup)?;
        let keep = flame.keep_tool_results();
        let state = Arc::new(State {
            flame,
            mode: config.mode,
            forwarder,
            sessions: Mutex::new(sessions::Sessions::new(keep)),
            notices: tokio::sync::broadcast::channel(NOTICES_KEPT).0,
        });
        Ok(Gateway { listener, address, state })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Every call the gateway handles from now on, as it ends.
    pub fn notices(&self) -> tokio::sync::broadcast::Receiver<CallNotice> {
        self.state.notices.subscribe()
    }

    /// Serves until `shutdown` completes; the connections open then are dropped.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> Result<(), GatewayError> {
        let state = self.state;
        let listener = self.listener;
        tokio::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = &mut shutdown => return Ok(()),
            };
            let (stream, _) = match accepted {
                Ok(connection) => connection,
                Err(err) => {
                    tracing::warn!("the gateway could not take a connection: {err}");
                    continue;
                }
            };
            // A reply's head and its first chunk go as they are written: waiting to fill a packet
            // (Nagle) held each first byte for the client's delayed acknowledgement, 40 ms.
            if let Err(err) = stream.set_nodelay(true) {
                tracing::debug!("the gateway could not set TCP_NODELAY: {err}");
            }
            let state = state.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(handle(state, request).await) }
                });
                let served = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                if let Err(err) = served {
                    tracing::debug!("a gateway connection ended: {err}");
                }
            });
        }
    }
}

/// The body of a response to a client.
pub(crate) type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

pub(crate) fn full(bytes: Bytes) -> Body {
    http_body_util::Full::new(bytes).boxed()
}

/// An error response in `wire`'s shape.
pub(crate) fn error_response(
    wire: Option<WireFormat>,
    error: &ClientError,
) -> hyper::Response<Body> {
    let mut response = hyper::Response::new(full(error.body(wire)));
    *response.status_mut() = error.status;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}

/// How much of a body past [`MAX_REQUEST_BYTES`] is read and dropped before the gateway answers
/// 413: a client still sending when the answer comes often reports a broken connection instead
/// of the answer, so a body a little too large is taken to its end; past this the connection is
/// closed on it.
pub const MAX_DISCARDED_BYTES: usize = 256 * 1024 * 1024;

/// Why a request's body was not read.
#[derive(Debug)]
enum BodyError {
    TooLarge,
    BrokeOff(String),
}

/// Reads a request's body up to [`MAX_REQUEST_BYTES`]; past it, reads and drops the rest (up to
/// [`MAX_DISCARDED_BYTES`]) and says it was too large. Nothing past the limit is kept.
async fn read_body(mut body: Incoming) -> Result<Bytes, BodyError> {
    let mut kept: Vec<u8> = Vec::new();
    let mut dropped = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::BrokeOff(e.to_string()))?;
        let Ok(data) = frame.into_data() else { continue };
        if dropped == 0 && kept.len() + data.len() <= MAX_REQUEST_BYTES {
            kept.extend_from_slice(&data);
            continue;
        }
        kept = Vec::new();
        dropped = dropped.saturating_add(data.len());
        if dropped > MAX_DISCARDED_BYTES {
            break;
        }
    }
    if dropped > 0 { Err(BodyError::TooLarge) } else { Ok(Bytes::from(kept)) }
}

/// The routes the gateway answers, each with its wire format.
fn route(method: &Method, path: &str) -> Option<WireFormat> {
    if method != Method::POST {
        return None;
    }
    match path {
        "/v1/messages" | "/v1/messages/count_tokens" => Some(WireFormat::Anthropic),
        "/v1/responses" => Some(WireFormat::Responses),
        "/v1/chat/completions" => Some(WireFormat::Chat),
        _ => None,
    }
}

async fn handle(state: Arc<State>, request: hyper::Request<Incoming>) -> hyper::Response<Body> {
    let (parts, body) = request.into_parts();
    let Some(wire) = route(&parts.method, parts.uri.path()) else {
        let error = ClientError::not_found(format!(
            "Flame's gateway answers POST /v1/messages, /v1/messages/count_tokens, /v1/responses and /v1/chat/completions, not {} {}",
            parts.method,
            parts.uri.path()
        ));
        return error_response(None, &error);
    };
    let body = match read_body(body).await {
        Ok(body) => body,
        Err(BodyError::TooLarge) => {
            let error = ClientError::too_large(format!(
                "the request is larger than the {} MiB Flame's gateway takes",
                MAX_REQUEST_BYTES / (1024 * 1024)
            ));
            return error_response(Some(wire), &error);
        }
        Err(BodyError::BrokeOff(why)) => {
            let error = ClientError::refused(format!("the request broke off: {why}"));
            return error_response(Some(wire), &error);
        }
    };
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    if parts.uri.path().ends_with("/count_tokens") {
        return call::count_tokens(
            &state,
            wire,
            parts.method,
            &path_and_query,
            &parts.headers,
            body,
        )
        .await;
    }
    call::run(state, wire, parts.method, path_and_query, parts.headers, body).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_on_the_gateway_s_own_port_is_the_gateway_itself() {
        let mut upstreams = Upstreams::default();
        assert_eq!(upstream_to_itself(&upstreams, DEFAULT_PORT), None);
        upstreams.openai = "http://LocalHost:8788/v1".into();
        assert_eq!(upstream_to_itself(&upstreams, 8788), Some("http://LocalHost:8788/v1"));
        assert_eq!(upstream_to_itself(&upstreams, 8789), None, "another port");
        upstreams.openai = "http://127.0.0.1:87880/v1".into();
        assert_eq!(upstream_to_itself(&upstreams, 8788), None, "not a prefix of the port");
        upstreams.anthropic = "http://127.0.0.1:8788".into();
        assert_eq!(upstream_to_itself(&upstreams, 8788), Some("http://127.0.0.1:8788"));
    }
}
