//! `flame mcp-servers`: the settings' MCP servers listed, and the servers other agents were given
//! found and, when the person names them (or gives `--all`), added to the settings with their
//! calls asked for. Where to look comes from this process's environment (`HOME`,
//! `XDG_CONFIG_HOME`) and the folder it runs in, read here in the front end.

use std::path::PathBuf;

use flame_api::ApiError;
use flame_mcp_client::found::{self, Places, Source};
use flame_settings::{McpApproval, Settings, SettingsFile};
use flame_workspace::Environment;
use serde::Serialize;

use crate::Output;
use crate::args::{McpServersCommand, McpSourceArg};

pub fn run(
    command: &McpServersCommand,
    json: bool,
    environment: &Environment,
) -> Result<(), ApiError> {
    let out = Output { json };
    match command {
        McpServersCommand::List => {
            let file = SettingsFile::at(Settings::default_path())?;
            let settings = file.load()?.redacted(&|name| environment.get(name));
            out.print(&settings.mcp_servers, || {
                if settings.mcp_servers.is_empty() {
                    return "no MCP servers (add some with flame mcp-servers import)".to_owned();
                }
                settings
                    .mcp_servers
                    .iter()
                    .map(|server| {
                        let approval = match server.approval {
                            McpApproval::Ask => "asks",
                            McpApproval::Allow => "allowed",
                        };
                        format!(
                            "{}  {}  {}  ({approval})",
                            server.name,
                            server.transport.kind(),
                            server.transport.summary()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        }
        McpServersCommand::Import { from, workspace, all, names } => {
            let places = places(environment, workspace.clone());
            let sources: Vec<Source> = from.iter().map(|s| source(*s)).collect();
            let found = found::find(&places, &sources);
            let picked: Vec<_> =
                found.servers.iter().filter(|s| *all || names.contains(&s.name)).cloned().collect();
            if let Some(missing) =
                names.iter().find(|n| !found.servers.iter().any(|s| &s.name == *n))
            {
                return Err(ApiError::new(
                    flame_api::ErrorCode::NotFound,
                    format!(
                        "no MCP server named {missing} was found; run flame mcp-servers import to see those found"
                    ),
                ));
            }
            let mut added = Vec::new();
            if !picked.is_empty() {
                let file = SettingsFile::at(Settings::default_path())?;
                let mut settings = file.load()?;
                added = flame_settings::mcp_servers::add_found(&mut settings.mcp_servers, &picked);
                file.save(&settings)?;
            }
            let shown = Imported { found: &found, added: &added };
            out.print(&shown, || human(&shown, *all || !names.is_empty()))
        }
    }
}

#[derive(Serialize)]
struct Imported<'a> {
    found: &'a found::Found,
    added: &'a [String],
}

fn human(imported: &Imported<'_>, asked_to_add: bool) -> String {
    let mut lines = Vec::new();
    for server in &imported.found.servers {
        let mark = if imported.added.contains(&server.name) { "+" } else { " " };
        let mut line = format!(
            "{mark} {}  {}  {}  (from {})",
            server.name,
            server.transport.kind(),
            server.transport.summary(),
            server.file
        );
        if let Some(note) = &server.note {
            line.push_str(&format!("; {note}"));
        }
        lines.push(line);
    }
    for problem in &imported.found.problems {
        lines.push(format!("! {problem}"));
    }
    if imported.found.servers.is_empty() {
        lines.push("no MCP servers were found".to_owned());
    } else if !asked_to_add {
        lines.push(
            "nothing was added: name the servers to add (flame mcp-servers import NAME…), or give --all"
                .to_owned(),
        );
    } else if imported.added.is_empty() {
        lines.push("nothing was added: the settings list those names already".to_owned());
    } else {
        lines.push(format!(
            "added to Flame's settings (their calls ask first): {}",
            imported.added.join(", ")
        ));
    }
    lines.join("\n")
}

fn source(arg: McpSourceArg) -> Source {
    match arg {
        McpSourceArg::Project => Source::Project,
        McpSourceArg::ClaudeCode => Source::ClaudeCode,
        McpSourceArg::OpenCode => Source::Opencode,
        McpSourceArg::Codex => Source::Codex,
    }
}

/// Where other agents keep their settings, for this person, and the workspace: `workspace`, else
/// the folder `flame` runs in.
fn places(environment: &Environment, workspace: Option<PathBuf>) -> Places {
    let home = environment.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let config = environment
        .get("XDG_CONFIG_HOME")
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let workspace = workspace.or_else(|| std::env::current_dir().ok());
    Places { home, config, workspace }
}
