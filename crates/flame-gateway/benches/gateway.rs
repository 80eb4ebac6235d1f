//! What the gateway adds to a model call, measured on 127.0.0.1 against an upstream that answers
//! at once, so that what is measured is the gateway's own work:
//!
//! - `gateway.first_byte_overhead_150k_{observe,context}_median`: the time to the reply's first
//!   byte through the gateway less the time straight to the upstream, for a Claude Code-like
//!   session whose requests carry about 150k tokens, each request the one before plus a tool
//!   call and its result (the median over the session's calls of each call's difference: each
//!   request goes straight and through each gateway one after the other);
//! - `gateway.chunk_overhead_median`: what the gateway adds per streamed chunk, on a reply of
//!   2,000 chunks (the difference of the medians of whole replies, over the chunks);
//! - `gateway.memory_growth_1000_requests`: the process's resident memory after 1,000 more
//!   requests, each of a session of its own (20 tool turns), less before them, after 2,500 such
//!   sessions (`FLAME_BENCH_GATEWAY_SESSIONS`). The gateway keeps `sessions::MAX_SESSIONS` in
//!   memory, and the allocator's arenas go on growing for a while after that: warmed with 1,000
//!   sessions the figure was 38 MiB, with 2,500 under 1 MiB, which is what bounded looks like.
//!
//! Prints `BENCH <name> <value> <unit>` lines. `FLAME_BENCH_GATEWAY_CALLS` sets how many calls
//! of the 150k session are timed (default 40).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use flame_api::{DataDir, Env, Flame, FlameConfig};
use flame_gateway::{Gateway, GatewayConfig, Mode, Upstreams};
use http_body_util::StreamBody;
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// How many chunks the streamed reply of the chunk benchmark has.
const CHUNKS: usize = 2_000;

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// An Anthropic reply: a short text in `chunks` pieces, with its usage.
fn reply(chunks: usize) -> Vec<Bytes> {
    let event = |name: &str, data: Value| Bytes::from(format!("event: {name}\ndata: {data}\n\n"));
    let mut out = vec![
        event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5",
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 100000, "output_tokens": 1}}}),
        ),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    for _ in 0..chunks {
        out.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "ok "}}),
        ));
    }
    out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
    out.push(event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
        "usage": {"output_tokens": 5}}),
    ));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}

/// An upstream that answers every request at once with `chunks` chunks.
async fn upstream(chunks: usize) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let body = Arc::new(reply(chunks));
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let _ = stream.set_nodelay(true);
            let body = body.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let body = body.clone();
                        async move {
                            // The request is read whole, as a provider reads it.
                            let _ = http_body_util::BodyExt::collect(request.into_body()).await;
                            let frames: Vec<Result<Frame<Bytes>, Infallible>> =
                                body.iter().cloned().map(|c| Ok(Frame::data(c))).collect();
                            let mut response = hyper::Response::new(StreamBody::new(
                                futures_util::stream::iter(frames),
                            ));
                            response
                                .headers_mut()
                                .insert("content-type", "text/event-stream".parse().unwrap());
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
    base
}

/// A gateway in `mode` over a fresh data directory, forwarding to `base`.
async fn gateway(mode: Mode, base: &str) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame = Arc::new(Flame::open_with(data, FlameConfig::default(), Env::system()).unwrap());
    let config = GatewayConfig {
        port: 0,
        mode,
        upstreams: Upstreams { anthropic: base.to_owned(), openai: format!("{base}/v1") },
    };
    let gateway = Gateway::bind(config, flame).await.unwrap();
    let address = format!("http://{}", gateway.address());
    tokio::spawn(gateway.serve(std::future::pending()));
    (address, dir)
}

/// A Claude Code-like request: its system prompt and tools, then `messages`.
fn request(messages: &[Value]) -> String {
    json!({
        "model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": true,
        "system": [{"type": "text", "text": "You are a coding agent. ".repeat(600), "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "Read", "description": "Reads a file", "input_schema": {"type": "object",
                   "properties": {"file_path": {"type": "string"}}}}],
        "messages": messages,
    })
    .to_string()
}

/// A tool call and its result of about `words` words, turn `n` of a conversation.
fn turn(n: usize, words: usize) -> [Value; 2] {
    let id = format!("toolu_{n}");
    let text =
        format!("line {n}: fn item_{n}() {{ let value = compute({n}); }}\n").repeat(words / 10);
    [
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("Reading file {n}.")},
            {"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("/w/src/f{n}.rs")}}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]}),
    ]
}

/// The time to the first byte of the reply to `body` posted to `url`, and then to its end.
async fn time(client: &reqwest::Client, url: &str, body: String) -> (Duration, Duration) {
    time_in(client, url, body, "bench-session").await
}

async fn time_in(
    client: &reqwest::Client,
    url: &str,
    body: String,
    session: &str,
) -> (Duration, Duration) {
    let start = Instant::now();
    let mut response = client
        .post(url)
        .header("x-claude-code-session-id", session)
        .header("x-api-key", "sk-bench")
        .body(body)
        .send()
        .await
        .unwrap();
    let first = response.chunk().await.unwrap();
    let first_at = start.elapsed();
    assert!(first.is_some(), "a reply");
    while response.chunk().await.unwrap().is_some() {}
    (first_at, start.elapsed())
}

/// Runs the 150k session against each of `urls`, call by call: for each timed call, the time to
/// its reply's first byte from each URL, taken one after the other so that what the machine is
/// doing meanwhile weighs on each alike.
async fn session_150k(urls: &[String], calls: usize) -> Vec<Vec<Duration>> {
    let client = reqwest::Client::new();
    // About 150k tokens of history before the timed calls: 150 turns of about 1k tokens.
    let mut messages = vec![json!({"role": "user", "content": "Read the project and fix the bug"})];
    for n in 0..150 {
        messages.extend(turn(n, 700));
    }
    // The first call reads the whole history once; the timed ones each add a turn.
    for url in urls {
        time(&client, url, request(&messages)).await;
    }
    let mut times = vec![Vec::with_capacity(calls); urls.len()];
    for n in 150..150 + calls {
        messages.extend(turn(n, 700));
        let body = request(&messages);
        for (url, times) in urls.iter().zip(&mut times) {
            times.push(time(&client, url, body.clone()).await.0);
        }
    }
    times
}

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let calls = env_count("FLAME_BENCH_GATEWAY_CALLS", 40);
    let sessions = env_count("FLAME_BENCH_GATEWAY_SESSIONS", 2_500);
    let only_memory = std::env::var_os("FLAME_BENCH_GATEWAY_MEMORY_ONLY").is_some();
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let base = upstream(1).await;
        // The benchmark's own clients are built before any gateway's, which chooses it otherwise.
        flame_models::use_ring_for_tls();
        let client = reqwest::Client::new();
        if !only_memory {
            let modes = [Mode::Observe, Mode::Context];
            let mut gateways = Vec::new();
            let mut urls = vec![format!("{base}/v1/messages")];
            for mode in modes {
                let (address, dir) = gateway(mode, &base).await;
                urls.push(format!("{address}/v1/messages"));
                gateways.push(dir);
            }
            let times = session_150k(&urls, calls).await;
            for (mode, through) in modes.iter().zip(&times[1..]) {
                // Each call's time through the gateway less the same call's straight.
                let added: Vec<Duration> =
                    through.iter().zip(&times[0]).map(|(t, d)| t.saturating_sub(*d)).collect();
                println!(
                    "BENCH gateway.first_byte_overhead_150k_{}_median {:.2} ms",
                    mode.as_str(),
                    median(added).as_secs_f64() * 1e3
                );
            }
            drop(gateways);

            // Per chunk: whole replies of many chunks, straight and through the gateway.
            let chunky = upstream(CHUNKS).await;
            let (address, _dir) = gateway(Mode::Observe, &chunky).await;
            let small = request(&[json!({"role": "user", "content": "Say ok"})]);
            let mut straight = Vec::new();
            let mut through = Vec::new();
            for _ in 0..21 {
                straight
                    .push(time(&client, &format!("{chunky}/v1/messages"), small.clone()).await.1);
                through
                    .push(time(&client, &format!("{address}/v1/messages"), small.clone()).await.1);
            }
            let per_chunk = median(through).saturating_sub(median(straight)).as_secs_f64() * 1e6
                / CHUNKS as f64;
            println!("BENCH gateway.chunk_overhead_median {per_chunk:.2} µs");
        }

        // Memory: sessions of their own, past as many as the gateway keeps, then 1,000 more.
        let (address, _dir) = gateway(Mode::Context, &base).await;
        let url = format!("{address}/v1/messages");
        let mut messages =
            vec![json!({"role": "user", "content": "Read the project and fix the bug"})];
        for n in 0..20 {
            messages.extend(turn(n, 200));
        }
        let body = request(&messages);
        // Past as many sessions as the gateway keeps, and past the allocator's first growth.
        let warm = sessions;
        for i in 0..warm {
            time_in(&client, &url, body.clone(), &format!("bench-{i}")).await;
        }
        let before = resident_kib();
        for i in warm..warm + 1_000 {
            time_in(&client, &url, body.clone(), &format!("bench-{i}")).await;
        }
        let after = resident_kib();
        eprintln!("resident memory: {before} KiB after {warm} sessions, {after} KiB 1,000 later");
        if std::env::var_os("FLAME_BENCH_GATEWAY_MAPS").is_some() {
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
            let mut name = String::new();
            let mut big: Vec<(u64, String)> = Vec::new();
            for line in smaps.lines() {
                if line.contains('-') && !line.starts_with(|c: char| c.is_ascii_uppercase()) {
                    name = line.to_owned();
                } else if let Some(rss) = line.strip_prefix("Rss:") {
                    let kib: u64 = rss.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                    big.push((kib, name.clone()));
                }
            }
            big.sort();
            for (kib, name) in big.iter().rev().take(8) {
                eprintln!("{kib} KiB {name}");
            }
        }
        println!("BENCH gateway.memory_growth_1000_requests {} KiB", after.saturating_sub(before));
    });
}
