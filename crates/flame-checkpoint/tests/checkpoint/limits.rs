//! The limits on what a snapshot takes in, gone past with small limits.

use flame_checkpoint::{ChangeKind, CheckpointError, FileChange, SkipReason, SnapshotLimits};

use crate::fixture::Setup;

#[test]
fn past_max_files_the_snapshot_is_refused() {
    let setup = Setup::new();
    for n in 0..5 {
        setup.write(&format!("f{n}.txt"), "x\n");
    }
    setup.write(".gitignore", "ignored/\n");
    for n in 0..20 {
        setup.write(&format!("ignored/{n}.txt"), "not counted\n");
    }
    // Five files and the .gitignore: six, at the limit.
    let at_limit = setup.shadow().with_limits(SnapshotLimits { max_file_bytes: 100, max_files: 6 });
    assert_eq!(at_limit.snapshot("six", 0).expect("at the limit").files, 6);
    let past = setup.shadow().with_limits(SnapshotLimits { max_file_bytes: 100, max_files: 5 });
    let error = past.snapshot("seven", 0).expect_err("past the limit");
    assert!(matches!(error, CheckpointError::TooManyFiles { limit: 5, found: 6 }), "{error}");
    assert!(error.to_string().contains("more than 5 files"), "{error}");
}

#[test]
fn past_max_file_bytes_a_file_is_skipped_and_not_taken_for_deleted() {
    let setup = Setup::new();
    setup.write("small.txt", vec![b'a'; 10]);
    setup.write("grows.txt", vec![b'b'; 10]);
    let shadow = setup.shadow().with_limits(SnapshotLimits { max_file_bytes: 10, max_files: 100 });
    let start = shadow.snapshot("start", 0).expect("snapshot");
    assert_eq!((start.files, start.skipped_total), (2, 0));

    setup.write("grows.txt", vec![b'c'; 11]);
    let end = shadow.snapshot("end", 1).expect("snapshot");
    assert_eq!(end.files, 1);
    assert_eq!(end.skipped[0].path, "grows.txt");
    assert_eq!(end.skipped[0].reason, SkipReason::TooLarge { bytes: 11 });
    let changes = shadow.changed(&start.commit, &end.commit).expect("changed");
    assert_eq!(
        changes,
        [FileChange { path: "grows.txt".into(), kind: ChangeKind::NotSnapshotted }]
    );
    let diff = shadow.diff(&start.commit, &end.commit, None).expect("diff");
    assert_eq!(diff.files[0].kind, ChangeKind::NotSnapshotted);

    // Restoring the snapshot that skipped it leaves it as it is, and says why.
    let restored = shadow.restore(&end.commit, &["grows.txt".to_owned()]).expect("restore");
    assert_eq!(restored.not_restored, end.skipped);
    assert_eq!(setup.read("grows.txt"), vec![b'c'; 11]);
    // Restoring the snapshot that held it puts the old content back.
    let restored = shadow.restore(&start.commit, &["grows.txt".to_owned()]).expect("restore");
    assert_eq!(restored.written, ["grows.txt"]);
    assert_eq!(setup.read("grows.txt"), vec![b'b'; 10]);
}

#[test]
fn special_files_are_skipped() {
    let setup = Setup::new();
    setup.write("plain.txt", "x\n");
    let status =
        std::process::Command::new("mkfifo").arg(setup.path("pipe")).status().expect("mkfifo");
    assert!(status.success());
    let snapshot = setup.shadow().snapshot("start", 0).expect("snapshot");
    assert_eq!(snapshot.files, 1);
    let skipped: Vec<_> = snapshot.skipped.iter().map(|s| (s.path.as_str(), &s.reason)).collect();
    assert_eq!(skipped, [("pipe", &SkipReason::Special)]);
    assert!(snapshot.skipped[0].signature.is_some());
}

#[test]
fn an_unreadable_file_is_skipped_with_its_reason() {
    let setup = Setup::new();
    setup.write("secret.txt", "x\n");
    setup.chmod("secret.txt", 0o000);
    if std::fs::read(setup.path("secret.txt")).is_ok() {
        // Root reads any file, so there is nothing unreadable to skip.
        let mut out = std::io::stdout();
        std::io::Write::write_all(
            &mut out,
            b"skipped: this process can read a file with mode 000 (root)\n",
        )
        .expect("stdout");
        return;
    }
    let snapshot = setup.shadow().snapshot("start", 0).expect("snapshot");
    assert_eq!(snapshot.files, 0);
    assert!(
        matches!(&snapshot.skipped[0].reason, SkipReason::Unreadable { error } if error.contains("denied"))
    );
}

#[test]
fn the_diff_is_cut_at_its_cap_on_a_line_end() {
    let setup = Setup::new();
    // Three files of 1.2 MB of lines: their patch is past MAX_DIFF_BYTES.
    let lines =
        |tag: &str| (0..40_000).map(|n| format!("{tag} line number {n:08}\n")).collect::<String>();
    for name in ["a.txt", "b.txt", "c.txt"] {
        setup.write(name, lines("old"));
    }
    let shadow = setup.shadow();
    let start = shadow.snapshot("start", 0).expect("snapshot");
    for name in ["a.txt", "b.txt", "c.txt"] {
        setup.write(name, lines("new"));
    }
    let end = shadow.snapshot("end", 1).expect("snapshot");
    let diff = shadow.diff(&start.commit, &end.commit, None).expect("diff");
    assert!(diff.truncated);
    assert!(diff.patch.len() <= flame_checkpoint::MAX_DIFF_BYTES);
    assert!(diff.patch.len() > flame_checkpoint::MAX_DIFF_BYTES - 100);
    assert!(diff.patch.ends_with('\n'));
    assert_eq!(diff.files.len(), 3, "the stats are whole");
    assert_eq!(diff.files[2].added_lines, 40_000);
}

#[test]
fn a_skipped_file_that_changes_is_named_and_one_that_does_not_is_not() {
    let setup = Setup::new();
    setup.write("big.bin", vec![b'a'; 20]);
    setup.write("still.bin", vec![b's'; 20]);
    let shadow = setup.shadow().with_limits(SnapshotLimits { max_file_bytes: 10, max_files: 100 });
    let start = shadow.snapshot("start", 0).expect("snapshot");
    // Skipped in both snapshots, same size: only its signature tells it changed.
    setup.write("big.bin", vec![b'b'; 20]);
    setup.write("new-big.bin", vec![b'n'; 20]);
    let end = shadow.snapshot("end", 1).expect("snapshot");
    let changes = shadow.changed(&start.commit, &end.commit).expect("changed");
    assert_eq!(
        changes,
        [
            FileChange { path: "big.bin".into(), kind: ChangeKind::NotSnapshotted },
            FileChange { path: "new-big.bin".into(), kind: ChangeKind::NotSnapshotted },
        ]
    );
    let diff = shadow.diff(&start.commit, &end.commit, Some(&["big.bin".into()])).expect("diff");
    let files: Vec<_> = diff.files.iter().map(|f| (f.path.as_str(), f.kind)).collect();
    assert_eq!(files, [("big.bin", ChangeKind::NotSnapshotted)]);

    std::fs::remove_file(setup.path("big.bin")).expect("remove");
    let gone = shadow.snapshot("gone", 2).expect("snapshot");
    let changes = shadow.changed(&end.commit, &gone.commit).expect("changed");
    assert_eq!(changes, [FileChange { path: "big.bin".into(), kind: ChangeKind::Deleted }]);
}

#[test]
fn a_file_whose_name_is_not_utf8_is_named_when_it_changes() {
    use std::os::unix::ffi::OsStrExt;
    let setup = Setup::new();
    setup.write("plain.txt", "x\n");
    let shadow = setup.shadow();
    let start = shadow.snapshot("start", 0).expect("snapshot");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(setup.path("").join(name), "made by a command\n").expect("write");
    let end = shadow.snapshot("end", 1).expect("snapshot");
    let changes = shadow.changed(&start.commit, &end.commit).expect("changed");
    assert_eq!(
        changes,
        [FileChange { path: "caf\u{fffd}.txt".into(), kind: ChangeKind::NotSnapshotted }]
    );
}
