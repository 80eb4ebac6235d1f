//! The upstreams: where each wire format's requests go, and the request that goes there.
//!
//! The gateway forwards only to the two base URLs it was configured with (never to a host a
//! request names: it is not an open proxy), follows no redirect, and sends the client's headers
//! but those that describe one connection (hop-by-hop headers, `host`, `content-length`) and
//! `accept-encoding`, which it sets to `identity` so that it can read the reply as it passes.
//! The client's key is among the headers it sends on: it goes to the upstream and nowhere else.

use std::time::Duration;

use bytes::Bytes;
use flame_import::wire::WireFormat;
use http::{HeaderMap, HeaderName, Method};

/// How long to wait for the upstream to accept a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a reply may go without a byte before the gateway gives up on it and ends the
/// client's stream with an error: a model thinking before its first token is slow, but not this
/// slow (`flame_models::IDLE_TIMEOUT`).
pub const IDLE_TIMEOUT: Duration = flame_models::IDLE_TIMEOUT;

/// Headers that describe one connection, not the request, and so are not passed on.
const HOP_BY_HOP: [&str; 10] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Whether a header of a request or a reply is passed on.
pub(crate) fn passed_on(name: &HeaderName) -> bool {
    let name = name.as_str();
    !HOP_BY_HOP.contains(&name)
        && name != "content-length"
        && name != "accept-encoding"
        && name != "content-encoding"
}

/// The base URLs the gateway forwards to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstreams {
    /// Anthropic's Messages API, without `/v1` (`https://api.anthropic.com`).
    pub anthropic: String,
    /// OpenAI's APIs, with `/v1` (`https://api.openai.com/v1`).
    pub openai: String,
}

impl Default for Upstreams {
    fn default() -> Upstreams {
        Upstreams {
            anthropic: flame_models::ProviderKind::Anthropic.default_base_url().to_owned(),
            openai: flame_models::ProviderKind::Openai.default_base_url().to_owned(),
        }
    }
}

impl Upstreams {
    /// Where a request of `wire` to `path_and_query` (`/v1/messages?beta=true`) goes.
    pub fn url(&self, wire: WireFormat, path_and_query: &str) -> String {
        match wire {
            WireFormat::Anthropic => {
                format!("{}{path_and_query}", self.anthropic.trim_end_matches('/'))
            }
            WireFormat::Responses | WireFormat::Chat => {
                let rest = path_and_query.strip_prefix("/v1").unwrap_or(path_and_query);
                format!("{}{rest}", self.openai.trim_end_matches('/'))
            }
        }
    }
}

/// Sends requests to the upstreams.
#[derive(Debug, Clone)]
pub(crate) struct Forwarder {
    client: reqwest::Client,
    pub upstreams: Upstreams,
}

impl Forwarder {
    pub fn new(upstreams: Upstreams) -> Result<Forwarder, String> {
        flame_models::use_ring_for_tls();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(IDLE_TIMEOUT)
            .no_proxy()
            .build()
            .map_err(|e| format!("cannot make the gateway's HTTP client: {e}"))?;
        Ok(Forwarder { client, upstreams })
    }

    /// Sends `body` to the upstream of `wire` with the client's `headers`.
    pub async fn send(
        &self,
        wire: WireFormat,
        method: Method,
        path_and_query: &str,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<reqwest::Response, String> {
        let url = self.upstreams.url(wire, path_and_query);
        let mut sent = HeaderMap::new();
        for (name, value) in headers {
            if passed_on(name) {
                sent.append(name.clone(), value.clone());
            }
        }
        sent.insert(http::header::ACCEPT_ENCODING, http::HeaderValue::from_static("identity"));
        self.client
            .request(method, &url)
            .headers(sent)
            .body(body)
            .send()
            .await
            .map_err(|e| describe(&e, &self.upstreams, wire))
    }
}

/// What went wrong reaching the upstream, naming it but nothing the client sent.
fn describe(err: &reqwest::Error, upstreams: &Upstreams, wire: WireFormat) -> String {
    let base = match wire {
        WireFormat::Anthropic => &upstreams.anthropic,
        _ => &upstreams.openai,
    };
    let why = if err.is_timeout() {
        "it did not answer in time".to_owned()
    } else if err.is_connect() {
        "it refused the connection or could not be reached".to_owned()
    } else {
        // reqwest's own message names the URL, which holds no key; its source says why.
        std::error::Error::source(err).map_or_else(|| err.to_string(), |s| s.to_string())
    };
    format!("Flame's gateway could not reach the upstream at {base}: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_goes_to_its_upstream() {
        let upstreams = Upstreams {
            anthropic: "http://127.0.0.1:9/".into(),
            openai: "http://127.0.0.1:8/v1".into(),
        };
        assert_eq!(
            upstreams.url(WireFormat::Anthropic, "/v1/messages?beta=true"),
            "http://127.0.0.1:9/v1/messages?beta=true"
        );
        assert_eq!(
            upstreams.url(WireFormat::Responses, "/v1/responses"),
            "http://127.0.0.1:8/v1/responses"
        );
        assert_eq!(
            upstreams.url(WireFormat::Chat, "/v1/chat/completions"),
            "http://127.0.0.1:8/v1/chat/completions"
        );
    }

    #[test]
    fn connection_headers_are_not_passed_on() {
        for name in ["connection", "host", "content-length", "transfer-encoding", "accept-encoding"]
        {
            assert!(!passed_on(&HeaderName::from_static(name)), "{name}");
        }
        for name in ["x-api-key", "authorization", "anthropic-version", "session-id"] {
            assert!(passed_on(&HeaderName::from_static(name)), "{name}");
        }
    }
}
