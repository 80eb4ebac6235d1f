//! How a server is reached, as the person configured it: a command on this computer spoken to
//! over its standard input and output, or a streamable HTTP endpoint. Names, commands, addresses
//! and headers are checked here ([`check_name`], [`McpTransport::check`]), so that the settings
//! refuse a server no call could reach and the offered tool names stay valid for every provider.
//!
//! Values may name variables of the environment Flame started from as `${NAME}` or
//! `${NAME:-default}` (the form Claude Code's `.mcp.json` uses); they are expanded when the server
//! starts ([`expand`]), so a token kept in the person's environment never has to be written into
//! Flame's settings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The longest server name: with `__` and a tool's name it must fit the 64 characters OpenAI and
/// Anthropic allow a tool's name.
pub const MAX_SERVER_NAME_CHARS: usize = 24;

/// How one MCP server is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum McpTransport {
    /// A program Flame starts and speaks to over its standard input and output. It starts from
    /// the environment Flame's commands start from (keys removed), with `env` added.
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// The folder it starts in; absent: the folder Flame was started in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        cwd: Option<String>,
    },
    /// A streamable HTTP endpoint, sent `headers` with every request.
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

impl McpTransport {
    /// `"stdio"` or `"http"`, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            McpTransport::Stdio { .. } => "stdio",
            McpTransport::Http { .. } => "http",
        }
    }

    /// What the person reads of it: the command line, or the address.
    pub fn summary(&self) -> String {
        match self {
            McpTransport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .fold(String::new(), |mut line, word| {
                    if !line.is_empty() {
                        line.push(' ');
                    }
                    line.push_str(word);
                    line
                }),
            McpTransport::Http { url, .. } => url.clone(),
        }
    }

    /// Refuses what cannot be reached: an empty command, an address that is not `http(s)://`,
    /// a header name or value HTTP does not allow, or one of the headers the protocol itself
    /// sets.
    pub fn check(&self) -> Result<(), String> {
        match self {
            McpTransport::Stdio { command, env, .. } => {
                if command.trim().is_empty() {
                    return Err("its command is empty".to_owned());
                }
                if let Some(name) = env.keys().find(|k| k.is_empty() || k.contains(['=', '\0'])) {
                    return Err(format!("{name:?} is not the name of an environment variable"));
                }
                Ok(())
            }
            McpTransport::Http { url, headers } => {
                let lower = url.trim().to_ascii_lowercase();
                if !(lower.starts_with("https://") || lower.starts_with("http://"))
                    || lower.len() <= "https://".len()
                {
                    return Err(format!("{url:?} is not an http:// or https:// address"));
                }
                for (name, value) in headers {
                    if header_allowed(name, value).is_err() {
                        return Err(format!("the header {name:?} is not one HTTP allows"));
                    }
                    if RESERVED_HEADERS.iter().any(|r| name.eq_ignore_ascii_case(r)) {
                        return Err(format!(
                            "the header {name} is set by the protocol itself and cannot be given"
                        ));
                    }
                }
                Ok(())
            }
        }
    }
}

/// Headers the streamable HTTP transport sets itself.
const RESERVED_HEADERS: [&str; 4] = ["accept", "mcp-session-id", "last-event-id", "content-type"];

/// RFC 9110's token characters for a header's name, and a value of visible text and spaces
/// (what `http::HeaderName` and `HeaderValue` accept, said here so the settings can check a
/// header without an HTTP crate).
fn header_allowed(name: &str, value: &str) -> Result<(), ()> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(());
    }
    if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(());
    }
    Ok(())
}

/// Refuses a server name that could not prefix its tools' names: it must be 1 to
/// [`MAX_SERVER_NAME_CHARS`] letters, digits, `-` or `_`, and hold no `__`, which separates the
/// server from the tool in `server__tool`.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.chars().count() > MAX_SERVER_NAME_CHARS {
        return Err(format!(
            "the MCP server name {name:?} must be 1 to {MAX_SERVER_NAME_CHARS} characters"
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(format!(
            "the MCP server name {name:?} may hold only letters, digits, - and _ (its tools are offered as {name}__tool)"
        ));
    }
    if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
        return Err(format!(
            "the MCP server name {name:?} may not hold \"__\" or start or end with _, since \"__\" separates it from its tools' names"
        ));
    }
    Ok(())
}

/// A name other agents use made one Flame accepts: characters outside letters, digits, `-` and `_`
/// become `-`, runs of `_` are cut to one, and it is cut to [`MAX_SERVER_NAME_CHARS`]; `None`
/// when nothing is left.
pub fn usable_name(name: &str) -> Option<String> {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    let out: String = out.trim_matches(['_', '-']).chars().take(MAX_SERVER_NAME_CHARS).collect();
    let out = out.trim_end_matches('_').to_owned();
    check_name(&out).ok().map(|()| out)
}

/// `text` with each `${NAME}` replaced by `lookup(NAME)` and each `${NAME:-default}` by it or,
/// when it is unset or empty, by `default`. A variable that is not set is an error that names it,
/// so a server never starts with a token missing without saying so.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inside = &after[..end];
        let (name, default) = match inside.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inside, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            // Not a variable reference: kept as written.
            out.push_str(&rest[start..start + 2 + end + 1]);
        } else {
            match (lookup(name).filter(|v| !v.is_empty()), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(format!("the environment variable {name} is not set"));
                }
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(command: &str) -> McpTransport {
        McpTransport::Stdio {
            command: command.to_owned(),
            args: vec!["-y".to_owned(), "server".to_owned()],
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    #[test]
    fn names_that_could_not_prefix_a_tool_are_refused() {
        assert!(check_name("github").is_ok());
        assert!(check_name("my-server_2").is_ok());
        for bad in
            ["", "a b", "a__b", "_a", "a_", "a.b", "ü", &"x".repeat(MAX_SERVER_NAME_CHARS + 1)]
        {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn other_agents_names_are_made_usable() {
        assert_eq!(usable_name("github").as_deref(), Some("github"));
        assert_eq!(usable_name("my server.v2").as_deref(), Some("my-server-v2"));
        assert_eq!(usable_name("a___b").as_deref(), Some("a_b"));
        assert_eq!(usable_name("..."), None);
        assert_eq!(usable_name(&"x".repeat(40)).map(|n| n.len()), Some(MAX_SERVER_NAME_CHARS));
    }

    #[test]
    fn transports_no_call_could_reach_are_refused() {
        assert!(stdio("npx").check().is_ok());
        assert!(stdio("  ").check().is_err());
        let http = |url: &str, header: (&str, &str)| McpTransport::Http {
            url: url.to_owned(),
            headers: BTreeMap::from([(header.0.to_owned(), header.1.to_owned())]),
        };
        assert!(http("https://example.com/mcp", ("Authorization", "Bearer x")).check().is_ok());
        assert!(http("ftp://example.com", ("X", "y")).check().is_err());
        assert!(http("https://", ("X", "y")).check().is_err());
        assert!(http("https://example.com", ("Bad Name", "y")).check().is_err());
        assert!(http("https://example.com", ("X", "line\nbreak")).check().is_err());
        assert!(http("https://example.com", ("Mcp-Session-Id", "1")).check().is_err());
    }

    #[test]
    fn the_summary_is_the_command_line_or_the_address() {
        assert_eq!(stdio("npx").summary(), "npx -y server");
        let http = McpTransport::Http { url: "https://x/mcp".to_owned(), headers: BTreeMap::new() };
        assert_eq!(http.summary(), "https://x/mcp");
    }

    #[test]
    fn variables_are_expanded_and_a_missing_one_is_named() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(expand("Bearer ${TOKEN}", &lookup).unwrap(), "Bearer s3cret");
        assert_eq!(expand("${HOST:-localhost}:1", &lookup).unwrap(), "localhost:1");
        assert_eq!(expand("${TOKEN:-x}", &lookup).unwrap(), "s3cret");
        assert_eq!(
            expand("plain $HOME ${ not a var }", &lookup).unwrap(),
            "plain $HOME ${ not a var }"
        );
        assert_eq!(expand("open ${TOKEN", &lookup).unwrap(), "open ${TOKEN");
        let err = expand("${MISSING}", &lookup).unwrap_err();
        assert!(err.contains("MISSING"), "{err}");
    }
}
