//! The walk that decides what a snapshot holds.
//!
//! ripgrep's `ignore` crate walks the workspace in parallel: `.gitignore` files are honoured in
//! every folder whether or not a `.git` exists, and so is `.git/info/exclude`; the person's global
//! excludes are not read (a snapshot must not depend on who runs it); hidden files are included;
//! links are not followed; and no entry named `.git`, at any depth and whether folder or file, is
//! entered or listed, so a nested repository is kept as plain files without its `.git`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ignore::{WalkBuilder, WalkState};

use crate::index::FileStat;
use crate::reserved::{is_git_name, is_restore_temporary};
use crate::{CheckpointError, SkipReason, Skipped, SnapshotLimits};

/// What the walk found: the paths a snapshot holds and those it leaves out, both sorted, and
/// each held path's stat (`stats[i]` is `files[i]`'s; `None` for a link).
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub(crate) files: Vec<String>,
    pub(crate) stats: Vec<Option<FileStat>>,
    pub(crate) skipped: Vec<Skipped>,
}

enum Found {
    File(String, Option<FileStat>),
    Skipped(Skipped),
}

/// Walks `root`, leaving out `shadow` when it lies inside it.
pub(crate) fn walk(
    root: &Path,
    shadow: &Path,
    limits: &SnapshotLimits,
) -> Result<Walked, CheckpointError> {
    let found = Mutex::new(Vec::new());
    let files = AtomicUsize::new(0);
    let shadow = shadow.to_path_buf();
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            !is_git_name(entry.file_name())
                && !is_restore_temporary(entry.file_name())
                && entry.path() != shadow
        });
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            let item = match entry {
                Ok(entry) => {
                    if entry.depth() == 0 {
                        return WalkState::Continue;
                    }
                    match examine(root, &entry, limits) {
                        Some(item) => item,
                        None => return WalkState::Continue,
                    }
                }
                Err(error) => {
                    // Only a folder or file that could not be read is a skipped path; a bad
                    // pattern in a .gitignore is not, and is passed over as git passes it over.
                    let path = error_path(&error)
                        .and_then(|path| path.strip_prefix(root).ok().map(Path::to_path_buf))
                        .filter(|path| !path.as_os_str().is_empty());
                    match (error.io_error(), path) {
                        (Some(_), Some(path)) => Found::Skipped(Skipped {
                            signature: signature(&root.join(&path)),
                            path: path.to_string_lossy().into_owned(),
                            reason: SkipReason::Unreadable { error: error.to_string() },
                        }),
                        _ => return WalkState::Continue,
                    }
                }
            };
            let is_file = matches!(item, Found::File(..));
            found.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(item);
            if is_file && files.fetch_add(1, Ordering::Relaxed) + 1 > limits.max_files {
                return WalkState::Quit;
            }
            WalkState::Continue
        })
    });
    let counted = files.load(Ordering::Relaxed);
    if counted > limits.max_files {
        return Err(CheckpointError::TooManyFiles { limit: limits.max_files, found: counted });
    }
    let mut files = Vec::new();
    let mut walked = Walked::default();
    for item in found.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        match item {
            Found::File(path, stat) => files.push((path, stat)),
            Found::Skipped(skipped) => walked.skipped.push(skipped),
        }
    }
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    (walked.files, walked.stats) = files.into_iter().unzip();
    walked.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(walked)
}

/// What one walked entry is: a file to hold, a skipped path, or nothing (a folder).
fn examine(root: &Path, entry: &ignore::DirEntry, limits: &SnapshotLimits) -> Option<Found> {
    let file_type = entry.file_type()?;
    if file_type.is_dir() {
        return None;
    }
    let relative = entry.path().strip_prefix(root).ok()?;
    let skipped = |path: String, reason| {
        Some(Found::Skipped(Skipped { path, reason, signature: signature(entry.path()) }))
    };
    let Some(path) = relative.to_str() else {
        return skipped(
            relative.to_string_lossy().into_owned(),
            SkipReason::Unreadable { error: "the name is not UTF-8".to_owned() },
        );
    };
    let path = path.to_owned();
    if file_type.is_symlink() {
        return Some(Found::File(path, None));
    }
    if !file_type.is_file() {
        return skipped(path, SkipReason::Special);
    }
    let metadata = match entry.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return skipped(path, SkipReason::Unreadable { error: error.to_string() }),
    };
    if metadata.len() > limits.max_file_bytes {
        return skipped(path, SkipReason::TooLarge { bytes: metadata.len() });
    }
    // git stops the whole snapshot on a file it cannot open, so such a file is left out here.
    if let Err(error) = nix::unistd::access(entry.path(), nix::unistd::AccessFlags::R_OK) {
        let error = std::io::Error::from(error).to_string();
        return skipped(path, SkipReason::Unreadable { error });
    }
    Some(Found::File(path, FileStat::of(&metadata)))
}

/// A skipped file's signature (see [`Skipped::signature`]): its size, modification and change
/// times to the nanosecond and its inode, as its metadata says without following a link. A file
/// written again changes its change time at least, whatever it does to the rest.
pub(crate) fn signature(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(format!(
        "{}:{}.{:09}:{}.{:09}:{}",
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.ino()
    ))
}

fn error_path(error: &ignore::Error) -> Option<PathBuf> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        ignore::Error::Partial(errors) => errors.iter().find_map(error_path),
        _ => None,
    }
}
