//! Forgetting and collecting, and two snapshots at once.

use flame_checkpoint::CheckpointError;

use crate::fixture::{Setup, binary};

#[test]
fn forget_and_collect_shrink_the_shadow() {
    let setup = Setup::new();
    setup.write("keep.txt", "kept\n");
    let shadow = setup.shadow();
    let mut commits = Vec::new();
    for n in 0..12u8 {
        // Content that does not compress, so each snapshot costs about 200 KB.
        setup.write("data.bin", binary(200_000, n));
        commits.push(
            shadow
                .snapshot(&format!("snapshot {n}"), i64::from(n) * 1000)
                .expect("snapshot")
                .commit,
        );
    }
    let before = shadow.size_on_disk().expect("size");
    assert!(before > 12 * 200_000, "{before}");
    shadow.forget(&commits[1..]).expect("forget");
    // Forgetting twice is not an error.
    shadow.forget(&commits[1..2]).expect("forget again");
    let after = shadow.collect().expect("collect");
    assert_eq!(after, shadow.size_on_disk().expect("size"));
    assert!(after < before / 2, "{after} of {before}");
    // What is kept is whole; what is forgotten is gone.
    assert_eq!(shadow.skipped(&commits[0]).expect("kept"), []);
    shadow.restore(&commits[0], &["data.bin".to_owned()]).expect("restore the kept snapshot");
    assert_eq!(setup.read("data.bin"), binary(200_000, 0));
    let error = shadow.changed(&commits[0], &commits[5]).expect_err("forgotten");
    assert!(matches!(error, CheckpointError::UnknownCommit(_)), "{error}");
}

#[test]
fn two_threads_snapshot_one_workspace_at_once() {
    let setup = Setup::new();
    for n in 0..200 {
        setup.write(&format!("folder{}/file{n}.txt", n % 10), format!("file {n}\n"));
    }
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|thread| {
                let setup = &setup;
                scope.spawn(move || {
                    let shadow = setup.shadow();
                    (0..5)
                        .map(|n| shadow.snapshot("concurrent", thread * 100 + n))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|handle| handle.join().expect("thread")).collect()
    });
    assert_eq!(results.len(), 10);
    for result in results {
        assert_eq!(result.expect("every snapshot succeeds").files, 200);
    }
}

/// Threads opening a shadow that does not exist yet, all at once, each open it: none reads it
/// while another is still creating it (past `git init`, before the workspace is recorded).
#[test]
fn threads_opening_a_new_shadow_at_once_all_open_it() {
    // The threads set out a millisecond apart, so that some arrive while the first is creating
    // the shadow, whatever this machine's speed.
    for _ in 0..10 {
        let setup = Setup::new();
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|scope| {
            for thread in 0..8 {
                let (setup, start) = (&setup, &start);
                scope.spawn(move || {
                    start.wait();
                    std::thread::sleep(std::time::Duration::from_millis(thread));
                    flame_checkpoint::Shadow::open(&setup.shadow_dir, &setup.workspace)
                        .expect("every thread opens the shadow");
                });
            }
        });
    }
}

#[test]
fn a_shadow_belongs_to_one_workspace() {
    let setup = Setup::new();
    setup.shadow();
    let other = Setup::new();
    let error = flame_checkpoint::Shadow::open(&setup.shadow_dir, &other.workspace)
        .expect_err("another workspace");
    assert!(matches!(error, CheckpointError::OtherWorkspace { .. }), "{error}");
    let error = flame_checkpoint::Shadow::open(&setup.workspace.join(".git"), &setup.workspace)
        .expect_err(".git");
    assert!(matches!(error, CheckpointError::ShadowInGitFolder(_)), "{error}");
    assert!(!setup.workspace.join(".git").exists());
}

#[test]
fn a_lock_file_left_by_a_killed_git_does_not_stop_the_next_snapshot() {
    let setup = Setup::new();
    setup.write("a.txt", "a\n");
    let shadow = setup.shadow();
    shadow.snapshot("first", 0).expect("snapshot");
    // What `git update-index` leaves when it is killed while writing the index.
    std::fs::write(setup.shadow_dir.join("flame-index.lock"), "").expect("write");
    setup.write("a.txt", "b\n");
    shadow.snapshot("second", 1000).expect("the stale lock is cleared");
}

#[test]
fn many_new_files_go_into_packs_and_come_back_whole() {
    let setup = Setup::new();
    for n in 0..1_200 {
        setup.write(&format!("folder{}/file{n}.txt", n % 12), format!("file number {n}\n"));
    }
    let shadow = setup.shadow();
    let start = shadow.snapshot("many", 0).expect("snapshot");
    assert_eq!(start.files, 1_200);
    // The blobs are in packs: only the trees and the commit are loose object files.
    let objects = setup.shadow_dir.join("objects");
    let loose: usize = std::fs::read_dir(&objects)
        .expect("objects")
        .flatten()
        .filter(|entry| entry.file_name().len() == 2)
        .map(|entry| std::fs::read_dir(entry.path()).expect("fan-out folder").count())
        .sum();
    assert!(loose <= 14, "{loose} loose objects");
    for n in [0, 599, 1_199] {
        setup.write(&format!("folder{}/file{n}.txt", n % 12), "changed\n");
    }
    let end = shadow.snapshot("three changed", 1000).expect("snapshot");
    let paths: Vec<String> = shadow
        .changed(&start.commit, &end.commit)
        .expect("changed")
        .into_iter()
        .map(|change| change.path)
        .collect();
    assert_eq!(paths.len(), 3);
    shadow.restore(&start.commit, &paths).expect("restore");
    assert_eq!(setup.read("folder11/file599.txt"), b"file number 599\n");
}
