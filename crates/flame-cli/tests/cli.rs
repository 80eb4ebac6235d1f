//! The `flame` binary as people and scripts use it: its exact surface, its JSON, its exit codes,
//! and a clear one-line error for every bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

#[path = "cli/budget.rs"]
mod budget;
#[path = "cli/cost.rs"]
mod cost;
#[path = "cli/follow.rs"]
mod follow;
#[path = "cli/llama_peer.rs"]
mod llama_peer;
#[path = "cli/llama_server.rs"]
mod llama_server;
#[path = "cli/mcp_servers.rs"]
mod mcp_servers;
#[path = "cli/models.rs"]
mod models;
#[path = "cli/pop_frame.rs"]
mod pop_frame;
#[path = "cli/search.rs"]
mod search;
#[path = "cli/terminal.rs"]
mod terminal;
#[path = "cli/workspace.rs"]
mod workspace;

/// The key `flame chat` is given in its environment; it must reach only the provider.
const SENTINEL: &str = "sk-ant-cli-SENTINEL-0123456789";

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, args: &[&str]) -> Output {
        flame(self.path(), args)
    }

    /// Runs a command that must succeed and returns its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "flame {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all)).unwrap()
    }

    /// Runs a command that must fail; returns its one-line error.
    fn refused(&self, args: &[&str]) -> String {
        let before = self.run(&["--json", "status"]).stdout;
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(1), "flame {args:?} should fail with status 1");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
        assert_eq!(self.run(&["--json", "status"]).stdout, before, "a refusal changed the tree");
        err.trim_end().to_owned()
    }

    /// Creates the spec's tree and returns its frame ids by title.
    fn spec_tree(&self) -> std::collections::HashMap<String, String> {
        self.ok(&[
            "tree",
            "new",
            "Build the application",
            "--criteria",
            "Complete working app with auth and API",
        ]);
        let auth = self.json(&["push", "User Authentication", "--criteria", "JWT auth"])["id"]
            .as_str()
            .unwrap()
            .to_owned();
        self.ok(&["push", "Tokens", "--criteria", "refresh tokens"]);
        self.ok(&["pop", "--status", "completed", "--results", "Refresh tokens work"]);
        self.ok(&[
            "pop",
            &auth,
            "--status",
            "completed",
            "--results",
            "Implemented JWT-based auth",
            "--compacted",
            "JWT auth",
            "--artifact",
            "src/auth/*",
            "--decision",
            "JWT over sessions",
        ]);
        self.ok(&["push", "API Routes", "--criteria", "RESTful CRUD endpoints with pagination"]);
        self.ok(&["push", "CRUD Endpoints", "--criteria", "GET/POST/PUT/DELETE for resources"]);
        let status = self.json(&["status"]);
        let api = frame_by_title(&status, "API Routes");
        self.ok(&["plan", "Pagination", "--criteria", "Cursor-based pagination", "--parent", &api]);
        self.json(&["status"])["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (f["title"].as_str().unwrap().to_owned(), f["id"].as_str().unwrap().to_owned())
            })
            .collect()
    }
}

fn flame(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flame"))
        .args(args)
        .env("FLAME_HOME", home)
        .env_remove("FLAME_LOG")
        .output()
        .unwrap()
}

fn frame_by_title(status: &Value, title: &str) -> String {
    status["frames"].as_array().unwrap().iter().find(|f| f["title"] == title).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn tree_new_prints_the_tree_and_root_ids() {
    let home = Home::new();
    let out = home.ok(&["tree", "new", "Build", "--criteria", "It works"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("tree t") && lines[1].starts_with("root f"), "{out}");
    let status = home.json(&["status"]);
    assert_eq!(status["tree"]["id"], lines[0].trim_start_matches("tree "));
    assert_eq!(status["focus"], lines[1].trim_start_matches("root "));
}

#[test]
fn status_json_has_the_documented_shape() {
    let home = Home::new();
    let ids = home.spec_tree();
    let status = home.json(&["status"]);
    assert_eq!(status["focus"], ids["CRUD Endpoints"].as_str());
    let frames = status["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 6);
    for key in [
        "id",
        "parent",
        "position",
        "title",
        "success_criteria",
        "status",
        "results",
        "results_compacted",
        "artifacts",
        "decisions",
        "retry_of",
        "log_path",
    ] {
        assert!(frames.iter().all(|f| f.get(key).is_some()), "frames lack {key:?}");
    }
    let auth = frames.iter().find(|f| f["title"] == "User Authentication").unwrap();
    assert_eq!(auth["status"], "completed");
    assert_eq!(auth["results_compacted"], "JWT auth");
    assert_eq!(auth["artifacts"], serde_json::json!(["src/auth/*"]));
    assert_eq!(auth["decisions"], serde_json::json!(["JWT over sessions"]));
    let log = PathBuf::from(auth["log_path"].as_str().unwrap());
    assert!(log.starts_with(home.path()) && log.is_file(), "{}", log.display());
    let pagination = frames.iter().find(|f| f["title"] == "Pagination").unwrap();
    assert_eq!(
        (pagination["status"].as_str(), pagination["position"].as_u64()),
        (Some("planned"), Some(1))
    );
}

#[test]
fn status_draws_the_tree_with_the_focus() {
    let home = Home::new();
    let ids = home.spec_tree();
    let drawn = home.ok(&["status"]);
    let expected = format!(
        "Build the application (tree {tree})\n\
         {root} ● in_progress \"Build the application\"\n\
         ├─ {auth} ✓ completed \"User Authentication\"\n\
         │  └─ {tokens} ✓ completed \"Tokens\"\n\
         └─ {api} ● in_progress \"API Routes\"\n   \
            ├─ {crud} ● in_progress \"CRUD Endpoints\"  ← focus\n   \
            └─ {page} ○ planned \"Pagination\"\n",
        tree = home.json(&["status"])["tree"]["id"].as_str().unwrap(),
        root = ids["Build the application"],
        auth = ids["User Authentication"],
        tokens = ids["Tokens"],
        api = ids["API Routes"],
        crud = ids["CRUD Endpoints"],
        page = ids["Pagination"],
    );
    assert_eq!(drawn, expected);
}

#[test]
fn every_lifecycle_command_works_from_the_command_line() {
    let home = Home::new();
    let ids = home.spec_tree();
    let page = &ids["Pagination"];
    home.ok(&["edit", page, "--title", "Cursor pagination", "--criteria", "cursor + limit"]);
    home.ok(&["move", page, "--position", "0"]);
    assert_eq!(
        home.json(&["status"])["frames"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == page.as_str())
            .unwrap()["position"],
        0
    );
    home.ok(&["start", page]);
    let msg = home.json(&["append", page, "--role", "user", "Add a cursor"]);
    assert_eq!(msg["role"], "user");
    home.ok(&["pop", page, "--status", "failed", "--reason", "cursor design unclear"]);
    let retry = home.json(&["retry", page]);
    assert_eq!(retry["retry_of"], page.as_str());
    let retry_id = retry["id"].as_str().unwrap();
    home.ok(&["pop", retry_id, "--status", "blocked", "--reason", "waiting for API review"]);
    home.ok(&["resume", retry_id]);
    home.ok(&["focus", &ids["Build the application"]]);
    let draft = home.json(&["plan", "Draft", "--criteria", "d"])["id"].as_str().unwrap().to_owned();
    assert_eq!(home.json(&["delete", &draft])["deleted"], serde_json::json!([draft]));
    let invalidated = home.json(&["invalidate", &ids["API Routes"], "--reason", "scope cut"]);
    assert_eq!(invalidated["invalidated"].as_array().unwrap().len(), 3, "{invalidated}");
    let log = home.ok(&["log", page]);
    for expected in [
        "# Pagination",
        "**Title:** Cursor pagination",
        "edited by cli",
        "moved by cli",
        "Add a cursor",
        "popped as failed",
        "cursor design unclear",
    ] {
        assert!(log.contains(expected), "{expected:?} missing from\n{log}");
    }
    let trees = home.ok(&["tree", "list"]);
    assert!(trees.starts_with("* t") && trees.contains("Build the application"), "{trees}");
}

#[test]
fn refusals_exit_non_zero_with_one_line_naming_the_frame_status_and_what_is_allowed() {
    let home = Home::new();
    let ids = home.spec_tree();
    let auth = &ids["User Authentication"];
    let err = home.refused(&["pop", auth, "--status", "completed", "--results", "again"]);
    assert_eq!(
        err,
        format!(
            "flame: cannot pop {auth} \"User Authentication\": it is completed; pop is allowed only for in_progress frames (it is finished for good)"
        )
    );
    let api = &ids["API Routes"];
    let err = home.refused(&["pop", api, "--status", "completed", "--results", "x"]);
    assert!(err.contains(&ids["CRUD Endpoints"]) && err.contains("pop that first"), "{err}");
    let err = home.refused(&["start", auth]);
    assert!(
        err.contains("it is completed") && err.contains("start is allowed only for planned frames"),
        "{err}"
    );
    let err = home.refused(&["move", &ids["Pagination"], "--parent", &ids["Tokens"]]);
    assert!(err.contains(&ids["Tokens"]) && err.contains("completed"), "{err}");
}

#[test]
fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let home = Home::new();
    let ids = home.spec_tree();
    let err = home.refused(&["start", "fzzzzzzzzzz"]);
    assert_eq!(err, "flame: no frame fzzzzzzzzzz in this data directory");
    let err = home.refused(&["start", "not-an-id"]);
    assert!(err.contains("\"not-an-id\" is not a frame id"), "{err}");
    let err = home.refused(&["push", "  ", "--criteria", "c"]);
    assert!(err.contains("needs a title"), "{err}");
    let err = home.refused(&["pop", "--status", "done"]);
    assert!(err.contains("completed, failed or blocked"), "{err}");
    let err = home.refused(&["pop", "--status", "completed"]);
    assert!(err.contains("needs its results"), "{err}");
    let err = home.refused(&["append", &ids["Tokens"], "--role", "robot", "hi"]);
    assert!(err.contains("--role is user, assistant or note"), "{err}");
    let err = home.refused(&["status", "--tree", "tzzzzzzzzzz"]);
    assert_eq!(err, "flame: no tree tzzzzzzzzzz in this data directory");
}

#[test]
fn json_errors_are_code_and_message() {
    let home = Home::new();
    home.spec_tree();
    let out = home.run(&["--json", "start", "fzzzzzzzzzz"]);
    assert_eq!(out.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "not_found");
    assert_eq!(err.as_object().unwrap().len(), 2);
}

#[test]
fn usage_errors_exit_with_two() {
    let home = Home::new();
    assert_eq!(home.run(&["push", "no criteria"]).status.code(), Some(2));
    assert_eq!(home.run(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn home_overrides_flame_home() {
    let env_home = Home::new();
    let other = tempfile::tempdir().unwrap();
    let out = flame(
        env_home.path(),
        &["--home", other.path().to_str().unwrap(), "tree", "new", "T", "--criteria", "c"],
    );
    assert!(out.status.success());
    assert!(other.path().join("flame.db").is_file());
    assert!(!env_home.path().join("flame.db").exists());
}

#[test]
fn without_a_tree_the_error_says_how_to_make_one() {
    let home = Home::new();
    let out = home.run(&["status"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("flame tree new"));
}

#[test]
fn a_corrupt_database_is_reported_and_left_alone() {
    let home = Home::new();
    let garbage = vec![7u8; 4096];
    std::fs::write(home.path().join("flame.db"), &garbage).unwrap();
    let out = home.run(&["status"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not a Flame database") && err.contains("left the file as it was"),
        "{err}"
    );
    assert_eq!(std::fs::read(home.path().join("flame.db")).unwrap(), garbage);
}

#[test]
fn a_read_only_data_directory_is_reported_and_loses_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    home.spec_tree();
    let before = home.ok(&["--json", "status"]);
    let db = std::fs::read(home.path().join("flame.db")).unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(home.path().join("flame.db"), std::fs::Permissions::from_mode(0o444))
        .unwrap();

    // Root ignores permission bits, so as root the command runs as `nobody` instead.
    let as_root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    // The build may live where `nobody` cannot reach it, so it runs a copy.
    let copy = tempfile::tempdir().unwrap();
    let mut command = if as_root {
        let binary = copy.path().join("flame");
        std::fs::copy(env!("CARGO_BIN_EXE_flame"), &binary).unwrap();
        std::fs::set_permissions(copy.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(&binary);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_flame"))
    };
    command.args(["push", "Anything", "--criteria", "c"]).env("FLAME_HOME", home.path());
    command.env_remove("FLAME_LOG");
    // A test thread that forks while the copy is still open for writing makes exec fail with
    // "Text file busy" (ETXTBSY) for a moment; that is the harness, not Flame, so try again.
    let mut out = command.output().unwrap();
    for _ in 0..20 {
        if !String::from_utf8_lossy(&out.stderr).contains("Text file busy") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        out = command.output().unwrap();
    }

    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(home.path().join("flame.db"), std::fs::Permissions::from_mode(0o644))
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("flame: ") && err.contains(&home.path().display().to_string()),
        "{err}"
    );
    assert_eq!(std::fs::read(home.path().join("flame.db")).unwrap(), db);
    assert_eq!(home.ok(&["--json", "status"]), before);
}

#[test]
fn context_prints_what_the_model_receives_and_its_account() {
    let home = Home::new();
    let ids = home.spec_tree();
    let crud = &ids["CRUD Endpoints"];
    home.ok(&["append", crud, "--role", "user", "Start with GET /items"]);
    let text = home.ok(&["context", crud]);
    assert!(text.starts_with("You are working inside Flame"), "{text}");
    assert!(
        text.contains(&format!("<child id=\"{crud}\" status=\"in_progress\" current=\"true\">")),
        "{text}"
    );
    assert!(
        text.contains("<results>JWT auth</results>"),
        "the finished uncle reports its compacted results:\n{text}"
    );
    assert!(!text.contains("Refresh tokens work"), "nothing below an off-path frame:\n{text}");
    assert!(text.contains("--- user · ") && text.contains("Start with GET /items"), "{text}");
    let json = home.json(&["context", crud, "--budget", "400"]);
    assert_eq!(json["report"]["budget"], 400);
    assert_eq!(json["report"]["focus"], crud.as_str());
    let kinds: Vec<&str> = json["report"]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"preamble"));
    assert_eq!(kinds.last(), Some(&"history"));
    assert!(
        json["report"]["sections"].as_array().unwrap().iter().any(|s| s["state"] != "full"),
        "400 tokens forces something to give way"
    );
    assert_eq!(
        home.run(&["context", crud, "--format", "yaml"]).status.code(),
        Some(2),
        "a usage error"
    );
}

/// Runs `flame chat` against a replay server with `settings.json` naming the model.
async fn chat_against(
    reply: flame_models::replay::Reply,
    args: &[&str],
) -> (Output, Home, flame_models::replay::ReplayServer) {
    let home = Home::new();
    let crud = home.spec_tree()["CRUD Endpoints"].clone();
    let (out, server) = chat_in(&home, &crud, [reply], args).await;
    (out, home, server)
}

/// Runs `flame chat FRAME ARGS…` on `home` against a replay server answering with `replies`, the
/// settings naming its model, a key in the environment.
async fn chat_in(
    home: &Home,
    frame: &str,
    replies: impl IntoIterator<Item = flame_models::replay::Reply>,
    args: &[&str],
) -> (Output, flame_models::replay::ReplayServer) {
    let server = flame_models::replay::ReplayServer::start().await.unwrap();
    server.push(replies);
    let config = home.path().join("config");
    std::fs::create_dir_all(config.join("flame")).unwrap();
    std::fs::write(config.join("flame/settings.json"), r#"{"default_model": "claude-sonnet-4-5"}"#)
        .unwrap();
    let mut all = vec!["chat".to_owned(), frame.to_owned()];
    all.extend(args.iter().map(|a| a.to_string()));
    let (path, base) = (home.path().to_path_buf(), server.base_url.clone());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_flame"))
            .args(&all)
            .env("FLAME_HOME", &path)
            .env("XDG_CONFIG_HOME", path.join("config"))
            .env("ANTHROPIC_API_KEY", SENTINEL)
            .env("ANTHROPIC_BASE_URL", base)
            .env_remove("FLAME_LOG")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    (out, server)
}

fn wire(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../flame-models/tests/models/wire").join(name),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_streams_the_reply_and_stores_both_sides() {
    let (out, home, server) = chat_against(
        flame_models::replay::Reply::stream(wire("anthropic-text.sse")),
        &["Start with GET /items"],
    )
    .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello!\n");
    let sent = server.requests()[0].json();
    assert_eq!(sent["model"], "claude-sonnet-4-5");
    // The frame's opening is the conversation's first message, after a system prompt that is
    // the same for every frame of the tree.
    assert!(
        sent["messages"][0]["content"][0]["text"].as_str().unwrap().contains("current=\"true\"")
    );
    assert!(!sent["system"][0]["text"].as_str().unwrap().contains("<stack-context id="));
    let log = home.ok(&["log", home.json(&["status"])["focus"].as_str().unwrap()]);
    assert!(log.contains("Start with GET /items") && log.contains("Hello!"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_chat_exits_non_zero_with_the_reason() {
    let rejected = flame_models::replay::Reply::json(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    );
    let (out, _home, _) = chat_against(rejected, &["Hello"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("flame: Anthropic rejected the API key from ANTHROPIC_API_KEY"), "{err}");
    assert!(!err.contains("SENTINEL"));
}

/// `flame chat … | head -c 100`: the reader goes away while the reply streams. The command stops
/// the model and ends with status 0 and no panic; what streamed is kept.
#[tokio::test(flavor = "multi_thread")]
async fn a_chat_whose_reader_goes_away_stops_quietly() {
    let delta = |text: &str| {
        format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{text}\"}}}}\n\n"
        )
    };
    let text = wire("anthropic-text.sse");
    let (head, tail) = text.split_once("event: content_block_delta").unwrap();
    // Far more than a pipe's buffer, so the command is still writing when the reader leaves.
    let body = format!(
        "{head}{}event: content_block_delta{tail}",
        delta(&"0123456789 ".repeat(90)).repeat(400)
    );
    let home = Home::new();
    let ids = home.spec_tree();
    let server = flame_models::replay::ReplayServer::start().await.unwrap();
    server.push([flame_models::replay::Reply::stream(body)]);
    let config = home.path().join("config");
    std::fs::create_dir_all(config.join("flame")).unwrap();
    std::fs::write(config.join("flame/settings.json"), r#"{"default_model": "claude-sonnet-4-5"}"#)
        .unwrap();
    let (path, base) = (home.path().to_path_buf(), server.base_url.clone());
    let crud = ids["CRUD Endpoints"].clone();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flame"))
            .args(["chat", &crud, "Write a lot"])
            .env("FLAME_HOME", &path)
            .env("XDG_CONFIG_HOME", path.join("config"))
            .env("ANTHROPIC_API_KEY", SENTINEL)
            .env("ANTHROPIC_BASE_URL", base)
            .env_remove("FLAME_LOG")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 100];
        std::io::Read::read_exact(&mut child.stdout.take().unwrap(), &mut first).unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let log = home.ok(&["log", home.json(&["status"])["focus"].as_str().unwrap()]);
    assert!(log.contains("0123456789"), "what streamed is kept: {log}");
}

fn shared_session(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/claude-code")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn import_replay_and_export_a_shared_session() {
    let home = Home::new();
    let session = shared_session("4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let summary = home.json(&["import", &session]);
    // The root, 7 segments (one after a `git commit`), the subagent and the compaction.
    assert_eq!(summary["frames"], 10);
    assert_eq!(summary["problems"].as_array().unwrap().len(), 0);
    let status = home.ok(&["status"]);
    assert!(status.contains("✓ completed \"Explore transcript rendering codebase\""), "{status}");

    let replay = home.json(&["replay", &session]);
    for key in ["linear_tokens", "flame_tokens", "calls", "peak_linear", "peak_flame"] {
        assert!(replay[key].as_u64().is_some_and(|n| n > 0), "{key}: {replay}");
    }
    assert!(replay["flame_tokens"].as_u64() < replay["linear_tokens"].as_u64());
    let table = home.ok(&["replay", &session]);
    assert!(table.contains("total over 151 calls"), "{table}");
    assert!(table.contains("first-touch recall: 100% "), "{table}");
    assert!(table.contains("token estimate: Flame counts "), "{table}");
    assert!(replay["first_touch_recall"].as_f64().is_some_and(|r| r > 0.0), "{replay}");
    assert!(replay["recorded_growth"].as_u64().is_some_and(|n| n > 0), "{replay}");

    let tree = summary["tree"]["id"].as_str().unwrap();
    let markdown = home.ok(&["export", tree, "--format", "markdown"]);
    assert!(markdown.starts_with("# Work on bead spotter-dov"), "{markdown}");
    let export: Value = serde_json::from_str(&home.ok(&["export", tree])).unwrap();
    assert_eq!(export["format"], "flame-export");

    // `--scope` counts from the frame named: it alone, or the whole tree it is in.
    let frames = |args: &[&str]| -> Vec<Value> {
        let export: Value = serde_json::from_str(&home.ok(args)).unwrap();
        export["frames"].as_array().unwrap().clone()
    };
    let child = export["frames"][1]["id"].as_str().unwrap();
    let alone = frames(&["export", child, "--scope", "frame"]);
    assert_eq!(alone.len(), 1);
    assert_eq!(alone[0]["id"], child);
    assert_eq!(alone[0]["parent"], Value::Null);
    let whole = frames(&["export", child, "--scope", "tree"]);
    assert_eq!(whole.len(), 10);
    assert_eq!(whole[0]["id"], export["frames"][0]["id"]);
}

#[test]
fn importing_what_is_not_a_session_is_one_clear_line() {
    let home = Home::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let err = home.refused(&["import", file.to_str().unwrap()]);
    assert!(err.contains("cannot tell the format") && err.contains("--format"), "{err}");
    let err = home.refused(&["import", "--format", "flame", file.to_str().unwrap()]);
    assert!(err.contains("is not a Flame export"), "{err}");
}

#[test]
fn a_damaged_database_is_refused_plainly_and_left_as_it_was() {
    let home = Home::new();
    let made = home.json(&["tree", "new", "Build", "--criteria", "It works"]);
    let root = made["root"].as_str().unwrap();
    let text = "a message long enough to fill pages of the database. ".repeat(20);
    for _ in 0..30 {
        home.ok(&["append", root, "--role", "user", &text]);
    }
    let database = home.path().join("flame.db");
    let mut bytes = std::fs::read(&database).unwrap();
    assert!(!home.path().join("flame.db-wal").exists(), "the log was checkpointed on close");
    let page = 4096;
    let middle = bytes.len() / page / 2;
    bytes[middle * page..(middle + 1) * page].fill(0);
    std::fs::write(&database, &bytes).unwrap();

    let out = home.run(&["push", "Tokens", "--criteria", "Tokens work"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is damaged; SQLite found:") && err.contains("left the file as it was"),
        "{err}"
    );
    assert_eq!(std::fs::read(&database).unwrap(), bytes, "the damaged file was written");
}
