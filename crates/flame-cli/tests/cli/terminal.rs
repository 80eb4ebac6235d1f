//! The `flame` binary at the edges of a terminal: a reader that goes away, text that carries
//! escape sequences, and a message read from standard input.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn flame(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flame"));
    command.env("FLAME_HOME", home).env_remove("FLAME_LOG");
    command
}

fn run(home: &Path, args: &[&str]) -> Output {
    flame(home).args(args).output().unwrap()
}

/// Runs a command that must succeed and returns its stdout as bytes.
fn ok(home: &Path, args: &[&str]) -> Vec<u8> {
    let out = run(home, args);
    assert!(out.status.success(), "flame {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn json(home: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_slice(&ok(home, &all)).unwrap()
}

/// Runs `args` with `input` on standard input.
fn run_with_input(home: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = flame(home)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from another thread, so a child that stops reading cannot block the test.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    let home = tempfile::tempdir().unwrap();
    // A tree whose status is far larger than a pipe's buffer, so the command is still writing
    // when the reader goes away.
    let id = |i: usize| format!("f{i:010}");
    let frames: Vec<Value> = (0..400)
        .map(|i| {
            serde_json::json!({
                "id": id(i), "parent": (i > 0).then(|| id(0)), "position": i,
                "title": format!("{i} {}", "long title ".repeat(15)), "success_criteria": "c",
                "success_criteria_compacted": null, "status": "in_progress",
                "status_reason": null, "results": null, "results_compacted": null,
                "artifacts": [], "decisions": [], "retry_of": null, "created_at": 1,
                "started_at": 1, "ended_at": null, "messages": []
            })
        })
        .collect();
    let export = serde_json::json!({
        "format": "flame-export", "version": 1,
        "tree": { "title": "Wide", "created_at": 1, "focus": id(399) }, "frames": frames
    });
    let file = home.path().join("wide.json");
    std::fs::write(&file, export.to_string()).unwrap();
    ok(home.path(), &["import", file.to_str().unwrap()]);

    // `flame status | head -1`: read one line, then close the pipe.
    let mut child = flame(home.path())
        .arg("status")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("Wide (tree "), "{first}");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn escape_sequences_are_shown_escaped_and_an_export_to_a_file_keeps_them() {
    let home = tempfile::tempdir().unwrap();
    let title = "Red \x1b[31mtitle\x1b]0;pwned\x07";
    let tree = json(home.path(), &["tree", "new", title, "--criteria", "c"]);
    let root = tree["root"].as_str().unwrap();
    ok(home.path(), &["append", root, "--role", "user", "say \x1b[2Jcleared\x1b[0m\n\tok"]);

    for args in [vec!["log", root], vec!["status"], vec!["tree", "list"]] {
        let shown = String::from_utf8(ok(home.path(), &args)).unwrap();
        assert!(
            !shown.contains(['\x1b', '\x07']),
            "flame {args:?} printed raw controls: {shown:?}"
        );
        assert!(shown.contains(r"\x1b[31mtitle"), "flame {args:?}: {shown}");
        assert!(shown.contains(r"\x1b]0;pwned\x07"), "flame {args:?}: {shown}");
    }
    let log = String::from_utf8(ok(home.path(), &["log", root])).unwrap();
    assert!(log.contains("say \\x1b[2Jcleared\\x1b[0m\n\tok"), "newline and tab kept: {log}");

    // Redirected to a file or a pipe, an export is the text as it is.
    let export = ok(home.path(), &["export", root, "--format", "markdown"]);
    let export = String::from_utf8(export).unwrap();
    assert!(export.contains(title), "{export:?}");
}

#[test]
fn append_reads_the_message_from_standard_input_up_to_the_cap() {
    let home = tempfile::tempdir().unwrap();
    let tree = json(home.path(), &["tree", "new", "Long", "--criteria", "c"]);
    let root = tree["root"].as_str().unwrap();
    let text = "a line of a long message\n".repeat(8_000); // 200 kB
    let out = run_with_input(
        home.path(),
        &["--json", "append", root, "--role", "user", "-"],
        text.as_bytes(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"].as_str().unwrap(), text);
    assert!(message["tokens"].as_u64().unwrap() > 10_000);

    // One byte past the cap is refused before anything is stored.
    let over = vec![b'x'; 4 * 1024 * 1024 + 1];
    let out = run_with_input(home.path(), &["append", root, "--role", "user", "-"], &over);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("more than 4194304 bytes, the limit of a message"), "{err}");
    let log = String::from_utf8(ok(home.path(), &["log", root])).unwrap();
    assert_eq!(log.matches("a line of a long message").count(), 8_000);
    assert!(!log.contains("xxxx"));
}
