//! `flame chat` against a real model server: llama.cpp's own `llama-server` with a tiny model,
//! started by `../shared/peers/llama-server/start.sh`, spoken to over both wire formats (OpenAI
//! Chat Completions and Anthropic Messages). Nobody on the team wrote that server, so these tests
//! catch what the scripted servers cannot: a request a strict server refuses (the tool schemas
//! turned into grammars), or a stream or tool call shaped differently from our fixtures.
//!
//! They run whenever the peers folder is present (it is in CI) and otherwise say, on a line of
//! their own that is never swallowed by the test harness, that they were skipped.

use std::io::Write as _;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};

use super::Home;
use crate::llama_peer::{Api, CONTEXT_WINDOW, LlamaServer, MODEL, Session, cached_share};

/// The longest reply a plain message may get: enough to see text stream and be stored, short
/// enough to take seconds on two cores, where a 135M model that starts to ramble would otherwise
/// write until the limit.
const REPLY_TOKENS: u32 = 32;

/// The longest reply when a tool call is invited: the call itself (`<tool_call>{"name": …,
/// "arguments": {…}}</tool_call>`) takes the model 40 to 70 tokens.
const TOOL_REPLY_TOKENS: u32 = 128;

/// The server runs one request at a time on the machine's cores; two tests each running a model
/// would only slow each other down, so they take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn flame_binary() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_BIN_EXE_flame"))
}

/// One `flame chat` run against the server and what it left in the store.
struct Chat {
    out: Output,
    /// Every message of the tree, in every frame (the agent may have moved), in order.
    messages: Vec<Value>,
    seconds: f64,
}

impl Chat {
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    fn of_role<'a>(&'a self, role: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.messages.iter().filter(move |m| m["role"] == role)
    }
}

/// Runs `flame chat ROOT PROMPT` in a fresh session (`llama_peer::Session`) whose replies are
/// at most `max_output_tokens` long, answering in at most two calls: enough to see a tool's
/// result go back to the model and its answer to it.
fn chat(server: &LlamaServer, api: Api, prompt: &str, max_output_tokens: u32) -> Chat {
    let session = Session::new(flame_binary(), server, api, max_output_tokens, 2);
    let started = Instant::now();
    let out = session.chat(prompt);
    let seconds = started.elapsed().as_secs_f64();
    Chat { out, messages: session.messages(), seconds }
}

/// A plain message: the request (with the tools Flame always offers) is accepted, the reply is
/// printed as it streams and stored as the assistant's, complete.
fn replies_and_stores(api: Api, test: &str) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(server) = LlamaServer::start_or_skip(test) else { return };
    let chat = chat(&server, api, "Say hello in one short sentence.", REPLY_TOKENS);
    let log = server.log();
    assert!(
        chat.out.status.success(),
        "flame chat over {api:?} failed: {}\nllama-server's log:\n{log}",
        chat.stderr()
    );
    let printed = String::from_utf8_lossy(&chat.out.stdout).trim().to_owned();
    let replies: Vec<&Value> = chat.of_role("assistant").collect();
    assert!(!replies.is_empty(), "no reply stored: {:?}", chat.messages);
    let reply = replies[0];
    assert_eq!(reply["interrupted"], false, "{reply}");
    assert_eq!(reply["model"], MODEL);
    let text = reply["content"].as_str().unwrap();
    assert!(
        !text.trim().is_empty() || reply["tool_calls"].is_array(),
        "the reply has neither text nor a tool call: {reply}"
    );
    assert!(printed.contains(text.trim()), "printed {printed:?}, stored {text:?}");
    assert!(chat.of_role("user").any(|m| m["content"] == "Say hello in one short sentence."));
    report(test, &chat);
}

/// A message that invites a tool call: whatever the tiny model does, the run ends normally, and
/// each call it made is answered in the store, as run or as a tool error.
fn calls_tools_without_crashing(api: Api, test: &str) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(server) = LlamaServer::start_or_skip(test) else { return };
    let prompt = "Use the push_frame tool to make a frame titled \"Design the database\" with the success criteria \"The schema is written\".";
    let chat = chat(&server, api, prompt, TOOL_REPLY_TOKENS);
    let log = server.log();
    assert!(
        chat.out.status.success(),
        "flame chat over {api:?} failed: {}\nllama-server's log:\n{log}",
        chat.stderr()
    );
    assert!(!chat.stderr().contains("panicked"), "{}", chat.stderr());
    let calls: Vec<&Value> =
        chat.of_role("assistant").filter_map(|m| m["tool_calls"].as_array()).flatten().collect();
    let results: Vec<&Value> = chat.of_role("tool").collect();
    for call in &calls {
        let answered = results.iter().any(|r| {
            r["tool_result"]["tool_call_id"] == call["id"]
                && r["tool_result"]["is_error"].is_boolean()
        });
        assert!(answered, "the call {call} has no stored result: {results:?}");
    }
    report(test, &chat);
}

/// MCP servers' tools are offered to llama.cpp's server, which turns every tool schema of a
/// request into a grammar and refuses the whole request (400) for one it cannot: the scripted
/// server's `odd` tool has a schema it refuses as the server wrote it (`true` schemas, a `$ref`
/// that does not resolve, an unknown type, a `minLength` of 100,000), and the reference server's
/// tools are offered too when `npm ci` installed it. The request must be accepted and answered.
fn mcp_tools_are_offered_in_schemas_it_accepts(api: Api, test: &str) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node {
        let _ = writeln!(std::io::stderr().lock(), "{test}: skipped: no node on the PATH");
        return;
    }
    let Some(server) = LlamaServer::start_or_skip(test) else { return };
    let session = Session::new(flame_binary(), &server, api, REPLY_TOKENS, 2);
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scripted = crates.join("flame-mcp-client/tests/client/scripted-server.js");
    let everything =
        crates.join("../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let stdio = |args: Vec<String>| json!({"kind": "stdio", "command": "node", "args": args});
    let mut servers = vec![json!({"name": "scripted", "approval": "allow",
        "transport": stdio(vec![scripted.display().to_string(), "well".into()])})];
    if everything.is_file() {
        servers.push(json!({"name": "everything", "approval": "allow",
            "transport": stdio(vec![everything.display().to_string(), "stdio".into()])}));
    }
    session.add_mcp_servers(Value::Array(servers));
    let out = session.chat("Say hello in one short sentence.");
    let log = server.log();
    assert!(
        out.status.success(),
        "flame chat over {api:?} with MCP tools failed: {}\nllama-server's log:\n{log}",
        String::from_utf8_lossy(&out.stderr)
    );
    let messages = session.messages();
    assert!(
        messages.iter().any(|m| m["role"] == "assistant" && m["interrupted"] == false),
        "no reply stored: {messages:?}"
    );
}

#[test]
fn llama_server_openai_accepts_mcp_tools_schemas() {
    mcp_tools_are_offered_in_schemas_it_accepts(
        Api::Openai,
        "llama_server_openai_accepts_mcp_tools_schemas",
    );
}

#[test]
fn llama_server_anthropic_accepts_mcp_tools_schemas() {
    mcp_tools_are_offered_in_schemas_it_accepts(
        Api::Anthropic,
        "llama_server_anthropic_accepts_mcp_tools_schemas",
    );
}

/// What the model did, for whoever reads the test output with `--nocapture`.
fn report(test: &str, chat: &Chat) {
    let calls: Vec<String> = chat
        .of_role("tool")
        .map(|r| {
            let result = &r["tool_result"];
            let kind = if result["is_error"] == true { "refused" } else { "ran" };
            format!("{} {kind}: {}", result["name"], r["content"].as_str().unwrap_or_default())
        })
        .collect();
    let replies: Vec<&str> =
        chat.of_role("assistant").filter_map(|m| m["content"].as_str()).collect();
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{test}: {:.1} s; replies {replies:?}; tool calls {calls:?}", chat.seconds);
    }
}

#[test]
fn llama_server_openai_reply_streams_and_is_stored() {
    replies_and_stores(Api::Openai, "llama_server_openai_reply_streams_and_is_stored");
}

#[test]
fn llama_server_anthropic_reply_streams_and_is_stored() {
    replies_and_stores(Api::Anthropic, "llama_server_anthropic_reply_streams_and_is_stored");
}

#[test]
fn llama_server_openai_tool_calls_run_or_are_refused() {
    calls_tools_without_crashing(Api::Openai, "llama_server_openai_tool_calls_run_or_are_refused");
}

#[test]
fn llama_server_anthropic_tool_calls_run_or_are_refused() {
    calls_tools_without_crashing(
        Api::Anthropic,
        "llama_server_anthropic_tool_calls_run_or_are_refused",
    );
}

/// A llama-server found by itself: `flame models` lists its model under its address with the
/// window the server gives a request (`n_ctx`), and `flame chat --model local:ADDRESS/smollm2`
/// talks to it by that name alone, through its OpenAI-compatible API. The settings name no
/// model but the address to look at (the server is on a chosen port, not llama.cpp's usual
/// 8080) and, for the chat only, a reply cap under the local name: left to the window a local
/// model gets by default (a quarter of it, 2,048 tokens here) the 135M model rambles for
/// minutes on two busy cores. That the window is asked of the server when the settings do not
/// list the model is `flame-agent`'s `a_chat_with_a_local_model_needs_no_settings`.
#[test]
fn llama_server_is_found_and_its_model_answers_by_its_local_name() {
    let test = "llama_server_is_found_and_its_model_answers_by_its_local_name";
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(server) = LlamaServer::start_or_skip(test) else { return };
    let home = Home::new();
    let config = home.path().join("config");
    std::fs::create_dir_all(config.join("flame")).unwrap();
    let address = format!("127.0.0.1:{}", server.port);
    let local = format!("local:{address}/{MODEL}");
    let write_settings = |settings: Value| {
        std::fs::write(config.join("flame/settings.json"), settings.to_string()).unwrap();
    };
    let flame = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_flame"))
            .args(args)
            .env("FLAME_HOME", home.path())
            .env("XDG_CONFIG_HOME", &config)
            .env_remove("FLAME_LOG")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .output()
            .unwrap()
    };
    write_settings(json!({ "local_servers": [address] }));
    let out = flame(&["--json", "models"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = listed["models"].as_array().unwrap().iter().find(|m| m["id"] == local.as_str());
    let found = found.unwrap_or_else(|| panic!("{local} is not listed: {listed}"));
    assert_eq!(found["name"], MODEL);
    assert_eq!(found["context_window"], CONTEXT_WINDOW, "the server's n_ctx");
    assert_eq!(
        found["source"],
        json!({"kind": "local", "address": address, "server": "llama_cpp"})
    );
    let human = String::from_utf8(flame(&["models"]).stdout).unwrap();
    assert!(human.contains(&format!("llama.cpp at {address}: 1 model")), "{human}");

    let tree = home.json(&["tree", "new", "Say hello", "--criteria", "A greeting"]);
    let (tree_id, root) = (tree["tree"].as_str().unwrap(), tree["root"].as_str().unwrap());
    write_settings(json!({
        "local_servers": [address],
        "models": [{
            "name": local,
            "provider": "openai",
            "context_window": CONTEXT_WINDOW,
            "max_output_tokens": REPLY_TOKENS,
        }],
    }));
    let started = Instant::now();
    let out = flame(&["chat", root, "Say hello in one short sentence.", "--model", &local]);
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "flame chat --model {local} failed: {}\nllama-server's log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        server.log()
    );
    let export: Value = serde_json::from_str(&home.ok(&["export", tree_id])).unwrap();
    let messages: Vec<Value> = export["frames"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["messages"].as_array().unwrap().iter().cloned())
        .collect();
    let chat = Chat { out, messages, seconds };
    let reply = chat.of_role("assistant").next().unwrap_or_else(|| panic!("{:?}", chat.messages));
    assert_eq!(reply["model"], MODEL, "{reply}");
    assert_eq!(reply["interrupted"], false, "{reply}");
    report(test, &chat);
}

/// A frame's requests are cache-true on a real server: over five calls in one frame (five
/// messages, each answered in one call, the plan changing between them), every call after the
/// first finds at least 80% of its prompt in the server's cache, by the server's own reports
/// (llama.cpp's cached count, which Flame records with each reply).
fn keeps_the_frames_prompt_cached(api: Api, test: &str) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(server) = LlamaServer::start_or_skip(test) else { return };
    let session = Session::new(flame_binary(), &server, api, REPLY_TOKENS, 1);
    if let Err(err) = session.five_calls_while_planning() {
        panic!("{api:?}: {err}\nllama-server's log:\n{}", server.log());
    }
    let messages = session.messages();
    let replies: Vec<&Value> = messages.iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(replies.len(), 5, "one call a message: {messages:?}");
    let share = cached_share(&replies[1..]).expect("the server reported its prompt tokens");
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "{test}: after the first call, {:.1}% of the prompt came from the cache; the server \
             processed prompts for {:.1?} s",
            share * 100.0,
            server.prefill_seconds()
        );
    }
    assert!(share >= 0.8, "{api:?}: {share:.3} of the prompt tokens were cached\n{}", server.log());
}

#[test]
fn llama_server_openai_keeps_a_frames_prompt_cached() {
    keeps_the_frames_prompt_cached(Api::Openai, "llama_server_openai_keeps_a_frames_prompt_cached");
}

#[test]
fn llama_server_anthropic_keeps_a_frames_prompt_cached() {
    keeps_the_frames_prompt_cached(
        Api::Anthropic,
        "llama_server_anthropic_keeps_a_frames_prompt_cached",
    );
}
