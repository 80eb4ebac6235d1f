//! Errors as each wire format's clients expect them: a body in the provider's own error shape,
//! with a status the client does not retry when retrying cannot help, and the event that ends a
//! stream that broke off.

use bytes::Bytes;
use flame_import::wire::WireFormat;
use http::StatusCode;
use serde_json::json;

/// What went wrong, as the gateway tells a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientError {
    pub status: StatusCode,
    pub message: String,
}

impl ClientError {
    /// A request Flame will not send: a budget is spent, the request cannot be read. 400, which
    /// clients show their person and do not retry.
    pub fn refused(message: impl Into<String>) -> ClientError {
        ClientError { status: StatusCode::BAD_REQUEST, message: message.into() }
    }

    pub fn too_large(message: impl Into<String>) -> ClientError {
        ClientError { status: StatusCode::PAYLOAD_TOO_LARGE, message: message.into() }
    }

    /// The upstream could not be reached or answered nothing usable: 502, which clients retry.
    pub fn upstream(message: impl Into<String>) -> ClientError {
        ClientError { status: StatusCode::BAD_GATEWAY, message: message.into() }
    }

    pub fn not_found(message: impl Into<String>) -> ClientError {
        ClientError { status: StatusCode::NOT_FOUND, message: message.into() }
    }

    /// The error's body in `wire`'s shape.
    pub fn body(&self, wire: Option<WireFormat>) -> Bytes {
        let kind = match self.status {
            StatusCode::PAYLOAD_TOO_LARGE => "request_too_large",
            StatusCode::NOT_FOUND => "not_found_error",
            s if s.is_server_error() => "api_error",
            _ => "invalid_request_error",
        };
        let body = match wire {
            Some(WireFormat::Anthropic) => {
                json!({"type": "error", "error": {"type": kind, "message": self.message}})
            }
            _ => json!({"error": {"message": self.message, "type": kind, "param": null,
                                  "code": "flame_gateway"}}),
        };
        Bytes::from(body.to_string())
    }
}

/// The event that ends a stream of `wire` that broke off, saying why; clients show it as the
/// reply's error.
pub(crate) fn stream_error(wire: WireFormat, message: &str) -> Bytes {
    let text = match wire {
        WireFormat::Anthropic => {
            let data = json!({"type": "error", "error": {"type": "api_error", "message": message}});
            format!("event: error\ndata: {data}\n\n")
        }
        WireFormat::Responses => {
            let data = json!({"type": "response.failed", "response": {"status": "failed",
                "error": {"code": "server_error", "message": message}}});
            format!("event: response.failed\ndata: {data}\n\n")
        }
        WireFormat::Chat => {
            let data = json!({"error": {"message": message, "type": "api_error"}});
            format!("data: {data}\n\n")
        }
    };
    Bytes::from(text)
}
