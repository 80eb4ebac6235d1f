//! `flame models`: the models to pick and where each came from, against scripted servers on
//! 127.0.0.1 (a provider's `/v1/models`, an Ollama server), and the provider's list cached for
//! when the provider cannot be reached.

use std::path::Path;
use std::process::{Command, Output};

use flame_models::replay::{ReplayServer, Reply};
use serde_json::{Value, json};

use super::Home;

fn ok(body: Value) -> Reply {
    Reply::json(200, body.to_string())
}

/// `flame ARGS` with the settings folder `config` and no key in the environment.
fn flame(home: &Path, config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flame"))
        .args(args)
        .env("FLAME_HOME", home)
        .env("XDG_CONFIG_HOME", config)
        .env_remove("FLAME_LOG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn models_lists_configured_provider_and_local_models_and_works_offline() {
    let home = Home::new();
    let config = home.path().join("config");
    std::fs::create_dir_all(config.join("flame")).unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let servers = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (provider, ollama) = servers.block_on(async {
        let provider = ReplayServer::start().await.unwrap();
        provider.route(
            "GET",
            "/v1/models",
            ok(json!({"object": "list", "data": [
                {"id": "gpt-4o", "object": "model"},
                {"id": "gpt-5-mini", "object": "model"},
                {"id": "whisper-1", "object": "model"},
            ]})),
        );
        let ollama = ReplayServer::start().await.unwrap();
        ollama.route("GET", "/props", Reply::json(404, "{}"));
        ollama.route("GET", "/api/tags", ok(json!({"models": [{"name": "llama3.2:latest"}]})));
        ollama.route(
            "POST",
            "/api/show",
            ok(json!({"model_info": {"llama.context_length": 131072}, "capabilities": ["completion"]})),
        );
        (provider, ollama)
    });
    let settings = json!({
        "default_model": "gpt-4o",
        "openai": { "base_url": format!("{}/v1", provider.base_url), "api_key": "sk-listing" },
        "local_servers": [ollama.address(), closed.to_string()],
    });
    std::fs::write(config.join("flame/settings.json"), settings.to_string()).unwrap();

    let listed: Value =
        serde_json::from_str(&stdout(&flame(home.path(), &config, &["--json", "models"]))).unwrap();
    let local = format!("local:{}/llama3.2:latest", ollama.address());
    let ids: Vec<&str> =
        listed["models"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["gpt-4o", "gpt-5-mini", local.as_str()]);
    let models = listed["models"].as_array().unwrap();
    assert_eq!(models[0]["source"], json!({"kind": "configured", "provider": "openai"}));
    assert_eq!(models[1]["source"], json!({"kind": "provider", "provider": "openai"}));
    assert_eq!(models[2]["context_window"], 131_072);
    assert_eq!(listed["local_servers"][0]["kind"], "ollama");
    assert!(listed["local_servers"][1]["problem"].as_str().unwrap().contains("nothing answers"));

    let human = stdout(&flame(home.path(), &config, &["models"]));
    for line in [
        "gpt-4o".to_owned(),
        "settings (default), OpenAI".to_owned(),
        "OpenAI's list".to_owned(),
        format!("Ollama at {}", ollama.address()),
        format!("no model server answers at {closed}"),
        "Anthropic: no key".to_owned(),
    ] {
        assert!(human.contains(&line), "{line:?} missing from:\n{human}");
    }
    assert!(human.contains("131,072"), "{human}");
    assert_eq!(provider.requests().len(), 1, "the second listing used the cached list");
    assert!(config.join("flame/provider-models.json").is_file());

    // The provider goes away: its list comes from the cache, and says so.
    drop(servers);
    let offline = stdout(&flame(home.path(), &config, &["models", "--refresh"]));
    assert!(offline.contains("gpt-5-mini"), "{offline}");
    assert!(offline.contains("cached") && offline.contains("cannot reach OpenAI"), "{offline}");
}
