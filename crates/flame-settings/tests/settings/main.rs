//! The models a person can pick (configured, listed by a provider, found on this computer),
//! against scripted servers on 127.0.0.1 (a provider's `/v1/models`, a llama.cpp server).

use std::path::Path;
use std::time::Duration;

use flame_models::discover::{Discovery, ServerKind};
use flame_models::replay::{ReplayServer, Reply};
use flame_models::{Client, ProviderKind, RetryPolicy};
use flame_settings::model_list::{ListOptions, ModelList, ModelSource, cache_path, list_models};
use flame_settings::{LocalModel, ModelSettings, Settings};
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

#[test]
fn commands_can_be_set_to_run_at_once_in_the_sandbox_and_an_unknown_level_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("settings.json");
    std::fs::write(&path, r#"{"approval": {"run": "auto_in_sandbox"}}"#).unwrap();
    let settings = Settings::without_keys(Some(&path)).unwrap();
    assert_eq!(settings.approval.run, flame_api::RunApproval::AutoInSandbox);
    // The other kinds keep their defaults, and the file written says the level by its name.
    assert_eq!(settings.approval.change, flame_api::Approval::Ask);
    let written = serde_json::to_value(&settings).unwrap();
    assert_eq!(written["approval"]["run"], "auto_in_sandbox");

    std::fs::write(&path, r#"{"approval": {"run": "sandboxed"}}"#).unwrap();
    let error = Settings::without_keys(Some(&path)).unwrap_err();
    assert!(error.message.contains("sandboxed"), "{}", error.message);
}
