//! The set of servers the settings list: each started at its first use, listed together, called
//! by name, and stopped together. Dropping the set kills every server it started, so no server
//! outlives the agent that owns it; the front ends also stop the set when the app or `flame chat`
//! ends ([`McpServers::stop`]), and kill it where they cannot wait ([`McpServers::kill_now`]).

use std::sync::Arc;

use futures_util::future::join_all;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{McpError, Problem};
use crate::limits::{Limits, MAX_SERVERS};
use crate::reply::ToolReply;
use crate::server::{Server, ServerSpec, ServerStatus, StartEnvironment, ToolList};

/// The servers of one agent.
pub struct McpServers {
    /// In the order of their names.
    servers: Vec<Server>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.servers.iter().map(|s| &s.spec().name)).finish()
    }
}

/// One server's tools as listed now, or why they could not be.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerListing {
    pub server: String,
    pub tools: Result<ToolList, McpError>,
}

/// Where one server stands, for the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ServerState {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// Its command line or address.
    pub summary: String,
    pub status: ServerStatus,
}

impl McpServers {
    /// The servers of `specs` (the first [`MAX_SERVERS`], by name), none started yet.
    pub fn new(
        specs: Vec<ServerSpec>,
        start_environment: StartEnvironment,
        limits: Limits,
    ) -> McpServers {
        let start_environment = Arc::new(start_environment);
        let mut specs = specs;
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs.dedup_by(|a, b| a.name == b.name);
        specs.truncate(MAX_SERVERS);
        let servers = specs
            .into_iter()
            .map(|spec| Server::new(spec, Arc::clone(&start_environment), limits))
            .collect();
        McpServers { servers }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The servers' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|s| s.spec().name.as_str())
    }

    /// Every server's tools, listed now, all at once (starting those not running).
    pub async fn list_tools(&self) -> Vec<ServerListing> {
        join_all(self.servers.iter().map(|server| async move {
            ServerListing { server: server.spec().name.clone(), tools: server.tools().await }
        }))
        .await
    }

    /// Calls `server`'s tool `tool` (its own name) with `arguments`.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<ToolReply, McpError> {
        match self.servers.iter().find(|s| s.spec().name == server) {
            Some(found) => found.call(tool, arguments).await,
            None => Err(McpError::new(server, Problem::Unknown)),
        }
    }

    /// Where each server stands.
    pub fn states(&self) -> Vec<ServerState> {
        self.servers
            .iter()
            .map(|server| ServerState {
                name: server.spec().name.clone(),
                transport: server.spec().transport.kind().to_owned(),
                summary: server.spec().transport.summary(),
                status: server.status(),
            })
            .collect()
    }

    /// Stops every running server (see [`crate::STOP_GRACE`]).
    pub async fn stop(&self) {
        join_all(self.servers.iter().map(Server::stop)).await;
    }

    /// Kills every running stdio server's process group now.
    pub fn kill_now(&self) {
        for server in &self.servers {
            server.kill_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::McpTransport;

    #[test]
    fn at_most_the_limit_of_servers_each_named_once() {
        let spec = |n: usize| ServerSpec {
            name: format!("s{n:02}"),
            transport: McpTransport::Http {
                url: "https://x/mcp".to_owned(),
                headers: Default::default(),
            },
        };
        let mut specs: Vec<ServerSpec> = (0..MAX_SERVERS + 5).map(spec).collect();
        specs.push(spec(0));
        let start = StartEnvironment { variables: Vec::new(), lookup: Arc::new(|_| None) };
        let servers = McpServers::new(specs, start, Limits::DEFAULT);
        let names: Vec<&str> = servers.names().collect();
        assert_eq!(names.len(), MAX_SERVERS);
        assert_eq!(names[0], "s00");
        assert_eq!(names[1], "s01", "a name listed twice is one server");
    }
}
