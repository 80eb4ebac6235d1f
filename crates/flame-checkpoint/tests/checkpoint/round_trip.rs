//! A real repository with a nested repository, ignored files, a large file, a binary file, an
//! executable script and a symlink: snapshot, change, snapshot, compare, restore.

use std::collections::BTreeMap;
use std::process::Command;

use flame_checkpoint::{ChangeKind, CheckpointError, CommitId, Entry, FileChange, SkipReason};

use crate::fixture::{Setup, binary, fingerprint, git};

const BIG_BYTES: usize = 6 * 1024 * 1024;

/// The guide is long enough for git to see its move as a rename.
fn guide() -> String {
    (1..=40).map(|n| format!("Step {n}: do the thing number {n} carefully.\n")).collect()
}

/// The repository of the test: the person's own `.git`, with a nested repository in `vendor/lib`.
fn build(setup: &Setup) {
    setup.write("README.md", "# Project\n\nA test project.\n");
    setup.write("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n");
    setup.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    setup.write("docs/guide.md", guide());
    setup.write("run.sh", "#!/bin/sh\necho run\n");
    setup.chmod("run.sh", 0o755);
    setup.write("image.bin", binary(70_000, 1));
    setup.write("config.txt", "colour = red\nsize = 3\n");
    setup.write("big.dat", vec![b'z'; BIG_BYTES]);
    setup.write(".gitignore", "target/\n*.log\n");
    setup.write("target/debug/app.o", binary(1_000, 2));
    setup.write("debug.log", "a log line\n");
    setup.write(".hidden/env", "KEY=value\n");
    std::os::unix::fs::symlink("README.md", setup.path("link")).expect("symlink");
    setup.write("vendor/lib/code.c", "int code(void) { return 1; }\n");
    git(&setup.workspace, &["init", "--quiet"]);
    git(&setup.path("vendor/lib"), &["init", "--quiet"]);
    git(&setup.path("vendor/lib"), &["add", "code.c"]);
    git(&setup.path("vendor/lib"), &["commit", "--quiet", "-m", "vendored"]);
    git(
        &setup.workspace,
        &[
            "add",
            "README.md",
            "src",
            "docs",
            "run.sh",
            "image.bin",
            "config.txt",
            ".gitignore",
            "link",
            ".hidden",
        ],
    );
    git(&setup.workspace, &["commit", "--quiet", "-m", "first"]);
}

fn change(kind: ChangeKind, path: &str) -> FileChange {
    FileChange { path: path.to_owned(), kind }
}

#[test]
fn a_round_trip_restores_every_changed_file_and_never_touches_a_git_folder() {
    let setup = Setup::new();
    build(&setup);
    let user_git = fingerprint(&setup.path(".git"));
    let nested_git = fingerprint(&setup.path("vendor/lib/.git"));
    let ignored =
        [fingerprint(&setup.path("target")), fingerprint(&setup.workspace)].map(|files| {
            files
                .into_iter()
                .filter(|(path, _)| !path.starts_with(".git"))
                .collect::<BTreeMap<_, _>>()
        });
    let changed_paths = [
        "config.txt",
        "docs/guide.md",
        "image.bin",
        "run.sh",
        "src/lib.rs",
        "src/main.rs",
        "vendor/lib/code.c",
    ];
    let before: BTreeMap<&str, Vec<u8>> =
        changed_paths.iter().map(|path| (*path, setup.read(path))).collect();

    let shadow = setup.shadow();
    let start = shadow.snapshot("frame f1 started", 1_700_000_000_000).expect("snapshot S");
    assert_eq!(start.skipped_total, 1);
    assert_eq!(start.skipped[0].path, "big.dat");
    assert_eq!(start.skipped[0].reason, SkipReason::TooLarge { bytes: BIG_BYTES as u64 });
    assert_eq!(shadow.skipped(&start.commit).expect("skipped"), start.skipped);
    let tree = setup.tree_paths(&start.commit);
    assert_eq!(
        tree,
        [
            ".gitignore",
            ".hidden/env",
            "README.md",
            "config.txt",
            "docs/guide.md",
            "image.bin",
            "link",
            "run.sh",
            "src/lib.rs",
            "src/main.rs",
            "vendor/lib/code.c",
        ]
    );
    assert_eq!(start.files, tree.len());
    let entries = shadow
        .entries(
            &start.commit,
            &["link".into(), "run.sh".into(), "README.md".into(), "nothing".into()],
        )
        .expect("entries");
    assert_eq!(entries["link"].as_ref().map(|entry| entry.mode), Some(0o120_000));
    assert_eq!(entries["run.sh"].as_ref().map(|entry| entry.mode), Some(0o100_755));
    assert_eq!(entries["README.md"].as_ref().map(|entry| entry.mode), Some(0o100_644));
    assert_eq!(entries["nothing"], None);

    // The changes a frame might make, one of them through a command as the agent runs them.
    setup.write("src/main.rs", "fn main() {\n    println!(\"goodbye\");\n}\n");
    std::fs::remove_file(setup.path("src/lib.rs")).expect("delete");
    std::fs::rename(setup.path("docs/guide.md"), setup.path("docs/manual.md")).expect("rename");
    setup.write("notes/new.txt", "a new note\n");
    setup.chmod("run.sh", 0o644);
    setup.write("vendor/lib/code.c", "int code(void) { return 2; }\n");
    setup.write("image.bin", binary(70_000, 9));
    let sed = Command::new("bash")
        .args(["-c", "sed -i 's/red/blue/' config.txt"])
        .current_dir(&setup.workspace)
        .status()
        .expect("bash");
    assert!(sed.success());
    let end = shadow.snapshot("before write_file", 1_700_000_060_000).expect("snapshot E");

    let changes = shadow.changed(&start.commit, &end.commit).expect("changed");
    assert_eq!(
        changes,
        [
            change(ChangeKind::Modified, "config.txt"),
            change(ChangeKind::Deleted, "docs/guide.md"),
            change(ChangeKind::Added, "docs/manual.md"),
            change(ChangeKind::Modified, "image.bin"),
            change(ChangeKind::Added, "notes/new.txt"),
            change(ChangeKind::ModeChanged, "run.sh"),
            change(ChangeKind::Deleted, "src/lib.rs"),
            change(ChangeKind::Modified, "src/main.rs"),
            change(ChangeKind::Modified, "vendor/lib/code.c"),
        ]
    );

    let diff = shadow.diff(&start.commit, &end.commit, None).expect("diff");
    assert!(!diff.truncated);
    let stat = |path: &str| {
        diff.files.iter().find(|file| file.path == path).unwrap_or_else(|| panic!("{path}"))
    };
    assert_eq!(stat("docs/manual.md").old_path.as_deref(), Some("docs/guide.md"));
    assert!(diff.files.iter().all(|file| file.path != "docs/guide.md"), "the rename is one entry");
    assert!(stat("image.bin").binary);
    assert_eq!((stat("src/main.rs").added_lines, stat("src/main.rs").removed_lines), (1, 1));
    assert_eq!(stat("run.sh").kind, ChangeKind::ModeChanged);
    assert!(
        diff.patch.contains("rename from docs/guide.md\nrename to docs/manual.md\n"),
        "{}",
        diff.patch
    );
    assert!(
        diff.patch.contains("Binary files a/image.bin and b/image.bin differ"),
        "{}",
        diff.patch
    );
    assert!(diff.patch.contains("-colour = red\n+colour = blue\n"), "{}", diff.patch);
    assert!(diff.patch.contains("old mode 100755\nnew mode 100644"), "{}", diff.patch);
    assert!(!diff.patch.contains('\u{1b}'), "no colour");
    let limited =
        shadow.diff(&start.commit, &end.commit, Some(&["src/main.rs".to_owned()])).expect("diff");
    assert_eq!(limited.files.len(), 1);
    assert!(
        limited.patch.starts_with("diff --git a/src/main.rs b/src/main.rs\n"),
        "{}",
        limited.patch
    );

    let paths: Vec<String> = changes.iter().map(|change| change.path.clone()).collect();
    let restored = shadow.restore(&start.commit, &paths).expect("restore");
    assert_eq!(
        restored.written,
        [
            "config.txt",
            "docs/guide.md",
            "image.bin",
            "run.sh",
            "src/lib.rs",
            "src/main.rs",
            "vendor/lib/code.c"
        ]
    );
    assert_eq!(restored.deleted, ["docs/manual.md", "notes/new.txt"]);
    assert!(restored.unchanged.is_empty() && restored.not_restored.is_empty());
    for (path, content) in &before {
        assert_eq!(&setup.read(path), content, "{path} is back");
    }
    assert_eq!(setup.mode("run.sh"), 0o755);
    assert_eq!(setup.mode("src/main.rs"), 0o644);
    assert!(!setup.path("docs/manual.md").exists());
    assert!(!setup.path("notes").exists(), "the folder the new file emptied is gone");
    assert_eq!(
        std::fs::read_link(setup.path("link")).expect("link"),
        std::path::Path::new("README.md")
    );

    // Restoring again changes nothing and says so.
    let again = shadow.restore(&start.commit, &paths).expect("restore again");
    assert!(again.written.is_empty() && again.deleted.is_empty(), "{again:?}");
    assert_eq!(again.unchanged.len(), paths.len());

    // A snapshot of the restored workspace has the first snapshot's tree.
    let back = shadow.snapshot("after the rollback", 1_700_000_120_000).expect("snapshot");
    assert_eq!(shadow.changed(&start.commit, &back.commit).expect("changed"), []);
    assert_eq!(tree_id(&setup, &back.commit), tree_id(&setup, &start.commit));
    let same = shadow.snapshot("nothing changed", 1_700_000_180_000).expect("snapshot");
    assert_eq!(tree_id(&setup, &same.commit), tree_id(&setup, &back.commit));

    assert_eq!(fingerprint(&setup.path(".git")), user_git, "the person's .git is untouched");
    assert_eq!(
        fingerprint(&setup.path("vendor/lib/.git")),
        nested_git,
        "the nested .git is untouched"
    );
    let ignored_after =
        [fingerprint(&setup.path("target")), fingerprint(&setup.workspace)].map(|files| {
            files
                .into_iter()
                .filter(|(path, _)| !path.starts_with(".git"))
                .collect::<BTreeMap<_, _>>()
        });
    assert_eq!(ignored_after[0], ignored[0], "ignored files are untouched");
    for path in ["big.dat", "debug.log"] {
        assert_eq!(
            ignored_after[1].get(std::path::Path::new(path)),
            ignored[1].get(std::path::Path::new(path))
        );
    }
    for snapshot in [&start.commit, &end.commit, &back.commit] {
        assert!(
            setup
                .tree_paths(snapshot)
                .iter()
                .all(|path| !path.split('/').any(|part| part == ".git"))
        );
    }
}

fn tree_id(setup: &Setup, commit: &CommitId) -> String {
    let output = Command::new("git")
        .args(["rev-parse", &format!("{commit}^{{tree}}")])
        .env("GIT_DIR", &setup.shadow_dir)
        .output()
        .expect("git rev-parse");
    String::from_utf8(output.stdout).expect("UTF-8").trim().to_owned()
}

#[test]
fn a_folder_and_a_file_can_trade_places_in_one_restore() {
    let setup = Setup::new();
    setup.write("a", "a file\n");
    setup.write("b/inner.txt", "inside b\n");
    let shadow = setup.shadow();
    let start = shadow.snapshot("start", 0).expect("snapshot");
    std::fs::remove_file(setup.path("a")).expect("delete");
    setup.write("a/x.txt", "now a folder\n");
    std::fs::remove_dir_all(setup.path("b")).expect("delete");
    setup.write("b", "now a file\n");
    let end = shadow.snapshot("end", 1).expect("snapshot");
    let paths: Vec<String> = shadow
        .changed(&start.commit, &end.commit)
        .expect("changed")
        .into_iter()
        .map(|change| change.path)
        .collect();
    assert_eq!(paths, ["a", "a/x.txt", "b", "b/inner.txt"]);
    let restored = shadow.restore(&start.commit, &paths).expect("restore");
    assert_eq!(restored.written, ["a", "b/inner.txt"]);
    assert_eq!(restored.deleted, ["a/x.txt", "b"]);
    assert_eq!(setup.read("a"), b"a file\n");
    assert_eq!(setup.read("b/inner.txt"), b"inside b\n");
}

#[test]
fn odd_names_and_a_space_in_the_workspace_path_survive() {
    let setup = Setup::new();
    assert!(setup.workspace.to_string_lossy().contains(' '));
    let odd = [
        "line\nbreak.txt",
        "tab\there.txt",
        "star*.txt",
        "quote\"d 'name'.txt",
        "é accent.txt",
        "-dash.txt",
    ];
    for (n, name) in odd.iter().enumerate() {
        setup.write(name, format!("content {n}\n"));
    }
    // A name that is not UTF-8 cannot be a path of this API: it is skipped and said so.
    let not_utf8 = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"caf\xe9.txt");
    std::fs::write(setup.workspace.join(not_utf8), "latin-1 name\n").expect("write");
    let shadow = setup.shadow();
    let start = shadow.snapshot("start", 0).expect("snapshot");
    assert_eq!(start.files, odd.len());
    assert_eq!(start.skipped.len(), 1);
    assert_eq!(start.skipped[0].path, "caf\u{fffd}.txt");
    assert!(
        matches!(&start.skipped[0].reason, SkipReason::Unreadable { error } if error.contains("UTF-8"))
    );

    for name in odd {
        setup.write(name, "changed\n");
    }
    let end = shadow.snapshot("end", 1).expect("snapshot");
    let changes = shadow.changed(&start.commit, &end.commit).expect("changed");
    let mut names: Vec<&str> = odd.to_vec();
    names.sort();
    assert_eq!(changes.iter().map(|change| change.path.as_str()).collect::<Vec<_>>(), names);
    let paths: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
    let diff = shadow.diff(&start.commit, &end.commit, Some(&paths)).expect("diff");
    assert_eq!(diff.files.len(), odd.len());
    shadow.restore(&start.commit, &paths).expect("restore");
    for (n, name) in odd.iter().enumerate() {
        assert_eq!(setup.read(name), format!("content {n}\n").as_bytes(), "{name:?}");
    }
}

#[test]
fn restore_refuses_paths_outside_the_workspace_or_in_a_git_folder() {
    let setup = Setup::new();
    setup.write("inside/file.txt", "x\n");
    let outside = tempfile::TempDir::new().expect("temporary folder");
    std::os::unix::fs::symlink(outside.path(), setup.path("out")).expect("symlink");
    let shadow = setup.shadow();
    let start = shadow.snapshot("start", 0).expect("snapshot");
    for path in
        ["../escape.txt", "/etc/passwd", ".git/config", "inside/../../x", "vendor/.git/HEAD"]
    {
        let error = shadow.restore(&start.commit, &[path.to_owned()]).expect_err(path);
        assert!(matches!(error, CheckpointError::OutsideWorkspace(_)), "{path}: {error}");
    }
    // `out/x` is absent from the snapshot, so restoring it would delete through the link.
    std::fs::write(outside.path().join("x"), "outside\n").expect("write");
    let error =
        shadow.restore(&start.commit, &["out/x".to_owned()]).expect_err("through a symlink");
    assert!(
        matches!(&error, CheckpointError::ThroughSymlink { link, .. } if link == "out"),
        "{error}"
    );
    assert_eq!(std::fs::read(outside.path().join("x")).expect("still there"), b"outside\n");
}

#[test]
fn an_unknown_commit_is_a_typed_error() {
    let setup = Setup::new();
    setup.write("a", "a\n");
    let shadow = setup.shadow();
    let start = shadow.snapshot("start", 0).expect("snapshot");
    let unknown = CommitId::parse(&"0123456789".repeat(4)).expect("an id");
    for error in [
        shadow.changed(&start.commit, &unknown).expect_err("changed"),
        shadow.diff(&unknown, &start.commit, None).expect_err("diff"),
        shadow.restore(&unknown, &["a".to_owned()]).expect_err("restore"),
        shadow.entries(&unknown, &["a".to_owned()]).expect_err("entries"),
    ] {
        assert!(matches!(&error, CheckpointError::UnknownCommit(id) if *id == unknown), "{error}");
    }
    assert!(CommitId::parse("HEAD").is_err());
    assert!(CommitId::parse(&"g".repeat(40)).is_err());
    assert_eq!(CommitId::parse(&"AB".repeat(20)).expect("upper case").as_str(), "ab".repeat(20));
}

#[test]
fn a_symlink_is_stored_as_a_link_and_restored_as_one() {
    let setup = Setup::new();
    std::os::unix::fs::symlink("/nowhere/at/all", setup.path("dangling")).expect("symlink");
    std::os::unix::fs::symlink("/etc", setup.path("etc")).expect("symlink");
    let shadow = setup.shadow();
    let start = shadow.snapshot("start", 0).expect("snapshot");
    assert_eq!(
        setup.tree_paths(&start.commit),
        ["dangling", "etc"],
        "a link to a folder is not followed"
    );
    std::fs::remove_file(setup.path("dangling")).expect("delete");
    setup.write("dangling", "now a file\n");
    let end = shadow.snapshot("end", 1).expect("snapshot");
    assert_eq!(
        shadow.changed(&start.commit, &end.commit).expect("changed"),
        [change(ChangeKind::TypeChanged, "dangling")]
    );
    let entries = shadow.entries(&end.commit, &["dangling".to_owned()]).expect("entries");
    assert!(matches!(&entries["dangling"], Some(Entry { mode: 0o100_644, .. })));
    shadow.restore(&start.commit, &["dangling".to_owned()]).expect("restore");
    assert_eq!(
        std::fs::read_link(setup.path("dangling")).expect("a link again"),
        std::path::Path::new("/nowhere/at/all")
    );
}

/// A snapshot hands git only the files whose stat differs from what the index records
/// (`index.rs`). A file rewritten to the same size, dated a second after its old date, is still
/// seen as modified; so are a file that only became executable and one replaced by a link, while
/// an untouched file is not handed to git at all. The files are dated in the past, so no index
/// entry is racily clean, which would have git look at them whatever their stat. (git itself
/// compares whole seconds: a rewrite to the same size that also put back the old date within the
/// same second would go unseen by git, as by `git status`.)
#[test]
fn a_rewrite_to_the_same_size_is_still_seen() {
    use std::time::{Duration, SystemTime};
    let setup = Setup::new();
    let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    let date = |name: &str, at: SystemTime| {
        let file = std::fs::File::options().write(true).open(setup.path(name)).expect("open");
        file.set_modified(at).expect("set the time");
    };
    for name in ["same.txt", "other.txt", "tool.sh", "soon-a-link.txt"] {
        setup.write(name, format!("{name} as it was\n"));
        date(name, past);
    }
    let shadow = setup.shadow();
    let start = shadow.snapshot("start", 0).expect("snapshot");

    setup.write("same.txt", "same.txt as it is!\n");
    date("same.txt", past + Duration::from_secs(1));
    setup.chmod("tool.sh", 0o755);
    std::fs::remove_file(setup.path("soon-a-link.txt")).expect("delete");
    std::os::unix::fs::symlink("other.txt", setup.path("soon-a-link.txt")).expect("symlink");
    let end = shadow.snapshot("end", 1).expect("snapshot");

    let changes = shadow.changed(&start.commit, &end.commit).expect("changed");
    let kinds: Vec<(&str, ChangeKind)> =
        changes.iter().map(|change| (change.path.as_str(), change.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("same.txt", ChangeKind::Modified),
            ("soon-a-link.txt", ChangeKind::TypeChanged),
            ("tool.sh", ChangeKind::ModeChanged),
        ]
    );
}
