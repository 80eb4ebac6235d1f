//! MCP servers as tools for Flame's agent: the servers the person configured, reached over stdio
//! (a command Flame starts) or streamable HTTP, started at their first use, their tools listed
//! and called with `rmcp` as the client, every answer read within stated limits
//! ([`limits`]); and the servers other agents on this computer were given, found so the person
//! can add them ([`found`]).
//!
//! The crate knows nothing of frames, approval or the store: it offers each server's tools under
//! `server__tool` names with schemas every provider accepts ([`schema`]), turns a call's result
//! into the text the model reads ([`ToolReply`]), and turns every way a server can fail — it does
//! not start, exits, hangs, writes what is not JSON-RPC, sends more than the limit — into an
//! [`McpError`] on that call that names the server and says what happened, while the other
//! servers keep working. Servers start from the environment they are given (`StartEnvironment`,
//! the agent's, keys removed) and nothing else, each in a process group of its own that is
//! killed when the server is stopped or its set dropped.

mod config;
mod error;
pub mod found;
pub mod limits;
mod names;
mod process;
mod reply;
pub mod schema;
mod server;
mod servers;
mod transport;

pub use config::{MAX_SERVER_NAME_CHARS, McpTransport, check_name, expand, usable_name};
pub use error::{McpError, Problem};
pub use limits::*;
pub use names::{MAX_TOOL_NAME_CHARS, SEPARATOR, offered_name, server_of};
pub use reply::ToolReply;
pub use schema::offered_schema;
pub use server::{ListedTool, Lookup, ServerSpec, ServerStatus, StartEnvironment, ToolList};
pub use servers::{McpServers, ServerListing, ServerState};
