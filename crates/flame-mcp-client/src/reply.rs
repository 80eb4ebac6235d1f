//! A tool's result as the model reads it: its text parts in order, what is not text said in a
//! line (an image, audio, a file: its kind, type and size, since the model cannot use the bytes
//! as text), the structured result when nothing else was sent, cut to the limit with a line that
//! says how long it was.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::limits::cut;

/// What a tool call gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReply {
    /// What the model reads.
    pub text: String,
    /// The server said the call failed.
    pub is_error: bool,
    /// How long the whole text was, before it was cut.
    pub full_bytes: usize,
}

/// `result` as the model reads it, cut to `limit` bytes.
pub(crate) fn reply(result: CallToolResult, limit: usize) -> ToolReply {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let whole = parts.join("\n");
    let full_bytes = whole.len();
    let text = if full_bytes > limit {
        format!(
            "{}\n[Flame] The result was {full_bytes} bytes; only its first {limit} are shown.",
            cut(&whole, limit)
        )
    } else {
        whole
    };
    ToolReply { text, is_error: result.is_error.unwrap_or(false), full_bytes }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            format!("[an image, {}, {} bytes of base64]", image.mime_type, image.data.len())
        }
        ContentBlock::Audio(audio) => {
            format!("[audio, {}, {} bytes of base64]", audio.mime_type, audio.data.len())
        }
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => format!(
                "[resource {uri}, {}, {} bytes of base64]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len()
            ),
            #[allow(unreachable_patterns)]
            _ => "[a resource Flame cannot show]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link {}: {}]", link.uri, link.name),
        #[allow(unreachable_patterns)]
        _ => "[content Flame cannot show]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_joined_and_what_is_not_text_is_said() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::text("last"),
        ]);
        let reply = reply(result, 1024);
        assert_eq!(reply.text, "first\n[an image, image/png, 8 bytes of base64]\nlast");
        assert!(!reply.is_error);
    }

    #[test]
    fn a_long_result_is_cut_and_says_so() {
        let result = CallToolResult::error(vec![ContentBlock::text("é".repeat(100))]);
        let reply = reply(result, 51);
        assert!(reply.is_error);
        assert_eq!(reply.full_bytes, 200);
        assert!(reply.text.starts_with(&"é".repeat(25)), "{}", reply.text);
        assert!(reply.text.ends_with("The result was 200 bytes; only its first 51 are shown."));
    }

    #[test]
    fn the_structured_result_stands_in_for_missing_content() {
        let mut result = CallToolResult::success(Vec::new());
        result.structured_content = Some(serde_json::json!({"sum": 3}));
        assert_eq!(reply(result, 1024).text, r#"{"sum":3}"#);
    }
}
