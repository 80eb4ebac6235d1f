//! llama.cpp's own `llama-server` with a tiny model, started by
//! `../shared/peers/llama-server/start.sh`, and a Flame data directory whose settings talk to
//! it: what the real-model-server tests (`llama_server.rs`) and the cache benchmark
//! (`benches/llama.rs`) share. Without `../shared/peers` nothing starts, and the caller says,
//! on a line of its own, that it was skipped.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// The name `start.sh` serves the model under.
pub const MODEL: &str = "smollm2";

/// The model's own context, which the server enforces; Flame must be told, or it would fill a
/// 128k window the server then refuses.
pub const CONTEXT_WINDOW: u64 = 8_192;

/// Which of the server's two wire formats Flame speaks to it.
#[derive(Debug, Clone, Copy)]
pub enum Api {
    Openai,
    Anthropic,
}

/// A running `llama-server`, stopped when dropped, so a failing test never leaves it behind.
pub struct LlamaServer {
    pub port: u16,
    pid: u32,
}

impl LlamaServer {
    /// `start.sh`, found from this crate: `<repo>/../shared/peers/llama-server/start.sh`.
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/llama-server/start.sh")
    }

    /// Starts the server on a free port, or says plainly that `what` is skipped and returns
    /// `None` when the peers folder is absent.
    pub fn start_or_skip(what: &str) -> Option<LlamaServer> {
        let script = LlamaServer::script();
        if !script.is_file() {
            // Written to the process's stderr rather than through `eprintln!`, which the test
            // harness captures and hides for a passing test: a skip must be seen.
            let _ = writeln!(
                std::io::stderr().lock(),
                "{what}: skipped: no llama-server (../shared/peers not found at {})",
                script.display()
            );
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let out = Command::new(&script).arg(port.to_string()).output().unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "start.sh {port} failed: {printed}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let pid = printed
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("start.sh printed {printed:?}, not \"PORT PID\""));
        Some(LlamaServer { port, pid })
    }

    /// The base URL Flame's settings take for `api`: OpenAI's includes the `/v1` its paths
    /// start from, Anthropic's does not.
    pub fn base_url(&self, api: Api) -> String {
        match api {
            Api::Openai => format!("http://127.0.0.1:{}/v1", self.port),
            Api::Anthropic => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// The server's own log.
    pub fn log_text(&self) -> String {
        let cache = std::env::var_os("FLAME_PEERS_CACHE").map(PathBuf::from).unwrap_or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"))
                .join("flame-peers")
        });
        std::fs::read_to_string(cache.join(format!("llama-server.{}.log", self.port)))
            .unwrap_or_default()
    }

    /// The end of the server's log, for a failure message.
    pub fn log(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// How long the server took to process each request's prompt that was not in its cache
    /// (its `prompt eval time`), in seconds, oldest first.
    pub fn prefill_seconds(&self) -> Vec<f64> {
        self.log_text()
            .lines()
            .filter_map(|line| {
                let after = line.split("prompt eval time =").nth(1)?;
                after.split_whitespace().next()?.parse::<f64>().ok().map(|ms| ms / 1e3)
            })
            .collect()
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.pid.to_string()).status();
    }
}

/// A tree in a fresh data directory, with a workspace folder so that every tool Flame has is
/// offered (the server must compile all their schemas), and settings that name the server's
/// model over one of its APIs.
pub struct Session {
    home: tempfile::TempDir,
    _workspace: tempfile::TempDir,
    config: PathBuf,
    flame: PathBuf,
    pub tree: String,
    pub root: String,
}

impl Session {
    /// `flame` is the command line's binary; the model's replies are at most
    /// `max_output_tokens` long, and a message makes at most `max_tool_calls` tool calls (the
    /// per-turn budget).
    pub fn new(
        flame: &Path,
        server: &LlamaServer,
        api: Api,
        max_output_tokens: u32,
        max_tool_calls: u32,
    ) -> Session {
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("notes.txt"), "Use SQLite.\n").unwrap();
        let config = home.path().join("config");
        std::fs::create_dir_all(config.join("flame")).unwrap();
        let provider = match api {
            Api::Openai => "openai",
            Api::Anthropic => "anthropic",
        };
        let settings = json!({
            "default_model": MODEL,
            "turn_budget": { "tool_calls": max_tool_calls },
            "openai": { "base_url": server.base_url(Api::Openai) },
            // llama-server checks no key, but Flame will not speak Anthropic's format without
            // one.
            "anthropic": { "base_url": server.base_url(Api::Anthropic), "api_key": "not-checked" },
            "models": [{
                "name": MODEL,
                "provider": provider,
                "context_window": CONTEXT_WINDOW,
                "max_output_tokens": max_output_tokens,
            }],
        });
        std::fs::write(config.join("flame/settings.json"), settings.to_string()).unwrap();
        let mut session = Session {
            home,
            _workspace: workspace,
            config,
            flame: flame.to_path_buf(),
            tree: String::new(),
            root: String::new(),
        };
        let folder = session._workspace.path().to_str().unwrap().to_owned();
        let out = session.run(&[
            "--json",
            "tree",
            "new",
            "Plan a small web app",
            "--criteria",
            "A plan exists",
            "--workspace",
            &folder,
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let tree: Value = serde_json::from_slice(&out.stdout).unwrap();
        session.tree = tree["tree"].as_str().unwrap().to_owned();
        session.root = tree["root"].as_str().unwrap().to_owned();
        session
    }

    /// Adds `servers` (as the settings' `mcp_servers` take them) to the session's settings.
    pub fn add_mcp_servers(&self, servers: Value) {
        let path = self.config.join("flame/settings.json");
        let mut settings: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        settings["mcp_servers"] = servers;
        std::fs::write(path, settings.to_string()).unwrap();
    }

    /// Runs `flame ARGS` on the session's data directory and settings.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.flame)
            .args(args)
            .env("FLAME_HOME", self.home.path())
            .env("XDG_CONFIG_HOME", &self.config)
            .env_remove("FLAME_LOG")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .output()
            .unwrap()
    }

    /// `flame chat ROOT PROMPT`.
    pub fn chat(&self, prompt: &str) -> Output {
        self.run(&["chat", &self.root, prompt])
    }

    /// Five messages in the root frame, each answered in one call, with a frame planned under
    /// the root before each but the first: what the root's context shows changes between its
    /// calls, as it does when the person plans while the agent works.
    pub fn five_calls_while_planning(&self) -> Result<(), String> {
        for n in 1..=5 {
            if n > 1 {
                let title = format!("Step {n}");
                let out =
                    self.run(&["plan", &title, "--criteria", "It is done", "--parent", &self.root]);
                if !out.status.success() {
                    return Err(String::from_utf8_lossy(&out.stderr).into_owned());
                }
            }
            let out = self.chat(&format!("Note {n}: name one table the app needs, in a word."));
            if !out.status.success() {
                return Err(format!("message {n}: {}", String::from_utf8_lossy(&out.stderr)));
            }
        }
        Ok(())
    }

    /// Every message of the tree, in every frame (the agent may have moved), in order.
    pub fn messages(&self) -> Vec<Value> {
        let out = self.run(&["export", &self.tree]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let export: Value = serde_json::from_slice(&out.stdout).unwrap();
        export["frames"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["messages"].as_array().unwrap().iter().cloned())
            .collect()
    }
}

/// Of the prompt tokens of `replies` (each a stored assistant message), the share the server
/// read from its cache, by its own reports; `None` when none recorded any.
pub fn cached_share(replies: &[&Value]) -> Option<f64> {
    let count = |reply: &Value, key: &str| reply["usage"][key].as_u64().unwrap_or(0);
    let (mut cached, mut prompt) = (0, 0);
    for reply in replies {
        cached += count(reply, "cache_read_tokens");
        prompt += count(reply, "cache_read_tokens")
            + count(reply, "input_tokens")
            + count(reply, "cache_write_tokens")
            + count(reply, "cache_write_long_tokens");
    }
    (prompt > 0).then(|| cached as f64 / prompt as f64)
}
