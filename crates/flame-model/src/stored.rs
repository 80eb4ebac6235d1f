//! Reading a message's payloads in every shape a version of Flame stored them.
//!
//! Before the payloads were typed, imports of Claude Code and OpenCode sessions stored a tool
//! call's arguments as `input` and a result's call id as `tool_use_id`, and Claude Code usage
//! reports whole, with Anthropic's names for the cache counts (`cache_read_input_tokens`,
//! `cache_creation_input_tokens`) and fields Flame does not use (the service tier, server tool
//! use), which are not kept. Those shapes are accepted here, where stored text and export files
//! are read, so the types the rest of Flame and the window see have one shape.

use serde::{Deserialize, Deserializer};

use crate::{ToolCall, ToolResult, Usage};

#[derive(Deserialize)]
struct StoredCall {
    #[serde(alias = "input", default)]
    arguments: serde_json::Value,
    id: String,
    name: String,
}

#[derive(Deserialize)]
struct StoredResult {
    #[serde(default)]
    detail: Option<crate::ToolDetail>,
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    name: Option<String>,
    #[serde(alias = "tool_use_id")]
    tool_call_id: String,
}

#[derive(Deserialize)]
struct StoredUsage {
    #[serde(alias = "cache_read_input_tokens", default)]
    cache_read_tokens: u64,
    #[serde(default)]
    cache_write_long_tokens: u64,
    /// In Anthropic's report, every write of either lifetime; `cache_creation` splits it.
    #[serde(alias = "cache_creation_input_tokens", default)]
    cache_write_tokens: u64,
    /// Anthropic's writes by lifetime, which Claude Code records whole.
    #[serde(default)]
    cache_creation: Option<CacheCreation>,
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

#[derive(Deserialize)]
struct CacheCreation {
    #[serde(default)]
    ephemeral_1h_input_tokens: u64,
}

impl From<StoredCall> for ToolCall {
    fn from(c: StoredCall) -> ToolCall {
        ToolCall { arguments: c.arguments, id: c.id, name: c.name }
    }
}

impl From<StoredResult> for ToolResult {
    fn from(r: StoredResult) -> ToolResult {
        ToolResult {
            detail: r.detail,
            is_error: r.is_error,
            name: r.name,
            tool_call_id: r.tool_call_id,
        }
    }
}

impl From<StoredUsage> for Usage {
    fn from(u: StoredUsage) -> Usage {
        // Anthropic's one-hour writes are part of its `cache_creation_input_tokens`; Flame keeps
        // the two lifetimes apart, since they are priced apart.
        let (long, short) = match &u.cache_creation {
            Some(split) if u.cache_write_long_tokens == 0 => {
                let long = split.ephemeral_1h_input_tokens.min(u.cache_write_tokens);
                (long, u.cache_write_tokens - long)
            }
            _ => (u.cache_write_long_tokens, u.cache_write_tokens),
        };
        Usage {
            cache_read_tokens: u.cache_read_tokens,
            cache_write_long_tokens: long,
            cache_write_tokens: short,
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}

/// Tool calls from stored JSON text.
pub fn tool_calls(json: &str) -> serde_json::Result<Vec<ToolCall>> {
    let calls: Vec<StoredCall> = serde_json::from_str(json)?;
    Ok(calls.into_iter().map(ToolCall::from).collect())
}

/// A tool result from stored JSON text.
pub fn tool_result(json: &str) -> serde_json::Result<ToolResult> {
    serde_json::from_str::<StoredResult>(json).map(ToolResult::from)
}

/// A usage report from stored JSON text.
pub fn usage(json: &str) -> serde_json::Result<Usage> {
    serde_json::from_str::<StoredUsage>(json).map(Usage::from)
}

/// For `#[serde(deserialize_with)]` on an optional field of tool calls in a file.
pub fn deserialize_tool_calls<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<ToolCall>>, D::Error> {
    let calls: Option<Vec<StoredCall>> = Option::deserialize(d)?;
    Ok(calls.map(|c| c.into_iter().map(ToolCall::from).collect()))
}

/// For `#[serde(deserialize_with)]` on an optional tool result field in a file.
pub fn deserialize_tool_result<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<ToolResult>, D::Error> {
    Ok(Option::<StoredResult>::deserialize(d)?.map(ToolResult::from))
}

/// For `#[serde(deserialize_with)]` on an optional usage field in a file.
pub fn deserialize_usage<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Usage>, D::Error> {
    Ok(Option::<StoredUsage>::deserialize(d)?.map(Usage::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_shapes_read_as_they_are_written() {
        let call = ToolCall {
            arguments: serde_json::json!({"title": "Parser"}),
            id: "c1".into(),
            name: "push_frame".into(),
        };
        let text = serde_json::to_string(&vec![call.clone()]).unwrap();
        assert_eq!(text, r#"[{"arguments":{"title":"Parser"},"id":"c1","name":"push_frame"}]"#);
        assert_eq!(tool_calls(&text).unwrap(), vec![call]);
        let result = ToolResult {
            detail: Some(crate::ToolDetail::Read {
                path: "src/main.rs".into(),
                first_line: 1,
                last_line: 20,
                total_lines: Some(40),
            }),
            is_error: false,
            name: Some("push_frame".into()),
            tool_call_id: "c1".into(),
        };
        assert_eq!(tool_result(&serde_json::to_string(&result).unwrap()).unwrap(), result);
        let u = Usage {
            cache_read_tokens: 1,
            cache_write_long_tokens: 0,
            cache_write_tokens: 2,
            input_tokens: 3,
            output_tokens: 4,
        };
        let text = serde_json::to_string(&u).unwrap();
        assert_eq!(usage(&text).unwrap(), u);
        let before =
            r#"{"cache_read_tokens":1,"cache_write_tokens":2,"input_tokens":3,"output_tokens":4}"#;
        assert_eq!(usage(before).unwrap(), u, "usage written before the hour's writes were kept");
        let long = Usage { cache_write_long_tokens: 5, ..u };
        assert_eq!(usage(&serde_json::to_string(&long).unwrap()).unwrap(), long);
    }

    #[test]
    fn the_shapes_imports_stored_read_under_flames_names() {
        let calls = tool_calls(r#"[{"id":"toolu_1","input":{"command":"ls"},"name":"Bash"}]"#);
        assert_eq!(calls.unwrap()[0].arguments, serde_json::json!({"command": "ls"}));
        let result = tool_result(r#"{"is_error":true,"tool_use_id":"toolu_1"}"#).unwrap();
        assert_eq!(
            result,
            ToolResult { detail: None, is_error: true, name: None, tool_call_id: "toolu_1".into() }
        );
        let u = usage(
            r#"{"cache_creation_input_tokens":9,"cache_read_input_tokens":4,"input_tokens":3,"output_tokens":2,"service_tier":"standard","server_tool_use":{"web_search_requests":0}}"#,
        );
        assert_eq!(
            u.unwrap(),
            Usage {
                cache_read_tokens: 4,
                cache_write_long_tokens: 0,
                cache_write_tokens: 9,
                input_tokens: 3,
                output_tokens: 2
            }
        );
        // Claude Code's report with its writes by lifetime: the hour's are kept apart.
        let u = usage(
            r#"{"cache_creation":{"ephemeral_1h_input_tokens":6,"ephemeral_5m_input_tokens":3},"cache_creation_input_tokens":9,"cache_read_input_tokens":4,"input_tokens":3,"output_tokens":2}"#,
        );
        assert_eq!(
            u.unwrap(),
            Usage {
                cache_read_tokens: 4,
                cache_write_long_tokens: 6,
                cache_write_tokens: 3,
                input_tokens: 3,
                output_tokens: 2
            }
        );
    }
}
