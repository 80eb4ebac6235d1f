//! `flame mcp-servers` (the settings' MCP servers, and other agents' found and added when named)
//! and `flame chat` calling an MCP server's tool, which it stops, with every process the server
//! started, before it ends.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use flame_models::replay::{ReplayServer, Reply};
use serde_json::{Value, json};

use super::{Home, SENTINEL};

/// `flame ARGS` with the settings in `home/config`, other agents' files in `home/person`, and
/// `home/work` as the folder it runs in.
fn flame(home: &Home, args: &[&str], extra: &[(&str, &str)]) -> Output {
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_flame"));
    command
        .args(args)
        .current_dir(&work)
        .env("FLAME_HOME", home.path().join("data"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("HOME", home.path().join("person"))
        .env_remove("FLAME_LOG");
    for (name, value) in extra {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn import_shows_what_was_found_and_adds_only_what_is_named() {
    let home = Home::new();
    write(
        home.path().join("person/.codex/config.toml"),
        "[mcp_servers.docs]\ncommand = \"docs-server\"\nargs = [\"--stdio\"]\nenv = { DOCS_TOKEN = \"t0ken-value\" }\n",
    );
    write(
        home.path().join("work/.mcp.json"),
        r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}}}"#,
    );
    let settings = home.path().join("config/flame/settings.json");

    // Found and shown; nothing is added without a name.
    let shown = stdout(&flame(&home, &["mcp-servers", "import"], &[]));
    assert!(shown.contains("docs  stdio  docs-server --stdio"), "{shown}");
    assert!(
        shown.contains("fs  stdio  npx -y @modelcontextprotocol/server-filesystem ."),
        "{shown}"
    );
    assert!(shown.contains("nothing was added"), "{shown}");
    assert!(!settings.exists());

    let added = stdout(&flame(&home, &["mcp-servers", "import", "--from", "codex", "docs"], &[]));
    assert!(added.contains("added to Flame's settings (their calls ask first): docs"), "{added}");
    let listed: Value =
        serde_json::from_str(&stdout(&flame(&home, &["--json", "mcp-servers", "list"], &[])))
            .unwrap();
    assert_eq!(
        listed,
        json!([{"name": "docs", "approval": "ask",
                "transport": {"kind": "stdio", "command": "docs-server", "args": ["--stdio"],
                              "env": {"DOCS_TOKEN": "(set)"}}}]),
        "the value of the variable is not shown"
    );
    let saved = std::fs::read_to_string(&settings).unwrap();
    assert!(saved.contains("t0ken-value"), "kept in the private settings file");

    // A name that was not found is one clear line, and nothing changes.
    let out = flame(&home, &["mcp-servers", "import", "nope"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no MCP server named nope was found"), "{err}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), saved);
}

/// One streamed Anthropic turn calling `name` with `input`, or answering with text alone.
fn turn(text: &str, call: Option<(&str, Value)>) -> Reply {
    let mut events = vec![
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
        json!({"type":"content_block_stop","index":0}),
    ];
    if let Some((name, input)) = &call {
        events.push(json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":name,"input":{}}}));
        events.push(json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":input.to_string()}}));
        events.push(json!({"type":"content_block_stop","index":1}));
    }
    let stop = if call.is_some() { "tool_use" } else { "end_turn" };
    events.push(json!({"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":null},"usage":{"output_tokens":20}}));
    events.push(json!({"type":"message_stop"}));
    Reply::stream(
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect::<String>(),
    )
}

fn scripted_server() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../flame-mcp-client/tests/client/scripted-server.js")
        .display()
        .to_string()
}

fn node_runs(test: &str) -> bool {
    let runs = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !runs {
        let _ = writeln!(std::io::stderr().lock(), "{test}: skipped: no node on the PATH");
    }
    runs
}

/// Runs `flame chat` in a new tree with the scripted MCP server `well` (whose calls are
/// `approval`), the model answering with `replies`; returns the output and the ids of the
/// server's processes.
async fn chat_with_server(approval: &str, replies: Vec<Reply>) -> (Output, Vec<u32>) {
    let home = Home::new();
    let server = ReplayServer::start().await.unwrap();
    server.push(replies);
    let pids = home.path().join("pids");
    let settings = json!({
        "default_model": "claude-sonnet-4-5",
        "mcp_servers": [{"name": "well", "approval": approval,
            "transport": {"kind": "stdio", "command": "node", "args": [scripted_server(), "well"],
                          "env": {"FLAME_TEST_PIDS": pids.display().to_string()}}}]
    });
    write(home.path().join("config/flame/settings.json"), &settings.to_string());
    let base = server.base_url.clone();
    let out = tokio::task::spawn_blocking(move || {
        let tree: Value = serde_json::from_slice(
            &flame(&home, &["--json", "tree", "new", "Echo", "--criteria", "echoed"], &[]).stdout,
        )
        .unwrap();
        let root = tree["root"].as_str().unwrap().to_owned();
        let env = [("ANTHROPIC_API_KEY", SENTINEL), ("ANTHROPIC_BASE_URL", base.as_str())];
        let out = flame(&home, &["chat", &root, "Echo something"], &env);
        let pids: Vec<u32> = std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        (out, pids)
    })
    .await
    .unwrap();
    drop(server);
    out
}

fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')))
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_calls_an_allowed_mcp_tool_and_stops_its_server_before_it_ends() {
    if !node_runs("chat_calls_an_allowed_mcp_tool_and_stops_its_server_before_it_ends") {
        return;
    }
    let (out, pids) = chat_with_server(
        "allow",
        vec![
            turn("Echoing.", Some(("well__echo", json!({"message": "from chat"})))),
            turn("Done.", None),
        ],
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(r#"[well__echo done: echo: {"message":"from chat"}]"#), "{err}");
    assert_eq!(pids.len(), 2, "the server and the child it started: {err}");
    // Gone when the command has ended: nothing waits for them to go.
    assert!(pids.iter().all(|&pid| !running(pid)), "{pids:?} outlived flame chat");
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_refuses_an_mcp_call_that_would_ask_and_says_how_to_allow_it() {
    if !node_runs("chat_refuses_an_mcp_call_that_would_ask_and_says_how_to_allow_it") {
        return;
    }
    let (out, _) = chat_with_server(
        "ask",
        vec![turn("Echoing.", Some(("well__echo", json!({"message": "x"})))), turn("Fine.", None)],
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("[refused well__echo: it needs approval; allow the MCP server well's calls in Flame's settings to let them run]"),
        "{err}"
    );
}
