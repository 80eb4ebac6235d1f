//! The client against real servers: the published `@modelcontextprotocol/server-everything`
//! (pinned in package.json's devDependencies, so `npm ci` installs it; skipped, and said, when it
//! is absent) over stdio and over streamable HTTP, and `scripted-server.js`, a server that
//! misbehaves in each of the ways a server can (exits at start, never answers, writes what is
//! not JSON-RPC, sends 50 MB). Both need `node`; without it the tests say they were skipped.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flame_mcp_client::{Limits, McpServers, McpTransport, ServerSpec, StartEnvironment};
use serde_json::{Map, Value};

mod hostile;
mod real;

/// Says on the process's own stderr (which the harness does not hide) that a test was skipped.
fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{test}: skipped: {why}");
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `node`, if it runs here.
fn node(test: &str) -> Option<PathBuf> {
    let runs = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !runs {
        skip(test, "no node on the PATH");
        return None;
    }
    Some(PathBuf::from("node"))
}

/// The published server, installed by `npm ci`.
fn everything(test: &str) -> Option<PathBuf> {
    node(test)?;
    let script =
        repo_root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !script.is_file() {
        skip(
            test,
            &format!(
                "@modelcontextprotocol/server-everything is not installed at {} (npm ci)",
                script.display()
            ),
        );
        return None;
    }
    Some(script)
}

fn scripted_server() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/client/scripted-server.js")
        .display()
        .to_string()
}

/// Short times, so a server that never answers costs the test seconds; sizes as in the app.
const TEST_LIMITS: Limits = Limits {
    start: Duration::from_secs(5),
    list: Duration::from_secs(5),
    call: Duration::from_secs(3),
    ..Limits::DEFAULT
};

fn stdio(command: &str, args: &[&str], env: &[(&str, &str)]) -> McpTransport {
    McpTransport::Stdio {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        cwd: None,
    }
}

fn spec(name: &str, transport: McpTransport) -> ServerSpec {
    ServerSpec { name: name.to_owned(), transport }
}

/// What servers start from in the tests: the PATH (to find `node`) and a planted key that only
/// `${…}` may reach.
fn start_environment() -> StartEnvironment {
    let path = std::env::var_os("PATH").unwrap_or_default();
    StartEnvironment {
        variables: vec![(OsString::from("PATH"), path)],
        lookup: Arc::new(|name| match name {
            "FLAME_TEST_TOKEN" => Some("token-for-this-server".to_owned()),
            "ANTHROPIC_API_KEY" => Some("sk-ant-planted-sentinel".to_owned()),
            _ => None,
        }),
    }
}

fn servers(specs: Vec<ServerSpec>) -> McpServers {
    McpServers::new(specs, start_environment(), TEST_LIMITS)
}

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("arguments must be an object"),
    }
}

/// Whether process `pid` is still running (a zombie has ended).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next());
            !matches!(state, Some('Z' | 'X'))
        }
        Err(_) => false,
    }
}

/// Waits up to ten seconds for every process of `pids` to end; says whether they did.
async fn all_end(pids: &[u32]) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if pids.iter().all(|&pid| !running(pid)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
