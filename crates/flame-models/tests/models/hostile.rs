//! Streams and error bodies from a hostile server: each goes past a stated limit and must end in
//! a clear error with what arrived, never an abort, a panic, a stall or unbounded memory. Each
//! stream goes through `decode_stream` and through the live client against the replay server.

use flame_models::replay::Reply;
use flame_models::{
    ApiKey, MAX_ERROR_BODY_BYTES, MAX_MESSAGE_CHARS, MAX_NAME_BYTES, MAX_SSE_LINE_BYTES,
    MAX_TOOL_CALLS, MAX_TURN_BYTES, MAX_USAGE_TOKENS, ModelError, Provider, ProviderKind,
    StopReason, Turn, decode_stream,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{SENTINEL, client, request, run};

fn sse(data: &serde_json::Value) -> String {
    format!("data: {data}\n\n")
}

fn anthropic_event(data: &serde_json::Value) -> String {
    format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
}

/// An OpenAI chunk whose delta is `delta`.
fn openai_delta(delta: serde_json::Value) -> String {
    sse(&json!({"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]}))
}

fn openai_finish(reason: &str) -> String {
    sse(&json!({"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}))
        + "data: [DONE]\n\n"
}

fn openai_tool_call(index: u64, id: &str, name: &str, arguments: &str) -> String {
    openai_delta(json!({"tool_calls": [{"index": index, "id": id, "type": "function",
        "function": {"name": name, "arguments": arguments}}]}))
}

fn anthropic_start() -> String {
    anthropic_event(
        &json!({"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 1}}}),
    )
}

fn anthropic_tool(index: u64, id: &str, name: &str, input: &str) -> String {
    anthropic_event(&json!({"type": "content_block_start", "index": index,
        "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}))
        + &anthropic_event(&json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": input}}))
        + &anthropic_event(&json!({"type": "content_block_stop", "index": index}))
}

fn anthropic_text(index: u64, text: &str) -> String {
    anthropic_event(&json!({"type": "content_block_delta", "index": index,
        "delta": {"type": "text_delta", "text": text}}))
}

fn anthropic_end(reason: &str) -> String {
    anthropic_event(
        &json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 1}}),
    ) + &anthropic_event(&json!({"type": "message_stop"}))
}

/// `body` decoded offline in pieces of 4 KiB and by the live client; both must agree.
async fn both(kind: ProviderKind, body: String) -> Result<Turn, ModelError> {
    let pieces: Vec<&[u8]> = body.as_bytes().chunks(4096).collect();
    let offline = decode_stream(kind, &pieces);
    let (live, _, _) =
        run(kind, vec![Reply::Stream { body, chunk: 64 * 1024, pause: Default::default() }]).await;
    let show = |r: &Result<Turn, ModelError>| match r {
        Ok(turn) => format!("{turn:?}"),
        Err(e) => format!("{e} / {:?}", e.partial()),
    };
    assert_eq!(show(&offline), show(&live), "offline and live disagree");
    offline
}

fn malformed(result: Result<Turn, ModelError>, says: &str) -> Turn {
    match result {
        Err(ModelError::Malformed { detail, partial, .. }) => {
            assert!(detail.contains(says), "{detail:?} does not say {says:?}");
            *partial
        }
        other => {
            let shown: String = format!("{other:?}").chars().take(400).collect();
            panic!("expected Malformed saying {says:?}, got {shown}")
        }
    }
}

#[tokio::test]
async fn an_openai_tool_call_index_of_1e12_is_one_call_not_an_allocation() {
    let body = openai_delta(json!({"content": "Calling."}))
        + &openai_tool_call(1_000_000_000_000, "call_far", "get_weather", "{\"location\":")
        + &openai_tool_call(1_000_000_000_000, "", "", "\"Paris\"}")
        + &openai_tool_call(3, "call_near", "get_time", "{}")
        + &openai_finish("tool_calls");
    let turn = both(ProviderKind::Openai, body).await.unwrap();
    assert_eq!(turn.stop, StopReason::ToolUse);
    let calls: Vec<(&str, &serde_json::Value)> =
        turn.tool_calls.iter().map(|c| (c.id.as_str(), &c.arguments)).collect();
    assert_eq!(
        calls,
        [("call_near", &json!({})), ("call_far", &json!({"location": "Paris"}))],
        "calls come in the order of their index"
    );
}

#[tokio::test]
async fn more_openai_tool_calls_than_the_cap_are_malformed() {
    let mut body = openai_delta(json!({"content": "Many."}));
    for i in 0..=MAX_TOOL_CALLS as u64 {
        body += &openai_tool_call(i * 1_000_000_007, &format!("call_{i}"), "f", "{}");
    }
    body += &openai_finish("tool_calls");
    let partial = malformed(both(ProviderKind::Openai, body).await, "more than 128 tool calls");
    assert_eq!(partial.text, "Many.");
}

#[tokio::test]
async fn an_anthropic_block_index_of_2_pow_62_is_one_block_not_a_panic() {
    let body = anthropic_start()
        + &anthropic_text(0, "Calling.")
        + &anthropic_tool(1 << 62, "toolu_far", "get_weather", "{\"location\":\"Paris\"}")
        + &anthropic_tool(u64::MAX, "toolu_max", "get_time", "{}")
        + &anthropic_end("tool_use");
    let turn = both(ProviderKind::Anthropic, body).await.unwrap();
    assert_eq!(turn.text, "Calling.");
    let ids: Vec<&str> = turn.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["toolu_far", "toolu_max"]);
    assert_eq!(turn.tool_calls[0].arguments, json!({"location": "Paris"}));
}

#[tokio::test]
async fn more_anthropic_blocks_than_the_cap_are_malformed() {
    let mut body = anthropic_start() + &anthropic_text(0, "Many.");
    for i in 0..=MAX_TOOL_CALLS as u64 {
        body += &anthropic_tool(i << 40, &format!("toolu_{i}"), "f", "{}");
    }
    body += &anthropic_end("tool_use");
    let partial =
        malformed(both(ProviderKind::Anthropic, body).await, "more than 128 content blocks");
    assert_eq!(partial.text, "Many.");
    assert_eq!(partial.tool_calls.len(), MAX_TOOL_CALLS);
}

#[tokio::test]
async fn an_anthropic_block_stopped_again_is_not_called_again() {
    let stop = anthropic_event(&json!({"type": "content_block_stop", "index": 1}));
    let body = anthropic_start()
        + &anthropic_tool(1, "toolu_1", "get_time", "{}")
        + &stop.repeat(1000)
        + &anthropic_end("tool_use");
    let turn = both(ProviderKind::Anthropic, body).await.unwrap();
    assert_eq!(turn.tool_calls.len(), 1);
}

#[tokio::test]
async fn a_10_mb_line_without_a_newline_is_refused_keeping_what_arrived() {
    let body =
        openai_delta(json!({"content": "Before the flood."})) + "data: " + &"x".repeat(10_000_000);
    let partial = malformed(both(ProviderKind::Openai, body).await, "longer than 1 MiB");
    assert_eq!(partial.text, "Before the flood.");
}

#[tokio::test]
async fn a_900_kib_event_still_decodes_in_one_line_or_many() {
    let text = "y".repeat(900 * 1024);
    assert!(text.len() < MAX_SSE_LINE_BYTES);
    let one_line = openai_delta(json!({"content": text})) + &openai_finish("stop");
    assert_eq!(both(ProviderKind::Openai, one_line).await.unwrap().text, text);

    // 900 KiB in 900 `data:` lines of one event, which SSE joins with newlines (JSON whitespace).
    let mut many_lines = "data: {\"model\": \"m\", \"padding\": [\n".to_owned();
    for _ in 0..900 {
        many_lines += &format!("data: \"{}\",\n", "p".repeat(1020));
    }
    many_lines +=
        "data: \"end\"], \"choices\": [{\"index\": 0, \"delta\": {\"content\": \"ok\"}}]}\n\n";
    assert!(many_lines.len() > 900 * 1024);
    let many_lines = many_lines + &openai_finish("stop");
    assert_eq!(both(ProviderKind::Openai, many_lines).await.unwrap().text, "ok");
}

#[tokio::test]
async fn a_turn_longer_than_the_cap_is_malformed_keeping_what_fits() {
    let piece = "z".repeat(64 * 1024);
    let mut body = String::new();
    for _ in 0..(MAX_TURN_BYTES / piece.len() + 2) {
        body += &openai_delta(json!({"content": piece}));
    }
    body += &openai_finish("stop");
    let partial = malformed(both(ProviderKind::Openai, body).await, "longer than 4 MiB");
    assert_eq!(partial.text.len(), MAX_TURN_BYTES);

    let mut body = anthropic_start();
    for _ in 0..(MAX_TURN_BYTES / piece.len() + 2) {
        body += &anthropic_text(0, &piece);
    }
    body += &anthropic_end("end_turn");
    let partial = malformed(both(ProviderKind::Anthropic, body).await, "longer than 4 MiB");
    assert_eq!(partial.text.len(), MAX_TURN_BYTES);
}

#[tokio::test]
async fn tool_call_arguments_count_against_the_turn_cap() {
    let piece = "1,".repeat(32 * 1024);
    let mut body = openai_tool_call(0, "call_1", "f", "[");
    for _ in 0..(MAX_TURN_BYTES / piece.len() + 2) {
        body += &openai_tool_call(0, "", "", &piece);
    }
    body += &openai_finish("tool_calls");
    malformed(both(ProviderKind::Openai, body).await, "longer than 4 MiB");

    let mut body = anthropic_start()
        + &anthropic_event(&json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}));
    for _ in 0..(MAX_TURN_BYTES / piece.len() + 2) {
        body += &anthropic_event(&json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": piece}}));
    }
    body += &anthropic_end("tool_use");
    malformed(both(ProviderKind::Anthropic, body).await, "longer than 4 MiB");
}

#[tokio::test]
async fn names_longer_than_the_cap_are_malformed() {
    // Sent a byte at a time, a long name would otherwise be passed on whole with every fragment.
    let mut body = openai_tool_call(0, "call_1", "f", "");
    for _ in 0..MAX_NAME_BYTES {
        body += &openai_tool_call(0, "", "n", "");
    }
    body += &openai_finish("tool_calls");
    malformed(
        both(ProviderKind::Openai, body).await,
        "the name of tool call 0 is longer than 1024 bytes",
    );

    let long = "n".repeat(MAX_NAME_BYTES + 1);
    let body =
        anthropic_start() + &anthropic_tool(0, "t", &long, "{}") + &anthropic_end("tool_use");
    malformed(both(ProviderKind::Anthropic, body).await, "a tool call's name is longer than");
    let body =
        anthropic_start() + &anthropic_tool(0, &long, "f", "{}") + &anthropic_end("tool_use");
    malformed(both(ProviderKind::Anthropic, body).await, "a tool call's id is longer than");
    let body = openai_tool_call(0, &long, "f", "{}") + &openai_finish("tool_calls");
    malformed(both(ProviderKind::Openai, body).await, "the id of tool call 0 is longer than");

    let body = anthropic_start() + &anthropic_end(&long);
    malformed(both(ProviderKind::Anthropic, body).await, "the stop reason is longer than");
    let body = openai_delta(json!({"content": "Hi"})) + &openai_finish(&long);
    let partial =
        malformed(both(ProviderKind::Openai, body).await, "the finish reason is longer than");
    assert_eq!(partial.text, "Hi");

    let body = sse(&json!({"model": long, "choices": []})) + &openai_finish("stop");
    malformed(both(ProviderKind::Openai, body).await, "the model's name is longer than");
    let body = anthropic_event(&json!({"type": "message_start", "message": {"model": long}}))
        + &anthropic_end("end_turn");
    malformed(both(ProviderKind::Anthropic, body).await, "the model's name is longer than");

    // Exactly the limit is taken.
    let exact = "n".repeat(MAX_NAME_BYTES);
    let body =
        anthropic_start() + &anthropic_tool(0, &exact, &exact, "{}") + &anthropic_end("tool_use");
    assert_eq!(both(ProviderKind::Anthropic, body).await.unwrap().tool_calls[0].name, exact);
}

#[tokio::test]
async fn a_long_error_message_mid_stream_is_shortened() {
    let body = anthropic_start()
        + &anthropic_text(0, "Partial")
        + &anthropic_event(&json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "o".repeat(100_000)}}));
    match both(ProviderKind::Anthropic, body).await {
        Err(ModelError::Dropped { reason, partial, .. }) => {
            assert!(reason.chars().count() <= MAX_MESSAGE_CHARS + 1, "{} chars", reason.len());
            assert!(reason.ends_with('…'), "a shortened message says so");
            assert_eq!(partial.text, "Partial");
        }
        other => panic!("expected Dropped, got {:?}", other.map(|t| t.text.len())),
    }
}

/// A server that answers every request with `status` and a body of `total` bytes (announced by
/// content-length), written in 64 KiB pieces; it returns how many body bytes it managed to write.
async fn large_error_server(status: u16, total: usize) -> (String, tokio::task::JoinHandle<usize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let written = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0u8; 8192];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buffer).await.unwrap();
            assert!(n > 0, "the request ended early");
            request.extend_from_slice(&buffer[..n]);
        }
        let head = format!(
            "HTTP/1.1 {status} Bad Request\r\ncontent-type: text/plain\r\ncontent-length: {total}\r\n\r\n"
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        let piece = "e".repeat(64 * 1024);
        let mut written = 0;
        while written < total {
            match socket.write_all(piece.as_bytes()).await {
                Ok(()) => written += piece.len(),
                Err(_) => break,
            }
        }
        written
    });
    (base_url, written)
}

#[tokio::test]
async fn a_huge_error_body_is_read_only_up_to_the_cap() {
    let total = 256 * 1024 * 1024;
    let (base_url, written) = large_error_server(400, total).await;
    let provider = Provider {
        kind: ProviderKind::Anthropic,
        base_url,
        key: Some(ApiKey::new(SENTINEL)),
        key_source: "the settings file".into(),
    };
    let err = client()
        .stream(&provider, &request(), &flame_models::CancellationToken::new(), |_| {})
        .await
        .unwrap_err();
    match &err {
        ModelError::Http { status: 400, message, .. } => {
            assert!(message.starts_with("eeee") && message.ends_with('…'), "{message}");
            assert!(message.len() <= MAX_ERROR_BODY_BYTES, "{} bytes", message.len());
        }
        other => panic!("expected HTTP 400, got {other:?}"),
    }
    let written = written.await.unwrap();
    assert!(written < total / 2, "the client read {written} of {total} bytes of the error body");
}

#[tokio::test]
async fn a_retry_after_too_large_for_a_duration_waits_the_longest_wait() {
    let server = flame_models::replay::ReplayServer::start().await.unwrap();
    let limited = |after: &str| Reply::Json {
        status: 429,
        headers: vec![("retry-after".into(), after.into())],
        body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
            .into(),
    };
    let ok = anthropic_start() + &anthropic_text(0, "Done") + &anthropic_end("end_turn");
    server.push([limited("1e300"), limited("18446744073709551616"), Reply::stream(ok)]);
    let client = flame_models::Client::new(flame_models::RetryPolicy {
        attempts: 3,
        base_delay: std::time::Duration::from_millis(1),
        max_delay: std::time::Duration::from_millis(20),
    });
    let provider = crate::provider(ProviderKind::Anthropic, &server);
    let turn = client
        .stream(&provider, &request(), &flame_models::CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert_eq!(turn.text, "Done");
}

#[tokio::test]
async fn usage_past_the_cap_is_malformed() {
    let huge = MAX_USAGE_TOKENS + 1;
    let body = openai_delta(json!({"content": "Hi"}))
        + &openai_finish("stop").replace("data: [DONE]", "")
        + &sse(&json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": huge}}))
        + "data: [DONE]\n\n";
    let partial = malformed(both(ProviderKind::Openai, body).await, "more than 4294967296 tokens");
    assert_eq!(partial.text, "Hi");

    let body = anthropic_start()
        + &anthropic_text(0, "Hi")
        + &anthropic_event(&json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": u64::MAX}}))
        + &anthropic_event(&json!({"type": "message_stop"}));
    let partial =
        malformed(both(ProviderKind::Anthropic, body).await, "more than 4294967296 tokens");
    assert_eq!(partial.text, "Hi");

    // Exactly the limit is taken.
    let body = anthropic_start()
        + &anthropic_event(&json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": MAX_USAGE_TOKENS}}))
        + &anthropic_event(&json!({"type": "message_stop"}));
    let turn = both(ProviderKind::Anthropic, body).await.unwrap();
    assert_eq!(turn.usage.output_tokens, MAX_USAGE_TOKENS);
}
