//! Checkpoints through the facade, on real folders: a frame's start checkpoint, what its calls
//! changed, its changes as a diff, and rollback — restored, refused when later work or someone
//! outside Flame changed the same files, run again after an interruption, and the retry from
//! where a failed frame started. The calls' changes are made directly on disk between the
//! checkpoints the agent takes around a call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use flame_api::{ErrorCode, FileChangeKind, Flame, FlameConfig, PopRequest, RollbackOffer};
use flame_model::lifecycle::PopStatus;
use flame_model::{Actor, CheckpointReason, EventKind, FrameId, Status};

use crate::Scratch;

const A: Actor = Actor::Person;

fn pop(status: PopStatus) -> PopRequest {
    PopRequest {
        status,
        results: Some("done".into()),
        results_compacted: None,
        artifacts: vec![],
        decisions: vec![],
        reason: (status != PopStatus::Completed).then(|| "it went wrong".into()),
    }
}

/// A workspace that is a git repository of the person's own, with two committed files.
fn workspace() -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::create_dir(folder.path().join("src")).unwrap();
    std::fs::write(folder.path().join("src/b.rs"), "fn b() {}\n").unwrap();
    git(folder.path(), &["init", "-q"]);
    git(folder.path(), &["add", "-A"]);
    git(folder.path(), &["commit", "-q", "-m", "start"]);
    folder
}

fn git(folder: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(folder)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Person")
        .env("GIT_AUTHOR_EMAIL", "person@example.com")
        .env("GIT_COMMITTER_NAME", "Person")
        .env("GIT_COMMITTER_EMAIL", "person@example.com")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Every file under `folder` with its bytes.
fn files_under(folder: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// One changing call of `frame`: the checkpoint before, `change` on disk, the checkpoint after.
fn call(flame: &Flame, frame: &FrameId, id: &str, change: impl FnOnce()) -> Vec<String> {
    flame.checkpoint(frame, CheckpointReason::BeforeCall, Some(id)).unwrap().unwrap();
    change();
    flame.checkpoint(frame, CheckpointReason::AfterCall, Some(id)).unwrap().unwrap().changed
}

fn read(folder: &Path, path: &str) -> String {
    std::fs::read_to_string(folder.join(path)).unwrap()
}

#[test]
fn a_failed_frames_changes_are_shown_and_rolled_back_and_the_users_git_is_untouched() {
    let s = Scratch::new(1);
    let folder = workspace();
    let git_before = files_under(&folder.path().join(".git"));
    let tree = s.flame.create_tree(A, "Work", "Done", Some(folder.path())).unwrap();
    let frame = s.flame.push(A, Some(&tree.root), "Edit", "Two files changed").unwrap();
    let ws = folder.path();

    let changed = call(&s.flame, &frame.id, "c1", || {
        std::fs::write(ws.join("a.txt"), "alpha\nbeta\n").unwrap();
    });
    assert_eq!(changed, ["a.txt"]);
    // A command changes what no edit tool named: the checkpoints find it.
    let changed = call(&s.flame, &frame.id, "c2", || {
        let status = std::process::Command::new("bash")
            .args(["-c", "sed -i 's/fn b/fn bee/' src/b.rs && echo new > src/c.rs"])
            .current_dir(ws)
            .status()
            .unwrap();
        assert!(status.success());
    });
    assert_eq!(changed, ["src/b.rs", "src/c.rs"]);

    let running = s.flame.frame_changes(&frame.id, false).unwrap();
    assert_eq!(running.until, None, "a running frame's changes end now");
    assert!(matches!(running.roll_back, RollbackOffer::Unavailable { .. }));
    let refused = s.flame.rollback(A, &frame.id).unwrap_err();
    assert_eq!(refused.code, ErrorCode::Refused);
    assert!(refused.message.contains("in_progress"), "{}", refused.message);

    s.flame.pop(A, Some(&frame.id), &pop(PopStatus::Failed)).unwrap();
    let changes = s.flame.frame_changes(&frame.id, false).unwrap();
    assert_eq!(changes.unavailable, None);
    assert!(changes.until.is_some());
    assert_eq!(changes.roll_back, RollbackOffer::Offered);
    let kinds: Vec<(&str, FileChangeKind)> =
        changes.files.iter().map(|f| (f.path.as_str(), f.change)).collect();
    assert_eq!(
        kinds,
        [
            ("a.txt", FileChangeKind::Modified),
            ("src/b.rs", FileChangeKind::Modified),
            ("src/c.rs", FileChangeKind::Added)
        ]
    );
    assert!(changes.patch.contains("+beta"), "{}", changes.patch);
    assert!(changes.patch.contains("+fn bee() {}"), "{}", changes.patch);

    let outcome = s.flame.rollback(A, &frame.id).unwrap();
    assert_eq!(outcome.restored, ["a.txt", "src/b.rs"]);
    assert_eq!(outcome.deleted, ["src/c.rs"]);
    assert!(outcome.frame.rolled_back_at.is_some());
    assert_eq!(read(ws, "a.txt"), "alpha\n");
    assert_eq!(read(ws, "src/b.rs"), "fn b() {}\n");
    assert!(!ws.join("src/c.rs").exists());
    assert_eq!(files_under(&ws.join(".git")), git_before, "the person's .git is byte-identical");

    let events = s.flame.events_since(0, 1000).unwrap();
    let rolled = events.iter().find(|e| e.kind == EventKind::RolledBack).unwrap();
    assert_eq!(rolled.frame, frame.id);
    assert!(s.flame.log(&frame.id).unwrap().contains("rolled back"));
    let outline = s.flame.outline(Some(&tree.id)).unwrap();
    let drawn = outline.frames.iter().find(|f| f.id == frame.id).unwrap();
    assert_eq!(drawn.rolled_back_at, outcome.frame.rolled_back_at, "the graph can mark it");

    let after = s.flame.frame_changes(&frame.id, false).unwrap();
    assert!(after.files.is_empty(), "{:?}", after.files);
    assert_eq!(
        after.roll_back,
        RollbackOffer::Unavailable { reason: "its files are as they were when it started".into() }
    );
    // Run again, it finds every file already as it was and changes nothing.
    let again = s.flame.rollback(A, &frame.id).unwrap();
    assert!(again.restored.is_empty() && again.deleted.is_empty());
    assert_eq!(again.unchanged.len(), 3);
}

#[test]
fn a_rollback_interrupted_part_way_finishes_when_run_again() {
    let s = Scratch::new(2);
    let folder = workspace();
    let ws = folder.path();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(ws)).unwrap();
    let frame = s.flame.push(A, Some(&tree.root), "Edit", "Both").unwrap();
    call(&s.flame, &frame.id, "c1", || {
        std::fs::write(ws.join("a.txt"), "changed\n").unwrap();
        std::fs::write(ws.join("src/b.rs"), "changed\n").unwrap();
    });
    s.flame.pop(A, Some(&frame.id), &pop(PopStatus::Blocked)).unwrap();
    // As if a rollback killed after its first file: a.txt is back, src/b.rs is not.
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
    let outcome = s.flame.rollback(A, &frame.id).unwrap();
    assert_eq!(outcome.restored, ["src/b.rs"]);
    assert_eq!(outcome.unchanged, ["a.txt"]);
    assert_eq!(read(ws, "src/b.rs"), "fn b() {}\n");
}

#[test]
fn a_rollback_is_refused_when_a_later_frame_changed_the_same_file() {
    let s = Scratch::new(3);
    let folder = workspace();
    let ws = folder.path();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(ws)).unwrap();
    let first = s.flame.push(A, Some(&tree.root), "First", "a").unwrap();
    call(&s.flame, &first.id, "c1", || std::fs::write(ws.join("a.txt"), "first\n").unwrap());
    s.flame.pop(A, Some(&first.id), &pop(PopStatus::Failed)).unwrap();
    let later = s.flame.push(A, Some(&tree.root), "Later", "a again").unwrap();
    call(&s.flame, &later.id, "c2", || std::fs::write(ws.join("a.txt"), "later\n").unwrap());
    s.flame.pop(A, Some(&later.id), &pop(PopStatus::Completed)).unwrap();

    let err = s.flame.rollback(A, &first.id).unwrap_err();
    assert_eq!(err.code, ErrorCode::Refused);
    assert!(err.message.contains("a.txt"), "{}", err.message);
    assert!(err.message.contains(later.id.as_str()), "{}", err.message);
    assert!(err.message.contains("\"Later\""), "{}", err.message);
    assert_eq!(read(ws, "a.txt"), "later\n", "nothing was overwritten");
    assert_eq!(s.flame.frame(&first.id).unwrap().frame.rolled_back_at, None);

    // The later frame itself can be rolled back: nothing came after it.
    s.flame.rollback(A, &later.id).unwrap();
    assert_eq!(read(ws, "a.txt"), "first\n");
}

#[test]
fn a_rollback_is_refused_when_the_file_was_changed_outside_flame() {
    let s = Scratch::new(4);
    let folder = workspace();
    let ws = folder.path();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(ws)).unwrap();
    let frame = s.flame.push(A, Some(&tree.root), "Edit", "a").unwrap();
    call(&s.flame, &frame.id, "c1", || std::fs::write(ws.join("a.txt"), "agent\n").unwrap());
    s.flame.pop(A, Some(&frame.id), &pop(PopStatus::Failed)).unwrap();
    std::fs::write(ws.join("a.txt"), "the person's own edit\n").unwrap();

    let err = s.flame.rollback(A, &frame.id).unwrap_err();
    assert!(err.message.contains("a.txt: changed outside Flame"), "{}", err.message);
    assert_eq!(read(ws, "a.txt"), "the person's own edit\n");
}

/// Bytes past what a snapshot holds (`flame_checkpoint::MAX_SNAPSHOT_FILE_BYTES`).
fn too_large(fill: u8) -> Vec<u8> {
    vec![fill; usize::try_from(flame_checkpoint::MAX_SNAPSHOT_FILE_BYTES).unwrap() + 1]
}

/// A frame of a new tree on `ws` that made one changing call, `change`, and failed.
fn failed_after(s: &Scratch, ws: &Path, change: impl FnOnce()) -> FrameId {
    let tree = s.flame.create_tree(A, "Work", "Done", Some(ws)).unwrap();
    let frame = s.flame.push(A, Some(&tree.root), "Change", "a").unwrap();
    call(&s.flame, &frame.id, "c1", change);
    s.flame.pop(A, Some(&frame.id), &pop(PopStatus::Failed)).unwrap();
    frame.id
}

/// Rolls back `frame`, which edited `a.txt` and changed `unseen`, a file no snapshot holds:
/// `unseen` is named in its changes and in what the rollback did not restore.
fn assert_named_and_not_restored(s: &Scratch, frame: &FrameId, unseen: &str) {
    let changes = s.flame.frame_changes(frame, false).unwrap();
    let files: Vec<_> = changes.files.iter().map(|f| (f.path.as_str(), f.change)).collect();
    assert_eq!(
        files,
        [("a.txt", FileChangeKind::Modified), (unseen, FileChangeKind::NotSnapshotted)]
    );
    let outcome = s.flame.rollback(A, frame).unwrap();
    assert_eq!(outcome.restored, ["a.txt"]);
    assert_eq!(outcome.not_restored, [unseen]);
}

#[test]
fn a_rollback_never_overwrites_a_later_edit_of_a_file_too_large_to_snapshot() {
    let s = Scratch::new(11);
    let folder = workspace();
    let ws = folder.path();
    let frame = failed_after(&s, ws, || std::fs::write(ws.join("a.txt"), too_large(b'x')).unwrap());
    // The person's edit of the file, still too large for a snapshot, and as large as before.
    std::fs::write(ws.join("a.txt"), too_large(b'y')).unwrap();

    let err = s.flame.rollback(A, &frame).unwrap_err();
    assert!(err.message.contains("a.txt: changed outside Flame"), "{}", err.message);
    assert_eq!(std::fs::read(ws.join("a.txt")).unwrap(), too_large(b'y'));
}

#[test]
fn a_file_too_large_to_snapshot_is_in_the_changes_and_in_what_was_not_restored() {
    let s = Scratch::new(12);
    let folder = workspace();
    let ws = folder.path();
    std::fs::write(ws.join("data.bin"), too_large(b'a')).unwrap();
    let frame = failed_after(&s, ws, || {
        std::fs::write(ws.join("data.bin"), too_large(b'b')).unwrap();
        std::fs::write(ws.join("a.txt"), "edited\n").unwrap();
    });
    assert_named_and_not_restored(&s, &frame, "data.bin");
    assert_eq!(std::fs::read(ws.join("data.bin")).unwrap(), too_large(b'b'));
}

#[test]
fn a_file_whose_name_is_not_utf8_is_in_the_changes_and_in_what_was_not_restored() {
    use std::os::unix::ffi::OsStrExt;
    let s = Scratch::new(15);
    let folder = workspace();
    let ws = folder.path();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    let frame = failed_after(&s, ws, || {
        std::fs::write(ws.join(name), "made by a command\n").unwrap();
        std::fs::write(ws.join("a.txt"), "edited\n").unwrap();
    });
    assert_named_and_not_restored(&s, &frame, "caf\u{fffd}.txt");
    assert!(ws.join(name).exists(), "a file the rollback cannot name is left as it is");
}

#[test]
fn a_rollback_never_overwrites_a_later_edit_of_a_file_the_frame_made_ignored() {
    let s = Scratch::new(13);
    let folder = workspace();
    let ws = folder.path();
    let frame = failed_after(&s, ws, || {
        std::fs::write(ws.join("a.txt"), "agent\n").unwrap();
        std::fs::write(ws.join(".gitignore"), "a.txt\n").unwrap();
    });
    std::fs::write(ws.join("a.txt"), "the person's own edit\n").unwrap();

    let err = s.flame.rollback(A, &frame).unwrap_err();
    assert!(err.message.contains("a.txt: ignored by .gitignore now"), "{}", err.message);
    assert_eq!(read(ws, "a.txt"), "the person's own edit\n");
    assert_eq!(read(ws, ".gitignore"), "a.txt\n", "nothing was changed");
}

#[test]
fn a_rollback_never_deletes_a_file_that_was_ignored_when_the_frame_started() {
    let s = Scratch::new(14);
    let folder = workspace();
    let ws = folder.path();
    std::fs::write(ws.join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(ws.join("keep.log"), "the person's notes\n").unwrap();
    let frame = failed_after(&s, ws, || std::fs::write(ws.join(".gitignore"), "").unwrap());
    let changes = s.flame.frame_changes(&frame, false).unwrap();
    let files: Vec<_> = changes.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, [".gitignore", "keep.log"]);

    let err = s.flame.rollback(A, &frame).unwrap_err();
    assert!(
        err.message.contains("keep.log: not in the checkpoint from when the frame started"),
        "{}",
        err.message
    );
    assert_eq!(read(ws, "keep.log"), "the person's notes\n");
}

#[test]
fn retrying_from_where_it_started_rolls_back_first() {
    let s = Scratch::new(5);
    let folder = workspace();
    let ws = folder.path();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(ws)).unwrap();
    let frame = s.flame.push(A, Some(&tree.root), "Edit", "a").unwrap();
    call(&s.flame, &frame.id, "c1", || std::fs::write(ws.join("a.txt"), "wrong\n").unwrap());
    s.flame.pop(A, Some(&frame.id), &pop(PopStatus::Failed)).unwrap();

    let retry = s.flame.retry_from_start(A, &frame.id).unwrap();
    assert_eq!(retry.status, Status::InProgress);
    assert_eq!(retry.retry_of.as_ref(), Some(&frame.id));
    assert_eq!(read(ws, "a.txt"), "alpha\n");
    let changes = s.flame.frame_changes(&retry.id, false).unwrap();
    assert_eq!(changes.unavailable, None, "the retry has its own start checkpoint");
    assert!(changes.files.is_empty());
}

#[test]
fn a_parents_rollback_covers_its_childrens_changes_and_the_subtree_diff_names_them() {
    let s = Scratch::new(6);
    let folder = workspace();
    let ws = folder.path();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(ws)).unwrap();
    let parent = s.flame.push(A, Some(&tree.root), "Parent", "p").unwrap();
    call(&s.flame, &parent.id, "p1", || std::fs::write(ws.join("a.txt"), "parent\n").unwrap());
    let child = s.flame.push(A, Some(&parent.id), "Child", "c").unwrap();
    call(&s.flame, &child.id, "c1", || std::fs::write(ws.join("src/b.rs"), "child\n").unwrap());
    s.flame.pop(A, Some(&child.id), &pop(PopStatus::Completed)).unwrap();
    s.flame.pop(A, Some(&parent.id), &pop(PopStatus::Failed)).unwrap();

    let own = s.flame.frame_changes(&parent.id, false).unwrap();
    assert_eq!(own.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["a.txt"]);
    let all = s.flame.frame_changes(&parent.id, true).unwrap();
    assert_eq!(
        all.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["a.txt", "src/b.rs"]
    );
    assert_eq!(
        s.flame.frame_changes(&child.id, false).unwrap().roll_back,
        RollbackOffer::OnRequest
    );

    let outcome = s.flame.rollback(A, &parent.id).unwrap();
    assert_eq!(outcome.restored, ["a.txt", "src/b.rs"]);
    assert_eq!(read(ws, "src/b.rs"), "fn b() {}\n");
}

#[test]
fn a_tree_without_a_workspace_has_no_changes_and_deleting_a_tree_frees_its_checkpoints() {
    let s = Scratch::new(7);
    let bare = s.flame.create_tree(A, "Talk", "Done", None).unwrap();
    let changes = s.flame.frame_changes(&bare.root, false).unwrap();
    assert_eq!(changes.unavailable.as_deref(), Some("this tree has no workspace folder"));
    assert!(s.flame.checkpoint(&bare.root, CheckpointReason::Start, None).unwrap().is_none());

    let folder = workspace();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(folder.path())).unwrap();
    let frame = s.flame.push(A, Some(&tree.root), "Edit", "a").unwrap();
    call(&s.flame, &frame.id, "c1", || {
        std::fs::write(folder.path().join("a.txt"), "x".repeat(100_000)).unwrap()
    });
    let storage = s.flame.checkpoint_storage().unwrap();
    assert_eq!(storage.len(), 1);
    assert_eq!(storage[0].checkpoints, 4, "the root's and the frame's starts, before and after");
    let before = storage[0].bytes;
    // A workspace folder deleted since still has its storage listed.
    let moved = tempfile::tempdir().unwrap();
    std::fs::rename(folder.path(), moved.path().join("away")).unwrap();
    assert_eq!(s.flame.checkpoint_storage().unwrap()[0].bytes, before);
    std::fs::rename(moved.path().join("away"), folder.path()).unwrap();
    s.flame.delete_tree(A, &tree.id).unwrap();
    assert!(s.flame.checkpoint_storage().unwrap().is_empty());
    // The shadow repository stays for the workspace; what only the tree kept is gone.
    let shadow = s.dir.path().join("checkpoints");
    assert!(shadow.exists());
    assert!(before > 0);
}

#[test]
fn checkpoints_over_the_cap_are_pruned_oldest_first() {
    let s = Scratch::new(8);
    let folder = workspace();
    let ws = folder.path();
    let tree = s.flame.create_tree(A, "Work", "Done", Some(ws)).unwrap();
    let frame = s.flame.push(A, Some(&tree.root), "Edit", "a").unwrap();
    s.flame.reconfigure(FlameConfig { checkpoint_cap_bytes: 1, ..FlameConfig::default() });
    for n in 0..6 {
        call(&s.flame, &frame.id, &format!("c{n}"), || {
            std::fs::write(ws.join("a.txt"), format!("version {n}\n")).unwrap()
        });
    }
    let storage = s.flame.checkpoint_storage().unwrap();
    assert_eq!(storage[0].checkpoints, 1, "only the newest is kept under a tiny cap");
    let changes = s.flame.frame_changes(&frame.id, false).unwrap();
    assert!(changes.unavailable.unwrap().contains("pruned"));
}
