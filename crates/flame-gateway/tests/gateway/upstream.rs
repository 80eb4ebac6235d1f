//! A scripted upstream on 127.0.0.1: it keeps every request it receives, byte for byte, and
//! answers each as its script says — a stream of chunks, possibly cut mid-way, in any status
//! and content type — so tests see exactly what the gateway sent and what a client gets back.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::StreamExt;
use http::HeaderMap;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// A request the upstream received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// How the upstream answers one request.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub chunks: Vec<Bytes>,
    /// The connection is dropped after the chunks, without the body's end.
    pub cut: bool,
}

impl Answer {
    pub fn sse(chunks: Vec<String>) -> Answer {
        Answer {
            status: 200,
            content_type: "text/event-stream",
            chunks: chunks.into_iter().map(Bytes::from).collect(),
            cut: false,
        }
    }

    pub fn json(status: u16, body: Value) -> Answer {
        Answer {
            status,
            content_type: "application/json",
            chunks: vec![Bytes::from(body.to_string())],
            cut: false,
        }
    }
}

type Script = dyn Fn(&Received, usize) -> Answer + Send + Sync;

/// The running upstream.
#[derive(Debug)]
pub struct Upstream {
    pub address: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl Upstream {
    /// Starts an upstream answering the `n`-th request (from 0) `received` with `script`.
    pub async fn start(
        script: impl Fn(&Received, usize) -> Answer + Send + Sync + 'static,
    ) -> Upstream {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let kept = received.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (kept, script) = (kept.clone(), script.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: hyper::Request<hyper::body::Incoming>| {
                            let (kept, script) = (kept.clone(), script.clone());
                            async move {
                                let (parts, body) = request.into_parts();
                                let body = body.collect().await.unwrap().to_bytes();
                                let got = Received {
                                    path: parts.uri.path_and_query().unwrap().to_string(),
                                    headers: parts.headers,
                                    body,
                                };
                                let n = {
                                    let mut kept = kept.lock().unwrap();
                                    kept.push(got.clone());
                                    kept.len() - 1
                                };
                                let answer = script(&got, n);
                                let cut = answer.cut;
                                let items: Vec<Result<Frame<Bytes>, std::io::Error>> =
                                    answer.chunks.into_iter().map(|c| Ok(Frame::data(c))).collect();
                                // A cut comes after what was sent has had time to leave, as when a
                                // server goes away mid-reply.
                                let end = futures_util::stream::once(async move {
                                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                                    cut.then(|| Err(std::io::Error::other("cut")))
                                })
                                .filter_map(|item| async move { item });
                                let body =
                                    StreamBody::new(futures_util::stream::iter(items).chain(end));
                                let mut response = hyper::Response::new(body);
                                *response.status_mut() =
                                    http::StatusCode::from_u16(answer.status).unwrap();
                                response.headers_mut().insert(
                                    http::header::CONTENT_TYPE,
                                    answer.content_type.parse().unwrap(),
                                );
                                Ok::<_, Infallible>(response)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Upstream { address, received }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// An Anthropic streamed reply: text, then tool calls, with the usage given.
pub fn anthropic_reply(text: &str, calls: &[(&str, &str, Value)], usage: Value) -> Answer {
    let mut chunks = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [], "usage": usage}}),
    )];
    let mut index = 0;
    if !text.is_empty() {
        chunks.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ));
        chunks.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}),
        ));
        chunks.push(event("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
        index += 1;
    }
    for (id, name, input) in calls {
        chunks.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ));
        chunks.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        ));
        chunks.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if calls.is_empty() { "end_turn" } else { "tool_use" };
    chunks.push(event(
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop}, "usage": {"output_tokens": 7}}),
    ));
    chunks.push(event("message_stop", json!({"type": "message_stop"})));
    Answer::sse(chunks)
}

/// A Chat Completions streamed reply.
pub fn chat_reply(text: &str, calls: &[(&str, &str, Value)], prompt: u64, cached: u64) -> Answer {
    let chunk = |v: Value| format!("data: {v}\n\n");
    let mut chunks =
        vec![chunk(json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-4.1",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}))];
    for (i, (id, name, args)) in calls.iter().enumerate() {
        chunks.push(chunk(json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-4.1",
            "choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id, "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}]}}]})));
    }
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    chunks.push(chunk(json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-4.1",
        "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})));
    chunks.push(chunk(
        json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-4.1", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5,
                  "prompt_tokens_details": {"cached_tokens": cached}}}),
    ));
    chunks.push("data: [DONE]\n\n".to_owned());
    Answer::sse(chunks)
}

/// A Responses streamed reply of output items.
pub fn responses_reply(items: Vec<Value>, input: u64, cached: u64) -> Answer {
    let mut chunks = vec![event(
        "response.created",
        json!({"type": "response.created",
        "response": {"id": "resp_1", "status": "in_progress"}}),
    )];
    for item in &items {
        chunks.push(event(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "item": item}),
        ));
    }
    chunks.push(event(
        "response.completed",
        json!({"type": "response.completed", "response": {
        "id": "resp_1", "status": "completed", "model": "gpt-4.1", "output": items,
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                  "output_tokens": 6, "total_tokens": input + 6}}}),
    ));
    Answer::sse(chunks)
}
