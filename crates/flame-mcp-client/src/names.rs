//! The names a server's tools are offered under: `server__tool`. The server's name comes first so
//! that the model, the person and the stored call all say whose tool it is, and `__` separates it
//! (a server name holds no `__`, see [`crate::check_name`]). A tool's own name may hold what
//! providers refuse in a tool name (`.`, `/`, spaces): those become `_`, and the whole is cut to
//! [`MAX_TOOL_NAME_CHARS`]; two tools whose names then collide are not both offered
//! ([`crate::McpServers::list_tools`] says which was left out).

/// The longest tool name OpenAI and Anthropic accept (`^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_TOOL_NAME_CHARS: usize = 64;

/// What separates the server's name from the tool's.
pub const SEPARATOR: &str = "__";

/// The name `server`'s tool `tool` is offered under; `None` when nothing of the tool's name is
/// left.
pub fn offered_name(server: &str, tool: &str) -> Option<String> {
    let tool: String = tool
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if tool.is_empty() {
        return None;
    }
    let mut name = format!("{server}{SEPARATOR}{tool}");
    // Only ASCII is left, so a byte is a character.
    name.truncate(MAX_TOOL_NAME_CHARS);
    Some(name)
}

/// The server an offered name names, and the rest of the name; `None` for a name without `__`.
pub fn server_of(offered: &str) -> Option<(&str, &str)> {
    offered.split_once(SEPARATOR).filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_named_after_their_server() {
        assert_eq!(offered_name("everything", "get-sum").as_deref(), Some("everything__get-sum"));
        assert_eq!(offered_name("fs", "read file.v2").as_deref(), Some("fs__read_file_v2"));
        assert_eq!(offered_name("fs", ""), None);
        let long = offered_name("server", &"t".repeat(100)).unwrap();
        assert_eq!(long.len(), MAX_TOOL_NAME_CHARS);
        assert_eq!(server_of("everything__get-sum"), Some(("everything", "get-sum")));
        assert_eq!(server_of("push_frame"), None);
        assert_eq!(server_of("__x"), None);
    }
}
