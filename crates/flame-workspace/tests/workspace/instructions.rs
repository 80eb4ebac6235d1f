//! The project instructions a workspace holds for the files a frame works in: which files, in
//! which order, and what is refused.

use flame_model::InstructionScope;
use flame_model::instructions::MAX_INSTRUCTIONS_BYTES;

use super::Fixture;

fn paths(found: &[flame_model::InstructionFile]) -> Vec<&str> {
    found.iter().map(|f| f.path.as_str()).collect()
}

#[test]
fn the_root_and_the_folders_above_the_files_are_read_in_order() {
    let f = Fixture::new();
    f.put("AGENTS.md", "Root rules.\n");
    f.put("src/AGENTS.md", "Source rules.\n");
    f.put("src/ui/CLAUDE.md", "UI rules.\n");
    f.put("docs/AGENTS.md", "Docs rules.\n");
    f.put("src/ui/app.ts", "app");
    f.put("src/lib.rs", "lib");
    let found = f.workspace.instruction_files(["src/ui/app.ts", "src/lib.rs"]);
    assert_eq!(paths(&found), ["AGENTS.md", "src/AGENTS.md", "src/ui/CLAUDE.md"]);
    assert_eq!(found[1].text, "Source rules.\n");
    assert_eq!(found[1].size, 14);
    assert!(found.iter().all(|f| f.scope == InstructionScope::Workspace && f.problem.is_none()));
    // With no file worked in yet, only the root's.
    assert_eq!(paths(&f.workspace.instruction_files([])), ["AGENTS.md"]);
}

#[test]
fn agents_md_is_taken_over_claude_md_and_a_link_inside_is_followed() {
    let f = Fixture::new();
    f.put("AGENTS.md", "Agents.");
    f.put("CLAUDE.md", "Claude.");
    f.put("lib/CLAUDE.md", "Shared rules.");
    std::os::unix::fs::symlink("CLAUDE.md", f.root().join("lib/AGENTS.md")).unwrap();
    let found = f.workspace.instruction_files(["lib/x.rs"]);
    assert_eq!(paths(&found), ["AGENTS.md", "lib/AGENTS.md"]);
    assert_eq!(found[0].text, "Agents.");
    assert_eq!(found[1].text, "Shared rules.", "the link stays inside, so it is read");
}

#[test]
fn a_link_out_a_hard_link_and_a_binary_file_are_listed_with_why_and_not_read() {
    let f = Fixture::new();
    let outside = f.outside();
    std::fs::write(outside.join("secret.md"), "SECRET").unwrap();
    f.put("a/x.rs", "");
    std::os::unix::fs::symlink(outside.join("secret.md"), f.root().join("a/AGENTS.md")).unwrap();
    f.put("b/x.rs", "");
    std::fs::hard_link(outside.join("secret.md"), f.root().join("b/AGENTS.md")).unwrap();
    f.put("c/AGENTS.md", b"\x00\xff\xfe binary");
    std::fs::create_dir_all(f.root().join("d/AGENTS.md")).unwrap();
    let found = f.workspace.instruction_files(["a/x.rs", "b/x.rs", "c/x.rs", "d/x.rs"]);
    assert_eq!(paths(&found), ["a/AGENTS.md", "b/AGENTS.md", "c/AGENTS.md", "d/AGENTS.md"]);
    for file in &found {
        assert!(!file.text.contains("SECRET") && file.text.is_empty(), "{file:?}");
        assert!(file.problem.is_some(), "{file:?}");
    }
    let problem = |n: usize| found[n].problem.clone().unwrap();
    assert!(problem(0).contains("leads outside the workspace"), "{}", problem(0));
    assert!(problem(1).contains("hard links"), "{}", problem(1));
    assert_eq!(problem(2), "it is not UTF-8 text");
    assert!(problem(3).contains("is a directory"), "{}", problem(3));
}

#[test]
fn past_the_limit_nothing_more_is_read_and_a_cut_keeps_whole_characters() {
    let f = Fixture::new();
    let big = format!("x{}", "é".repeat(MAX_INSTRUCTIONS_BYTES));
    f.put("AGENTS.md", &big);
    f.put("src/AGENTS.md", "Next file.\n");
    let found = f.workspace.instruction_files(["src/x.rs"]);
    assert_eq!(found[0].size, big.len() as u64);
    assert_eq!(found[0].text.len(), MAX_INSTRUCTIONS_BYTES - 1, "the cut é is left out whole");
    assert!(big.starts_with(&found[0].text));
    // The byte the cut character left is all that is read of the next file.
    assert_eq!((found[1].text.as_str(), found[1].size), ("N", 11));
}
