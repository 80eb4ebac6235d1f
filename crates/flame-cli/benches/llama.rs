//! A frame's requests against llama.cpp's own server (`../shared/peers/llama-server`): five
//! messages in one frame, each answered in one call, a frame planned under it before each but
//! the first, over each of the server's APIs. Prints,
//! by the server's own reports, the share of the prompt tokens it read from its cache after the
//! first call (Flame records its cached count with each reply) and the seconds it spent
//! processing prompts (its `prompt eval time`): for the first call, and per call after it.
//! Without the peers folder it says so and prints no figure.
//!
//! `FLAME_BENCH_FLAME` names another `flame` binary to measure (an older build, for the figures
//! before a change).

#![allow(clippy::print_stdout)]

#[path = "../tests/cli/llama_peer.rs"]
#[allow(dead_code)]
mod llama_peer;

use std::path::PathBuf;

use llama_peer::{Api, LlamaServer, Session, cached_share};

fn main() {
    let flame = std::env::var_os("FLAME_BENCH_FLAME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_flame")));
    for (api, name) in [(Api::Openai, "openai"), (Api::Anthropic, "anthropic")] {
        let Some(server) = LlamaServer::start_or_skip(&format!("llama.{name}")) else { return };
        let session = Session::new(&flame, &server, api, 32, 1);
        session.five_calls_while_planning().unwrap();
        let messages = session.messages();
        let replies: Vec<&serde_json::Value> =
            messages.iter().filter(|m| m["role"] == "assistant").collect();
        if let Some(share) = cached_share(&replies[1..]) {
            println!("BENCH llama.{name}_cached_share_after_first_call {:.1} %", share * 100.0);
        }
        let prefill = server.prefill_seconds();
        if let Some((first, rest)) = prefill.split_first().filter(|(_, rest)| !rest.is_empty()) {
            println!("BENCH llama.{name}_prefill_first_call {first:.2} s");
            let mean = rest.iter().sum::<f64>() / rest.len() as f64;
            println!("BENCH llama.{name}_prefill_per_call_after_first {mean:.2} s");
        }
    }
}
