//! Bad input on both sides: each a clear error, no crash, no hang, the tree whole.

use std::time::Duration;

use bytes::Bytes;
use flame_gateway::Mode;
use serde_json::{Value, json};

use crate::upstream::{Answer, Upstream, anthropic_reply};
use crate::{Harness, SENTINEL_KEY};

const HEADERS: [(&str, &str); 2] =
    [("x-claude-code-session-id", "bad-input-1"), ("x-api-key", SENTINEL_KEY)];

fn request(text: &str) -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": true,
           "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
           "messages": [{"role": "user", "content": text}]})
}

fn ok_usage() -> Value {
    json!({"input_tokens": 10, "output_tokens": 1})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_is_not_json_is_refused_and_not_sent() {
    let gateway = Harness::start(
        Mode::Observe,
        Upstream::start(|_, _| anthropic_reply("x", &[], ok_usage())).await,
    )
    .await;
    let (status, body) = gateway.post("/v1/messages", &HEADERS, "{\"messages\": [").await;
    assert_eq!(status, 400);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Flame's gateway could not read the request")
    );
    let (status, body) = gateway.post("/v1/chat/completions", &[], "not json").await;
    assert_eq!(status, 400);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["error"]["code"], "flame_gateway", "OpenAI's error shape");
    assert!(gateway.upstream.received().is_empty());
    assert!(gateway.sessions().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_past_the_limit_is_refused_and_not_kept() {
    let gateway = Harness::start(
        Mode::Observe,
        Upstream::start(|_, _| anthropic_reply("x", &[], ok_usage())).await,
    )
    .await;
    let huge = vec![b' '; 100 * 1024 * 1024];
    let (status, body) = gateway.post("/v1/messages", &HEADERS, Bytes::from(huge)).await;
    assert_eq!(status, 413);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["error"]["type"], "request_too_large");
    assert!(error["error"]["message"].as_str().unwrap().contains("32 MiB"));
    assert!(gateway.upstream.received().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_answers_html_is_passed_on_and_recorded_as_failed() {
    let upstream = Upstream::start(|_, _| Answer {
        status: 502,
        content_type: "text/html",
        chunks: vec![Bytes::from_static(b"<html><body>Bad gateway</body></html>")],
        cut: false,
    })
    .await;
    let gateway = Harness::start(Mode::Observe, upstream).await;
    let (status, body) = gateway.post_json("/v1/messages", &HEADERS, &request("hello")).await;
    assert_eq!(status, 502);
    assert_eq!(&body[..], b"<html><body>Bad gateway</body></html>");
    let tree = gateway.sessions()[0].1.clone().expect("the request's message is kept");
    let report = gateway.flame.gateway_report(&tree).unwrap().unwrap();
    assert_eq!(report.total.calls, 1);
    assert_eq!(report.total.billed.usage.prompt_tokens(), 0, "nothing was billed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_event_ends_the_clients_stream_with_an_error_and_keeps_the_tree() {
    let upstream = Upstream::start(|_, n| {
        if n == 0 {
            let mut answer = anthropic_reply("All good.", &[], ok_usage());
            let whole: Vec<u8> = answer.chunks.iter().flat_map(|c| c.to_vec()).collect();
            answer.chunks = vec![Bytes::from(whole[..whole.len() / 2].to_vec())];
            answer.cut = true;
            answer
        } else {
            anthropic_reply("Again.", &[], ok_usage())
        }
    })
    .await;
    let gateway = Harness::start(Mode::Observe, upstream).await;
    let response = crate::http_client()
        .post(format!("{}/v1/messages", gateway.base))
        .header("x-claude-code-session-id", "bad-input-1")
        .body(request("hello").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text =
        tokio::time::timeout(Duration::from_secs(30), response.text()).await.expect("no hang");
    let text = text.unwrap_or_default();
    assert!(text.contains("event: error"), "the stream ends with an error event: {text}");
    assert!(text.contains("broke off"));
    // The session goes on: the next call works and the tree holds both requests.
    let (status, _) = gateway.post_json("/v1/messages", &HEADERS, &request("hello")).await;
    assert_eq!(status, 200);
    let tree = gateway.sessions()[0].1.clone().unwrap();
    let frames = gateway.tree(&tree);
    assert!(frames.iter().all(|(f, _)| !f.title.is_empty()));
    let replies: usize =
        frames.iter().map(|(_, m)| m.iter().filter(|m| m.usage.is_some()).count()).sum();
    assert_eq!(replies, 1, "only the whole reply is recorded as a reply");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_hangs_up_mid_stream_leaves_the_gateway_working() {
    let upstream = Upstream::start(|_, n| {
        let mut answer = anthropic_reply(&"word ".repeat(50_000), &[], ok_usage());
        if n == 0 {
            // Many chunks, so the client can go before the end.
            let whole: Vec<u8> = answer.chunks.iter().flat_map(|c| c.to_vec()).collect();
            answer.chunks = whole.chunks(1024).map(|c| Bytes::from(c.to_vec())).collect();
        }
        answer
    })
    .await;
    let gateway = Harness::start(Mode::Observe, upstream).await;
    let response = crate::http_client()
        .post(format!("{}/v1/messages", gateway.base))
        .header("x-claude-code-session-id", "bad-input-1")
        .body(request("hello").to_string())
        .send()
        .await
        .unwrap();
    drop(response);
    let (status, _) = gateway.post_json("/v1/messages", &HEADERS, &request("hello")).await;
    assert_eq!(status, 200);
    assert_eq!(gateway.upstream.received().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_upstream_is_a_clear_502_without_the_key() {
    let upstream = Upstream::start(|_, _| anthropic_reply("x", &[], ok_usage())).await;
    let mut gateway = Harness::start(Mode::Observe, upstream).await;
    // Point the gateway at a port nothing listens on.
    drop(std::mem::replace(
        &mut gateway,
        Harness::start_at(Mode::Observe, "http://127.0.0.1:9").await,
    ));
    let (status, body) = gateway.post_json("/v1/messages", &HEADERS, &request("hello")).await;
    assert_eq!(status, 502);
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("could not reach the upstream at http://127.0.0.1:9"), "{text}");
    assert!(!text.contains(SENTINEL_KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_model_routes_are_answered() {
    let gateway = Harness::start(
        Mode::Observe,
        Upstream::start(|_, _| anthropic_reply("x", &[], ok_usage())).await,
    )
    .await;
    for path in ["/v1/models", "/https://evil.example/v1/messages", "/v2/messages"] {
        let (status, body) = gateway.post(path, &[], "{}").await;
        assert_eq!(status, 404, "{path}");
        assert!(
            String::from_utf8_lossy(&body).contains("Flame's gateway answers POST /v1/messages")
        );
    }
    assert!(gateway.upstream.received().is_empty(), "never an open proxy");
}
