//! Taking a snapshot: the walk's paths fed to the shadow's index, then a tree and a commit.
//!
//! `git update-index --add --remove` skips every path whose stat still matches its index entry,
//! so after the first snapshot only changed files are read and hashed. Paths the index holds but
//! the walk did not find (deleted, newly ignored or now skipped) are removed from it first. Each
//! snapshot is a root commit of its own, kept by the ref `refs/flame/<commit>`.

use std::collections::HashSet;

use crate::git::Git;
use crate::{CheckpointError, CommitId, Snapshot, SnapshotLimits, io_error, message, walk};

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
    // The index listing runs while the workspace is walked.
    let (indexed, walked) = std::thread::scope(|scope| {
        let listing = scope.spawn(|| git.run(&["ls-files", "-z"], None));
        let walked = walk::walk(root, git.git_dir(), limits);
        let indexed = listing
            .join()
            .unwrap_or_else(|_| Err(CheckpointError::Unexpected("ls-files panicked".into())));
        (indexed, walked)
    });
    let (indexed, walked) = (indexed?, walked?);

    let kept: HashSet<&[u8]> = walked.files.iter().map(|path| path.as_bytes()).collect();
    let mut gone = Vec::new();
    let (mut indexed_count, mut gone_count) = (0, 0);
    for path in indexed.split(|byte| *byte == 0).filter(|path| !path.is_empty()) {
        indexed_count += 1;
        if !kept.contains(path) {
            gone_count += 1;
            gone.extend_from_slice(path);
            gone.push(0);
        }
    }
    if !gone.is_empty() {
        git.run(&["update-index", "--force-remove", "-z", "--stdin"], Some(&gone))?;
    }
    let new_paths = walked.files.len().saturating_sub(indexed_count - gone_count);
    if new_paths >= BULK_NEW_PATHS && git.bulk_checkin() {
        let indexed: HashSet<&[u8]> = indexed.split(|byte| *byte == 0).collect();
        let new: Vec<&str> = walked
            .files
            .iter()
            .map(String::as_str)
            .filter(|path| !indexed.contains(path.as_bytes()))
            .collect();
        store_blobs_in_parallel(git, &new)?;
    }
    // `--remove`: a file deleted since the walk saw it is removed rather than stopping the run.
    git.run(
        &["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
        Some(&nul_separated(&walked.files)),
    )?;
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
