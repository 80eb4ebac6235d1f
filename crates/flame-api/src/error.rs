//! The one error shape at the boundary: a code a front end may branch on and a message a person
//! can act on.

use std::fmt::Display;

use flame_model::FrameError;
use flame_store::{OpenError, StoreError};
use serde::{Deserialize, Serialize};

/// What a front end can branch on. Only codes some front end actually treats differently belong
/// here; everything else is `Internal` with a clear message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The data directory cannot be created, opened or written.
    DataDirUnusable,
    /// The database file exists but Flame cannot read it; it was left untouched.
    DatabaseUnreadable,
    /// A tree or frame named in the request does not exist (or there is no tree yet).
    NotFound,
    /// The lifecycle rules refused the operation in the frame's current state; nothing changed.
    Refused,
    /// The request itself is malformed (an empty title, a missing reason, a bad id); nothing
    /// changed.
    Invalid,
    /// A call to a model failed (unreachable, refused, cut off); the message says why and
    /// what was kept.
    ModelFailed,
    /// Anything else; the message says what failed.
    Internal,
}

/// An error as it crosses to a front end: `{code, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError { code, message: message.into() }
    }

    /// An unexpected failure while doing `what` (a phrase such as "read the schema version").
    pub fn internal(what: &str, cause: impl Display) -> ApiError {
        ApiError::new(ErrorCode::Internal, format!("could not {what}: {cause}"))
    }

    pub(crate) fn from_open(err: OpenError) -> ApiError {
        ApiError::from_open_ref(&err)
    }

    pub(crate) fn from_open_ref(err: &OpenError) -> ApiError {
        let code = match err {
            OpenError::NotADatabase { .. }
            | OpenError::TooNew { .. }
            | OpenError::Damaged { .. } => ErrorCode::DatabaseUnreadable,
            OpenError::CannotOpen { .. } => ErrorCode::DataDirUnusable,
            OpenError::Sqlite { .. } => ErrorCode::Internal,
        };
        let advice = match code {
            ErrorCode::DatabaseUnreadable => {
                "; Flame left the file as it was: move it aside to start afresh, or set FLAME_HOME to another folder"
            }
            ErrorCode::DataDirUnusable => "; set FLAME_HOME to a folder you can write",
            _ => "",
        };
        ApiError::new(code, format!("{err}{advice}"))
    }
}

impl From<FrameError> for ApiError {
    fn from(err: FrameError) -> ApiError {
        let code = match err {
            FrameError::NoSuchFrame(_) | FrameError::NoSuchTree(_) | FrameError::NoCurrentTree => {
                ErrorCode::NotFound
            }
            FrameError::Refused { .. } => ErrorCode::Refused,
            FrameError::Invalid(_) => ErrorCode::Invalid,
        };
        ApiError::new(code, err.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> ApiError {
        match err {
            StoreError::Frame(err) => err.into(),
            StoreError::Unusable(err) => ApiError::from_open_ref(&err),
            other => ApiError::internal("update the database", other),
        }
    }
}
