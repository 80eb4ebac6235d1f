//! The providers against the local replay server, which answers with the wire formats the
//! providers document (`wire/`): text streams, tool calls streamed in fragments, usage, 401, 429
//! with retry-after, 500, a connection dropped mid-stream, a malformed event, cancel.

mod discover;
mod hostile;
mod offline;

use std::time::{Duration, Instant};

use flame_models::replay::{ReplayServer, Reply};
use flame_models::{
    ApiKey, CacheLifetime, CacheMark, CancellationToken, ChatMessage, ChatRequest, Client,
    MAX_REDIRECTS, ModelError, PromptCache, Provider, ProviderKind, RetryPolicy, StopReason,
    StreamEvent, ToolCall, ToolSpec,
};
use serde_json::json;

const SENTINEL: &str = "sk-test-SENTINEL-7f3a9c1e5b2d4a60";

fn wire(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models/wire").join(name),
    )
    .unwrap()
}

fn provider(kind: ProviderKind, server: &ReplayServer) -> Provider {
    let base_url = match kind {
        ProviderKind::Anthropic => server.base_url.clone(),
        ProviderKind::Openai => format!("{}/v1", server.base_url),
    };
    Provider {
        kind,
        base_url,
        key: Some(ApiKey::new(SENTINEL)),
        key_source: kind.key_variable().to_owned(),
    }
}

fn client() -> Client {
    Client::new(RetryPolicy {
        attempts: 3,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_secs(2),
    })
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        system: "You are in a frame.".into(),
        messages: vec![
            ChatMessage::User("What is the weather?".into()),
            ChatMessage::Assistant {
                text: "Let me look.".into(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "get_weather".into(),
                    arguments: json!({"location": "Paris"}),
                }],
            },
            ChatMessage::ToolResult {
                call_id: "call_1".into(),
                content: "Sunny".into(),
                is_error: false,
            },
            ChatMessage::User("Thanks. And tomorrow?".into()),
        ],
        tools: vec![ToolSpec {
            name: "get_weather".into(),
            description: "The weather at a place".into(),
            schema: json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
        }],
        max_tokens: 1024,
        cache: PromptCache::default(),
    }
}

async fn run(
    kind: ProviderKind,
    replies: Vec<Reply>,
) -> (Result<flame_models::Turn, ModelError>, Vec<StreamEvent>, ReplayServer) {
    let server = ReplayServer::start().await.unwrap();
    server.push(replies);
    let mut events = Vec::new();
    let result = client()
        .stream(&provider(kind, &server), &request(), &CancellationToken::new(), |e| events.push(e))
        .await;
    (result, events, server)
}

fn assert_no_key(err: &ModelError) {
    assert!(!format!("{err} {err:?}").contains(SENTINEL), "the key leaked: {err:?}");
}

#[tokio::test]
async fn anthropic_streams_text_with_usage() {
    let (turn, events, server) =
        run(ProviderKind::Anthropic, vec![Reply::stream(wire("anthropic-text.sse"))]).await;
    let turn = turn.unwrap();
    assert_eq!(turn.text, "Hello!");
    assert_eq!((turn.usage.input_tokens, turn.usage.output_tokens), (25, 15));
    assert_eq!(turn.stop, StopReason::EndTurn);
    assert_eq!(turn.model, "claude-sonnet-4-5-20250929");
    assert_eq!(events, [StreamEvent::Text("Hello".into()), StreamEvent::Text("!".into())]);

    let sent = &server.requests()[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(sent.header("x-api-key"), Some(SENTINEL));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    let body = sent.json();
    assert_eq!(body["system"][0]["text"], "You are in a frame.");
    assert!(body["system"][0].get("cache_control").is_none(), "nothing asked, nothing marked");
    assert_eq!(body["stream"], true);
    assert_eq!(body["tools"][0]["input_schema"]["required"][0], "location");
    let roles: Vec<&str> =
        body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user"],
        "the tool result and the next question share one user message"
    );
    assert_eq!(body["messages"][1]["content"][1]["type"], "tool_use");
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
}

/// One Anthropic turn streamed from `server`, with no events kept.
async fn stream_anthropic(server: &ReplayServer) -> Result<flame_models::Turn, ModelError> {
    let provider = provider(ProviderKind::Anthropic, server);
    client().stream(&provider, &request(), &CancellationToken::new(), |_| {}).await
}

/// A `307 Temporary Redirect` to `location`, which keeps the request's method and body.
fn redirect_to(location: String) -> Reply {
    Reply::Json { status: 307, headers: vec![("location".into(), location)], body: String::new() }
}

#[tokio::test]
async fn no_key_follows_a_redirect_to_another_origin() {
    for (kind, path, answer) in [
        (ProviderKind::Anthropic, "/v1/messages", "anthropic-text.sse"),
        (ProviderKind::Openai, "/v1/chat/completions", "openai-text.sse"),
    ] {
        // Another port on the same host is another origin.
        let elsewhere = ReplayServer::start().await.unwrap();
        elsewhere.push([Reply::stream(wire(answer))]);
        let location = format!("{}{path}", elsewhere.base_url);
        let (result, _, server) = run(kind, vec![redirect_to(location)]).await;
        let err = result.unwrap_err();
        assert!(matches!(err, ModelError::Http { status: 307, .. }), "{err:?}");
        assert!(err.to_string().contains("another origin"), "{err}");
        assert_no_key(&err);
        assert_eq!(server.requests().len(), 1);
        let followed: Vec<_> = elsewhere.requests().iter().map(|r| r.headers.clone()).collect();
        assert!(followed.is_empty(), "{kind:?} followed the redirect: {followed:?}");
    }
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed_with_the_key() {
    let server = ReplayServer::start().await.unwrap();
    let location = format!("{}/v1/messages", server.base_url);
    server.push([redirect_to(location), Reply::stream(wire("anthropic-text.sse"))]);
    let turn = stream_anthropic(&server).await.unwrap();
    assert_eq!(turn.text, "Hello!");
    let keys: Vec<_> =
        server.requests().iter().map(|r| r.header("x-api-key").map(str::to_owned)).collect();
    assert_eq!(keys, [Some(SENTINEL.to_owned()), Some(SENTINEL.to_owned())]);
}

#[tokio::test]
async fn past_max_redirects_within_the_origin_the_request_stops() {
    let server = ReplayServer::start().await.unwrap();
    server.route("POST", "/v1/messages", redirect_to(format!("{}/v1/messages", server.base_url)));
    let err = stream_anthropic(&server).await.unwrap_err();
    assert!(matches!(err, ModelError::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains("error following redirect"), "{err}");
    // Each of the client's three attempts made the first request and followed MAX_REDIRECTS.
    assert_eq!(server.requests().len(), 3 * (MAX_REDIRECTS + 1));
}

#[tokio::test]
async fn anthropic_tool_arguments_are_reassembled_from_fragments() {
    let (turn, events, _) =
        run(ProviderKind::Anthropic, vec![Reply::stream(wire("anthropic-tool.sse"))]).await;
    let turn = turn.unwrap();
    assert_eq!(turn.stop, StopReason::ToolUse);
    assert_eq!(turn.text, "Okay, let's check the weather for San Francisco, CA:");
    assert_eq!(
        turn.tool_calls,
        [ToolCall {
            id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
            name: "get_weather".into(),
            arguments: json!({"location": "San Francisco, CA", "unit": "fahrenheit"}),
        }]
    );
    assert_eq!(turn.usage.cache_read_tokens, 128);
    assert!(events.contains(&StreamEvent::ToolCallStarted {
        id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
        name: "get_weather".into()
    }));
}

#[tokio::test]
async fn openai_streams_text_and_usage() {
    let (turn, _, server) =
        run(ProviderKind::Openai, vec![Reply::stream(wire("openai-text.sse"))]).await;
    let turn = turn.unwrap();
    assert_eq!(turn.text, "Hello there");
    assert_eq!(
        (turn.usage.input_tokens, turn.usage.cache_read_tokens, turn.usage.output_tokens),
        (15, 4, 12)
    );
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {SENTINEL}").as_str()));
    let body = sent.json();
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"location\":\"Paris\"}"
    );
    assert_eq!(body["messages"][3]["role"], "tool");
    assert_eq!(body["stream_options"]["include_usage"], true);
    // A server other than OpenAI's own is asked to reuse the prefix it holds (llama.cpp's
    // switch), and is not sent OpenAI's cache key.
    assert_eq!(body["cache_prompt"], true);
    assert!(body.get("prompt_cache_key").is_none());
}

/// The request as Flame sends it in a frame: the system prompt's shared start and three
/// messages marked.
fn marked_request() -> ChatRequest {
    ChatRequest {
        system: "You are in a frame.\n\nThe tree's folder is /home/ada/project.".into(),
        cache: PromptCache {
            system: Some(CacheLifetime::Long),
            system_shared: Some("You are in a frame.".len()),
            marks: vec![
                CacheMark { message: 0, lifetime: CacheLifetime::Long },
                CacheMark { message: 2, lifetime: CacheLifetime::Short },
                CacheMark { message: 3, lifetime: CacheLifetime::Short },
            ],
            key: Some("f0000000001".into()),
        },
        ..request()
    }
}

#[tokio::test]
async fn anthropic_requests_carry_the_marks_on_the_blocks_that_end_them_in_prompt_order() {
    let server = ReplayServer::start().await.unwrap();
    server.push(vec![Reply::stream(wire("anthropic-text.sse"))]);
    client()
        .stream(
            &provider(ProviderKind::Anthropic, &server),
            &marked_request(),
            &CancellationToken::new(),
            |_| {},
        )
        .await
        .unwrap();
    let sent = &server.requests()[0];
    let body = sent.json();
    let hour = json!({"type": "ephemeral", "ttl": "1h"});
    let minutes = json!({"type": "ephemeral"});
    // The system's mark ends its shared start; the tree's own part follows, unmarked.
    assert_eq!(body["system"][0]["text"], "You are in a frame.");
    assert_eq!(body["system"][0]["cache_control"], hour);
    assert_eq!(body["system"][1]["text"], "\n\nThe tree's folder is /home/ada/project.");
    assert!(body["system"][1].get("cache_control").is_none());
    assert_eq!(body["system"].as_array().unwrap().len(), 2);
    // The first user message ends with the opening's mark; the tool result and the question
    // after it share the last user message, whose two blocks each end a marked message.
    assert_eq!(body["messages"][0]["content"][0]["cache_control"], hour);
    assert!(body["messages"][1]["content"][1].get("cache_control").is_none());
    assert_eq!(body["messages"][2]["content"][0]["cache_control"], minutes);
    assert_eq!(body["messages"][2]["content"][1]["cache_control"], minutes);
    // The bytes are in the order Anthropic caches the prompt: tools, system, messages.
    let (tools, system, messages) = (
        sent.body.find("\"tools\"").unwrap(),
        sent.body.find("\"system\"").unwrap(),
        sent.body.find("\"messages\"").unwrap(),
    );
    assert!(tools < system && system < messages, "{}", sent.body);
}

#[test]
fn openai_gets_the_frames_cache_key_and_nothing_it_does_not_know() {
    let mut official = Provider {
        kind: ProviderKind::Openai,
        base_url: "http://127.0.0.1:8080/v1".into(),
        key: None,
        key_source: "none".into(),
    };
    let request = marked_request();
    let body = flame_models::request_body(&official, &request);
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["prompt_cache_key"], json!(null), "not OpenAI's own API");
    official.base_url = "https://api.openai.com/v1".into();
    let text = flame_models::request_body(&official, &request);
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["prompt_cache_key"], "f0000000001");
    assert!(body.get("cache_prompt").is_none(), "OpenAI refuses what it does not know");
    assert!(text.find("\"tools\"").unwrap() < text.find("\"messages\"").unwrap(), "{text}");
}

#[tokio::test]
async fn openai_tool_arguments_are_reassembled_from_fragments() {
    let (turn, _, _) =
        run(ProviderKind::Openai, vec![Reply::stream(wire("openai-tool.sse"))]).await;
    let turn = turn.unwrap();
    assert_eq!(turn.stop, StopReason::ToolUse);
    assert_eq!(turn.tool_calls[0].id, "call_DdmO9pD3xa9XTPNJ32zg2hcA");
    assert_eq!(turn.tool_calls[0].arguments, json!({"location": "Boston, MA"}));
}

#[tokio::test]
async fn a_rejected_key_names_the_provider_and_the_keys_source_but_not_the_key() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {SENTINEL}.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
    );
    let (result, _, _) = run(ProviderKind::Openai, vec![Reply::json(401, body)]).await;
    let err = result.unwrap_err();
    assert_no_key(&err);
    assert_eq!(
        err.to_string(),
        "OpenAI rejected the API key from OPENAI_API_KEY (HTTP 401); check that key"
    );
    let anthropic =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let (result, _, server) = run(ProviderKind::Anthropic, vec![Reply::json(401, anthropic)]).await;
    assert!(matches!(result.unwrap_err(), ModelError::Unauthorized { .. }));
    assert_eq!(server.requests().len(), 1, "a rejected key is not retried");
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_time_the_provider_asks() {
    let limited = Reply::Json {
        status: 429,
        headers: vec![("retry-after".into(), "1".into())],
        body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#.into(),
    };
    let started = Instant::now();
    let (turn, _, server) =
        run(ProviderKind::Anthropic, vec![limited, Reply::stream(wire("anthropic-text.sse"))])
            .await;
    assert_eq!(turn.unwrap().text, "Hello!");
    assert_eq!(server.requests().len(), 2);
    assert!(started.elapsed() >= Duration::from_millis(950), "retry-after: 1 was not honoured");
}

#[tokio::test]
async fn server_errors_are_retried_then_reported() {
    let error = || {
        Reply::json(
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        )
    };
    let (turn, _, _) =
        run(ProviderKind::Anthropic, vec![error(), Reply::stream(wire("anthropic-text.sse"))])
            .await;
    assert_eq!(turn.unwrap().text, "Hello!");
    let (result, _, server) = run(ProviderKind::Anthropic, vec![error(), error(), error()]).await;
    let err = result.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Anthropic kept refusing (HTTP 500) after 3 attempts: Internal server error"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_dropped_stream_keeps_what_arrived() {
    let body = wire("anthropic-text.sse");
    let cut = body.find("content_block_stop").unwrap();
    let (result, _, _) =
        run(ProviderKind::Anthropic, vec![Reply::Dropped { body, cut_at: cut }]).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::Dropped { .. }), "{err:?}");
    assert_eq!(err.partial().unwrap().text, "Hello!");
}

#[tokio::test]
async fn an_error_event_mid_stream_keeps_what_arrived() {
    let (result, _, _) = run(
        ProviderKind::Anthropic,
        vec![Reply::stream(wire("anthropic-overloaded-midstream.sse"))],
    )
    .await;
    let err = result.unwrap_err();
    assert!(err.to_string().contains("Overloaded"), "{err}");
    assert_eq!(err.partial().unwrap().text, "Partial answer");
}

#[tokio::test]
async fn a_malformed_event_is_reported_with_what_arrived() {
    let (result, _, _) =
        run(ProviderKind::Openai, vec![Reply::stream(wire("openai-malformed.sse"))]).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::Malformed { .. }), "{err:?}");
    assert_eq!(err.partial().unwrap().text, "Fine so far");
}

#[tokio::test]
async fn a_context_that_is_too_long_is_its_own_error() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 211000 tokens > 200000 maximum"}}"#;
    let (result, _, _) = run(ProviderKind::Anthropic, vec![Reply::json(400, body)]).await;
    assert!(matches!(result.unwrap_err(), ModelError::ContextTooLong { .. }));
    let body = r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let (result, _, _) = run(ProviderKind::Openai, vec![Reply::json(400, body)]).await;
    assert!(matches!(result.unwrap_err(), ModelError::ContextTooLong { .. }));
}

#[tokio::test]
async fn cancel_stops_the_stream_and_keeps_what_arrived() {
    let server = ReplayServer::start().await.unwrap();
    let body = wire("anthropic-text.sse");
    let first = body.find("event: content_block_stop").unwrap();
    server.push([Reply::Slow { body, first, hold: Duration::from_secs(30) }]);
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    let started = Instant::now();
    let result = client()
        .stream(&provider(ProviderKind::Anthropic, &server), &request(), &cancel, move |event| {
            if event == StreamEvent::Text("!".into()) {
                canceller.cancel();
            }
        })
        .await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::Cancelled { .. }), "{err:?}");
    assert_eq!(err.partial().unwrap().text, "Hello!");
    assert!(started.elapsed() < Duration::from_secs(20), "cancel did not stop the wait");
}

#[tokio::test]
async fn an_unreachable_server_is_retried_then_reported() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", free.local_addr().unwrap());
    drop(free);
    let provider = Provider {
        kind: ProviderKind::Anthropic,
        base_url: base_url.clone(),
        key: Some(ApiKey::new(SENTINEL)),
        key_source: "the settings file".into(),
    };
    let err = client()
        .stream(&provider, &request(), &CancellationToken::new(), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Unreachable { attempts: 3, .. }), "{err:?}");
    assert!(err.to_string().contains(&base_url));
    assert_no_key(&err);
}

#[tokio::test]
async fn keys_are_required_where_the_provider_needs_them() {
    let server = ReplayServer::start().await.unwrap();
    let mut anthropic = provider(ProviderKind::Anthropic, &server);
    anthropic.key = None;
    let err = client()
        .stream(&anthropic, &request(), &CancellationToken::new(), |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no API key for Anthropic: set ANTHROPIC_API_KEY or add a key in Flame's settings"
    );
    // A local OpenAI-compatible server (Ollama, llama.cpp) is asked without a key.
    server.push([Reply::stream(wire("openai-text.sse"))]);
    let mut local = provider(ProviderKind::Openai, &server);
    local.key = None;
    client().stream(&local, &request(), &CancellationToken::new(), |_| {}).await.unwrap();
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[test]
fn keys_do_not_show_in_debug_output() {
    let key = ApiKey::new(SENTINEL);
    assert!(!format!("{key:?}").contains(SENTINEL));
    assert_eq!(key.scrub(&format!("bad key {SENTINEL}!")), "bad key [key]!");
}
