//! Keeping the shadow's size in check: forgetting snapshots and collecting what nothing keeps.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::git::Git;
use crate::snapshot::REF_PREFIX;
use crate::{CheckpointError, CommitId, io_error};

pub(crate) fn forget(git: &Git, commits: &[CommitId]) -> Result<(), CheckpointError> {
    if commits.is_empty() {
        return Ok(());
    }
    let mut input = String::new();
    for commit in commits {
        input.push_str(&format!("delete {REF_PREFIX}{commit}\n"));
    }
    let _lock = git.lock()?;
    git.run(&["update-ref", "--stdin"], Some(input.as_bytes()))?;
    Ok(())
}

pub(crate) fn collect(git: &Git) -> Result<u64, CheckpointError> {
    // Under the lock: a snapshot's new objects are not yet reachable until its ref is written, and
    // pruning them then would break it.
    let _lock = git.lock()?;
    git.run(&["gc", "--prune=now", "--quiet"], None)?;
    size_on_disk(git.git_dir())
}

/// The blocks allocated to every file under `folder`, in bytes.
pub(crate) fn size_on_disk(folder: &Path) -> Result<u64, CheckpointError> {
    let mut total = 0;
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries =
            std::fs::read_dir(&current).map_err(io_error(format!("list {}", current.display())))?;
        for entry in entries {
            let entry = entry.map_err(io_error(format!("list {}", current.display())))?;
            // A file deleted while this runs (a concurrent gc) is simply not counted.
            let Ok(metadata) = entry.path().symlink_metadata() else { continue };
            if metadata.is_dir() {
                pending.push(entry.path());
            }
            total += metadata.blocks() * 512;
        }
    }
    Ok(total)
}
