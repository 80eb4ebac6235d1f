//! The models a person can pick (configured, listed by a provider, found on this computer) and a
//! chat with a model found on this computer, needing no settings edit: against scripted servers
//! on 127.0.0.1 (a provider's `/v1/models`, a llama.cpp server).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use flame_agent::model_list::{
    ListOptions, LocalModel, ModelList, ModelSource, cache_path, list_models,
};
use flame_agent::settings::ModelSettings;
use flame_agent::{Agent, Settings};
use flame_api::{DataDir, Env, Flame};
use flame_model::{Actor, Role};
use flame_models::discover::{Discovery, ServerKind};
use flame_models::replay::{ReplayServer, Reply};
use flame_models::{CancellationToken, Client, ProviderKind, RetryPolicy};
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

/// An OpenAI-style provider listing three models, one of which cannot chat.
async fn openai_provider() -> ReplayServer {
    let openai = ReplayServer::start().await.unwrap();
    openai.route(
        "GET",
        "/v1/models",
        ok(json!({"object": "list", "data": [
            {"id": "gpt-4o", "object": "model", "owned_by": "system"},
            {"id": "gpt-5-mini", "object": "model", "owned_by": "system"},
            {"id": "text-embedding-3-large", "object": "model", "owned_by": "system"},
        ]})),
    );
    openai
}

fn options(refresh: bool) -> ListOptions {
    ListOptions {
        refresh,
        discovery: Discovery::new(Duration::from_secs(5)),
        client: Client::new(RetryPolicy::default()),
    }
}

fn settings(openai: &str, local: &[&str]) -> Settings {
    let mut settings = Settings {
        default_model: Some("claude-sonnet-4-5".into()),
        models: vec![ModelSettings {
            name: "gpt-4o".into(),
            provider: ProviderKind::Openai,
            context_window: 100_000,
            max_output_tokens: 4096,
        }],
        local_servers: Some(local.iter().map(|a| (*a).to_owned()).collect()),
        ..Settings::default()
    };
    settings.openai.base_url = Some(format!("{openai}/v1"));
    settings.openai.api_key = Some(OPENAI_KEY.into());
    settings
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn ids(list: &ModelList) -> Vec<&str> {
    list.models.iter().map(|m| m.id.as_str()).collect()
}

async fn list(settings: &Settings, cache: &Path, now_ms: i64, refresh: bool) -> ModelList {
    list_models(settings, cache, &no_env, now_ms, &options(refresh)).await
}

#[tokio::test]
async fn configured_provider_listed_and_local_models_are_listed_with_where_they_came_from() {
    let openai = openai_provider().await;
    let llama = llama_cpp().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let closed = closed.to_string();
    let dir = tempfile::tempdir().unwrap();
    let cache = cache_path(&dir.path().join("settings.json"));
    let settings = settings(&openai.base_url, &[llama.address(), &closed]);
    let list = list(&settings, &cache, 1_000, false).await;

    let local = LocalModel::reference(llama.address(), "smollm2");
    assert_eq!(ids(&list), ["claude-sonnet-4-5", "gpt-4o", "gpt-5-mini", local.as_str()]);
    let model = |id: &str| list.models.iter().find(|m| m.id == id).unwrap();
    assert_eq!(
        model("claude-sonnet-4-5").source,
        ModelSource::Configured { provider: ProviderKind::Anthropic }
    );
    assert_eq!(model("gpt-4o").context_window, Some(100_000), "the settings' window");
    assert_eq!(
        model("gpt-5-mini").source,
        ModelSource::Provider { provider: ProviderKind::Openai }
    );
    assert_eq!(model("gpt-5-mini").context_window, Some(400_000), "the window Flame knows");
    assert_eq!(
        model(&local).source,
        ModelSource::Local { address: llama.address().to_owned(), server: ServerKind::LlamaCpp }
    );
    assert_eq!(
        (model(&local).name.as_str(), model(&local).context_window),
        ("smollm2", Some(8192))
    );

    let [anthropic, listed] = &list.providers[..] else { panic!("{:?}", list.providers) };
    assert!(anthropic.problem.as_deref().unwrap().contains("ANTHROPIC_API_KEY"), "{anthropic:?}");
    assert_eq!(
        (listed.fetched_at_ms, listed.from_cache, &listed.problem),
        (Some(1_000), false, &None)
    );
    assert_eq!(
        openai.requests()[0].header("authorization"),
        Some(format!("Bearer {OPENAI_KEY}").as_str())
    );
    assert_eq!(list.local_servers[0].kind, Some(ServerKind::LlamaCpp));
    assert_eq!(list.local_servers[1].kind, None);
    assert!(list.local_servers[1].problem.as_deref().unwrap().contains("nothing answers"));

    // The list was cached, with its time and without the key.
    let cached = std::fs::read_to_string(&cache).unwrap();
    assert!(cached.contains("gpt-5-mini") && cached.contains("1000"), "{cached}");
    assert!(!cached.contains("SENTINEL"), "{cached}");
}

/// The provider's list is fetched once an hour at most; offline, the cached list stands in and
/// says so; a local model named by the settings that its server no longer serves stays listed
/// as configured.
#[test]
fn the_providers_list_is_cached_and_used_offline() {
    let dir = tempfile::tempdir().unwrap();
    let cache = cache_path(&dir.path().join("settings.json"));
    let runtime = || tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let online = runtime();
    let (settings, requests) = online.block_on(async {
        let openai = openai_provider().await;
        let settings = settings(&openai.base_url, &[]);
        let first = list(&settings, &cache, 1_000, false).await;
        assert!(ids(&first).contains(&"gpt-5-mini"));
        // Within the hour the cached list is used and the provider is not asked.
        let again = list(&settings, &cache, 1_000 + 59 * 60 * 1000, false).await;
        assert_eq!(ids(&again), ids(&first));
        assert!(again.providers[1].from_cache);
        (settings, openai.requests().len())
    });
    assert_eq!(requests, 1);
    // The server goes away with its runtime: nothing listens at its address any more.
    drop(online);

    let offline = runtime();
    let shown = offline.block_on(list(&settings, &cache, 10_000_000, true));
    assert!(ids(&shown).contains(&"gpt-5-mini"), "{:?}", ids(&shown));
    let openai = &shown.providers[1];
    assert!(openai.from_cache);
    assert_eq!(openai.fetched_at_ms, Some(1_000));
    let problem = openai.problem.as_deref().unwrap();
    assert!(
        problem.contains("cannot reach OpenAI") && problem.contains("fetched before"),
        "{problem}"
    );

    // A cache for another address is not that provider's list.
    let mut moved = settings.clone();
    moved.openai.base_url = Some("http://127.0.0.1:1/v1".into());
    let shown = offline.block_on(list(&moved, &cache, 10_000_000, true));
    assert!(!ids(&shown).contains(&"gpt-5-mini"));
    assert!(!shown.providers[1].from_cache);

    // A broken cache file is no cache.
    std::fs::write(&cache, "{ broken").unwrap();
    let shown = offline.block_on(list(&settings, &cache, 10_000_000, true));
    assert!(!ids(&shown).contains(&"gpt-5-mini"));
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
    let flame = Arc::new(Flame::open_with(home, Env::fixed(1_795_307_601_000, 9)).unwrap());
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
