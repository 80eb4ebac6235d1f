use std::os::unix::fs::PermissionsExt;

use flame_workspace::{
    MAX_DIFF_BYTES, MAX_DIFF_INPUT_BYTES, MAX_EDIT_FILE_BYTES, Touched, WorkspaceError,
};

use crate::Fixture;

/// The names in a folder, to see that no temporary file is left behind.
fn names(f: &Fixture, folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(f.root().join(folder))
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn writing_a_new_file_makes_its_folders_and_diffs_from_nothing() {
    let f = Fixture::new();
    let applied = f.workspace.write_file("a/b/new.txt", "one\ntwo\n".into()).expect("write");
    assert_eq!(f.get("a/b/new.txt"), "one\ntwo\n");
    assert!(applied.created);
    assert_eq!(applied.bytes_written, 8);
    assert_eq!(applied.diff, "--- /dev/null\n+++ b/a/b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n");
    assert!(applied.render().starts_with("Created a/b/new.txt (8 bytes)."));
    assert_eq!(applied.touched(), Touched::files(vec![], vec!["a/b/new.txt".into()]));
    assert_eq!(names(&f, "a/b"), ["new.txt"]);
}

#[test]
fn replacing_a_file_keeps_its_permissions_and_diffs_against_the_old_text() {
    let f = Fixture::new();
    f.put("run.sh", "#!/bin/sh\necho old\n");
    let path = f.root().join("run.sh");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).expect("chmod");
    let applied = f.workspace.write_file("run.sh", "#!/bin/sh\necho new\n".into()).expect("write");
    assert!(!applied.created);
    assert_eq!(
        applied.diff,
        "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo old\n+echo new\n"
    );
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o751);
    assert_eq!(names(&f, "."), ["run.sh"]);
}

#[test]
fn writing_over_a_folder_is_refused() {
    let f = Fixture::new();
    f.put("dir/x", "");
    let error = f.workspace.write_file("dir", "x".into()).expect_err("a folder");
    assert!(matches!(error, WorkspaceError::IsDirectory { .. }), "{error:?}");
}

#[test]
fn a_write_over_a_large_old_file_summarises_instead_of_diffing() {
    let f = Fixture::new();
    f.put("big.txt", "x\n".repeat(MAX_DIFF_INPUT_BYTES));
    let prepared = f.workspace.prepare_write("big.txt", "small\n".into()).expect("prepare");
    assert!(prepared.diff.starts_with("(replaces big.txt:"), "{}", prepared.diff);
    f.workspace.apply(prepared).expect("apply");
    assert_eq!(f.get("big.txt"), "small\n");
}

#[test]
fn a_diff_past_its_cap_is_cut_and_says_so() {
    let f = Fixture::new();
    let content = "line of new text\n".repeat(MAX_DIFF_BYTES / 8);
    let applied = f.workspace.write_file("new.txt", content.clone()).expect("write");
    assert!(applied.diff.len() <= MAX_DIFF_BYTES + 40, "{} bytes", applied.diff.len());
    assert!(applied.diff.contains("[diff cut: "), "{}", &applied.diff[applied.diff.len() - 60..]);
    assert_eq!(f.get("new.txt"), content);
}

#[test]
fn an_edit_replaces_the_one_occurrence_and_returns_its_diff() {
    let f = Fixture::new();
    f.put("src/lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    let applied =
        f.workspace.edit_file("src/lib.rs", "fn b() {}", "fn b() { 1 }", false).expect("edit");
    assert_eq!(f.get("src/lib.rs"), "fn a() {}\nfn b() { 1 }\nfn c() {}\n");
    assert_eq!(applied.replacements, Some(1));
    assert_eq!(
        applied.diff,
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn a() {}\n-fn b() {}\n+fn b() { 1 }\n fn c() {}\n"
    );
    assert!(applied.render().starts_with("Edited src/lib.rs: 1 replacement(s)."));
}

#[test]
fn an_edit_with_zero_or_two_matches_is_refused_naming_how_many() {
    let f = Fixture::new();
    f.put("a.txt", "x = 1\nx = 1\n");
    let error = f.workspace.edit_file("a.txt", "y = 1", "y = 2", false).expect_err("none");
    assert!(matches!(error, WorkspaceError::NoMatch { .. }), "{error:?}");
    assert!(error.to_string().contains("was not found in a.txt"), "{error}");
    let error = f.workspace.edit_file("a.txt", "x = 1", "x = 2", false).expect_err("two");
    assert!(matches!(error, WorkspaceError::ManyMatches { count: 2, .. }), "{error:?}");
    assert!(error.to_string().contains("occurs 2 times"), "{error}");
    assert_eq!(f.get("a.txt"), "x = 1\nx = 1\n");
    let applied = f.workspace.edit_file("a.txt", "x = 1", "x = 2", true).expect("replace all");
    assert_eq!(applied.replacements, Some(2));
    assert_eq!(f.get("a.txt"), "x = 2\nx = 2\n");
}

#[test]
fn empty_or_unchanging_edits_and_binary_or_huge_files_are_refused() {
    let f = Fixture::new();
    f.put("a.txt", "abc\n");
    f.put("b.bin", b"abc\0");
    assert!(matches!(
        f.workspace.edit_file("a.txt", "", "x", false),
        Err(WorkspaceError::EmptyOldString)
    ));
    assert!(matches!(
        f.workspace.edit_file("a.txt", "abc", "abc", false),
        Err(WorkspaceError::NoChange)
    ));
    let error = f.workspace.edit_file("b.bin", "abc", "x", false).expect_err("binary");
    assert!(matches!(error, WorkspaceError::Binary { .. }), "{error:?}");
    f.put("huge.txt", "a".repeat(MAX_EDIT_FILE_BYTES as usize + 1));
    let error = f.workspace.edit_file("huge.txt", "a", "b", false).expect_err("huge");
    assert!(matches!(error, WorkspaceError::TooLargeToEdit { .. }), "{error:?}");
    assert!(error.to_string().contains("use write_file"), "{error}");
}

#[test]
fn a_prepared_change_is_not_applied_over_a_file_that_changed_since() {
    let f = Fixture::new();
    f.put("a.txt", "one\n");
    let edit = f.workspace.prepare_edit("a.txt", "one", "two", false).expect("prepare");
    let write = f.workspace.prepare_write("a.txt", "three\n".into()).expect("prepare");
    let create = f.workspace.prepare_write("new.txt", "new\n".into()).expect("prepare");
    assert!(create.creates);
    // Nothing is written before apply.
    assert_eq!(f.get("a.txt"), "one\n");
    assert!(!f.root().join("new.txt").exists());

    f.put("a.txt", "one, changed by the person\n");
    f.put("new.txt", "made meanwhile\n");
    for change in [edit, write, create] {
        let error = f.workspace.apply(change).expect_err("stale");
        assert!(matches!(error, WorkspaceError::ChangedSincePrepared { .. }), "{error:?}");
    }
    assert_eq!(f.get("a.txt"), "one, changed by the person\n");
    assert_eq!(f.get("new.txt"), "made meanwhile\n");
}

#[test]
fn temporary_files_left_by_killed_writers_are_removed_by_the_next_write() {
    let f = Fixture::new();
    // The pid of a process that has finished: its temporary file is stale.
    let mut finished = std::process::Command::new("true").spawn().expect("spawn");
    finished.wait().expect("wait");
    let stale = format!(".a.txt.flame-{}-0.tmp", finished.id());
    // A temporary file of a running process (this one's parent) and another file's are kept.
    let running = format!(".a.txt.flame-{}-0.tmp", std::os::unix::process::parent_id());
    let other = format!(".b.txt.flame-{}-0.tmp", finished.id());
    for name in [&stale, &running, &other] {
        f.put(name, "half a write");
    }
    f.workspace.write_file("a.txt", "whole\n".into()).expect("write");
    let mut expected = vec![running, other, "a.txt".to_owned()];
    expected.sort();
    assert_eq!(names(&f, "."), expected);
}
