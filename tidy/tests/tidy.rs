//! The repository's own rules, checked on every `make test`.

use std::fs;
use std::path::Path;

use tidy::{Workspace, files_with_extension, repo_root};

#[test]
fn no_crate_under_crates_depends_on_tauri() {
    let workspace = Workspace::load();
    let core: Vec<_> = workspace.members.iter().filter(|m| m.dir.starts_with("crates")).collect();
    assert!(!core.is_empty(), "no crates found under crates/");
    for member in core {
        let tauri: Vec<_> = workspace
            .transitive_dependencies(&member.name)
            .into_iter()
            .filter(|name| name == "tauri" || name.starts_with("tauri-") || name == "wry")
            .collect();
        assert!(
            tauri.is_empty(),
            "{} is under crates/ but depends on {tauri:?}; only src-tauri may know Tauri",
            member.name
        );
    }
}

#[test]
fn only_the_store_talks_to_sqlite() {
    let workspace = Workspace::load();
    for member in &workspace.members {
        if member.name != "flame-store" {
            assert!(
                !workspace.direct_dependencies(&member.name).contains("rusqlite"),
                "{} depends on rusqlite; only flame-store may write SQL",
                member.name
            );
        }
    }
}

#[test]
fn every_crate_says_what_it_is_for_and_architecture_md_names_it() {
    let architecture = fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap();
    for member in Workspace::load().members {
        assert!(
            member.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{} has no `description` in its Cargo.toml",
            member.name
        );
        assert!(
            architecture.contains(&format!("`{}`", member.name)),
            "ARCHITECTURE.md does not name the crate `{}`",
            member.name
        );
        let lib = repo_root().join(&member.dir).join("src/lib.rs");
        if lib.exists() {
            let text = fs::read_to_string(&lib).unwrap();
            assert!(
                text.starts_with("//!"),
                "{} does not open with a //! doc comment",
                lib.display()
            );
        }
    }
}

#[test]
fn every_crate_uses_the_workspace_lints() {
    for member in Workspace::load().members {
        let manifest =
            fs::read_to_string(repo_root().join(&member.dir).join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("[lints]\nworkspace = true"),
            "{} does not inherit [workspace.lints]",
            member.name
        );
    }
}

#[test]
fn the_tauri_config_at_the_root_is_the_one_the_shell_reads() {
    let build = fs::read_to_string(repo_root().join("src-tauri/build.rs")).unwrap();
    let lib = fs::read_to_string(repo_root().join("src-tauri/src/lib.rs")).unwrap();
    assert!(build.contains("\"../tauri.conf.json\""), "build.rs must read ../tauri.conf.json");
    assert!(lib.contains("generate_context!(\"../tauri.conf.json\")"));
    assert!(!Path::new(&repo_root().join("src-tauri/tauri.conf.json")).exists());
}

#[test]
fn no_debugging_leftovers_in_sources() {
    let mut offenders = Vec::new();
    for dir in ["crates", "src-tauri/src", "tidy/src"] {
        for file in files_with_extension(Path::new(dir), "rs") {
            let text = fs::read_to_string(&file).unwrap();
            for (number, line) in text.lines().enumerate() {
                if ["todo!(", "dbg!(", "unimplemented!("].iter().any(|bad| line.contains(bad)) {
                    offenders.push(format!("{}:{}", file.display(), number + 1));
                }
            }
        }
    }
    for file in files_with_extension(Path::new("ui/src"), "ts")
        .into_iter()
        .chain(files_with_extension(Path::new("ui/src"), "tsx"))
    {
        let text = fs::read_to_string(&file).unwrap();
        if text.contains("debugger;") || text.contains("console.log(") {
            offenders.push(file.display().to_string());
        }
    }
    assert!(offenders.is_empty(), "debugging leftovers: {offenders:?}");
}
