//! The MCP servers the person already gave other agents, found so they can add them to Flame's
//! settings without writing them again ([`find`]): the workspace's `.mcp.json` (Claude Code's
//! project servers, which other tools read too), Claude Code's own `~/.claude.json` (its user
//! servers, and its local servers for the workspace), OpenCode's `opencode.json` (the person's,
//! in their configuration folder, and the workspace's) and Codex's `~/.codex/config.toml`.
//!
//! The files are only read, never written, and each only up to [`MAX_CONFIG_BYTES`]; their places
//! are passed in ([`Places`]). What cannot be used is not dropped silently: a file that cannot be
//! read or parsed, and an entry Flame cannot reach (the old SSE transport, a command that is not
//! a list of words) or should not (`flame mcp`, Flame's own server), is a problem that says why. A name is made one Flame accepts
//! ([`crate::usable_name`]); variables written `${NAME}` are kept as they are and expanded when
//! the server starts, and Codex's token and header variables become such references.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{McpTransport, usable_name};

/// The largest configuration file read. Claude Code's `~/.claude.json` also holds every
/// project's history of settings and grows to megabytes.
pub const MAX_CONFIG_BYTES: u64 = 32 * 1024 * 1024;

/// Where a server was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The workspace's `.mcp.json`.
    Project,
    /// Claude Code's `~/.claude.json`.
    ClaudeCode,
    /// OpenCode's `opencode.json`.
    Opencode,
    /// Codex's `~/.codex/config.toml`.
    Codex,
}

impl Source {
    pub const ALL: [Source; 4] =
        [Source::Project, Source::ClaudeCode, Source::Opencode, Source::Codex];

    /// Its name on the command line (`--from`).
    pub fn name(self) -> &'static str {
        match self {
            Source::Project => "project",
            Source::ClaudeCode => "claude-code",
            Source::Opencode => "opencode",
            Source::Codex => "codex",
        }
    }

    pub fn parse(name: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Where to look: passed in, so nothing here reads the process's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// The person's home folder (`~/.claude.json`, `~/.codex/config.toml`).
    pub home: Option<PathBuf>,
    /// Their configuration folder (`~/.config`, for `opencode/opencode.json`).
    pub config: Option<PathBuf>,
    /// The workspace (`.mcp.json`, `opencode.json`, and Claude Code's servers for it).
    pub workspace: Option<PathBuf>,
}

/// A server another agent was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct FoundServer {
    pub source: Source,
    /// The file it was found in.
    pub file: String,
    /// The name Flame would give it.
    pub name: String,
    /// Its name there, when Flame's differs.
    pub original_name: Option<String>,
    pub transport: McpTransport,
    /// What the person should know before adding it (turned off there, a variable it names).
    pub note: Option<String>,
}

/// What was found, and what could not be used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, specta::Type)]
pub struct Found {
    pub servers: Vec<FoundServer>,
    pub problems: Vec<String>,
}

/// The servers of `sources` (all of them when empty) at `places`.
pub fn find(places: &Places, sources: &[Source]) -> Found {
    let mut found = Found::default();
    let wanted = |s: Source| sources.is_empty() || sources.contains(&s);
    let workspace = places.workspace.as_deref();
    if wanted(Source::Project)
        && let Some(folder) = workspace
    {
        let file = folder.join(".mcp.json");
        if let Some(value) = read_json(&file, &mut found.problems) {
            claude_servers(Source::Project, &file, value.get("mcpServers"), &mut found);
        }
    }
    if wanted(Source::ClaudeCode)
        && let Some(home) = &places.home
    {
        let file = home.join(".claude.json");
        if let Some(value) = read_json(&file, &mut found.problems) {
            claude_servers(Source::ClaudeCode, &file, value.get("mcpServers"), &mut found);
            let project =
                workspace.and_then(|w| value.get("projects")?.get(w.to_str()?)?.get("mcpServers"));
            claude_servers(Source::ClaudeCode, &file, project, &mut found);
        }
    }
    if wanted(Source::Opencode) {
        let files = [
            places.config.as_ref().map(|c| c.join("opencode").join("opencode.json")),
            workspace.map(|w| w.join("opencode.json")),
        ];
        for file in files.into_iter().flatten() {
            if let Some(value) = read_json(&file, &mut found.problems) {
                opencode_servers(&file, value.get("mcp"), &mut found);
            }
        }
    }
    if wanted(Source::Codex)
        && let Some(home) = &places.home
    {
        let file = home.join(".codex").join("config.toml");
        if let Some(text) = read_text(&file, &mut found.problems) {
            match toml::from_str::<toml::Table>(&text) {
                Ok(table) => codex_servers(&file, table.get("mcp_servers"), &mut found),
                Err(err) => found.problems.push(format!(
                    "{} is not valid TOML: {}",
                    file.display(),
                    crate::limits::error_text(&err.to_string())
                )),
            }
        }
    }
    found
}

/// The text of `file`; `None` when it does not exist (not a problem: most people use one agent)
/// or cannot be used (a problem).
fn read_text(file: &Path, problems: &mut Vec<String>) -> Option<String> {
    let opened = match std::fs::File::open(file) {
        Ok(opened) => opened,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => {
            problems.push(format!("{} could not be read: {err}", file.display()));
            return None;
        }
    };
    let mut bytes = Vec::new();
    if let Err(err) = opened.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes) {
        problems.push(format!("{} could not be read: {err}", file.display()));
        return None;
    }
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        problems.push(format!(
            "{} is larger than {} MiB, so it was not read",
            file.display(),
            MAX_CONFIG_BYTES / (1024 * 1024)
        ));
        return None;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(_) => {
            problems.push(format!("{} is not UTF-8 text", file.display()));
            None
        }
    }
}

fn read_json(file: &Path, problems: &mut Vec<String>) -> Option<Value> {
    let text = read_text(file, problems)?;
    match serde_json::from_str(&text) {
        Ok(value) => Some(value),
        Err(err) => {
            problems.push(format!("{} is not valid JSON: {err}", file.display()));
            None
        }
    }
}

/// Adds one entry, its name made usable.
fn add(
    found: &mut Found,
    source: Source,
    file: &Path,
    name: &str,
    transport: Result<McpTransport, String>,
    note: Option<String>,
) {
    let transport = match transport.and_then(|t| t.check().map(|()| t)) {
        Ok(transport) => transport,
        Err(why) => {
            found.problems.push(format!("{name} in {}: {why}", file.display()));
            return;
        }
    };
    if let McpTransport::Stdio { command, args, .. } = &transport
        && Path::new(command).file_name().is_some_and(|f| f == "flame")
        && args.first().is_some_and(|a| a == "mcp")
    {
        found.problems.push(format!(
            "{name} in {}: it is Flame's own MCP server, whose frame tools the agent has already",
            file.display()
        ));
        return;
    }
    let Some(usable) = usable_name(name) else {
        found
            .problems
            .push(format!("{name:?} in {}: no usable name can be made of it", file.display()));
        return;
    };
    found.servers.push(FoundServer {
        source,
        file: file.display().to_string(),
        original_name: (usable != name).then(|| name.to_owned()),
        name: usable,
        transport,
        note,
    });
}

/// The words of a JSON array of strings.
fn words(value: Option<&Value>) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| "an argument is not text".to_owned())
            })
            .collect(),
        Some(_) => Err("its arguments are not a list".to_owned()),
    }
}

/// A JSON object of strings (an environment, headers).
fn strings(value: Option<&Value>) -> Result<BTreeMap<String, String>, String> {
    match value {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
                _ => Err(format!("the value of {k} is not text")),
            })
            .collect(),
        Some(_) => Err("its environment or headers are not an object".to_owned()),
    }
}

/// Claude Code's `mcpServers` (also the shape of `.mcp.json`).
fn claude_servers(source: Source, file: &Path, servers: Option<&Value>, found: &mut Found) {
    let Some(Value::Object(servers)) = servers else { return };
    for (name, entry) in servers {
        let kind = entry.get("type").and_then(Value::as_str);
        let transport = match (kind, entry.get("command"), entry.get("url")) {
            (Some("sse"), ..) => {
                Err("it uses the old SSE transport, which Flame does not speak".to_owned())
            }
            (None | Some("stdio"), Some(Value::String(command)), _) => Ok(McpTransport::Stdio {
                command: command.clone(),
                args: words(entry.get("args")).unwrap_or_default(),
                env: strings(entry.get("env")).unwrap_or_default(),
                cwd: None,
            }),
            (None | Some("http"), None, Some(Value::String(url))) => Ok(McpTransport::Http {
                url: url.clone(),
                headers: strings(entry.get("headers")).unwrap_or_default(),
            }),
            _ => Err("it names neither a command nor an address Flame can use".to_owned()),
        };
        let transport = transport.and_then(|t| {
            // A malformed list of arguments or environment is said, not left out unseen.
            words(entry.get("args"))?;
            strings(entry.get("env"))?;
            strings(entry.get("headers"))?;
            Ok(t)
        });
        add(found, source, file, name, transport, None);
    }
}

/// OpenCode's `mcp`.
fn opencode_servers(file: &Path, servers: Option<&Value>, found: &mut Found) {
    let Some(Value::Object(servers)) = servers else { return };
    for (name, entry) in servers {
        let transport = match entry.get("type").and_then(Value::as_str) {
            Some("local") => words(entry.get("command")).and_then(|mut command| {
                if command.is_empty() {
                    return Err("its command is empty".to_owned());
                }
                let program = command.remove(0);
                Ok(McpTransport::Stdio {
                    command: program,
                    args: command,
                    env: strings(entry.get("environment"))?,
                    cwd: None,
                })
            }),
            Some("remote") => match entry.get("url") {
                Some(Value::String(url)) => strings(entry.get("headers"))
                    .map(|headers| McpTransport::Http { url: url.clone(), headers }),
                _ => Err("it has no address".to_owned()),
            },
            _ => Err("its type is neither local nor remote".to_owned()),
        };
        let note = (entry.get("enabled") == Some(&Value::Bool(false)))
            .then(|| "turned off in OpenCode".to_owned());
        add(found, Source::Opencode, file, name, transport, note);
    }
}

/// Codex's `[mcp_servers]`.
fn codex_servers(file: &Path, servers: Option<&toml::Value>, found: &mut Found) {
    let Some(toml::Value::Table(servers)) = servers else { return };
    for (name, entry) in servers {
        let text = |key: &str| entry.get(key).and_then(toml::Value::as_str).map(str::to_owned);
        let table = |key: &str| -> Result<BTreeMap<String, String>, String> {
            match entry.get(key) {
                None => Ok(BTreeMap::new()),
                Some(toml::Value::Table(t)) => t
                    .iter()
                    .map(|(k, v)| match v.as_str() {
                        Some(s) => Ok((k.clone(), s.to_owned())),
                        None => Err(format!("the value of {k} in {key} is not text")),
                    })
                    .collect(),
                Some(_) => Err(format!("its {key} is not a table")),
            }
        };
        let transport = match (text("command"), text("url")) {
            (Some(command), _) => (|| {
                let args = match entry.get("args") {
                    None => Vec::new(),
                    Some(toml::Value::Array(items)) => items
                        .iter()
                        .map(|i| i.as_str().map(str::to_owned).ok_or("an argument is not text"))
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err("its arguments are not a list".to_owned()),
                };
                Ok(McpTransport::Stdio { command, args, env: table("env")?, cwd: text("cwd") })
            })(),
            (None, Some(url)) => (|| {
                let mut headers = table("http_headers")?;
                for (header, variable) in table("env_http_headers")? {
                    headers.insert(header, format!("${{{variable}}}"));
                }
                if let Some(variable) = text("bearer_token_env_var") {
                    headers.insert("Authorization".to_owned(), format!("Bearer ${{{variable}}}"));
                }
                Ok(McpTransport::Http { url, headers })
            })(),
            (None, None) => Err("it names neither a command nor an address".to_owned()),
        };
        let note = (entry.get("enabled").and_then(toml::Value::as_bool) == Some(false))
            .then(|| "turned off in Codex".to_owned());
        add(found, Source::Codex, file, name, transport, note);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Home {
        _dir: tempfile::TempDir,
        places: Places,
    }

    fn home() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let places = Places {
            home: Some(dir.path().join("home")),
            config: Some(dir.path().join("home/.config")),
            workspace: Some(dir.path().join("work")),
        };
        for folder in ["home/.config/opencode", "home/.codex", "work"] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        }
        Home { _dir: dir, places }
    }

    fn write(path: PathBuf, text: &str) {
        std::fs::write(path, text).unwrap();
    }

    fn stdio(command: &str, args: &[&str], env: &[(&str, &str)]) -> McpTransport {
        McpTransport::Stdio {
            command: command.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            cwd: None,
        }
    }

    #[test]
    fn nothing_configured_is_nothing_found_and_no_problem() {
        let h = home();
        assert_eq!(find(&h.places, &[]), Found::default());
    }

    #[test]
    fn each_agents_servers_are_found_in_their_own_shape() {
        let h = home();
        let work = h.places.workspace.clone().unwrap();
        let home = h.places.home.clone().unwrap();
        write(
            work.join(".mcp.json"),
            r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"DEBUG": "1"}},
                "old": {"type": "sse", "url": "https://example.com/sse"},
                "flame": {"command": "flame", "args": ["mcp"]}}}"#,
        );
        write(
            home.join(".claude.json"),
            &format!(
                r#"{{"numStartups": 3, "mcpServers": {{"github": {{"type": "http", "url": "https://api.example.com/mcp", "headers": {{"Authorization": "Bearer ${{GITHUB_TOKEN}}"}}}}}},
                   "projects": {{"{}": {{"mcpServers": {{"local one": {{"command": "uvx", "args": ["tool"]}}}}}}}}}}"#,
                work.display()
            ),
        );
        write(
            home.join(".config/opencode/opencode.json"),
            r#"{"mcp": {"everything": {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-everything"], "environment": {"A": "b"}, "enabled": false},
                        "remote": {"type": "remote", "url": "https://r.example.com/mcp", "headers": {"X-Key": "k"}}}}"#,
        );
        write(
            home.join(".codex/config.toml"),
            r#"
model = "o4"
[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]
env = { LEVEL = "debug" }

[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
bearer_token_env_var = "LINEAR_TOKEN"
env_http_headers = { "X-Team" = "TEAM_ID" }
"#,
        );
        let found = find(&h.places, &[]);
        let by_name = |name: &str| {
            found
                .servers
                .iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("{name}: {found:?}"))
        };
        assert_eq!(by_name("fs").source, Source::Project);
        assert_eq!(
            by_name("fs").transport,
            stdio(
                "npx",
                &["-y", "@modelcontextprotocol/server-filesystem", "."],
                &[("DEBUG", "1")]
            )
        );
        assert_eq!(
            by_name("github").transport,
            McpTransport::Http {
                url: "https://api.example.com/mcp".to_owned(),
                headers: BTreeMap::from([(
                    "Authorization".to_owned(),
                    "Bearer ${GITHUB_TOKEN}".to_owned()
                )]),
            }
        );
        let local = by_name("local-one");
        assert_eq!(
            (local.source, local.original_name.as_deref()),
            (Source::ClaudeCode, Some("local one"))
        );
        let everything = by_name("everything");
        assert_eq!(
            everything.transport,
            stdio("npx", &["-y", "@modelcontextprotocol/server-everything"], &[("A", "b")])
        );
        assert_eq!(everything.note.as_deref(), Some("turned off in OpenCode"));
        assert_eq!(
            by_name("docs").transport,
            stdio("docs-server", &["--stdio"], &[("LEVEL", "debug")])
        );
        assert_eq!(
            by_name("linear").transport,
            McpTransport::Http {
                url: "https://mcp.linear.app/mcp".to_owned(),
                headers: BTreeMap::from([
                    ("Authorization".to_owned(), "Bearer ${LINEAR_TOKEN}".to_owned()),
                    ("X-Team".to_owned(), "${TEAM_ID}".to_owned()),
                ]),
            }
        );
        assert_eq!(found.servers.len(), 7, "{found:?}");
        assert_eq!(found.problems.len(), 2, "{:?}", found.problems);
        assert!(found.problems[0].contains("Flame's own MCP server"), "{:?}", found.problems);
        assert!(found.problems[1].contains("old SSE transport"), "{:?}", found.problems);

        let only_codex = find(&h.places, &[Source::Codex]);
        assert!(only_codex.servers.iter().all(|s| s.source == Source::Codex));
        assert_eq!(only_codex.servers.len(), 2);
    }

    #[test]
    fn files_that_cannot_be_used_are_problems_not_silence() {
        let h = home();
        let home = h.places.home.clone().unwrap();
        write(home.join(".claude.json"), "{ not json");
        write(home.join(".codex/config.toml"), "[mcp_servers.x\n");
        write(
            h.places.workspace.clone().unwrap().join("opencode.json"),
            r#"{"mcp": {"bad": {"type": "local", "command": "not a list"}, "none": {"type": "what"}}}"#,
        );
        let found = find(&h.places, &[]);
        assert!(found.servers.is_empty());
        assert_eq!(found.problems.len(), 4, "{:?}", found.problems);
        assert!(found.problems.iter().any(|p| p.contains(".claude.json is not valid JSON")));
        assert!(found.problems.iter().any(|p| p.contains("config.toml is not valid TOML")));
        assert!(found.problems.iter().any(|p| p.starts_with("bad in")));
        assert!(found.problems.iter().any(|p| p.starts_with("none in")));
    }

    #[test]
    fn a_file_past_the_limit_is_not_read() {
        let h = home();
        let file = h.places.home.clone().unwrap().join(".claude.json");
        let big = std::fs::File::create(&file).unwrap();
        big.set_len(MAX_CONFIG_BYTES + 1).unwrap();
        let found = find(&h.places, &[Source::ClaudeCode]);
        assert!(found.servers.is_empty());
        assert!(found.problems[0].contains("larger than 32 MiB"), "{:?}", found.problems);
    }
}
