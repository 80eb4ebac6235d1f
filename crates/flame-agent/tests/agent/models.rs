//! A chat with a model found on this computer, needing no settings edit: against a scripted
//! llama.cpp server on 127.0.0.1. (The model list itself is tested in `flame-settings`.)

use std::sync::Arc;

use flame_agent::Agent;
use flame_api::{DataDir, Env, Flame, FlameConfig};
use flame_model::{Actor, Role};
use flame_models::replay::{ReplayServer, Reply};
use flame_models::{CancellationToken, RetryPolicy};
use flame_settings::{LocalModel, Settings};
use serde_json::json;

const OPENAI_KEY: &str = "sk-openai-SENTINEL-0c4d1e2f3a5b6978";

fn ok(body: serde_json::Value) -> Reply {
    Reply::json(200, body.to_string())
}

/// A llama.cpp server serving `smollm2` with 8192 tokens a request, as llama-server answers.
async fn llama_cpp() -> ReplayServer {
    let llama = ReplayServer::start().await.unwrap();
    llama.route("GET", "/props", ok(json!({"default_generation_settings": {"n_ctx": 8192}})));
    llama.route(
        "GET",
        "/v1/models",
        ok(json!({"object": "list", "data": [{"id": "smollm2", "owned_by": "llamacpp"}]})),
    );
    llama
}

/// Picking a model found on this computer is all a chat needs: it goes to the server's
/// OpenAI-compatible API by its own name, with the window the server gives (the reply capped at
/// a quarter of it), and the OpenAI key stays at home.
#[tokio::test]
async fn a_chat_with_a_local_model_needs_no_settings() {
    let llama = llama_cpp().await;
    let stream = [
        json!({"id": "c1", "model": "smollm2", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello from "}}]}),
        json!({"id": "c1", "model": "smollm2", "choices": [{"index": 0, "delta": {"content": "llama.cpp"}}]}),
        json!({"id": "c1", "model": "smollm2", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 900, "completion_tokens": 4}}),
    ];
    let body: String = stream.iter().map(|chunk| format!("data: {chunk}\n\n")).collect();
    llama.push([Reply::stream(format!("{body}data: [DONE]\n\n"))]);

    let dir = tempfile::tempdir().unwrap();
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame = Arc::new(
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 9)).unwrap(),
    );
    flame.create_tree(Actor::Person, "Try a local model", "It answers", None).unwrap();
    let env = crate::environment(&[("OPENAI_API_KEY", OPENAI_KEY)]);
    let agent = Agent::new(flame.clone(), Settings::default(), env, RetryPolicy::default());
    let model = LocalModel::reference(llama.address(), "smollm2");
    let outcome = agent
        .send(
            Actor::Person,
            None,
            "Say hello",
            Some(&model),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();

    let chat = llama.requests().into_iter().find(|r| r.path == "/v1/chat/completions").unwrap();
    assert_eq!(chat.header("authorization"), None, "the OpenAI key went to a local server");
    let sent = chat.json();
    assert_eq!(sent["model"], "smollm2");
    assert_eq!(sent["max_completion_tokens"], 2048, "a quarter of the server's 8192");
    let messages = flame.messages(&outcome.frame).unwrap();
    let reply = messages.iter().find(|m| m.role == Role::Assistant).unwrap();
    assert_eq!(reply.content, "Hello from llama.cpp");
    assert_eq!(reply.model.as_deref(), Some("smollm2"));
}
