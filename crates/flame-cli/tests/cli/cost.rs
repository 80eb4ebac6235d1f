//! `flame status` with each frame's cost: a Claude Code session imported, its replies' usage
//! priced by model at the built-in prices, then at prices the settings file sets.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{Home, shared_session};

/// `flame --json ARGS` on `home` with the settings (and their prices) of `config`.
fn json_with_settings(home: &Home, config: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_flame"))
        .arg("--json")
        .args(args)
        .env("FLAME_HOME", home.path())
        .env("XDG_CONFIG_HOME", config)
        .env_remove("FLAME_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn root_of(status: &Value) -> &Value {
    status["frames"].as_array().unwrap().iter().find(|f| f["parent"].is_null()).unwrap()
}

#[test]
fn status_carries_each_frames_cost_at_the_settings_prices() {
    let home = Home::new();
    let config = tempfile::tempdir().unwrap();
    // short.jsonl is one Claude Opus 4.6 reply: 3 tokens in, 13 out, 11,515 read from the cache
    // and 13,835 written to it for an hour.
    json_with_settings(&home, config.path(), &["import", &shared_session("short.jsonl")]);
    let status = json_with_settings(&home, config.path(), &["status"]);
    let frames = status["frames"].as_array().unwrap();
    assert!(frames.iter().all(|f| f["cost"]["own"].is_object()), "every frame has a cost");
    // At Opus 4.6's $5 in, $25 out, $0.50 cache reads and $10 cache writes for an hour per
    // million: 15 + 325 + 5,757.5 + 138,350 micro-dollars.
    let root = root_of(&status);
    assert_eq!(root["cost"]["subtree"]["micro_usd"], 144_448, "{root}");
    assert_eq!(root["cost"]["subtree"]["completeness"], "complete");
    assert_eq!(root["cost"]["subtree"]["usage"]["cache_write_long_tokens"], 13_835);
    assert_eq!(root["cost"]["subtree"]["usage"]["cache_write_tokens"], 0);
    let priced = frames.iter().find(|f| f["cost"]["own"]["micro_usd"] == 144_448).unwrap();
    assert_eq!(priced["cost"]["models"][0]["model"], "claude-opus-4-6");
    assert_eq!(priced["cost"]["models"][0]["as_of"], "2026-11");
    let drawn = home.ok(&["status"]);
    assert!(drawn.contains("$0.14"), "the tree as drawn shows the cost: {drawn}");

    // The settings' price for the model replaces the built-in one: $1 per million of each kind
    // (a price without an hour's writes prices them as its cache writes).
    let folder = config.path().join("flame");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("settings.json"),
        r#"{"prices": [{"model": "claude-opus-4-6", "input": 1000000, "output": 1000000,
            "cache_read": 1000000, "cache_write": 1000000, "as_of": "2027-01"}]}"#,
    )
    .unwrap();
    let status = json_with_settings(&home, config.path(), &["status"]);
    assert_eq!(root_of(&status)["cost"]["subtree"]["micro_usd"], 3 + 13 + 11_515 + 13_835);
    // A settings file that cannot be read leaves the built-in prices in use.
    std::fs::write(folder.join("settings.json"), "{ not json").unwrap();
    let status = json_with_settings(&home, config.path(), &["status"]);
    assert_eq!(root_of(&status)["cost"]["subtree"]["micro_usd"], 144_448);
}
