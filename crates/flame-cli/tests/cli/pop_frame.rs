//! `flame pop --frame ID`: a pop that names the focused frame it means is refused, changing
//! nothing, once another client has moved the focus (issue 13: a CLI and an MCP client popping
//! "the focus" of one tree completed its root).

use std::path::Path;

use serde_json::Value;

use crate::flame;

fn json(home: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = flame(home, &all);
    assert!(out.status.success(), "flame {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_pop_naming_a_frame_that_is_no_longer_the_focus_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let root = json(home, &["tree", "new", "Root", "--criteria", "r"])["root"]
        .as_str()
        .unwrap()
        .to_owned();
    let child =
        json(home, &["push", "Child", "--criteria", "c"])["id"].as_str().unwrap().to_owned();
    // Two clients both saw the child focused; the first pops it.
    let done = ["--status", "completed", "--results", "first"];
    let popped = json(home, &[&["pop", "--frame", child.as_str()][..], &done[..]].concat());
    assert_eq!(
        (popped["id"].as_str(), popped["status"].as_str()),
        (Some(child.as_str()), Some("completed"))
    );

    let before = flame(home, &["--json", "status"]).stdout;
    let out =
        flame(home, &["pop", "--frame", &child, "--status", "completed", "--results", "second"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&child) && err.contains(&format!("focus has moved to {root} \"Root\"")),
        "{err}"
    );
    assert_eq!(flame(home, &["--json", "status"]).stdout, before, "the refusal changed the tree");

    // A frame id and --frame together are a usage error.
    let out = flame(home, &["pop", &root, "--frame", &root, "--status", "failed", "--reason", "x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}
