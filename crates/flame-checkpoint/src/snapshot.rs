//! Taking a snapshot: the walk's paths fed to the shadow's index, then a tree and a commit.
//!
//! `git update-index --add --remove` skips every path whose stat still matches its index entry,
//! so after the first snapshot only changed files are read and hashed. It is handed only the
//! paths whose stat, as the walk read it, differs from what the index records (`index.rs`), so
//! an unchanged file is not even read again by git. Paths the index holds but the walk did not
//! find (deleted, newly ignored or now skipped) are removed from it first. Each snapshot is a
//! root commit of its own, kept by the ref `refs/flame/<commit>`.

use std::collections::HashSet;

use crate::git::Git;
use crate::index::{self, Index};
use crate::walk::{self, Walked};
use crate::{CheckpointError, CommitId, Snapshot, SnapshotLimits, io_error, message};

pub(crate) const REF_PREFIX: &str = "refs/flame/";

/// From this many paths new to the index, a snapshot writes their blobs into one pack.
const BULK_NEW_PATHS: usize = 1_000;

pub(crate) fn snapshot(
    git: &Git,
    limits: &SnapshotLimits,
    label: &str,
    at: i64,
) -> Result<Snapshot, CheckpointError> {
    let root = git.work_tree();
    // An unreadable workspace would look empty, as if every file were deleted.
    std::fs::read_dir(root).map_err(io_error(format!("read the workspace {}", root.display())))?;
    let _lock = git.lock()?;
    // The index is read while the workspace is walked.
    let (index, walked) = std::thread::scope(|scope| {
        let reading = scope.spawn(|| index::read(&git.index_file()));
        let walked = walk::walk(root, git.git_dir(), limits);
        (reading.join().ok().flatten(), walked)
    });
    let walked = walked?;
    let changes = match &index {
        Some(index) => Changes::against(index, &walked),
        None => Changes::listed(git, &walked)?,
    };
    if !changes.gone.is_empty() {
        git.run(&["update-index", "--force-remove", "-z", "--stdin"], Some(&changes.gone))?;
    }
    if changes.new.len() >= BULK_NEW_PATHS && git.bulk_checkin() {
        store_blobs_in_parallel(git, &changes.new)?;
    }
    if !changes.handed.is_empty() {
        // `--remove`: a file deleted since the walk saw it is removed rather than stopping the
        // run.
        git.run(
            &["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
            Some(&nul_separated(&changes.handed)),
        )?;
    }
    let tree = single_line(git.run(&["write-tree"], None)?)?;

    // `@` makes git read the number as seconds since 1970 however small; git has no dates
    // before 1970.
    let date = format!("@{} +0000", at.div_euclid(1000).max(0));
    let text = message::format(label, &walked.skipped);
    let args = ["commit-tree", tree.as_str(), "-F", "-"];
    let mut command = git.command(&args);
    command.env("GIT_AUTHOR_DATE", &date).env("GIT_COMMITTER_DATE", &date);
    let commit =
        CommitId::parse(&single_line(git.run_command(&args, command, Some(text.as_bytes()))?)?)?;
    let reference = format!("{REF_PREFIX}{commit}");
    git.run(&["update-ref", reference.as_str(), commit.as_str()], None)?;

    let skipped_total = walked.skipped.len();
    let mut skipped = walked.skipped;
    skipped.truncate(crate::MAX_SKIPPED_LISTED);
    Ok(Snapshot { commit, skipped, skipped_total, files: walked.files.len() })
}

/// What a snapshot tells git: the paths to remove from the index, those to hand to
/// `update-index` (which reads each again and skips those whose stat matches), and among them
/// those new to the index.
struct Changes<'w> {
    gone: Vec<u8>,
    handed: Vec<&'w str>,
    new: Vec<&'w str>,
}

impl<'w> Changes<'w> {
    /// From the index as read (`index.rs`): only the paths whose stat git would not find
    /// unchanged are handed to git.
    fn against(index: &Index, walked: &'w Walked) -> Changes<'w> {
        let recorded = index.by_path();
        let mut changes = Changes { gone: Vec::new(), handed: Vec::new(), new: Vec::new() };
        for (path, stat) in walked.files.iter().zip(&walked.stats) {
            match recorded.get(path.as_bytes()) {
                None => {
                    changes.new.push(path);
                    changes.handed.push(path);
                }
                Some(entry) if !index.unchanged(*entry, *stat) => changes.handed.push(path),
                Some(_) => {}
            }
        }
        let kept: HashSet<&[u8]> = walked.files.iter().map(|path| path.as_bytes()).collect();
        for (path, _) in &index.entries {
            if !kept.contains(path.as_slice()) {
                changes.gone.extend_from_slice(path);
                changes.gone.push(0);
            }
        }
        changes
    }

    /// From `git ls-files`, for an index this crate cannot read: every walked path is handed to
    /// git.
    fn listed(git: &Git, walked: &'w Walked) -> Result<Changes<'w>, CheckpointError> {
        let listing = git.run(&["ls-files", "-z"], None)?;
        let indexed: HashSet<&[u8]> =
            listing.split(|byte| *byte == 0).filter(|path| !path.is_empty()).collect();
        let kept: HashSet<&[u8]> = walked.files.iter().map(|path| path.as_bytes()).collect();
        let mut gone = Vec::new();
        for path in indexed.iter().filter(|path| !kept.contains(*path)) {
            gone.extend_from_slice(path);
            gone.push(0);
        }
        let handed: Vec<&str> = walked.files.iter().map(String::as_str).collect();
        let new =
            handed.iter().copied().filter(|path| !indexed.contains(path.as_bytes())).collect();
        Ok(Changes { gone, handed, new })
    }
}

/// git's one-line answer (an object id) without its newline.
pub(crate) fn single_line(output: Vec<u8>) -> Result<String, CheckpointError> {
    let text = String::from_utf8(output)
        .map_err(|_| CheckpointError::Unexpected("an id that is not UTF-8".into()))?;
    Ok(text.trim_end().to_owned())
}

fn nul_separated<S: AsRef<str>>(paths: &[S]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(paths.iter().map(|path| path.as_ref().len() + 1).sum());
    for path in paths {
        bytes.extend_from_slice(path.as_ref().as_bytes());
        bytes.push(0);
    }
    bytes
}

/// Stores the blobs of many new files before the snapshot's own `update-index`, in two git
/// processes at once, each writing one pack. Hashing and compressing is most of a first
/// snapshot's time and one git process uses one core; a pack rather than a loose file per blob
/// also saves creating tens of thousands of files. The snapshot's own run then finds each blob
/// stored and only hashes the file to record its stat. Each process uses an index of its own
/// that is thrown away.
fn store_blobs_in_parallel(git: &Git, paths: &[&str]) -> Result<(), CheckpointError> {
    let half = paths.len().div_ceil(2);
    std::thread::scope(|scope| {
        let runs: Vec<_> = paths
            .chunks(half.max(1))
            .enumerate()
            .map(|(number, chunk)| {
                scope.spawn(move || {
                    let index = git.git_dir().join(format!("flame-index-blobs-{number}"));
                    // A throwaway index left by a killed run would make its files look stored.
                    let _ = std::fs::remove_file(&index);
                    let args = ["update-index", "--add", "-z", "--stdin"];
                    let mut command = git.command(&args);
                    command
                        .env("GIT_INDEX_FILE", &index)
                        // Every file is "big", so all blobs of the run go into one pack.
                        .env("GIT_CONFIG_COUNT", "1")
                        .env("GIT_CONFIG_KEY_0", "core.bigFileThreshold")
                        .env("GIT_CONFIG_VALUE_0", "1");
                    let result = git.run_command(&args, command, Some(&nul_separated(chunk)));
                    let _ = std::fs::remove_file(&index);
                    result
                })
            })
            .collect();
        runs.into_iter().try_for_each(|run| {
            run.join()
                .unwrap_or_else(|_| {
                    Err(CheckpointError::Unexpected("a blob store panicked".into()))
                })
                .map(drop)
        })
    })
}
