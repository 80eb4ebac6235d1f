//! What went wrong with a server, said so that the person (and the model, which reads it as the
//! call's result) knows which server, what happened and what follows: every error names the
//! server, and the text a server supplied is cut to [`crate::MAX_ERROR_TEXT_BYTES`].

use std::fmt;
use std::time::Duration;

/// A server's failure on one operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the MCP server {server} {problem}")]
pub struct McpError {
    pub server: String,
    pub problem: Problem,
}

impl McpError {
    pub(crate) fn new(server: &str, problem: Problem) -> McpError {
        McpError { server: server.to_owned(), problem }
    }
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// It could not be started at all: its command was not found, a variable its settings name
    /// is not set, its address is not one.
    CannotStart { reason: String },
    /// Its process ended; with its exit status and the end of its standard error.
    Exited { status: String, stderr: String },
    /// It did not answer in time; with what it wrote that was not JSON-RPC and the end of its
    /// standard error, which usually say why.
    TimedOut { what: &'static str, after: Duration, noise: Option<String>, stderr: String },
    /// It sent a message over the limit, which was not read.
    TooLarge { limit: usize },
    /// It wrote more than the limit that is not JSON-RPC; with its start.
    NotJsonRpc { sample: String },
    /// It answered, but not as the protocol says (a malformed or unexpected message).
    Protocol { detail: String },
    /// It answered the call with a JSON-RPC error.
    Refused { message: String },
    /// A failure not long ago; it is not tried again until then.
    FailedRecently { earlier: Box<Problem>, retry_in: Duration },
    /// The settings name no such server.
    Unknown,
    /// The call was stopped by the person.
    Cancelled,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::CannotStart { reason } => write!(f, "could not start: {reason}"),
            Problem::Exited { status, stderr } => {
                write!(f, "exited ({status})")?;
                if !stderr.is_empty() {
                    write!(f, "; its standard error ends: {stderr}")?;
                }
                write!(f, ". It starts again at its next use.")
            }
            Problem::TimedOut { what, after, noise, stderr } => {
                write!(f, "did not answer {what} within {} s", after.as_secs_f64())?;
                if let Some(noise) = noise {
                    write!(f, "; it wrote what is not JSON-RPC: {noise}")?;
                }
                if !stderr.is_empty() {
                    write!(f, "; its standard error ends: {stderr}")?;
                }
                Ok(())
            }
            Problem::TooLarge { limit } => write!(
                f,
                "sent a message of more than {} bytes, which Flame does not read; the server was stopped and starts again at its next use",
                limit
            ),
            Problem::NotJsonRpc { sample } => write!(
                f,
                "writes what is not JSON-RPC to its output ({sample}), so it was stopped; it starts again at its next use"
            ),
            Problem::Protocol { detail } => write!(f, "broke the protocol: {detail}"),
            Problem::Refused { message } => write!(f, "refused the call: {message}"),
            Problem::FailedRecently { earlier, retry_in } => {
                write!(f, "{earlier} (it is tried again in {} s)", retry_in.as_secs().max(1))
            }
            Problem::Unknown => write!(f, "is not in Flame's settings"),
            Problem::Cancelled => write!(f, "did not finish: the call was stopped"),
        }
    }
}
