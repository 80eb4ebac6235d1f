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

/// A reply cut off at its length limit in the middle of a tool call (llama-server did this with a
/// small model): the call is kept with its unreadable arguments, for the agent to answer with a
/// tool error, instead of the whole turn failing as malformed.
#[test]
fn a_call_whose_arguments_were_cut_off_is_kept_as_unreadable() {
    let anthropic = [
        r#"event: message_start
data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"smollm2","usage":{"input_tokens":5,"output_tokens":1}}}

"#,
        r#"event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"pop_frame","input":{}}}

"#,
        r#"event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"status\": \"compl"}}

"#,
        r#"event: content_block_stop
data: {"type":"content_block_stop","index":0}

"#,
        r#"event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":128}}

event: message_stop
data: {"type":"message_stop"}

"#,
    ]
    .concat();
    let openai = [
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t1","type":"function","function":{"name":"pop_frame","arguments":"{\"status\": \"compl"}}]}}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        "\n\ndata: [DONE]\n\n",
    ]
    .concat();
    for (kind, body) in [(ProviderKind::Anthropic, anthropic), (ProviderKind::Openai, openai)] {
        let turn = decode_stream(kind, &[body.as_bytes()])
            .unwrap_or_else(|e| panic!("{kind:?}: the turn failed: {e}"));
        assert_eq!(turn.tool_calls.len(), 1, "{kind:?}");
        let call = &turn.tool_calls[0];
        assert_eq!(call.name, "pop_frame");
        let why = call.unreadable_arguments().unwrap_or_else(|| panic!("{kind:?}: {call:?}"));
        assert!(why.contains("not JSON") && why.contains("\"compl"), "{why}");
    }
}

/// Every reply's usage counts the cache: Anthropic's writes by lifetime, OpenAI's and
/// llama.cpp's cached input; a count that cannot be true is clamped with a notice, never an
/// error.
#[test]
fn usage_counts_the_cache_and_impossible_counts_are_clamped() {
    let anthropic = |usage: serde_json::Value| {
        let start = json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": usage}});
        let body = format!(
            "event: message_start\ndata: {start}\n\nevent: message_delta\ndata: {}\n\nevent: message_stop\ndata: {}\n\n",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
            json!({"type": "message_stop"})
        );
        decode_stream(ProviderKind::Anthropic, &[body.as_bytes()]).unwrap()
    };
    let turn = anthropic(json!({"input_tokens": 3, "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 50,
        "cache_creation": {"ephemeral_5m_input_tokens": 20, "ephemeral_1h_input_tokens": 30}}));
    let u = turn.usage;
    assert_eq!(
        (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_long_tokens),
        (3, 100, 20, 30)
    );
    assert!(turn.notices.is_empty());
    let odd = anthropic(json!({"input_tokens": 3, "cache_creation_input_tokens": 10,
        "cache_creation": {"ephemeral_1h_input_tokens": 40}}));
    assert_eq!((odd.usage.cache_write_tokens, odd.usage.cache_write_long_tokens), (0, 10));
    assert!(odd.notices[0].contains("more than the 10"), "{:?}", odd.notices);

    let openai = |cached: u64| {
        let chunks = [
            json!({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 2,
                "prompt_tokens_details": {"cached_tokens": cached}}}),
        ];
        let body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        decode_stream(ProviderKind::Openai, &[format!("{body}data: [DONE]\n\n").as_bytes()])
            .unwrap()
    };
    let turn = openai(80);
    assert_eq!((turn.usage.input_tokens, turn.usage.cache_read_tokens), (20, 80));
    let odd = openai(130);
    assert_eq!((odd.usage.input_tokens, odd.usage.cache_read_tokens), (0, 100));
    assert!(
        odd.notices[0].contains("130 cached tokens of a 100-token prompt"),
        "{:?}",
        odd.notices
    );
}
