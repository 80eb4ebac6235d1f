//! A tree's workspace from the command line: set when the tree is made or later, shown by
//! `status`, refused when it is not a folder; and `flame chat`, which has no one to ask, refusing
//! the calls that would ask unless `--approve` lets their kind run, and running commands in the
//! sandbox unless they ask to leave it.

use serde_json::json;

use super::{Home, chat_in};

#[test]
fn a_tree_gets_a_workspace_shows_it_and_refuses_what_is_not_a_folder() {
    let home = Home::new();
    let folder = tempfile::tempdir().unwrap();
    let real = folder.path().canonicalize().unwrap();
    let made = home.json(&[
        "tree",
        "new",
        "Fix the site",
        "--criteria",
        "It builds",
        "--workspace",
        folder.path().to_str().unwrap(),
    ]);
    let tree = made["tree"].as_str().unwrap().to_owned();
    let status = home.json(&["status"]);
    assert_eq!(status["tree"]["workspace"], real.to_str().unwrap());
    assert!(home.ok(&["status"]).contains(&format!("workspace {}", real.display())));

    let missing = folder.path().join("not-there");
    let err = home.refused(&["tree", "workspace", &tree, missing.to_str().unwrap()]);
    assert!(err.contains("not-there") && err.contains("choose an existing folder"), "{err}");
    let file = folder.path().join("a.txt");
    std::fs::write(&file, "x").unwrap();
    let err = home.refused(&["tree", "workspace", &tree, file.to_str().unwrap()]);
    assert!(err.contains("is a file, not a folder"), "{err}");

    let cleared = home.json(&["tree", "workspace", &tree, "--none"]);
    assert_eq!(cleared["workspace"], serde_json::Value::Null);
    assert!(!home.ok(&["status"]).contains("workspace"));
    let err = home.run(&["tree", "workspace", &tree]);
    assert_eq!(err.status.code(), Some(2), "a folder or --none is needed");
}

/// One streamed Anthropic message calling `edit_file` on `greet.py`, then one that just answers.
fn edit_then_answer() -> [flame_models::replay::Reply; 2] {
    let arguments = json!({"path": "greet.py", "old_string": "helo", "new_string": "hello"});
    call_then_answer("edit_file", &arguments)
}

/// One streamed Anthropic message calling tool `name` with `arguments`, then one that just
/// answers.
fn call_then_answer(name: &str, arguments: &serde_json::Value) -> [flame_models::replay::Reply; 2] {
    let events = [
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":name,"input":{}}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":arguments.to_string()}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}),
        json!({"type":"message_stop"}),
    ];
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let answer = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../flame-models/tests/models/wire/anthropic-text.sse"),
    )
    .unwrap();
    [flame_models::replay::Reply::stream(body), flame_models::replay::Reply::stream(answer)]
}

/// Runs `flame chat ROOT "Fix the typo" EXTRA…` in a tree whose workspace holds `greet.py`;
/// returns the command's stderr, the file afterwards and the requests the model received.
async fn chat_in_workspace(extra: &[&str]) -> (String, String, Vec<serde_json::Value>) {
    let home = Home::new();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("greet.py"), "print('helo')\n").unwrap();
    let made = home.json(&[
        "tree",
        "new",
        "Fix the greeting",
        "--criteria",
        "It says hello",
        "--workspace",
        folder.path().to_str().unwrap(),
    ]);
    let root = made["root"].as_str().unwrap();
    let mut args = vec!["Fix the typo"];
    args.extend_from_slice(extra);
    let (out, server) = chat_in(&home, root, edit_then_answer(), &args).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let file = std::fs::read_to_string(folder.path().join("greet.py")).unwrap();
    (stderr, file, server.requests().iter().map(|r| r.json()).collect())
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_refuses_a_change_without_approve_and_makes_it_with_approve_change() {
    let (stderr, file, requests) = chat_in_workspace(&[]).await;
    assert!(
        stderr.contains("refused edit_file") && stderr.contains("--approve change"),
        "{stderr}"
    );
    assert_eq!(file, "print('helo')\n");
    let result = requests[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(result["content"][0]["is_error"], true, "{result}");
    assert!(result.to_string().contains("--approve change"), "{result}");

    let (stderr, file, _) = chat_in_workspace(&["--approve", "read,change"]).await;
    assert!(!stderr.contains("refused"), "{stderr}");
    assert_eq!(file, "print('hello')\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_cannot_read_the_key_from_the_flame_process_that_runs_it() {
    let home = Home::new();
    let folder = tempfile::tempdir().unwrap();
    let made = home.json(&[
        "tree",
        "new",
        "Look around",
        "--criteria",
        "Done",
        "--workspace",
        folder.path().to_str().unwrap(),
    ]);
    let root = made["root"].as_str().unwrap();
    // The environment `flame` itself started with, as the kernel shows it to any process of the
    // same account, and what its memory-backed variables hold now: outside the sandbox, where
    // `flame` is the command's parent (inside, no process of Flame's is there to read).
    let command = "tr '\\0' '\\n' < /proc/$PPID/environ; echo read-the-parent";
    let arguments =
        json!({ "command": command, "leave_sandbox": "all", "reason": "read the parent" });
    let replies = call_then_answer("run_command", &arguments);
    let (out, server) = chat_in(&home, root, replies, &["Look", "--approve", "run"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = server.requests();
    // The key was read, and reached its provider...
    assert_eq!(requests[0].header("x-api-key"), Some(super::SENTINEL));
    // ...but the command read flame's environment without it.
    let result = requests[1].json()["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(result.contains("read-the-parent") && result.contains("FLAME_HOME="), "{result}");
    assert!(!result.contains(super::SENTINEL), "the key reached the command: {result}");
    assert!(!result.contains("ANTHROPIC_API_KEY"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_flame_chat_runs_is_sandboxed_and_writes_nothing_outside_the_workspace() {
    let home = Home::new();
    // Beside the build, which is not under /tmp unless the clone is.
    let outer = tempfile::Builder::new().tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let folder = outer.path().join("ws");
    std::fs::create_dir(&folder).unwrap();
    let made = home.json(&[
        "tree",
        "new",
        "Look around",
        "--criteria",
        "Done",
        "--workspace",
        folder.to_str().unwrap(),
    ]);
    let root = made["root"].as_str().unwrap();
    let command = "echo x > ../beside.txt; echo made > made.txt; echo finished";
    let replies = call_then_answer("run_command", &json!({ "command": command }));
    let (out, server) = chat_in(&home, root, replies, &["Look", "--approve", "run"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = server.requests();
    let result = requests[1].json()["messages"].as_array().unwrap().last().unwrap().to_string();
    // Beside the workspace is read-only in the sandbox, unless the build is under /tmp (a clone
    // there): the sandbox's /tmp is a private one, where the write lands and is dropped.
    let private_tmp = folder.starts_with("/tmp");
    assert!(result.contains("finished"), "{result}");
    assert!(private_tmp || result.contains("Read-only file system"), "{result}");
    assert!(!outer.path().join("beside.txt").exists(), "written outside the workspace");
    assert!(folder.join("made.txt").exists());
}

#[test]
fn the_settings_folder_and_a_folder_holding_it_are_refused_as_workspaces() {
    let home = Home::new();
    let config = tempfile::tempdir().unwrap();
    let settings = config.path().join("flame");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(settings.join("settings.json"), r#"{"default_model": "claude-sonnet-4-5"}"#)
        .unwrap();
    for folder in [&settings, &config.path().to_path_buf()] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_flame"))
            .args(["tree", "new", "Look", "--criteria", "Done", "--workspace"])
            .arg(folder)
            .env("FLAME_HOME", home.path())
            .env("XDG_CONFIG_HOME", config.path())
            .env_remove("FLAME_LOG")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{} was taken: {err}", folder.display());
        assert!(err.contains("Flame's own folder"), "{err}");
    }
}

/// The person's own instructions beside the settings and the workspace's `AGENTS.md` start
/// `flame chat`'s request, in that order, and `flame context` names them.
#[tokio::test(flavor = "multi_thread")]
async fn chat_and_context_start_with_the_persons_and_the_workspaces_instructions() {
    let home = Home::new();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("AGENTS.md"), "ROOT-RULES: run the tests.\n").unwrap();
    let personal = home.path().join("config/flame/AGENTS.md");
    std::fs::create_dir_all(personal.parent().unwrap()).unwrap();
    std::fs::write(&personal, "PERSONAL-RULES: answer briefly.\n").unwrap();
    let made = home.json(&[
        "tree",
        "new",
        "Look around",
        "--criteria",
        "Done",
        "--workspace",
        folder.path().to_str().unwrap(),
    ]);
    let root = made["root"].as_str().unwrap();
    let answer = flame_models::replay::Reply::stream(super::wire("anthropic-text.sse"));
    let (out, server) = chat_in(&home, root, [answer], &["Hello"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sent = server.requests()[0].json();
    let opening = sent["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    let at = |marker: &str| opening.find(marker).unwrap_or_else(|| panic!("{marker}: {opening}"));
    assert!(at("PERSONAL-RULES") < at("ROOT-RULES") && at("ROOT-RULES") < at("<stack-context id="));

    let context = std::process::Command::new(env!("CARGO_BIN_EXE_flame"))
        .args(["context", root])
        .env("FLAME_HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env_remove("FLAME_LOG")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&context.stdout);
    assert!(
        text.contains(&format!(
            "# project instructions (read when the opening was made): {}, AGENTS.md\n",
            personal.display()
        )),
        "{text}"
    );
}
