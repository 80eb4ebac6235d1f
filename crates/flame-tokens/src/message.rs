//! The one rule for what a message weighs, used by live messages and imports alike.

use flame_model::NewMessage;

use crate::{Encoding, count};

/// The tokens a message costs as a provider will see it: its text, plus its tool calls and its
/// tool result as JSON text, each counted on its own. Usage and the model's name are not sent,
/// so they do not count.
pub fn count_message(encoding: Encoding, message: &NewMessage) -> u64 {
    let mut tokens = count(encoding, &message.content);
    if let Some(calls) = &message.tool_calls {
        tokens = tokens.saturating_add(count(encoding, &json(calls)));
    }
    if let Some(result) = &message.tool_result {
        tokens = tokens.saturating_add(count(encoding, &json(result)));
    }
    tokens
}

fn json(value: &impl serde::Serialize) -> String {
    // Plain data with string keys always serializes.
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use flame_model::{Role, ToolCall, ToolResult};

    use super::*;

    #[test]
    fn a_message_weighs_its_text_its_calls_and_its_result() {
        let text = NewMessage::text(Role::Assistant, "Pushing a frame for the parser.");
        let alone = count_message(Encoding::O200kBase, &text);
        assert_eq!(alone, count(Encoding::O200kBase, &text.content));

        let mut call = text.clone();
        let calls = vec![ToolCall {
            arguments: serde_json::json!({"title": "Parser"}),
            id: "c1".into(),
            name: "push_frame".into(),
        }];
        call.tool_calls = Some(calls);
        let with_calls = count_message(Encoding::O200kBase, &call);
        assert_eq!(
            with_calls,
            alone
                + count(
                    Encoding::O200kBase,
                    r#"[{"arguments":{"title":"Parser"},"id":"c1","name":"push_frame"}]"#
                )
        );

        let mut result = NewMessage::text(Role::Tool, "Pushed.");
        result.tool_result = Some(ToolResult {
            detail: None,
            is_error: false,
            name: Some("push_frame".into()),
            tool_call_id: "c1".into(),
        });
        assert_eq!(
            count_message(Encoding::O200kBase, &result),
            count(Encoding::O200kBase, "Pushed.")
                + count(
                    Encoding::O200kBase,
                    r#"{"is_error":false,"name":"push_frame","tool_call_id":"c1"}"#
                )
        );
    }
}
