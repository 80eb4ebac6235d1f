//! The real Codex and OpenCode command lines through the gateway, in both modes, against a
//! scripted upstream in their wire format (strict in context mode): each session's tree appears
//! and grows while they work, observe mode sends upstream exactly the bytes the client sent, and
//! a spent budget refuses the next call with Flame's message, which the command line prints.
//!
//! They run the versions `make agents` installs under `target/agents/` (or `$FLAME_CODEX`,
//! `$FLAME_OPENCODE`); without them each test says it is skipped and passes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use flame_gateway::Mode;
use flame_model::budget::FrameBudget;
use flame_model::{Actor, TreeId};
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use crate::Harness;
use crate::strict::{check_chat, check_responses};
use crate::upstream::{Answer, Received, Upstream, chat_reply, responses_reply};

/// An agent's command line, if it is installed.
fn agent(name: &str, variable: &str) -> Option<PathBuf> {
    let installed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/agents/node_modules/.bin")
        .join(name);
    let path = std::env::var_os(variable).map(PathBuf::from).unwrap_or(installed);
    if path.exists() {
        Some(path)
    } else {
        eprintln!(
            "skipped: the {name} command line is not installed (make agents, or set {variable}), so the test that runs it through the gateway is skipped"
        );
        None
    }
}

/// A proxy between the client and the gateway that keeps what the client sent, byte for byte.
struct Recorder {
    base: String,
    sent: Arc<Mutex<Vec<Bytes>>>,
}

impl Recorder {
    async fn start(gateway: String) -> Recorder {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let sent: Arc<Mutex<Vec<Bytes>>> = Arc::default();
        let kept = sent.clone();
        tokio::spawn(async move {
            let client = crate::http_client();
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (kept, client, gateway) = (kept.clone(), client.clone(), gateway.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: hyper::Request<hyper::body::Incoming>| {
                            let (kept, client, gateway) =
                                (kept.clone(), client.clone(), gateway.clone());
                            async move {
                                let (parts, body) = request.into_parts();
                                let body = body.collect().await.unwrap().to_bytes();
                                kept.lock().unwrap().push(body.clone());
                                let mut forward =
                                    client.request(parts.method, format!("{gateway}{}", parts.uri));
                                for (name, value) in &parts.headers {
                                    if name != "host" && name != "content-length" {
                                        forward = forward.header(name, value);
                                    }
                                }
                                let answer = forward.body(body).send().await.unwrap();
                                let status = answer.status();
                                let head = answer.headers().clone();
                                let bytes = answer.bytes().await.unwrap_or_default();
                                let mut response =
                                    hyper::Response::new(http_body_util::Full::new(bytes));
                                *response.status_mut() = status;
                                for (name, value) in &head {
                                    if name != "content-length" && name != "transfer-encoding" {
                                        response.headers_mut().append(name, value.clone());
                                    }
                                }
                                Ok::<_, std::convert::Infallible>(response)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Recorder { base, sent }
    }
}

/// The strict check of a wire, in context mode: a request it refuses is answered 400.
fn strictly(check: fn(&Value) -> Result<(), String>, got: &Received, answer: Answer) -> Answer {
    match check(&got.json()) {
        Ok(()) => answer,
        Err(why) => Answer::json(
            400,
            json!({"error": {"message": format!("strict upstream: {why}"), "type": "invalid_request_error"}}),
        ),
    }
}

/// The newest item that is not a note Flame appended (a note tells the model of frames that
/// changed; a scripted model reads past it, as a real one reads on).
fn newest(items: &[Value]) -> Value {
    items
        .iter()
        .rev()
        .find(|i| !(i["role"] == "user" && i["content"].to_string().contains("[note] ")))
        .cloned()
        .unwrap_or(Value::Null)
}

fn user_texts(items: &[Value]) -> String {
    items
        .iter()
        .filter(|i| i["role"] == "user")
        .map(|i| i["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Codex's script (as `tests/fixtures/codex/make.py`'s): list the folder, start a subagent that
/// counts the lines of notes.txt, wait for it, answer; asked for the first line, read it. It
/// reads only the newest items, so it answers Flame's context as it answers the whole history.
fn codex_script(got: &Received, n: usize, root: &Mutex<Option<String>>) -> Answer {
    let body = got.json();
    let meta: Value = got
        .headers
        .get("x-codex-turn-metadata")
        .and_then(|v| serde_json::from_str(v.to_str().ok()?).ok())
        .unwrap_or(Value::Null);
    let thread = meta["thread_id"].as_str().unwrap_or_default().to_owned();
    let root = root.lock().unwrap().get_or_insert(thread.clone()).clone();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let call = |name: &str, arguments: Value| {
        json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"), "name": name,
               "arguments": arguments.to_string()})
    };
    let say = |text: &str| {
        json!({"type": "message", "role": "assistant", "id": format!("msg_{n}"),
               "content": [{"type": "output_text", "text": text}]})
    };
    let last = newest(&input);
    let answered = if last["type"] == "function_call_output" {
        let id = last["call_id"].as_str().unwrap_or_default();
        input
            .iter()
            .find(|i| i["type"] == "function_call" && i["call_id"] == id)
            .and_then(|i| i["name"].as_str())
            .unwrap_or_default()
            .to_owned()
    } else {
        String::new()
    };
    let items = if thread != root {
        if answered.is_empty() {
            vec![call("exec_command", json!({"cmd": "wc -l notes.txt"}))]
        } else {
            vec![say("notes.txt has 3 lines.")]
        }
    } else if user_texts(&input).contains("first line") {
        if answered.is_empty() {
            vec![call("exec_command", json!({"cmd": "head -1 notes.txt"}))]
        } else {
            vec![say("The first line of notes.txt is: one.")]
        }
    } else {
        match answered.as_str() {
            "" => vec![
                json!({"type": "reasoning", "id": format!("rs_{n}"), "encrypted_content": format!("enc-{n}"),
                       "summary": [{"type": "summary_text", "text": "Look at the folder first."}]}),
                say("I will list the folder."),
                call("exec_command", json!({"cmd": "ls"})),
            ],
            "exec_command" => {
                let mut spawn = call(
                    "spawn_agent",
                    json!({"message": "Count the lines of notes.txt and report the number."}),
                );
                spawn["namespace"] = json!("multi_agent_v1");
                vec![spawn]
            }
            "spawn_agent" => {
                let output: Value = serde_json::from_str(last["output"].as_str().unwrap_or("{}"))
                    .unwrap_or(Value::Null);
                let agent = output["agent_id"].clone();
                let mut wait = call("wait_agent", json!({"targets": [agent], "timeout_ms": 60000}));
                wait["namespace"] = json!("multi_agent_v1");
                vec![wait]
            }
            _ => vec![say("The folder holds notes.txt, which has 3 lines.")],
        }
    };
    responses_reply(items, 3_000 + 100 * n as u64, 1_024 * (n as u64 % 3))
}

/// OpenCode's script (as `tests/fixtures/opencode-cli/make.py`'s), reading only the newest
/// messages and the headers (a subagent names its parent session).
fn opencode_script(got: &Received, n: usize) -> Answer {
    let body = got.json();
    if body["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return chat_reply("Notes and their lines", &[], 500, 0);
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = newest(&messages);
    let tool_last = last["role"] == "tool";
    let id = format!("call_{n}");
    let bash = |command: &str, description: &str| {
        (id.as_str(), "bash", json!({"command": command, "description": description}))
    };
    let usage = (2_000 + 50 * n as u64, 512 * (n as u64 % 3));
    if got.headers.contains_key("x-parent-session-id") {
        return if tool_last {
            chat_reply("notes.txt has 3 lines.", &[], usage.0, usage.1)
        } else {
            chat_reply("", &[bash("wc -l notes.txt", "Count the lines")], usage.0, usage.1)
        };
    }
    if user_texts(&messages).contains("first line") {
        return if tool_last {
            chat_reply("The first line of notes.txt is: one.", &[], usage.0, usage.1)
        } else {
            chat_reply("", &[bash("head -1 notes.txt", "Read the first line")], usage.0, usage.1)
        };
    }
    if !tool_last {
        return chat_reply(
            "I will list the folder.",
            &[bash("ls", "List the folder")],
            usage.0,
            usage.1,
        );
    }
    if last["content"].to_string().contains("<task") {
        return chat_reply("The folder holds notes.txt, which has 3 lines.", &[], usage.0, usage.1);
    }
    let task = (
        id.as_str(),
        "task",
        json!({"description": "Count the lines",
        "prompt": "Count the lines of notes.txt and report the number.", "subagent_type": "general"}),
    );
    chat_reply("", &[task], usage.0, usage.1)
}

/// The last requests the upstream received, shortly, for a failure's message.
fn sent_lately(gateway: &Harness) -> String {
    let received = gateway.upstream.received();
    received
        .iter()
        .rev()
        .take(6)
        .map(|r| {
            let body = r.json();
            let messages = body["messages"].as_array().cloned().unwrap_or_default();
            let tail: Vec<String> = messages
                .iter()
                .rev()
                .take(3)
                .map(|m| m.to_string().chars().take(160).collect())
                .collect();
            format!("{} messages; last: {}", messages.len(), tail.join(" | "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A temporary folder with notes.txt, as the scripts expect.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    dir
}

/// How long one run of an agent's command line may take before it is stopped: each makes a
/// handful of scripted calls, seconds each.
const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs a command line to its end (or stops it past [`RUN_LIMIT`]): its status and what it
/// printed (both streams).
async fn run(command: Command) -> (bool, String) {
    let mut limited = Command::new("timeout");
    limited
        .arg(RUN_LIMIT.as_secs().to_string())
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        limited.current_dir(dir);
    }
    limited.env_clear();
    for (name, value) in command.get_envs() {
        if let Some(value) = value {
            limited.env(name, value);
        }
    }
    limited.stdin(std::process::Stdio::null());
    let output = tokio::task::spawn_blocking(move || limited.output().unwrap()).await.unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// The one session's tree and its frames' titles.
fn session_tree(gateway: &Harness) -> (TreeId, Vec<String>) {
    let sessions = gateway.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let tree = sessions[0].1.clone().expect("the session has a tree");
    let titles = gateway.tree(&tree).into_iter().map(|(f, _)| f.title).collect();
    (tree, titles)
}

/// Spends the session's budget: one tool call, which its calls made already.
fn spend_the_budget(gateway: &Harness, tree: &TreeId) {
    let root = gateway.flame.tree(tree).unwrap().root;
    let budget = FrameBudget { tool_calls: Some(1), ..FrameBudget::default() };
    gateway.flame.set_budget(Actor::Person, &root, Some(budget)).unwrap();
}

async fn codex_through_the_gateway(mode: Mode) {
    let Some(codex) = agent("codex", "FLAME_CODEX") else { return };
    let root: Arc<Mutex<Option<String>>> = Arc::default();
    let script_root = root.clone();
    let upstream = Upstream::start(move |got, n| {
        let answer = codex_script(got, n, &script_root);
        if mode == Mode::Context { strictly(check_responses, got, answer) } else { answer }
    })
    .await;
    let gateway = Harness::start(mode, upstream).await;
    let recorder = Recorder::start(gateway.base.clone()).await;
    let home = tempfile::tempdir().unwrap();
    let folder = project();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"gpt-5-mini\"\nmodel_provider = \"flame\"\n[model_providers.flame]\nname = \"flame\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n",
            recorder.base
        ),
    )
    .unwrap();
    let codex_run = |args: &[&str]| {
        let mut command = Command::new(&codex);
        command
            .args(["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"])
            .args(args)
            .current_dir(folder.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("CODEX_HOME", home.path())
            .stdin(std::process::Stdio::null());
        command
    };
    let (ok, printed) = run(codex_run(&["Look at this folder and tell me about notes.txt"])).await;
    assert!(ok, "{printed}");
    assert!(printed.contains("The folder holds notes.txt, which has 3 lines."), "{printed}");
    let (tree, titles) = session_tree(&gateway);
    assert!(
        titles.iter().any(|t| t == "Count the lines of notes.txt and report the number."),
        "{titles:?}"
    );
    let (ok, printed) =
        run(codex_run(&["resume", "--last", "What is the first line of notes.txt?"])).await;
    assert!(ok, "{printed}");
    assert!(printed.contains("The first line of notes.txt is: one."), "{printed}");
    let (_, titles) = session_tree(&gateway);
    assert!(
        titles.iter().any(|t| t == "What is the first line of notes.txt?"),
        "the tree grew: {titles:?}"
    );
    let received = gateway.upstream.received();
    if mode == Mode::Observe {
        let sent = recorder.sent.lock().unwrap().clone();
        let forwarded: Vec<Bytes> = received.iter().map(|r| r.body.clone()).collect();
        assert_eq!(forwarded, sent, "observe mode sends the client's bytes");
    } else {
        let contexts = received
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains("stack-context"))
            .count();
        assert!(contexts >= received.len() - 1, "context mode sent Flame's context");
    }
    spend_the_budget(&gateway, &tree);
    let before = gateway.upstream.received().len();
    let (_, printed) = run(codex_run(&["resume", "--last", "And the second line?"])).await;
    assert!(
        printed.contains("Flame refused this request"),
        "Codex prints Flame's message: {printed}"
    );
    assert_eq!(gateway.upstream.received().len(), before, "nothing was sent");
}

async fn opencode_through_the_gateway(mode: Mode) {
    let Some(opencode) = agent("opencode", "FLAME_OPENCODE") else { return };
    let upstream = Upstream::start(move |got, n| {
        let answer = opencode_script(got, n);
        if mode == Mode::Context { strictly(check_chat, got, answer) } else { answer }
    })
    .await;
    let gateway = Harness::start(mode, upstream).await;
    let recorder = Recorder::start(gateway.base.clone()).await;
    let work = tempfile::tempdir().unwrap();
    let folder = project();
    let config = work.path().join("opencode.json");
    std::fs::write(
        &config,
        json!({"$schema": "https://opencode.ai/config.json", "model": "scripted/gpt-4.1-mini",
               "small_model": "scripted/gpt-4.1-mini", "autoupdate": false, "share": "disabled",
               "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                   "options": {"baseURL": format!("{}/v1", recorder.base), "apiKey": "none"},
                   "models": {"gpt-4.1-mini": {"name": "gpt-4.1-mini"}}}}})
        .to_string(),
    )
    .unwrap();
    let opencode_run = |args: &[&str]| {
        let mut command = Command::new(&opencode);
        command.arg("run").args(args).current_dir(folder.path()).env_clear();
        command.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        for name in ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"]
        {
            let dir = work.path().join(name.to_lowercase());
            std::fs::create_dir_all(&dir).unwrap();
            command.env(name, dir);
        }
        command
            .env("OPENCODE_CONFIG", &config)
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .env("PWD", folder.path())
            .stdin(std::process::Stdio::null());
        command
    };
    let (ok, printed) = run(opencode_run(&[
        "Look at this folder and count the lines of notes.txt with a subagent",
    ]))
    .await;
    assert!(ok, "{printed}\n{}", sent_lately(&gateway));
    assert!(printed.contains("which has 3 lines"), "{printed}");
    let (tree, titles) = session_tree(&gateway);
    assert!(
        titles.iter().any(|t| t == "Count the lines"),
        "the subagent is a child frame: {titles:?}"
    );
    let (ok, printed) =
        run(opencode_run(&["--continue", "What is the first line of notes.txt?"])).await;
    assert!(ok, "{printed}");
    assert!(printed.contains("The first line of notes.txt is: one."), "{printed}");
    let (_, titles) = session_tree(&gateway);
    assert!(titles.len() >= 4, "the tree grew: {titles:?}");
    let received = gateway.upstream.received();
    if mode == Mode::Observe {
        let sent = recorder.sent.lock().unwrap().clone();
        let forwarded: Vec<Bytes> = received.iter().map(|r| r.body.clone()).collect();
        assert_eq!(forwarded, sent, "observe mode sends the client's bytes");
    }
    spend_the_budget(&gateway, &tree);
    let before = gateway.upstream.received().len();
    let (_, printed) = run(opencode_run(&["--continue", "And the second line?"])).await;
    assert!(
        printed.contains("Flame refused this request"),
        "OpenCode prints Flame's message: {printed}"
    );
    let sent_since: Vec<Received> = gateway.upstream.received().split_off(before);
    assert!(
        sent_since.iter().all(|r| !r.json()["tools"].is_array()),
        "no call of the session's work was sent, only side calls: {}",
        sent_since.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_through_the_gateway_in_observe_mode() {
    codex_through_the_gateway(Mode::Observe).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_through_the_gateway_in_context_mode() {
    codex_through_the_gateway(Mode::Context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_through_the_gateway_in_observe_mode() {
    opencode_through_the_gateway(Mode::Observe).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_through_the_gateway_in_context_mode() {
    opencode_through_the_gateway(Mode::Context).await;
}
