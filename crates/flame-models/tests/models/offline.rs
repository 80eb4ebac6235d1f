//! `decode_stream`: the recorded streams decoded offline give what the live client gives.

use flame_models::{ModelError, ProviderKind, StopReason, decode_stream};
use serde_json::json;

use crate::{run, wire};
use flame_models::replay::Reply;

/// The same bytes in one chunk, in one-byte chunks, and through the live client.
async fn all_ways(kind: ProviderKind, name: &str) -> Vec<Result<flame_models::Turn, String>> {
    let body = wire(name);
    let whole = decode_stream(kind, &[body.as_bytes()]);
    let bytes: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
    let split = decode_stream(kind, &bytes);
    let (live, _, _) = run(kind, vec![Reply::stream(body.clone())]).await;
    // Errors are compared by their message and what arrived, which is all a caller sees.
    let show = |r: Result<flame_models::Turn, ModelError>| {
        r.map_err(|e| format!("{e} / {:?}", e.partial().map(|p| p.text.clone())))
    };
    vec![show(whole), show(split), show(live)]
}

#[tokio::test]
async fn every_recorded_stream_decodes_offline_as_it_does_live() {
    for (kind, name) in [
        (ProviderKind::Anthropic, "anthropic-text.sse"),
        (ProviderKind::Anthropic, "anthropic-tool.sse"),
        (ProviderKind::Anthropic, "anthropic-overloaded-midstream.sse"),
        (ProviderKind::Openai, "openai-text.sse"),
        (ProviderKind::Openai, "openai-tool.sse"),
        (ProviderKind::Openai, "openai-malformed.sse"),
    ] {
        let results = all_ways(kind, name).await;
        assert_eq!(results[0], results[1], "{name}: whole vs one-byte chunks");
        assert_eq!(results[0], results[2], "{name}: offline vs live");
    }
}

#[test]
fn decode_stream_gives_the_turn_or_the_error_with_what_arrived() {
    let tool = wire("openai-tool.sse");
    let turn = decode_stream(ProviderKind::Openai, &[tool.as_bytes()]).unwrap();
    assert_eq!(turn.stop, StopReason::ToolUse);
    assert_eq!(turn.tool_calls[0].arguments, json!({"location": "Boston, MA"}));

    let malformed = wire("openai-malformed.sse");
    let err = decode_stream(ProviderKind::Openai, &[malformed.as_bytes()]).unwrap_err();
    assert!(matches!(err, ModelError::Malformed { .. }), "{err:?}");
    assert_eq!(err.partial().unwrap().text, "Fine so far");

    let text = wire("anthropic-text.sse");
    let cut = text.find("content_block_stop").unwrap();
    let err = decode_stream(ProviderKind::Anthropic, &[&text.as_bytes()[..cut]]).unwrap_err();
    assert!(matches!(err, ModelError::Dropped { .. }), "{err:?}");
    assert_eq!(err.partial().unwrap().text, "Hello!");
}
