//! The MCP servers in the settings (`mcp_servers`): each a name, how it is reached
//! (`flame_mcp_client::McpTransport`: a command over stdio with its arguments and environment, or a
//! streamable HTTP address with its headers), and how calls to its tools are approved: by default
//! the agent asks the person before each call ([`McpApproval::Ask`]); the person may allow a
//! server's calls, or some of its tools' calls, to run without asking.
//!
//! A server's environment and headers often hold a token, so the UI sees them the way it sees a
//! key ([`redacted`]: each value shown as set, `(set)`), and an edit that sends that back keeps
//! the saved value while the server's command or address stays the same ([`merged`]). The checks ([`check`])
//! refuse what no call could reach: more than `MAX_SERVERS`, a name that could not prefix its
//! tools (`flame_mcp_client::check_name`) or is listed twice, an empty command, an address that is
//! not `http(s)://`, a header HTTP does not allow. Servers other agents were given are found by
//! `flame_mcp_client::found`, and [`add_found`] adds those picked.

use std::collections::BTreeMap;
use std::fmt;

use flame_mcp_client::found::FoundServer;
use flame_mcp_client::{MAX_SERVERS, McpTransport, check_name};
use serde::{Deserialize, Serialize};

/// Whether a call waits for the person.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum McpApproval {
    /// The agent asks before each call.
    #[default]
    Ask,
    /// Calls run without asking.
    Allow,
}

/// One MCP server whose tools the agent is offered.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct McpServerSettings {
    /// Its tools are offered as `name__tool`.
    pub name: String,
    pub transport: McpTransport,
    /// How calls to its tools are approved, unless `tools` says otherwise for a tool.
    #[serde(default)]
    pub approval: McpApproval,
    /// How calls to some of its tools (by the tool's own name) are approved, where that differs
    /// from the server's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, McpApproval>,
}

impl fmt::Debug for McpServerSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Environments and headers may hold tokens: only their names are shown.
        let transport = match &self.transport {
            McpTransport::Stdio { command, args, env, cwd } => format!(
                "stdio {command} {args:?} env {:?} cwd {cwd:?}",
                env.keys().collect::<Vec<_>>()
            ),
            McpTransport::Http { url, headers } => {
                format!("http {url} headers {:?}", headers.keys().collect::<Vec<_>>())
            }
        };
        f.debug_struct("McpServerSettings")
            .field("name", &self.name)
            .field("transport", &transport)
            .field("approval", &self.approval)
            .field("tools", &self.tools)
            .finish()
    }
}

impl McpServerSettings {
    /// How a call of its tool `tool` (the tool's own name) is approved.
    pub fn approval_of(&self, tool: &str) -> McpApproval {
        self.tools.get(tool).copied().unwrap_or(self.approval)
    }

    /// A server another agent was given, as Flame's settings hold it: its calls asked for.
    pub fn from_found(found: &FoundServer) -> McpServerSettings {
        McpServerSettings {
            name: found.name.clone(),
            transport: found.transport.clone(),
            approval: McpApproval::Ask,
            tools: BTreeMap::new(),
        }
    }

    /// The values of its environment or headers.
    fn secrets_mut(&mut self) -> &mut BTreeMap<String, String> {
        match &mut self.transport {
            McpTransport::Stdio { env, .. } => env,
            McpTransport::Http { headers, .. } => headers,
        }
    }

    /// What it is reached by, whose change drops the saved values the UI did not see: the
    /// command, or the address.
    fn reached_by(&self) -> (&'static str, &str) {
        match &self.transport {
            McpTransport::Stdio { command, .. } => ("stdio", command.trim()),
            McpTransport::Http { url, .. } => ("http", url.trim()),
        }
    }
}

/// Refuses servers no call could reach (see the module's documentation).
pub(crate) fn check(servers: &[McpServerSettings]) -> Result<(), String> {
    if servers.len() > MAX_SERVERS {
        return Err(format!(
            "at most {MAX_SERVERS} MCP servers may be listed, not {}",
            servers.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for server in servers {
        check_name(&server.name)?;
        if !seen.insert(server.name.as_str()) {
            return Err(format!("the MCP server {} is listed twice", server.name));
        }
        server
            .transport
            .check()
            .map_err(|why| format!("the MCP server {} cannot be reached: {why}", server.name))?;
    }
    Ok(())
}

/// The servers as the UI may see them: every environment and header value shown as `set`.
pub(crate) fn redacted(servers: &[McpServerSettings], set: &str) -> Vec<McpServerSettings> {
    servers
        .iter()
        .map(|server| {
            let mut shown = server.clone();
            for value in shown.secrets_mut().values_mut() {
                *value = set.to_owned();
            }
            shown
        })
        .collect()
}

/// `edited` (from the UI, which never saw the values) with each value still shown as `set` taken
/// from the saved server of the same name, while its command or address is the same; otherwise
/// such a value is dropped, so a token only ever goes where the person gave it.
pub(crate) fn merged(
    saved: &[McpServerSettings],
    edited: Vec<McpServerSettings>,
    set: &str,
) -> Vec<McpServerSettings> {
    edited
        .into_iter()
        .map(|mut server| {
            let before = saved
                .iter()
                .find(|s| s.name == server.name && s.reached_by() == server.reached_by())
                .cloned();
            let kept = before.map(|mut before| std::mem::take(before.secrets_mut()));
            server.secrets_mut().retain(|name, value| {
                if value != set {
                    return true;
                }
                match kept.as_ref().and_then(|kept| kept.get(name)) {
                    Some(saved) => {
                        value.clone_from(saved);
                        true
                    }
                    None => false,
                }
            });
            server
        })
        .collect()
}

/// Adds to `servers` the found servers whose name none of them has; returns the names added.
pub fn add_found(servers: &mut Vec<McpServerSettings>, found: &[FoundServer]) -> Vec<String> {
    let mut added = Vec::new();
    for server in found {
        if servers.iter().any(|s| s.name == server.name) {
            continue;
        }
        servers.push(McpServerSettings::from_found(server));
        added.push(server.name.clone());
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDACTED: &str = "(set)";

    fn server(name: &str, command: &str, env: &[(&str, &str)]) -> McpServerSettings {
        McpServerSettings {
            name: name.to_owned(),
            transport: McpTransport::Stdio {
                command: command.to_owned(),
                args: Vec::new(),
                env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
                cwd: None,
            },
            approval: McpApproval::Ask,
            tools: BTreeMap::new(),
        }
    }

    fn env(server: &McpServerSettings) -> &BTreeMap<String, String> {
        match &server.transport {
            McpTransport::Stdio { env, .. } => env,
            McpTransport::Http { headers, .. } => headers,
        }
    }

    #[test]
    fn a_tool_may_be_approved_otherwise_than_its_server() {
        let mut github = server("github", "npx", &[]);
        github.tools.insert("search".to_owned(), McpApproval::Allow);
        assert_eq!(github.approval_of("search"), McpApproval::Allow);
        assert_eq!(github.approval_of("create_issue"), McpApproval::Ask);
        github.approval = McpApproval::Allow;
        github.tools.insert("delete_repo".to_owned(), McpApproval::Ask);
        assert_eq!(github.approval_of("create_issue"), McpApproval::Allow);
        assert_eq!(github.approval_of("delete_repo"), McpApproval::Ask);
    }

    #[test]
    fn servers_no_call_could_reach_are_refused() {
        assert!(check(&[server("a", "npx", &[]), server("b", "uvx", &[])]).is_ok());
        let twice = check(&[server("a", "npx", &[]), server("a", "uvx", &[])]).unwrap_err();
        assert!(twice.contains("listed twice"), "{twice}");
        assert!(check(&[server("a__b", "npx", &[])]).is_err());
        assert!(check(&[server("a", " ", &[])]).unwrap_err().contains("command is empty"));
        let many: Vec<_> = (0..=MAX_SERVERS).map(|i| server(&format!("s{i}"), "x", &[])).collect();
        assert!(check(&many).unwrap_err().contains("at most"));
    }

    #[test]
    fn the_ui_sees_values_as_set_and_an_edit_keeps_them_only_for_the_same_command() {
        let saved = vec![server("gh", "npx", &[("GITHUB_TOKEN", "ghp_secret"), ("LEVEL", "1")])];
        let shown = redacted(&saved, REDACTED);
        assert_eq!(env(&shown[0]).get("GITHUB_TOKEN").map(String::as_str), Some(REDACTED));
        assert!(!format!("{saved:?}").contains("ghp_secret"), "Debug hides the values");

        // The person changed LEVEL and left the token as shown.
        let mut edited = shown.clone();
        if let McpTransport::Stdio { env, .. } = &mut edited[0].transport {
            env.insert("LEVEL".to_owned(), "2".to_owned());
        }
        let merged_same = merged(&saved, edited.clone(), REDACTED);
        assert_eq!(
            env(&merged_same[0]).get("GITHUB_TOKEN").map(String::as_str),
            Some("ghp_secret")
        );
        assert_eq!(env(&merged_same[0]).get("LEVEL").map(String::as_str), Some("2"));

        // Another command: the token the UI never saw is not handed to it.
        if let McpTransport::Stdio { command, .. } = &mut edited[0].transport {
            *command = "other-server".to_owned();
        }
        let moved = merged(&saved, edited, REDACTED);
        assert_eq!(env(&moved[0]).get("GITHUB_TOKEN"), None);
        assert_eq!(env(&moved[0]).get("LEVEL").map(String::as_str), Some("2"));
    }
}
