//! Why a frame operation was refused.

use crate::{FrameId, Status, TreeId};

/// A refused or impossible frame operation. Callers branch on the variant (the command line's
/// exit code, the boundary's error code); the message names the frame, its status, and what is
/// allowed, so a person or a model can act on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("no frame {0} in this data directory")]
    NoSuchFrame(FrameId),
    #[error("no tree {0} in this data directory")]
    NoSuchTree(TreeId),
    #[error("there is no tree yet: create one with `flame tree new \"TITLE\" --criteria \"TEXT\"`")]
    NoCurrentTree,
    /// The operation is not allowed in the frame's current state.
    #[error("cannot {op} {frame} \"{title}\": it is {status}; {allowed}")]
    Refused { op: &'static str, frame: FrameId, title: String, status: Status, allowed: String },
    /// The input itself is wrong (an empty title, a missing reason, a malformed id).
    #[error("{0}")]
    Invalid(String),
}
