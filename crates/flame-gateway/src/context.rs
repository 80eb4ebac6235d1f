//! Context mode: the request the gateway sends instead of the client's.

use bytes::Bytes;
use flame_api::Rewrite;
use flame_model::Timestamp;

use crate::request::Request;
use crate::sessions::{Placed, Sessions};

/// A request made of Flame's context.
#[derive(Debug)]
pub(crate) struct Built {
    pub body: Bytes,
    pub rewrite: Option<Rewrite>,
}

/// The request to send for `placed` in context mode; `None` sends the client's own.
pub(crate) fn request(
    _sessions: &Sessions,
    _placed: &Placed,
    _request: &Request<'_>,
    _at: Timestamp,
) -> Option<Built> {
    None
}
