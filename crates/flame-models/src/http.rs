//! Sending a request, retrying what may be retried, and reading the stream.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
use tokio_util::sync::CancellationToken;

use crate::decode::StreamDecoder;
use crate::{
    ChatRequest, IDLE_TIMEOUT, MAX_ERROR_BODY_BYTES, ModelError, Provider, ProviderKind,
    StreamEvent, Turn, anthropic, openai, shorten,
};

/// How often and how long to retry a request that failed before anything streamed.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// The wait before the second attempt; it doubles each time.
    pub base_delay: Duration,
    /// The longest wait, `retry-after` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// A client for every provider; cheap to clone.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    retry: RetryPolicy,
}

/// The most redirects one request follows, all within its origin.
pub const MAX_REDIRECTS: usize = 10;

/// Redirects are followed only within the request's origin (scheme, host and port): reqwest drops
/// `Authorization` on a redirect to another host but not Anthropic's `x-api-key`, so a provider's
/// address that redirected elsewhere would hand the key to whoever answers there. A redirect to
/// another origin ends the request with the redirect itself (see `Client::send`).
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let leaves = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() != attempt.url().origin());
        if leaves {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// Gives rustls, for the whole process, the cryptography every HTTPS client of Flame uses: ring's
/// (the workspace's Cargo.toml says why not reqwest's default). Called before each client is
/// built, since reqwest refuses to build one while the process has none; the first call chooses.
pub fn use_ring_for_tls() {
    static CHOSEN: std::sync::Once = std::sync::Once::new();
    CHOSEN.call_once(|| {
        // Another part of the process may have chosen first; its choice serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Client {
    pub fn new(retry: RetryPolicy) -> Client {
        use_ring_for_tls();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(IDLE_TIMEOUT)
            .redirect(same_origin_redirects())
            .build()
            .expect("the HTTP client's settings are valid");
        Client { http, retry }
    }

    /// The HTTP client, for the other requests a provider answers (its list of models).
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Streams one turn, passing deltas to `on_event` as they arrive.
    pub async fn stream(
        &self,
        provider: &Provider,
        request: &ChatRequest,
        cancel: &CancellationToken,
        mut on_event: impl FnMut(StreamEvent),
    ) -> Result<Turn, ModelError> {
        let response = self.send(provider, request, cancel).await?;
        let mut decoder = StreamDecoder::new(provider.kind);
        let mut body = response.bytes_stream();
        loop {
            let chunk = tokio::select! {
                () = cancel.cancelled() => return Err(ModelError::Cancelled { partial: Box::new(decoder.partial()) }),
                chunk = tokio::time::timeout(IDLE_TIMEOUT, body.next()) => chunk,
            };
            let bytes = match chunk {
                Err(_) => {
                    let reason = format!("nothing arrived for {} s", IDLE_TIMEOUT.as_secs());
                    return Err(scrub_error(provider, decoder.dropped(reason)));
                }
                Ok(None) => break,
                Ok(Some(Err(err))) => {
                    return Err(scrub_error(provider, decoder.dropped(err.to_string())));
                }
                Ok(Some(Ok(bytes))) => bytes,
            };
            decoder.push(&bytes, &mut on_event).map_err(|err| scrub_error(provider, err))?;
        }
        decoder.finish().map_err(|err| scrub_error(provider, err))
    }

    /// Sends the request until it is accepted, retrying 429, 5xx and connection errors.
    async fn send(
        &self,
        provider: &Provider,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, ModelError> {
        let name = provider.kind.name();
        let (url, body, headers) = prepare(provider, request)?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = self
                .http
                .post(&url)
                .headers(headers.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone())
                .send();
            let result = tokio::select! {
                () = cancel.cancelled() => return Err(ModelError::Cancelled { partial: Box::default() }),
                result = sent => result,
            };
            let wait = match result {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) if response.status().is_redirection() => {
                    let to = response
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .and_then(|to| to.to_str().ok())
                        .unwrap_or("another address");
                    return Err(ModelError::Http {
                        provider: name,
                        status: response.status().as_u16(),
                        message: scrub(
                            provider,
                            &shorten(&format!(
                                "the provider's address redirected the request to {to}, another origin, where Flame does not send the key; set the base URL to the address the provider uses now"
                            )),
                        ),
                    });
                }
                Ok(response) => {
                    let status = response.status();
                    let retry_after = retry_after(response.headers());
                    let text = read_error_body(response).await;
                    let message = scrub(provider, &error_message(&text));
                    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                        return Err(ModelError::Unauthorized {
                            provider: name,
                            key_source: provider.key_source.clone(),
                            status: status.as_u16(),
                        });
                    }
                    let too_long = match provider.kind {
                        ProviderKind::Anthropic => {
                            anthropic::is_context_too_long(status.as_u16(), &message)
                        }
                        ProviderKind::Openai => openai::is_context_too_long(status.as_u16(), &text),
                    };
                    if too_long {
                        return Err(ModelError::ContextTooLong { provider: name, message });
                    }
                    if !(status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()) {
                        return Err(ModelError::Http {
                            provider: name,
                            status: status.as_u16(),
                            message,
                        });
                    }
                    if attempt >= self.retry.attempts {
                        return Err(ModelError::GaveUp {
                            provider: name,
                            status: status.as_u16(),
                            attempts: attempt,
                            message,
                        });
                    }
                    tracing::info!(provider = name, status = status.as_u16(), attempt, "retrying");
                    retry_after.unwrap_or_else(|| self.backoff(attempt))
                }
                Err(err) => {
                    if attempt >= self.retry.attempts {
                        return Err(ModelError::Unreachable {
                            provider: name,
                            base_url: provider.base_url.clone(),
                            attempts: attempt,
                            reason: scrub(provider, &err.to_string()),
                        });
                    }
                    tracing::info!(provider = name, attempt, "retrying after a connection error");
                    self.backoff(attempt)
                }
            };
            tokio::select! {
                () = cancel.cancelled() => return Err(ModelError::Cancelled { partial: Box::default() }),
                () = tokio::time::sleep(wait.min(self.retry.max_delay)) => {}
            }
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        self.retry.base_delay.saturating_mul(1 << (attempt - 1).min(16))
    }
}

/// The JSON body [`Client::stream`] sends for `request` to `provider`, byte for byte: what a
/// prompt cache sees of it.
pub fn request_body(provider: &Provider, request: &ChatRequest) -> String {
    let base = provider.base_url.trim_end_matches('/');
    match provider.kind {
        ProviderKind::Anthropic => anthropic::body(request),
        ProviderKind::Openai => openai::body(request, base),
    }
}

/// The URL, body (JSON text) and headers of a request.
fn prepare(
    provider: &Provider,
    request: &ChatRequest,
) -> Result<(String, String, HeaderMap), ModelError> {
    let headers = auth_headers(provider)?;
    let base = provider.base_url.trim_end_matches('/');
    let url = match provider.kind {
        ProviderKind::Anthropic => anthropic::url(base),
        ProviderKind::Openai => openai::url(base),
    };
    Ok((url, request_body(provider, request), headers))
}

/// The headers every request to `provider` carries: its key (refused as missing where the
/// provider needs one) and, for Anthropic, the API version.
pub(crate) fn auth_headers(provider: &Provider) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    let key = provider.key.as_ref();
    let value = |text: &str| {
        HeaderValue::from_str(text).map_err(|_| ModelError::Http {
            provider: provider.kind.name(),
            status: 0,
            message: "the API key holds characters an HTTP header cannot".to_owned(),
        })
    };
    let base = provider.base_url.trim_end_matches('/');
    match provider.kind {
        ProviderKind::Anthropic => {
            let key = key.ok_or(ModelError::NoKey {
                provider: "Anthropic",
                variable: "ANTHROPIC_API_KEY",
            })?;
            let mut secret = value(key.expose())?;
            secret.set_sensitive(true);
            headers.insert("x-api-key", secret);
            headers.insert("anthropic-version", HeaderValue::from_static(anthropic::VERSION));
        }
        ProviderKind::Openai => {
            // Local OpenAI-compatible servers (Ollama, llama.cpp) usually need no key.
            match key {
                Some(key) => {
                    let mut secret = value(&format!("Bearer {}", key.expose()))?;
                    secret.set_sensitive(true);
                    headers.insert("authorization", secret);
                }
                None if base == ProviderKind::Openai.default_base_url() => {
                    return Err(ModelError::NoKey {
                        provider: "OpenAI",
                        variable: "OPENAI_API_KEY",
                    });
                }
                None => {}
            }
        }
    }
    Ok(headers)
}

/// `retry-after` in seconds (providers send whole or fractional seconds). A number of seconds too
/// large for a `Duration` is the longest one; the caller waits at most its own longest wait.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?;
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX))
}

/// The start of an error response's body, at most [`MAX_ERROR_BODY_BYTES`] of it: the rest is
/// not read, and the connection is dropped with it. A body that breaks off gives what arrived.
pub(crate) async fn read_error_body(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = MAX_ERROR_BODY_BYTES - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// The `error.message` of a provider's JSON error body, or the body itself, shortened.
pub(crate) fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| v["error"]["message"].as_str().map(str::to_owned));
    let text = message.unwrap_or_else(|| body.trim().to_owned());
    if text.is_empty() { "no explanation".to_owned() } else { shorten(&text) }
}

pub(crate) fn scrub(provider: &Provider, text: &str) -> String {
    provider.key.as_ref().map_or_else(|| text.to_owned(), |key| key.scrub(text))
}

/// The error with its texts scrubbed of the key.
fn scrub_error(provider: &Provider, err: ModelError) -> ModelError {
    match err {
        ModelError::Dropped { provider: name, reason, partial } => {
            ModelError::Dropped { provider: name, reason: scrub(provider, &reason), partial }
        }
        ModelError::Malformed { provider: name, detail, partial } => {
            ModelError::Malformed { provider: name, detail: scrub(provider, &detail), partial }
        }
        other => other,
    }
}
