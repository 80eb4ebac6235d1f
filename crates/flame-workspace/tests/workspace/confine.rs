use std::os::unix::fs::symlink;

use flame_workspace::{Workspace, WorkspaceError};

use crate::Fixture;

#[test]
fn plain_and_absolute_paths_inside_resolve_to_relative_names() {
    let f = Fixture::new();
    f.put("src/a.rs", "x");
    let resolved = f.workspace.resolve("src/./b/../a.rs").expect("inside");
    assert_eq!(resolved.relative, "src/a.rs");
    assert_eq!(resolved.real, f.root().join("src/a.rs"));
    let absolute = f.root().join("src/a.rs");
    let resolved = f.workspace.resolve(absolute.to_str().expect("utf-8")).expect("inside");
    assert_eq!(resolved.relative, "src/a.rs");
    // A file that does not exist yet, under folders that do not either.
    let resolved = f.workspace.resolve("new/deep/file.txt").expect("inside");
    assert_eq!(resolved.relative, "new/deep/file.txt");
}

#[test]
fn the_root_given_through_a_link_is_still_the_root() {
    let f = Fixture::new();
    let link = f.outer.path().join("link-to-ws");
    symlink(f.root(), &link).expect("symlink");
    let workspace = Workspace::open(&link).expect("open through the link");
    assert_eq!(workspace.root(), f.root());
    let spelt = link.join("a.txt");
    let resolved = workspace.resolve(spelt.to_str().expect("utf-8")).expect("inside");
    assert_eq!(resolved.relative, "a.txt");
}

#[test]
fn dot_dot_leading_out_is_refused() {
    let f = Fixture::new();
    for path in ["../outside/x", "a/../../x", "..", "src/../../ws/../x"] {
        let error = f.workspace.resolve(path).expect_err(path);
        assert!(matches!(error, WorkspaceError::Outside { .. }), "{path}: {error:?}");
        assert!(error.to_string().contains("outside the workspace"), "{error}");
    }
}

#[test]
fn absolute_paths_outside_are_refused() {
    let f = Fixture::new();
    let outside = f.outside().join("secret.txt");
    for path in ["/etc/passwd", outside.to_str().expect("utf-8"), "/"] {
        let error = f.workspace.resolve(path).expect_err(path);
        assert!(matches!(error, WorkspaceError::Outside { .. }), "{path}: {error:?}");
    }
    assert!(f.workspace.read_file("/etc/passwd", None).is_err());
}

#[test]
fn a_symlink_inside_pointing_outside_is_refused_for_reading_and_writing() {
    let f = Fixture::new();
    let outside = f.outside();
    std::fs::write(outside.join("secret.txt"), "secret").expect("write");
    symlink(&outside, f.root().join("out")).expect("symlink to a folder");
    symlink(outside.join("secret.txt"), f.root().join("secret-link")).expect("symlink to a file");

    for path in ["out/secret.txt", "secret-link", "out"] {
        let error = f.workspace.read_file(path, None).expect_err(path);
        assert!(matches!(error, WorkspaceError::SymlinkOutside { .. }), "{path}: {error:?}");
        assert!(error.to_string().contains("leads outside the workspace"), "{error}");
    }
    let error = f.workspace.write_file("out/new.txt", "x".into()).expect_err("write through");
    assert!(matches!(error, WorkspaceError::SymlinkOutside { .. }), "{error:?}");
    assert!(!outside.join("new.txt").exists());
    let error = f.workspace.write_file("secret-link", "changed".into()).expect_err("replace");
    assert!(matches!(error, WorkspaceError::SymlinkOutside { .. }), "{error:?}");
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).expect("read"), "secret");
}

#[test]
fn a_dangling_symlink_is_refused_so_writing_cannot_create_its_target() {
    let f = Fixture::new();
    let outside = f.outside();
    symlink(outside.join("planted.txt"), f.root().join("evil")).expect("symlink");
    let error = f.workspace.write_file("evil", "x".into()).expect_err("dangling");
    assert!(matches!(error, WorkspaceError::DanglingSymlink { .. }), "{error:?}");
    assert!(!outside.join("planted.txt").exists());
}

#[test]
fn a_symlink_loop_is_refused() {
    let f = Fixture::new();
    symlink("b", f.root().join("a")).expect("symlink");
    symlink("a", f.root().join("b")).expect("symlink");
    for path in ["a", "a/file.txt"] {
        let error = f.workspace.read_file(path, None).expect_err(path);
        assert!(matches!(error, WorkspaceError::SymlinkLoop { .. }), "{path}: {error:?}");
    }
    let error = f.workspace.write_file("b/x", "x".into()).expect_err("loop");
    assert!(matches!(error, WorkspaceError::SymlinkLoop { .. }), "{error:?}");
}

#[test]
fn a_symlink_that_stays_inside_is_followed_and_named_by_its_target() {
    let f = Fixture::new();
    f.put("real/file.txt", "one\n");
    symlink("real", f.root().join("alias")).expect("symlink");
    symlink("real/file.txt", f.root().join("file-link")).expect("symlink");
    let read = f.workspace.read_file("alias/file.txt", None).expect("inside");
    assert_eq!(read.path, "real/file.txt");
    // Writing through the link replaces the target's content and leaves the link a link.
    f.workspace.write_file("file-link", "two\n".into()).expect("write");
    assert_eq!(f.get("real/file.txt"), "two\n");
    let meta = std::fs::symlink_metadata(f.root().join("file-link")).expect("meta");
    assert!(meta.file_type().is_symlink());
}

#[test]
fn nothing_inside_git_is_written_or_read_in_a_real_repository() {
    let f = Fixture::new();
    f.git_init();
    let config_before = f.get(".git/config");
    for path in [".git/config", ".git/hooks/pre-commit", "sub/.git/x", ".GIT/config", "./.git"] {
        let error = f.workspace.write_file(path, "x".into()).expect_err(path);
        assert!(matches!(error, WorkspaceError::GitDirectory { .. }), "{path}: {error:?}");
        assert!(error.to_string().contains("run_command"), "{error}");
    }
    let error = f.workspace.read_file(".git/HEAD", None).expect_err("read .git");
    assert!(matches!(error, WorkspaceError::GitDirectory { .. }), "{error:?}");
    // A link to .git under another name is caught on its real path.
    symlink(".git", f.root().join("g")).expect("symlink");
    let error = f.workspace.write_file("g/hooks/pre-commit", "x".into()).expect_err("alias");
    assert!(matches!(error, WorkspaceError::GitDirectory { .. }), "{error:?}");
    let error = f.workspace.read_file("g/config", None).expect_err("read through the alias");
    assert!(matches!(error, WorkspaceError::GitDirectory { .. }), "{error:?}");
    let error = f.workspace.prepare_write("g/config", "x".into()).expect_err("prepare");
    assert!(matches!(error, WorkspaceError::GitDirectory { .. }), "{error:?}");
    let error =
        f.workspace.edit_file("g/config", "[core]", "[evil]", false).expect_err("edit alias");
    assert!(matches!(error, WorkspaceError::GitDirectory { .. }), "{error:?}");
    assert!(!f.root().join(".git/hooks/pre-commit").exists());
    assert_eq!(f.get(".git/config"), config_before);
    // A file merely named like it is fine.
    f.workspace.write_file(".gitignore", "target\n".into()).expect("a .gitignore is ordinary");
}

#[test]
fn the_root_itself_is_not_a_file_path() {
    let f = Fixture::new();
    for path in ["", ".", "a/..", f.root().to_str().expect("utf-8")] {
        let error = f.workspace.resolve(path).expect_err(path);
        assert!(matches!(error, WorkspaceError::NotAFilePath { .. }), "{path:?}: {error:?}");
    }
}

#[test]
fn opening_a_missing_folder_or_a_file_fails() {
    let f = Fixture::new();
    let missing = f.outer.path().join("missing");
    assert!(matches!(Workspace::open(&missing), Err(WorkspaceError::Root { .. })));
    f.put("file.txt", "x");
    let file = f.root().join("file.txt");
    assert!(matches!(Workspace::open(&file), Err(WorkspaceError::RootNotDirectory { .. })));
}

/// Swaps `folder` (inside the workspace) back and forth with a link to `outside` until `stop`,
/// as an attacker racing the tools would: the two names are exchanged atomically, so at any
/// moment the name is either the real folder or the link.
fn swap_until(
    folder: std::path::PathBuf,
    outside: std::path::PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let link = folder.with_extension("link");
        symlink(&outside, &link).expect("the link");
        let mut swaps = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let cwd = rustix::fs::CWD;
            rustix::fs::renameat_with(cwd, &folder, cwd, &link, rustix::fs::RenameFlags::EXCHANGE)
                .expect("exchange the folder and the link");
            swaps += 1;
        }
        // Left as it began: the folder under its name.
        if swaps % 2 == 1 {
            let cwd = rustix::fs::CWD;
            rustix::fs::renameat_with(cwd, &folder, cwd, &link, rustix::fs::RenameFlags::EXCHANGE)
                .expect("exchange back");
        }
        swaps
    })
}

#[test]
fn a_folder_swapped_for_a_link_while_tools_work_never_lets_them_outside() {
    let f = Fixture::new();
    let outside = f.outside();
    std::fs::write(outside.join("secret.txt"), "SECRET-OUTSIDE\n").expect("the secret");
    f.put("sub/secret.txt", "inside\n");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = swap_until(f.root().join("sub"), outside.clone(), stop.clone());
    let (mut writes, mut reads, mut leaked) = (0, 0, 0);
    for n in 0..400 {
        if f.workspace.write_file(&format!("sub/w{n}.txt"), "written\n".into()).is_ok() {
            writes += 1;
        }
        for _ in 0..2 {
            if let Ok(read) = f.workspace.read_file("sub/secret.txt", None) {
                reads += 1;
                leaked += u32::from(read.text.contains("SECRET-OUTSIDE"));
            }
        }
        let query = flame_workspace::SearchQuery {
            pattern: "SECRET-OUTSIDE".into(),
            glob: None,
            context_lines: 0,
            case_insensitive: false,
        };
        if let Ok(found) = f.workspace.search(&query) {
            leaked += u32::try_from(found.total_matches).expect("few");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().expect("the swapping thread");
    let landed: Vec<_> = std::fs::read_dir(&outside)
        .expect("outside")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name != "secret.txt")
        .collect();
    assert!(swaps > 100, "the race hardly ran: {swaps} swaps");
    assert!(writes > 0 && reads > 0, "nothing got through at all: {writes} writes, {reads} reads");
    assert_eq!(landed, Vec::<String>::new(), "writes or temporary files landed outside");
    assert_eq!(leaked, 0, "reads or searches saw the file outside");
}

#[test]
fn a_hard_link_to_a_file_outside_is_neither_read_searched_nor_changed() {
    let f = Fixture::new();
    let outside = f.outside().join("secret.txt");
    std::fs::write(&outside, "SECRET-OUTSIDE\n").expect("the secret");
    std::fs::hard_link(&outside, f.root().join("innocent.txt")).expect("a hard link");
    f.put("plain.txt", "SECRET-OUTSIDE is a phrase\n");

    let error = f.workspace.read_file("innocent.txt", None).expect_err("read");
    assert!(matches!(error, WorkspaceError::HardLinked { links: 2, .. }), "{error:?}");
    assert!(error.to_string().contains("2 hard links"), "{error}");
    let error = f.workspace.prepare_edit("innocent.txt", "SECRET", "X", false).expect_err("edit");
    assert!(matches!(error, WorkspaceError::HardLinked { .. }), "{error:?}");
    let error = f.workspace.prepare_write("innocent.txt", "x".into()).expect_err("write");
    assert!(matches!(error, WorkspaceError::HardLinked { .. }), "{error:?}");

    let query = flame_workspace::SearchQuery {
        pattern: "SECRET-OUTSIDE".into(),
        glob: None,
        context_lines: 0,
        case_insensitive: false,
    };
    let found = f.workspace.search(&query).expect("search");
    let paths: Vec<&str> = found.hits.iter().map(|hit| hit.path.as_str()).collect();
    assert_eq!(paths, ["plain.txt"]);
    assert_eq!(found.linked_files_skipped, 1);
    assert!(found.render().contains("1 file(s) with more than one hard link skipped"));
    assert_eq!(std::fs::read_to_string(&outside).expect("outside"), "SECRET-OUTSIDE\n");
}
