//! Checkpoints of a workspace folder, kept in a *shadow* git repository.
//!
//! Each workspace gets its own repository in Flame's data directory (`checkpoints/<name>`, see
//! [`shadow_folder_name`]) whose work tree is the workspace. A snapshot is a git commit of the
//! workspace's files as they are now; comparing two snapshots, showing their diff and putting
//! files back as a snapshot had them are what Flame builds per-frame changes and rollback on. This
//! crate knows nothing of frames: it speaks of snapshots ([`CommitId`]).
//!
//! **The user's `.git` is never written, moved or renamed, and git never runs against it.** Every
//! git run has `GIT_DIR` set to the shadow, the walk never enters an entry named `.git` at any
//! depth (a nested repository is kept as plain files, its `.git` left out), and [`Shadow::restore`]
//! refuses any path through a `.git`.
//!
//! Why the `git` program rather than a git library: no C library to build; git's index makes
//! snapshots incremental (a file whose stat still matches its index entry is neither read nor
//! hashed again); and the shadow is in exactly git's format, so a person can inspect it with git.
//! Every run gets a controlled environment (`git.rs`): inherited `GIT_*` variables removed, no
//! system or global configuration, `HOME` pointing at the shadow, fixed author and committer,
//! dates passed in (no hidden clock), and the in-tree `.gitattributes` overridden so that no
//! end-of-line conversion or filter changes what is stored.
//!
//! What a snapshot holds is decided by this crate's own walk (ripgrep's `ignore` crate:
//! `.gitignore` files honoured with or without a `.git`, hidden files included), not by
//! `git add`, which would turn a nested repository into a gitlink. Files over
//! [`SnapshotLimits::max_file_bytes`], special files and unreadable files are left out and listed
//! in the commit's message, so a later comparison can tell "absent because skipped" from
//! "deleted".
//!
//! Two processes (the window and the `flame` command line) may use one shadow at once: every
//! operation that uses the index or changes files holds an exclusive lock on a file in the shadow.
//!
//! `Shadow::open(git_dir, workspace)` opens a workspace's shadow; `snapshot(label, at)` commits
//! what the walk found. Files over `MAX_SNAPSHOT_FILE_BYTES`, special and unreadable files, and
//! names that are not UTF-8 are listed in the commit message with a signature (size, modification
//! and change times, inode), so `changed` and `diff` report them `NotSnapshotted`, not deleted,
//! when they appear, change or leave, and `states` tells a rollback what each snapshot knew of a
//! path (`PathState`). Past `MAX_SNAPSHOT_FILES` files a snapshot is refused. `changed`, `diff`
//! (renames, stats, cut at `MAX_DIFF_BYTES`) and `entries` compare snapshots; `restore` also
//! refuses `..`, absolute paths and paths through links; `forget` and `collect` free what no kept
//! snapshot needs. An `info/attributes` file in the shadow stores every file byte for byte, and an
//! index this crate cannot read has every path handed to git, as before it read indexes. A shadow
//! folder inside any `.git` is refused.

mod compare;
mod git;
mod index;
mod message;
mod name;
mod reserved;
mod restore;
mod snapshot;
mod upkeep;
mod walk;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use name::shadow_folder_name;

/// Files larger than this are not snapshotted (they are listed as skipped): checkpoints are for
/// the sources an agent edits, not for data files, and the limit keeps the shadow small.
pub const MAX_SNAPSHOT_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// The most files one snapshot holds; past it the snapshot is refused
/// ([`CheckpointError::TooManyFiles`]) rather than copying a home folder or a build tree.
pub const MAX_SNAPSHOT_FILES: usize = 500_000;

/// The most bytes of patch text one [`Diff`] carries; past it the patch is cut at a line end and
/// `truncated` is set (the per-file stats are still complete).
pub const MAX_DIFF_BYTES: usize = 2 * 1024 * 1024;

/// The most skipped paths a snapshot's message lists; past it only their count is recorded, and a
/// path absent from a snapshot but not listed is taken as deleted.
pub const MAX_SKIPPED_LISTED: usize = 1_000;

/// The limits one snapshot is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotLimits {
    /// Files larger than this many bytes are skipped.
    pub max_file_bytes: u64,
    /// A workspace with more files than this (after `.gitignore`) is refused.
    pub max_files: usize,
}

impl Default for SnapshotLimits {
    fn default() -> SnapshotLimits {
        SnapshotLimits { max_file_bytes: MAX_SNAPSHOT_FILE_BYTES, max_files: MAX_SNAPSHOT_FILES }
    }
}

/// A snapshot's id: the commit's 40 lowercase hexadecimal digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CommitId(String);

impl CommitId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Reads a commit id: exactly 40 hexadecimal digits (upper case is accepted and lowered).
    pub fn parse(text: &str) -> Result<CommitId, CheckpointError> {
        if text.len() == 40 && text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            Ok(CommitId(text.to_ascii_lowercase()))
        } else {
            Err(CheckpointError::BadCommitId(text.chars().take(80).collect()))
        }
    }
}

impl std::fmt::Display for CommitId {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// A path a snapshot left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Workspace-relative, `/`-separated. A name that is not UTF-8 is shown with U+FFFD in place
    /// of the bytes that are not.
    pub path: String,
    pub reason: SkipReason,
    /// What the file's metadata said when the snapshot left it out (size, modification and
    /// change times, inode), so a later snapshot can tell a skipped file that changed from one
    /// that did not; `None` for a path whose metadata could not be read, or that a snapshot
    /// from before signatures were kept left out.
    pub signature: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SkipReason {
    /// Larger than the snapshot's `max_file_bytes`.
    TooLarge { bytes: u64 },
    /// A socket, fifo or device: nothing a snapshot can hold.
    Special,
    /// Could not be read (permissions, a folder that could not be listed, a name that is not
    /// UTF-8); `error` says which.
    Unreadable { error: String },
}

/// What [`Shadow::snapshot`] made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub commit: CommitId,
    /// The skipped paths in path order, at most [`MAX_SKIPPED_LISTED`].
    pub skipped: Vec<Skipped>,
    /// How many paths were skipped in all.
    pub skipped_total: usize,
    /// How many files (and symlinks) the snapshot holds.
    pub files: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    /// Only the executable bit changed.
    ModeChanged,
    /// A file became a symlink or the other way round.
    TypeChanged,
    /// Absent in `to` because it was too large, special or unreadable there, not deleted.
    NotSnapshotted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    pub kind: ChangeKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiffStat {
    /// The path in `to` (in `from` for a deletion).
    pub path: String,
    /// The path in `from` when git detected a rename (`kind` is then `Modified`).
    pub old_path: Option<String>,
    pub kind: ChangeKind,
    pub added_lines: u64,
    pub removed_lines: u64,
    pub binary: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diff {
    pub files: Vec<FileDiffStat>,
    /// A unified diff in git's format, without colour; binary files are named, not printed. Bytes
    /// that are not UTF-8 are shown as U+FFFD.
    pub patch: String,
    /// The patch was cut at [`MAX_DIFF_BYTES`].
    pub truncated: bool,
}

/// A path's blob and mode in a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Entry {
    /// The git object id of the content (for a symlink, of its target).
    pub oid: String,
    /// Git's mode: `0o100644`, `0o100755` or `0o120000` (a symlink).
    pub mode: u32,
}

/// What a snapshot knows of one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathState {
    /// The snapshot holds it: its blob and mode.
    Held(Entry),
    /// The snapshot left it out (too large, special, unreadable, a name that is not UTF-8).
    Skipped(Skipped),
    /// Not in the snapshot: it did not exist, or `.gitignore` left it out of the walk.
    Absent,
}

impl PathState {
    /// Whether the two are known to be the same file: held with the same content and mode,
    /// absent from both, or left out of both with the same signature. A path left out without
    /// a signature is never known to be the same as anything.
    pub fn same_as(&self, other: &PathState) -> bool {
        match (self, other) {
            (PathState::Held(a), PathState::Held(b)) => a == b,
            (PathState::Absent, PathState::Absent) => true,
            (PathState::Skipped(a), PathState::Skipped(b)) => {
                a.signature.is_some() && a.signature == b.signature
            }
            _ => false,
        }
    }
}

/// What [`Shadow::restore`] did, each list in path order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Restored {
    pub written: Vec<String>,
    pub deleted: Vec<String>,
    /// Already as the snapshot had them.
    pub unchanged: Vec<String>,
    /// Absent from the snapshot because it skipped them: left as they are.
    pub not_restored: Vec<Skipped>,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(
        "the git program was not found: install git (Debian: apt-get install git) so that Flame can keep checkpoints"
    )]
    GitMissing,
    #[error("{command} failed: {stderr}")]
    Git { command: String, stderr: String },
    #[error(
        "the workspace has more than {limit} files outside .gitignore (counted {found} before stopping): too many to checkpoint; ignore build outputs in .gitignore"
    )]
    TooManyFiles { limit: usize, found: usize },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("snapshot {0} is not in this workspace's checkpoints")]
    UnknownCommit(CommitId),
    #[error("{0:?} is not a commit id (40 hexadecimal digits)")]
    BadCommitId(String),
    #[error(
        "{0:?} is outside the workspace or inside a .git folder: give a relative path without '..' or '.git'"
    )]
    OutsideWorkspace(String),
    #[error(
        "{path:?} goes through the symlink {link:?}: refused, so that nothing is written through a link"
    )]
    ThroughSymlink { path: String, link: String },
    #[error(
        "{0:?} is a folder that is not empty, where the snapshot has no file: restore the files in it instead"
    )]
    FolderInTheWay(String),
    #[error("the workspace {0:?} is not an absolute path to a folder")]
    BadWorkspace(PathBuf),
    #[error(
        "the checkpoint folder {0:?} is inside a .git folder: refused, Flame never writes a .git"
    )]
    ShadowInGitFolder(PathBuf),
    #[error(
        "the checkpoint folder {shadow:?} belongs to the workspace {recorded:?}, not {given:?}"
    )]
    OtherWorkspace { shadow: PathBuf, recorded: PathBuf, given: PathBuf },
    #[error("git gave output that Flame could not read ({0})")]
    Unexpected(String),
}

/// Adds what was being done to an I/O error.
pub(crate) fn io_error(
    context: impl Into<String>,
) -> impl FnOnce(std::io::Error) -> CheckpointError {
    let context = context.into();
    move |source| CheckpointError::Io { context, source }
}

/// A workspace's shadow repository.
#[derive(Debug, Clone)]
pub struct Shadow {
    git: git::Git,
    limits: SnapshotLimits,
}

impl Shadow {
    /// Opens, creating when missing, the shadow repository in `git_dir` for `workspace` (a
    /// canonical absolute folder).
    pub fn open(git_dir: &Path, workspace: &Path) -> Result<Shadow, CheckpointError> {
        let git = git::Git::open(git_dir, workspace)?;
        Ok(Shadow { git, limits: SnapshotLimits::default() })
    }

    pub fn with_limits(self, limits: SnapshotLimits) -> Shadow {
        Shadow { limits, ..self }
    }

    pub fn git_dir(&self) -> &Path {
        self.git.git_dir()
    }

    pub fn workspace(&self) -> &Path {
        self.git.work_tree()
    }

    /// Snapshots the workspace now. `label` goes in the commit message (one line; control
    /// characters become spaces); `at` is unix milliseconds (the commit's date).
    pub fn snapshot(&self, label: &str, at: i64) -> Result<Snapshot, CheckpointError> {
        snapshot::snapshot(&self.git, &self.limits, label, at)
    }

    /// The files that differ from `from` to `to`, sorted by path; `NotSnapshotted` where `to`
    /// skipped them. Renames are reported as a deletion and an addition.
    pub fn changed(
        &self,
        from: &CommitId,
        to: &CommitId,
    ) -> Result<Vec<FileChange>, CheckpointError> {
        compare::changed(&self.git, from, to)
    }

    /// The unified diff from `from` to `to` limited to `paths` (every path when `None`), with
    /// per-file stats, renames detected, binary files named not printed, cut at
    /// [`MAX_DIFF_BYTES`].
    pub fn diff(
        &self,
        from: &CommitId,
        to: &CommitId,
        paths: Option<&[String]>,
    ) -> Result<Diff, CheckpointError> {
        compare::diff(&self.git, from, to, paths)
    }

    /// Each path's blob id and mode in `commit` (`None` when absent).
    pub fn entries(
        &self,
        commit: &CommitId,
        paths: &[String],
    ) -> Result<std::collections::BTreeMap<String, Option<Entry>>, CheckpointError> {
        compare::entries(&self.git, commit, paths)
    }

    /// What `commit` knows of each of `paths`: held, left out (a skipped folder covers its
    /// files), or absent.
    pub fn states(
        &self,
        commit: &CommitId,
        paths: &[String],
    ) -> Result<std::collections::BTreeMap<String, PathState>, CheckpointError> {
        let skipped = compare::skipped(&self.git, commit)?;
        Ok(compare::entries(&self.git, commit, paths)?
            .into_iter()
            .map(|(path, entry)| {
                let state = match (entry, message::is_skipped(&skipped, &path)) {
                    (Some(entry), _) => PathState::Held(entry),
                    // A file in a skipped folder has no signature of its own: the folder's
                    // says nothing of its content.
                    (None, Some(skip)) => PathState::Skipped(Skipped {
                        path: path.clone(),
                        reason: skip.reason.clone(),
                        signature: skip.signature.clone().filter(|_| skip.path == path),
                    }),
                    (None, None) => PathState::Absent,
                };
                (path, state)
            })
            .collect())
    }

    /// The paths `commit` recorded as skipped (at most [`MAX_SKIPPED_LISTED`]).
    pub fn skipped(&self, commit: &CommitId) -> Result<Vec<Skipped>, CheckpointError> {
        compare::skipped(&self.git, commit)
    }

    /// Puts each of `paths` back as it was in `commit`: written (content, executable bit,
    /// symlinks) or deleted when absent there; a path absent because the snapshot skipped it is
    /// left as it is and reported. Each file is replaced atomically (a temporary file in the same
    /// folder, synced, renamed over it), so a kill leaves each file either as it was or restored,
    /// and running it again finishes the job. Parent folders are created; folders emptied by
    /// deletions are removed. Never writes into a `.git` nor outside the workspace: `..`,
    /// absolute paths and paths through a symlink are refused.
    pub fn restore(
        &self,
        commit: &CommitId,
        paths: &[String],
    ) -> Result<Restored, CheckpointError> {
        restore::restore(&self.git, commit, paths)
    }

    /// Stops keeping `commits` (deletes their refs); [`Shadow::collect`] then frees what nothing
    /// keeps. Forgetting a commit that is not kept is not an error.
    pub fn forget(&self, commits: &[CommitId]) -> Result<(), CheckpointError> {
        upkeep::forget(&self.git, commits)
    }

    /// Packs the repository and deletes what no snapshot keeps; returns the bytes on disk after.
    pub fn collect(&self) -> Result<u64, CheckpointError> {
        upkeep::collect(&self.git)
    }

    /// Bytes the shadow repository takes on disk now (allocated blocks).
    pub fn size_on_disk(&self) -> Result<u64, CheckpointError> {
        upkeep::size_on_disk(self.git.git_dir())
    }
}

/// Bytes the shadow repository in `git_dir` takes on disk, without opening it: its workspace may
/// be gone while its checkpoints are still kept.
pub fn size_on_disk(git_dir: &Path) -> Result<u64, CheckpointError> {
    upkeep::size_on_disk(git_dir)
}
