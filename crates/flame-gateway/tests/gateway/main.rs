//! The gateway's one integration test binary: a real gateway on 127.0.0.1 over a Flame on a
//! temporary data directory, between a client (reqwest) and a scripted upstream (`upstream.rs`).

// The shared sessions' test prints its figures, for the closing notes and the next engineer.
#![allow(clippy::print_stderr)]

mod bad_input;
mod clients;
mod context;
mod observe;
mod shared;
mod strict;
mod upstream;

use std::sync::Arc;

use bytes::Bytes;
use flame_api::{DataDir, Env, Flame, FlameConfig};
use flame_gateway::{Gateway, GatewayConfig, Mode, Upstreams};
use flame_model::{Frame, Message, TreeId};
use serde_json::Value;

use crate::upstream::Upstream;

/// A gateway between a test and a scripted upstream.
#[derive(Debug)]
pub struct Harness {
    pub flame: Arc<Flame>,
    pub dir: tempfile::TempDir,
    pub base: String,
    pub upstream: Upstream,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The tests' own HTTP client, with the process's TLS cryptography chosen first as the gateway
/// chooses it (reqwest builds no client before one is).
pub fn http_client() -> reqwest::Client {
    flame_models::use_ring_for_tls();
    reqwest::Client::new()
}

/// A key no file, row or error may hold.
pub const SENTINEL_KEY: &str = "sk-flame-sentinel-0f9e8d7c6b5a";

impl Harness {
    pub async fn start(mode: Mode, upstream: Upstream) -> Harness {
        let base = upstream.base();
        Harness::start_with(mode, upstream, &base).await
    }

    /// A gateway whose upstreams are at `base`, where nothing may listen.
    pub async fn start_at(mode: Mode, base: &str) -> Harness {
        let unused =
            Upstream::start(|_, _| upstream::Answer::json(500, serde_json::json!({}))).await;
        Harness::start_with(mode, unused, base).await
    }

    async fn start_with(mode: Mode, upstream: Upstream, base: &str) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
        let flame = Arc::new(
            Flame::open_with(data, FlameConfig::default(), Env::fixed(1_795_307_601_000, 7))
                .unwrap(),
        );
        let config = GatewayConfig {
            port: 0,
            mode,
            upstreams: Upstreams { anthropic: base.to_owned(), openai: format!("{base}/v1") },
        };
        let gateway = Gateway::bind(config, flame.clone()).await.unwrap();
        let base = format!("http://{}", gateway.address());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(gateway.serve(async move {
            let _ = stopped.await;
        }));
        Harness { flame, dir, base, upstream, stop: Some(stop) }
    }

    /// Posts `body` to `path` with `headers`; the reply's status and whole body.
    pub async fn post(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> (u16, Bytes) {
        let mut request = http_client().post(format!("{}{path}", self.base)).body(body.into());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.bytes().await.unwrap())
    }

    pub async fn post_json(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> (u16, Bytes) {
        self.post(path, headers, body.to_string()).await
    }

    /// The trees the gateway recorded, by session id.
    pub fn sessions(&self) -> Vec<(String, Option<TreeId>)> {
        self.flame.gateway_sessions().unwrap().into_iter().map(|s| (s.id, s.tree)).collect()
    }

    /// A tree's frames, parents first, and each one's messages.
    pub fn tree(&self, tree: &TreeId) -> Vec<(Frame, Vec<Message>)> {
        let status = self.flame.status(Some(tree)).unwrap();
        status
            .frames
            .into_iter()
            .map(|entry| {
                let messages = self.flame.messages(&entry.frame.id).unwrap();
                (entry.frame, messages)
            })
            .collect()
    }

    /// Every file of the data directory whose bytes hold `needle`.
    pub fn files_holding(&self, needle: &str) -> Vec<std::path::PathBuf> {
        let mut found = Vec::new();
        let mut folders = vec![self.dir.path().to_path_buf()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if let Ok(bytes) = std::fs::read(&path)
                    && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
                {
                    found.push(path);
                }
            }
        }
        found
    }
}
