//! Local model servers found at their addresses, against scripted servers on 127.0.0.1 that
//! answer as Ollama, vLLM and LM Studio document and as the shared `llama-server` answered when
//! it was tried, and hostile ones: a body that never ends, ten thousand models, a server that
//! never answers, garbage where JSON should be. And the providers' own lists of models
//! (`GET /v1/models`), paged and keyed.

use std::time::Duration;

use flame_models::discover::{
    Discovery, FoundModel, MAX_LOCAL_SERVERS, MAX_MODELS_PER_SERVER, ProbeError, ServerKind,
};
use flame_models::replay::{ReplayServer, Reply};
use flame_models::{ApiKey, ModelError, Provider, ProviderKind};
use serde_json::json;

use crate::{SENTINEL, client};

fn ok(body: serde_json::Value) -> Reply {
    Reply::json(200, body.to_string())
}

fn not_found() -> Reply {
    Reply::json(404, r#"{"error":"not found"}"#)
}

/// A server that answers 404 to anything not routed, as real servers do.
async fn server() -> ReplayServer {
    let server = ReplayServer::start().await.unwrap();
    for path in ["/props", "/api/tags", "/v1/models", "/api/v0/models"] {
        server.route("GET", path, not_found());
    }
    server.route("POST", "/api/show", not_found());
    server
}

/// An address where nothing listens.
fn closed_address() -> String {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = free.local_addr().unwrap().to_string();
    drop(free);
    address
}

fn model(name: &str, context_window: Option<u64>) -> FoundModel {
    FoundModel { name: name.to_owned(), context_window }
}

/// Ollama: the models of `/api/tags`, each one's window from `/api/show` (the `num_ctx` it runs
/// with, else its trained length), embedding models left out.
#[tokio::test]
async fn ollama_is_found_with_each_models_window() {
    let ollama = server().await;
    ollama.route(
        "GET",
        "/api/tags",
        ok(json!({"models": [
            {"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 2019393189, "details": {"family": "llama"}},
            {"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b"},
            {"name": "nomic-embed-text:latest", "model": "nomic-embed-text:latest"},
        ]})),
    );
    ollama.route_when(
        "POST",
        "/api/show",
        "llama3.2",
        ok(json!({
            "parameters": "stop \"<|eot_id|>\"",
            "model_info": {"general.architecture": "llama", "llama.context_length": 131072, "llama.embedding_length": 3072},
            "capabilities": ["completion", "tools"],
        })),
    );
    ollama.route_when(
        "POST",
        "/api/show",
        "qwen2.5-coder",
        ok(json!({
            "parameters": "num_ctx                        16384",
            "model_info": {"qwen2.context_length": 32768},
            "capabilities": ["completion", "tools", "insert"],
        })),
    );
    ollama.route_when(
        "POST",
        "/api/show",
        "nomic-embed-text",
        ok(json!({"model_info": {"nomic-bert.context_length": 2048}, "capabilities": ["embedding"]})),
    );
    let found = Discovery::default().probe(ollama.address()).await.unwrap();
    assert_eq!(found.kind, ServerKind::Ollama);
    assert_eq!(found.address, ollama.address());
    assert_eq!(
        found.models,
        [model("llama3.2:latest", Some(131_072)), model("qwen2.5-coder:7b", Some(16_384))]
    );
    assert_eq!(found.base_url(), format!("{}/v1", ollama.base_url));
    let shown: Vec<String> = ollama
        .requests()
        .iter()
        .filter(|r| r.path == "/api/show")
        .map(|r| r.json()["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(shown.len(), 3, "{shown:?}");

    // Asked about one model, Ollama is asked to show that one alone.
    let before = ollama.requests().len();
    let window =
        Discovery::default().context_window(ollama.address(), "qwen2.5-coder:7b").await.unwrap();
    assert_eq!(window, Some(16_384));
    let shown_now = ollama.requests()[before..].iter().filter(|r| r.path == "/api/show").count();
    assert_eq!(shown_now, 1);
}

/// llama.cpp's server as `llama-server -c 8192 --alias smollm2` answered: `/props` gives the
/// window a request gets, `/v1/models` the model (beside an Ollama-style `models` list, which is
/// why llama.cpp is asked about first).
#[tokio::test]
async fn llama_cpp_is_found_with_its_n_ctx() {
    let llama = server().await;
    llama.route(
        "GET",
        "/props",
        ok(json!({"default_generation_settings": {"n_ctx": 8192, "params": {"seed": 42}}, "total_slots": 1, "model_alias": "smollm2"})),
    );
    llama.route(
        "GET",
        "/v1/models",
        ok(json!({
            "models": [{"name": "smollm2", "model": "smollm2"}],
            "object": "list",
            "data": [{"id": "smollm2", "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx": 8192, "n_ctx_train": 8192}}],
        })),
    );
    llama.route("GET", "/api/tags", ok(json!({"models": [{"name": "smollm2"}]})));
    let found = Discovery::default().probe(llama.address()).await.unwrap();
    assert_eq!(
        (found.kind, found.models),
        (ServerKind::LlamaCpp, vec![model("smollm2", Some(8192))])
    );
}

#[tokio::test]
async fn vllm_and_lm_studio_are_told_apart_by_what_they_list() {
    let vllm = server().await;
    vllm.route(
        "GET",
        "/v1/models",
        ok(json!({"object": "list", "data": [{"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "owned_by": "vllm", "root": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 32768}]})),
    );
    let found = Discovery::default().probe(vllm.address()).await.unwrap();
    assert_eq!(found.kind, ServerKind::Vllm);
    assert_eq!(found.models, [model("Qwen/Qwen2.5-7B-Instruct", Some(32_768))]);

    let studio = server().await;
    studio.route(
        "GET",
        "/v1/models",
        ok(json!({"object": "list", "data": [
            {"id": "qwen2.5-7b-instruct", "object": "model", "owned_by": "organization_owner"},
            {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "owned_by": "organization_owner"},
            {"id": "granite-3.1-8b-instruct", "object": "model", "owned_by": "organization_owner"},
        ]})),
    );
    studio.route(
        "GET",
        "/api/v0/models",
        ok(json!({"object": "list", "data": [
            {"id": "qwen2.5-7b-instruct", "type": "llm", "state": "loaded", "max_context_length": 32768, "loaded_context_length": 4096},
            {"id": "text-embedding-nomic-embed-text-v1.5", "type": "embeddings", "max_context_length": 2048},
            {"id": "granite-3.1-8b-instruct", "type": "llm", "state": "not-loaded", "max_context_length": 131072},
        ]})),
    );
    let found = Discovery::default().probe(studio.address()).await.unwrap();
    assert_eq!(found.kind, ServerKind::LmStudio);
    assert_eq!(
        found.models,
        [model("qwen2.5-7b-instruct", Some(4096)), model("granite-3.1-8b-instruct", Some(131_072))]
    );

    let other = server().await;
    other.route("GET", "/v1/models", ok(json!({"data": [{"id": "mystery-7b"}]})));
    let found = Discovery::default().probe(other.address()).await.unwrap();
    assert_eq!(
        (found.kind, found.models),
        (ServerKind::OpenaiCompatible, vec![model("mystery-7b", None)])
    );
}

/// Every address is looked at at once, and each says what was there, in the order given.
#[tokio::test]
async fn every_address_says_what_it_found() {
    let ollama = server().await;
    ollama.route("GET", "/api/tags", ok(json!({"models": [{"name": "llama3.2:latest"}]})));
    let web = server().await; // a web server that is no model server: 404 everywhere
    let closed = closed_address();
    let addresses = vec![
        closed.clone(),
        ollama.address().to_owned(),
        web.address().to_owned(),
        "http://127.0.0.1:1".to_owned(),
    ];
    let found = Discovery::default().find(&addresses).await;
    let addresses_back: Vec<&str> = found.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(addresses_back, addresses);
    assert_eq!(found[0].1, Err(ProbeError::Nothing { address: closed }));
    assert_eq!(found[1].1.as_ref().unwrap().models, [model("llama3.2:latest", None)]);
    let Err(ProbeError::NotAModelServer { detail, .. }) = &found[2].1 else {
        panic!("{:?}", found[2].1)
    };
    assert!(detail.contains("/v1/models answered HTTP 404"), "{detail}");
    assert!(matches!(found[3].1, Err(ProbeError::BadAddress { .. })), "{:?}", found[3].1);

    let many: Vec<String> = (0..MAX_LOCAL_SERVERS + 3).map(|_| closed_address()).collect();
    assert_eq!(Discovery::default().find(&many).await.len(), MAX_LOCAL_SERVERS);
}

/// A server whose answer never ends is read up to the limit and no further.
#[tokio::test]
async fn a_body_that_never_ends_is_read_to_the_limit_only() {
    let endless = server().await;
    endless.route(
        "GET",
        "/props",
        Reply::Endless { piece: "{\"default_generation_settings\":".into() },
    );
    endless.route("GET", "/api/tags", Reply::Endless { piece: "[[[[[[[[".into() });
    endless.route("GET", "/v1/models", Reply::Endless { piece: "x".repeat(4096) });
    let err = Discovery::new(Duration::from_secs(30)).probe(endless.address()).await.unwrap_err();
    let ProbeError::NotAModelServer { detail, .. } = &err else { panic!("{err:?}") };
    assert!(detail.contains("more than 2097152 bytes"), "{detail}");
}

#[tokio::test]
async fn ten_thousand_models_are_cut_to_the_limit_and_counted() {
    let crowded = server().await;
    let data: Vec<_> = (0..10_000).map(|n| json!({"id": format!("m{n}")})).collect();
    crowded.route("GET", "/v1/models", ok(json!({"object": "list", "data": data})));
    let found = Discovery::default().probe(crowded.address()).await.unwrap();
    assert_eq!(found.models.len(), MAX_MODELS_PER_SERVER);
    assert_eq!(found.models_left_out, (10_000 - MAX_MODELS_PER_SERVER) as u64);
    assert_eq!(found.models[0].name, "m0");
}

/// A server that takes the connection and never answers costs the deadline, not more: the probe
/// ends, and says so.
#[tokio::test]
async fn a_server_that_never_answers_is_given_up_on() {
    let silent = ReplayServer::start().await.unwrap();
    for path in ["/props", "/api/tags", "/v1/models", "/api/v0/models"] {
        silent.route("GET", path, Reply::Silent { hold: Duration::from_secs(600) });
    }
    let discovery = Discovery::new(Duration::from_millis(300));
    let err = discovery.probe(silent.address()).await.unwrap_err();
    assert!(matches!(err, ProbeError::TimedOut { .. }), "{err:?}");
    assert!(err.to_string().ends_with("did not answer within 300 ms"), "{err}");

    // Ollama whose `/api/show` hangs: the models are listed, without windows.
    let ollama = server().await;
    ollama.route("GET", "/api/tags", ok(json!({"models": [{"name": "a"}, {"name": "b"}]})));
    ollama.route("POST", "/api/show", Reply::Silent { hold: Duration::from_secs(600) });
    let found = discovery.probe(ollama.address()).await.unwrap();
    assert_eq!(found.models, [model("a", None), model("b", None)]);
}

#[tokio::test]
async fn garbage_where_json_should_be_is_not_a_model_server() {
    let garbage = ReplayServer::start().await.unwrap();
    garbage.route("GET", "/props", Reply::json(200, "{\"default_generation_settings\": {"));
    garbage.route("GET", "/api/tags", Reply::json(200, "\u{0}\u{1}not json"));
    garbage.route("GET", "/v1/models", Reply::json(200, "<html>It works!</html>"));
    let err = Discovery::default().probe(garbage.address()).await.unwrap_err();
    let ProbeError::NotAModelServer { detail, .. } = &err else { panic!("{err:?}") };
    assert!(detail.contains("/v1/models answered what is not JSON"), "{detail}");

    // JSON of the wrong shape: numbers for names, a window past any model's, a list that is
    // not one.
    let odd = server().await;
    odd.route("GET", "/props", ok(json!({"default_generation_settings": {"n_ctx": 1e300}})));
    odd.route(
        "GET",
        "/v1/models",
        ok(json!({"data": [{"id": 7}, {"id": "real", "meta": {"n_ctx": -5}}]})),
    );
    let found = Discovery::default().probe(odd.address()).await.unwrap();
    assert_eq!((found.models, found.models_left_out), (vec![model("real", None)], 1));
    let wrong = server().await;
    wrong.route("GET", "/v1/models", ok(json!({"data": "all of them"})));
    let err = Discovery::default().probe(wrong.address()).await.unwrap_err();
    assert!(err.to_string().contains("holds no data list"), "{err}");
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
        key_source: "the settings file".into(),
    }
}

/// Anthropic's list, read page after page with the key and the API version.
#[tokio::test]
async fn anthropic_lists_its_models_page_by_page() {
    let anthropic = ReplayServer::start().await.unwrap();
    anthropic.push([
        ok(json!({
            "data": [
                {"type": "model", "id": "claude-opus-4-6", "display_name": "Claude Opus 4.6", "created_at": "2026-02-04T00:00:00Z", "max_input_tokens": 1000000},
                {"type": "model", "id": "claude-sonnet-4-5-20250929", "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z"},
            ],
            "has_more": true, "first_id": "claude-opus-4-6", "last_id": "claude-sonnet-4-5-20250929",
        })),
        ok(json!({
            "data": [{"type": "model", "id": "claude-3-5-haiku-20241022", "display_name": "Claude Haiku 3.5"}],
            "has_more": false, "first_id": "claude-3-5-haiku-20241022", "last_id": "claude-3-5-haiku-20241022",
        })),
    ]);
    let listed =
        client().list_models(&provider(ProviderKind::Anthropic, &anthropic)).await.unwrap();
    let names: Vec<&str> = listed.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        ["claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-3-5-haiku-20241022"]
    );
    assert_eq!(listed.models[0].context_window, Some(1_000_000));
    let sent = anthropic.requests();
    assert_eq!(sent[0].path, "/v1/models?limit=1000");
    assert_eq!(sent[1].path, "/v1/models?limit=1000&after_id=claude-sonnet-4-5-20250929");
    assert_eq!(sent[0].header("x-api-key"), Some(SENTINEL));
    assert_eq!(sent[0].header("anthropic-version"), Some("2023-06-01"));
}

#[tokio::test]
async fn openai_lists_its_models_with_the_key_and_a_refusal_does_not_show_it() {
    let openai = ReplayServer::start().await.unwrap();
    openai.push([ok(json!({"object": "list", "data": [
        {"id": "gpt-4o", "object": "model", "created": 1715367049, "owned_by": "system"},
        {"id": "text-embedding-3-small", "object": "model", "owned_by": "system"},
    ]}))]);
    let listed = client().list_models(&provider(ProviderKind::Openai, &openai)).await.unwrap();
    assert_eq!(listed.models, [model("gpt-4o", None), model("text-embedding-3-small", None)]);
    let sent = &openai.requests()[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("GET", "/v1/models"));
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {SENTINEL}").as_str()));

    openai.push([Reply::json(
        401,
        format!(r#"{{"error":{{"message":"Incorrect API key provided: {SENTINEL}"}}}}"#),
    )]);
    let err = client().list_models(&provider(ProviderKind::Openai, &openai)).await.unwrap_err();
    assert!(matches!(err, ModelError::Unauthorized { .. }), "{err:?}");
    openai.push([Reply::json(500, format!("the key {SENTINEL} is bad"))]);
    let err = client().list_models(&provider(ProviderKind::Openai, &openai)).await.unwrap_err();
    assert!(!format!("{err} {err:?}").contains(SENTINEL), "{err:?}");
    assert_eq!(openai.requests().len(), 3, "a list is not retried");

    openai.push([Reply::Endless { piece: "{\"data\":[".into() }]);
    let err = client().list_models(&provider(ProviderKind::Openai, &openai)).await.unwrap_err();
    assert!(err.to_string().contains("longer than 2097152 bytes"), "{err}");

    let mut unkeyed = provider(ProviderKind::Anthropic, &openai);
    unkeyed.key = None;
    let err = client().list_models(&unkeyed).await.unwrap_err();
    assert!(matches!(err, ModelError::NoKey { .. }), "{err:?}");
}
