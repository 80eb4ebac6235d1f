//! `flame sessions`, `flame follow --once` and `flame unfollow` on agents' folders made from the
//! vendored sessions, found through the variables the agents read.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::Home;

/// Runs `flame --json ARGS` with the agents' folders under `agents`; it must succeed.
fn run(home: &Home, agents: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_flame"))
        .arg("--json")
        .args(args)
        .env("FLAME_HOME", home.path())
        .env("CODEX_HOME", agents.join("codex"))
        .env("CLAUDE_CONFIG_DIR", agents.join("claude"))
        .env("XDG_DATA_HOME", agents.join("xdg"))
        .env_remove("FLAME_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "flame {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    // `follow --once` prints one JSON document a session.
    let text = String::from_utf8(out.stdout).unwrap();
    let docs: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect();
    if docs.len() == 1 { docs.into_iter().next().unwrap() } else { Value::Array(docs) }
}

#[test]
fn sessions_are_listed_followed_once_and_left() {
    let home = Home::new();
    let agents = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let day = agents.path().join("codex/sessions/2026/11/26");
    std::fs::create_dir_all(&day).unwrap();
    for entry in std::fs::read_dir(repo.join("tests/fixtures/codex/sessions/2026/11/26")).unwrap() {
        let from = entry.unwrap().path();
        std::fs::copy(&from, day.join(from.file_name().unwrap())).unwrap();
    }
    let list = run(&home, agents.path(), &["sessions", "--agent", "codex"]);
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{list}");
    let id = sessions[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(sessions[0]["followed"], false);
    assert!(sessions[0]["recorded_cost"]["micro_usd"].as_u64().unwrap() > 0, "{list}");
    assert_eq!(sessions[0]["flame_cost"]["kind"], "priced", "{list}");
    assert!(sessions[0]["flame_cost"]["session"]["micro_usd"].as_u64().unwrap() > 0, "{list}");

    let read = run(&home, agents.path(), &["follow", "--once", &id]);
    assert_eq!(read["id"], id.as_str());
    assert!(read["messages"].as_u64().unwrap() > 10, "{read}");
    let list = run(&home, agents.path(), &["sessions"]);
    assert_eq!(list["sessions"][0]["followed"], true);

    let again = run(&home, agents.path(), &["follow", "--once"]);
    assert_eq!(again["messages"], 0, "{again}");
    let left = run(&home, agents.path(), &["unfollow", &id]);
    assert_eq!(left["unfollowed"], id.as_str());
    assert_eq!(run(&home, agents.path(), &["sessions"])["sessions"][0]["followed"], false);
    // The tree is kept.
    assert_eq!(run(&home, agents.path(), &["tree", "list"]).as_array().unwrap().len(), 1);
}

#[test]
fn following_a_session_that_is_not_there_is_refused_with_a_clear_message() {
    let home = Home::new();
    let agents = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flame"))
        .args(["follow", "--once", "codex:no-such-session"])
        .env("FLAME_HOME", home.path())
        .env("CODEX_HOME", agents.path().join("codex"))
        .env("CLAUDE_CONFIG_DIR", agents.path().join("claude"))
        .env("XDG_DATA_HOME", agents.path().join("xdg"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.trim(),
        "flame: no session codex:no-such-session among the sessions of Claude Code, Codex and OpenCode: flame sessions lists them"
    );
}

/// `flame follow --agent claude-code` started before Claude Code's folder exists (a new machine,
/// a new `CLAUDE_CONFIG_DIR`) says it waits for it, and follows the session Claude Code writes
/// once it makes it. Waits are bounded, so a follower that never hears of it fails the test.
#[test]
fn following_an_agent_whose_folder_is_made_later_follows_its_first_session() {
    let home = Home::new();
    let agents = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_flame"))
        .args(["--json", "follow", "--agent", "claude-code"])
        .env("FLAME_HOME", home.path())
        .env("CODEX_HOME", agents.path().join("codex"))
        .env("CLAUDE_CONFIG_DIR", agents.path().join("claude"))
        .env("XDG_DATA_HOME", agents.path().join("xdg"))
        .env_remove("FLAME_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    /// Ends the command however the test ends: it follows until stopped.
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let stdout = child.stdout.take().unwrap();
    let _child = KillOnDrop(child);
    let (tell, printed) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for doc in serde_json::Deserializer::from_reader(stdout).into_iter::<Value>() {
            let Ok(doc) = doc else { return };
            if tell.send(doc).is_err() {
                return;
            }
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let next = |what: &str| {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        printed.recv_timeout(left).unwrap_or_else(|_| panic!("flame follow never printed {what}"))
    };
    let waiting = loop {
        let doc = next("that it waits for Claude Code's folder");
        if doc.get("waiting_for_folder").is_some() {
            break doc["waiting_for_folder"].clone();
        }
    };
    assert_eq!(waiting["agent"], "claude-code", "{waiting}");
    let projects = agents.path().join("claude/projects");
    assert_eq!(waiting["folder"], projects.display().to_string(), "{waiting}");
    assert_eq!(waiting["watched"], agents.path().display().to_string(), "{waiting}");

    let project = projects.join("-home-marco-projects-spotter");
    std::fs::create_dir_all(&project).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code/short.jsonl");
    std::fs::copy(fixture, project.join("55604662-cf2a-4331-851a-ec234028f8ca.jsonl")).unwrap();
    loop {
        let doc = next("a read of the session Claude Code wrote");
        if doc["id"] == "claude-code:55604662-cf2a-4331-851a-ec234028f8ca"
            && doc["messages"].as_u64().is_some_and(|n| n > 0)
        {
            assert!(doc["tree"].is_string(), "{doc}");
            break;
        }
    }
}
