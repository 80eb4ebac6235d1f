//! Checkpoints and rollback (DESIGN.md §9). A tree's workspace is snapshotted into a shadow
//! repository under the data directory (`checkpoints/<folder>`, `flame-checkpoint`) when a frame
//! starts and around each changing tool call; the store records which snapshot belongs to which
//! frame and what each call changed. From those, a frame's **changes** are the diff from its
//! start, and a **rollback** puts the files its subtree changed back as they were when it
//! started — refused, naming the files and who changed them, when later work changed them.
//!
//! `push`, `start`, `retry`, and `create_tree` or `set_workspace` (for every frame then running)
//! take a start checkpoint after their transaction; a failure is logged, and the frame's changes
//! then say that no start checkpoint is kept. `Flame::checkpoint(frame, reason, call)` is what the
//! agent takes before and after each changing call, and the one after records the files changed
//! since the one before (`checkpoint_files`), which for a command is the only way its trail learns
//! what it changed. `frame_changes(frame, subtree)` diffs the frame's start checkpoint against its
//! subtree's last checkpoint (or a fresh snapshot while it runs), limited to the files its own
//! calls, or its subtree's, changed, and says whether a rollback is offered (failed, blocked,
//! invalidated), possible on request (completed) or why not.
//!
//! `rollback(frame)` takes a checkpoint and refuses, changing nothing and naming the files and the
//! frames, when a frame outside the subtree (of any tree on the workspace) changed one of the files
//! after the frame started, or when a file is neither as the subtree left it nor as it was at the
//! start (changed outside Flame); otherwise it restores the rest and records a `rolled_back` event
//! and `rolled_back_at`. Files already as they were at the start are left, so an interrupted
//! rollback finishes when run again. It never changes a file it cannot prove unchanged: a file a
//! snapshot left out (too large, a name that is not UTF-8) is compared by the signature the
//! snapshot kept, a file `.gitignore` hides now is refused, and so is deleting a file absent at the
//! start once a `.gitignore` changed since (it may have been there, ignored). The workspace is
//! checked again where the stored path leads, since a folder may have been replaced by a link since
//! it was set. `retry_from_start` is a rollback then a retry. Checkpoints over the cap
//! (`FlameConfig::checkpoint_cap_bytes`, `DEFAULT_CHECKPOINT_CAP_BYTES` a workspace) are pruned the oldest quarter
//! first, never the newest; a deleted tree's checkpoints are forgotten and collected.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use flame_checkpoint::{ChangeKind, CheckpointError, CommitId, PathState, Shadow};
use flame_model::{Actor, CheckpointReason, Frame, FrameId, Status, Timestamp, Tree};
use flame_store::{Change, CheckpointRow, NewCheckpoint, RollbackRecord};
use serde::Serialize;

use crate::{ApiError, ErrorCode, Flame};

/// The storage a workspace's checkpoints may take before the oldest are pruned (2 GB), unless the
/// facade's configuration says another (the person's settings).
pub const DEFAULT_CHECKPOINT_CAP_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// How a file differs between two checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    Added,
    Modified,
    Deleted,
    /// Only the executable bit changed.
    ModeChanged,
    /// A file became a link or the other way round.
    TypeChanged,
    /// Left out of the later snapshot (over the size limit, or not a regular file or link).
    NotSnapshotted,
}

/// One file of a frame's changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ChangedFile {
    pub path: String,
    /// Where the file was before, when the change is a rename.
    pub old_path: Option<String>,
    pub change: FileChangeKind,
    pub added_lines: u64,
    pub removed_lines: u64,
    pub binary: bool,
}

/// Whether a frame's changes may be rolled back now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RollbackOffer {
    /// A failed, blocked or invalidated frame with changes: offered.
    Offered,
    /// A finished frame with changes: possible when the person asks for it.
    OnRequest,
    /// Not possible; `reason` says why.
    Unavailable { reason: String },
}

/// The files a frame changed, as a unified diff from its start checkpoint to its end (or to now
/// while it runs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct FrameChanges {
    pub frame: FrameId,
    /// Whether the changes of the frame's descendants are included.
    pub subtree: bool,
    /// When the checkpoint the diff starts from was taken.
    pub since: Option<Timestamp>,
    /// When the checkpoint it ends at was taken; absent when it ends at the files as they are
    /// now (the frame is running).
    pub until: Option<Timestamp>,
    pub files: Vec<ChangedFile>,
    /// Git's unified diff of those files, cut at `flame_checkpoint::MAX_DIFF_BYTES`.
    pub patch: String,
    pub truncated: bool,
    /// Why no diff can be shown, when none can.
    pub unavailable: Option<String>,
    pub roll_back: RollbackOffer,
    pub rolled_back_at: Option<Timestamp>,
}

/// What a rollback did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct RollbackOutcome {
    /// The frame, now marked rolled back.
    pub frame: Frame,
    /// Files written back as they were when the frame started.
    pub restored: Vec<String>,
    /// Files the frame had created, removed.
    pub deleted: Vec<String>,
    /// Files already as they were (a rollback run again after an interruption).
    pub unchanged: Vec<String>,
    /// Files that could not be put back: they were not snapshotted when the frame started.
    pub not_restored: Vec<String>,
}

/// The checkpoints of one workspace on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct CheckpointStorage {
    pub workspace: String,
    pub bytes: u64,
    pub checkpoints: u64,
}

/// A snapshot just recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpointed {
    pub commit: String,
    /// What changed since the checkpoint this one closes (after a call or a rollback).
    pub changed: Vec<String>,
    /// How many files the snapshot left out (too large, special, unreadable).
    pub skipped: usize,
}

fn checkpoint_error(what: &str, err: CheckpointError) -> ApiError {
    match err {
        CheckpointError::GitMissing => ApiError::new(
            ErrorCode::Internal,
            format!("could not {what}: checkpoints need the git program, which is not installed"),
        ),
        other => ApiError::internal(what, other),
    }
}

fn refused(message: String) -> ApiError {
    ApiError::new(ErrorCode::Refused, message)
}

fn commit_of(row: &CheckpointRow) -> Result<CommitId, ApiError> {
    CommitId::parse(&row.commit).map_err(|e| checkpoint_error("read a checkpoint", e))
}

fn file_change_kind(kind: ChangeKind) -> FileChangeKind {
    match kind {
        ChangeKind::Added => FileChangeKind::Added,
        ChangeKind::Modified => FileChangeKind::Modified,
        ChangeKind::Deleted => FileChangeKind::Deleted,
        ChangeKind::ModeChanged => FileChangeKind::ModeChanged,
        ChangeKind::TypeChanged => FileChangeKind::TypeChanged,
        ChangeKind::NotSnapshotted => FileChangeKind::NotSnapshotted,
    }
}

/// `root` and its descendants among `frames`, `root` first.
fn subtree_ids(frames: &[Frame], root: &FrameId) -> Vec<FrameId> {
    let mut children: HashMap<&FrameId, Vec<&FrameId>> = HashMap::new();
    for frame in frames {
        if let Some(parent) = &frame.parent {
            children.entry(parent).or_default().push(&frame.id);
        }
    }
    let mut ids = vec![root.clone()];
    let mut next = 0;
    while next < ids.len() {
        if let Some(kids) = children.get(&ids[next]) {
            ids.extend(kids.iter().map(|id| (*id).clone()));
        }
        next += 1;
    }
    ids
}

/// The frame's start checkpoint in `workspace`.
fn start_row<'r>(
    rows: &'r [CheckpointRow],
    frame: &FrameId,
    workspace: &str,
) -> Option<&'r CheckpointRow> {
    rows.iter().find(|r| {
        &r.frame == frame && r.reason == CheckpointReason::Start && r.workspace == workspace
    })
}

/// Why a rollback cannot prove a file unchanged since the frame's subtree last changed it.
const CHANGED_OUTSIDE: &str = "changed outside Flame since the frame changed it";
const IGNORED_NOW: &str = "ignored by .gitignore now, so no checkpoint holds it and Flame cannot tell whether it changed since the frame changed it";
const MAYBE_IGNORED_AT_START: &str = "not in the checkpoint from when the frame started, but a .gitignore changed since, so it may have been there, ignored; Flame does not delete it";

const NO_START: &str = "no checkpoint from when this frame started is kept: it started before its tree had a workspace folder (or before Flame took checkpoints), or its checkpoint was pruned to keep checkpoints under the storage cap";

impl Flame {
    fn shadow_folder(&self, workspace: &str) -> PathBuf {
        self.data_dir
            .path()
            .join("checkpoints")
            .join(flame_checkpoint::shadow_folder_name(Path::new(workspace)))
    }

    /// The shadow of `workspace`, a tree's folder as stored (canonical when it was set). It is
    /// checked again first: a folder replaced by a link since (to Flame's own data, or anywhere)
    /// is refused, so neither a snapshot nor a rollback follows it.
    fn shadow(&self, workspace: &str) -> Result<Shadow, ApiError> {
        let real = crate::check_workspace(Path::new(workspace), &self.own_folders())?;
        if real != workspace {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!(
                    "the workspace folder {workspace} now leads to {real} (a link was put in its place); no checkpoint is taken or restored there until the tree's workspace folder is chosen again"
                ),
            ));
        }
        Shadow::open(&self.shadow_folder(workspace), Path::new(workspace))
            .map_err(|e| checkpoint_error("open the workspace's checkpoints", e))
    }

    /// Snapshots frame `frame`'s tree's workspace and records it as the frame's checkpoint for
    /// `reason`. After a call (`call_id`) or a rollback, the files changed since the checkpoint
    /// taken just before it are recorded with it and returned. `None` when the tree has no
    /// workspace. Runs git: call it off a window's thread.
    pub fn checkpoint(
        &self,
        frame: &FrameId,
        reason: CheckpointReason,
        call_id: Option<&str>,
    ) -> Result<Option<Checkpointed>, ApiError> {
        let (tree, opening) = {
            let store = self.store();
            let tree = store.tree(&store.frame(frame)?.tree)?;
            let opening = match reason {
                CheckpointReason::AfterCall => {
                    let rows = store.checkpoints_of(std::slice::from_ref(frame))?;
                    rows.into_iter().rev().find(|r| {
                        r.reason == CheckpointReason::BeforeCall && r.call_id.as_deref() == call_id
                    })
                }
                CheckpointReason::AfterRollback => {
                    let rows = store.checkpoints_of(std::slice::from_ref(frame))?;
                    rows.into_iter().rev().find(|r| r.reason == CheckpointReason::BeforeRollback)
                }
                _ => None,
            };
            (tree, opening)
        };
        let Some(workspace) = tree.workspace else { return Ok(None) };
        let taken = self.snapshot_and_record(
            &workspace,
            std::slice::from_ref(frame),
            reason,
            call_id,
            opening,
        )?;
        Ok(Some(taken))
    }

    fn snapshot_and_record(
        &self,
        workspace: &str,
        frames: &[FrameId],
        reason: CheckpointReason,
        call_id: Option<&str>,
        // The checkpoint this one closes (before the call or the rollback); `None` otherwise.
        opening: Option<CheckpointRow>,
    ) -> Result<Checkpointed, ApiError> {
        let shadow = self.shadow(workspace)?;
        let at = self.now();
        let label = format!("{} {}", reason.as_str(), frames[0]);
        let snapshot =
            shadow.snapshot(&label, at).map_err(|e| checkpoint_error("take a checkpoint", e))?;
        let changed = match opening.filter(|r| r.workspace == workspace) {
            Some(opening) => shadow
                .changed(&commit_of(&opening)?, &snapshot.commit)
                .map_err(|e| checkpoint_error("compare checkpoints", e))?
                .into_iter()
                .map(|c| c.path)
                .collect(),
            None => Vec::new(),
        };
        let change = Change { actor: Actor::Agent, at };
        self.store().record_checkpoint(
            change,
            NewCheckpoint {
                workspace,
                frames,
                reason,
                call_id,
                commit: snapshot.commit.as_str(),
                changed: &changed,
            },
        )?;
        self.keep_under_cap(workspace, &shadow);
        Ok(Checkpointed {
            commit: snapshot.commit.as_str().to_owned(),
            changed,
            skipped: snapshot.skipped_total,
        })
    }

    /// Takes the start checkpoint of `frame` and of the ancestors started with it (same start
    /// time) that have none yet. A failure is logged, not returned: the operation that started
    /// the frame has happened, and the frame's changes then say no start checkpoint is kept.
    pub(crate) fn checkpoint_started(&self, frame: &Frame) {
        let result = (|| -> Result<(), ApiError> {
            let (workspace, frames) = {
                let store = self.store();
                let Some(workspace) = store.tree(&frame.tree)?.workspace else { return Ok(()) };
                let mut frames = Vec::new();
                let mut next = Some(frame.clone());
                while let Some(current) = next {
                    let started_with = current.started_at == frame.started_at;
                    if current.id != frame.id && !started_with {
                        break;
                    }
                    if !store.has_start_checkpoint(&current.id, &workspace)? {
                        frames.push(current.id.clone());
                    }
                    next = current.parent.as_ref().map(|p| store.frame(p)).transpose()?;
                }
                (workspace, frames)
            };
            if !frames.is_empty() {
                self.snapshot_and_record(&workspace, &frames, CheckpointReason::Start, None, None)?;
            }
            Ok(())
        })();
        if let Err(err) = result {
            tracing::warn!(frame = %frame.id, "no start checkpoint: {}", err.message);
        }
    }

    /// Takes a start checkpoint for every frame of `tree` in progress without one: its
    /// workspace was just set, so what a rollback puts back is the files as they were then.
    pub(crate) fn checkpoint_running(&self, tree: &Tree) {
        let result = (|| -> Result<(), ApiError> {
            let Some(workspace) = &tree.workspace else { return Ok(()) };
            let frames = {
                let store = self.store();
                let mut frames = Vec::new();
                for frame in store.frames_of_tree(&tree.id)? {
                    if frame.status == Status::InProgress
                        && !store.has_start_checkpoint(&frame.id, workspace)?
                    {
                        frames.push(frame.id);
                    }
                }
                frames
            };
            if !frames.is_empty() {
                self.snapshot_and_record(workspace, &frames, CheckpointReason::Start, None, None)?;
            }
            Ok(())
        })();
        if let Err(err) = result {
            tracing::warn!(tree = %tree.id, "no start checkpoint: {}", err.message);
        }
    }

    /// Frame `id`'s changes: the files its own calls (with `subtree`, its descendants' too)
    /// changed, as a diff from its start checkpoint to its last one (or to now while it runs).
    pub fn frame_changes(&self, id: &FrameId, subtree: bool) -> Result<FrameChanges, ApiError> {
        let (frame, tree, rows, files) = {
            let store = self.store();
            let frame = store.frame(id)?;
            let tree = store.tree(&frame.tree)?;
            let all = store.frames_of_tree(&frame.tree)?;
            let rows = store.checkpoints_of(&subtree_ids(&all, id))?;
            let closing: Vec<i64> = rows
                .iter()
                .filter(|r| r.reason.closes_a_change() && (subtree || &r.frame == id))
                .map(|r| r.id)
                .collect();
            let files = store.checkpoint_files(&closing)?;
            (frame, tree, rows, files)
        };
        let mut changes = FrameChanges {
            frame: id.clone(),
            subtree,
            since: None,
            until: None,
            files: Vec::new(),
            patch: String::new(),
            truncated: false,
            unavailable: None,
            roll_back: RollbackOffer::Unavailable { reason: String::new() },
            rolled_back_at: frame.rolled_back_at,
        };
        let unavailable = |mut changes: FrameChanges, reason: &str| {
            changes.unavailable = Some(reason.to_owned());
            changes.roll_back = RollbackOffer::Unavailable { reason: reason.to_owned() };
            changes
        };
        let Some(workspace) = tree.workspace else {
            return Ok(unavailable(changes, "this tree has no workspace folder"));
        };
        let Some(start) = start_row(&rows, id, &workspace) else {
            return Ok(unavailable(changes, NO_START));
        };
        changes.since = Some(start.at);
        let paths: Vec<String> =
            files.into_values().flatten().collect::<BTreeSet<_>>().into_iter().collect();
        let shadow = self.shadow(&workspace)?;
        let end = if frame.status == Status::InProgress {
            shadow
                .snapshot(&format!("changes of {id}"), self.now())
                .map_err(|e| checkpoint_error("take a checkpoint", e))?
                .commit
        } else {
            let last = rows.iter().rev().find(|r| r.workspace == workspace).unwrap_or(start);
            changes.until = Some(last.at);
            commit_of(last)?
        };
        if !paths.is_empty() {
            let diff = shadow
                .diff(&commit_of(start)?, &end, Some(&paths))
                .map_err(|e| checkpoint_error("compare checkpoints", e))?;
            changes.files = diff
                .files
                .into_iter()
                .map(|f| ChangedFile {
                    path: f.path,
                    old_path: f.old_path,
                    change: file_change_kind(f.kind),
                    added_lines: f.added_lines,
                    removed_lines: f.removed_lines,
                    binary: f.binary,
                })
                .collect();
            changes.patch = diff.patch;
            changes.truncated = diff.truncated;
        }
        changes.roll_back = match frame.status {
            Status::InProgress | Status::Planned => RollbackOffer::Unavailable {
                reason: format!(
                    "the frame is {}; a frame is rolled back once it has ended",
                    frame.status.as_str()
                ),
            },
            _ if paths.is_empty() => {
                RollbackOffer::Unavailable { reason: "the frame changed no files".to_owned() }
            }
            // Rolled back already (or changed back by its own later calls): nothing differs.
            _ if changes.files.is_empty() => RollbackOffer::Unavailable {
                reason: "its files are as they were when it started".to_owned(),
            },
            Status::Completed => RollbackOffer::OnRequest,
            _ => RollbackOffer::Offered,
        };
        Ok(changes)
    }

    /// Puts the files frame `id` and its descendants changed back as they were when it started.
    /// Refused for a frame still planned or in progress, and — naming the files and who changed
    /// them — when a later frame (of any tree on the same workspace) or someone outside Flame
    /// changed one of those files since. Each file is replaced whole, so an interrupted rollback
    /// leaves each file as it was or restored, and running it again finishes it.
    pub fn rollback(&self, actor: Actor, id: &FrameId) -> Result<RollbackOutcome, ApiError> {
        let (frame, workspace, subtree, rows, files) = {
            let store = self.store();
            let frame = store.frame(id)?;
            let tree = store.tree(&frame.tree)?;
            if matches!(frame.status, Status::InProgress | Status::Planned) {
                return Err(refused(format!(
                    "frame {id} \"{}\" is {}; it can be rolled back once it has ended (failed, blocked, invalidated or finished)",
                    frame.title,
                    frame.status.as_str()
                )));
            }
            let Some(workspace) = tree.workspace else {
                return Err(refused(format!(
                    "frame {id} \"{}\" has nothing to roll back: its tree has no workspace folder",
                    frame.title
                )));
            };
            let all = store.frames_of_tree(&frame.tree)?;
            let subtree = subtree_ids(&all, id);
            let rows: Vec<CheckpointRow> = store
                .checkpoints_of(&subtree)?
                .into_iter()
                .filter(|r| r.workspace == workspace)
                .collect();
            let closing: Vec<i64> =
                rows.iter().filter(|r| r.reason.closes_a_change()).map(|r| r.id).collect();
            let files = store.checkpoint_files(&closing)?;
            (frame, workspace, subtree, rows, files)
        };
        let Some(start) = start_row(&rows, id, &workspace).cloned() else {
            return Err(refused(format!(
                "frame {id} \"{}\" cannot be rolled back: {NO_START}",
                frame.title
            )));
        };
        if let Some(row) = rows.iter().find(|r| r.files_left_out > 0) {
            return Err(refused(format!(
                "frame {} changed more files in one call than Flame records ({} left out), so it cannot be rolled back file by file",
                row.frame, row.files_left_out
            )));
        }
        // The last change of each path by the subtree: what the file should still be, unless
        // someone changed it since.
        let mut last_change: BTreeMap<String, &CheckpointRow> = BTreeMap::new();
        for row in rows.iter().filter(|r| r.reason.closes_a_change() && r.id > start.id) {
            for path in files.get(&row.id).into_iter().flatten() {
                last_change.insert(path.clone(), row);
            }
        }
        if last_change.is_empty() {
            return Err(refused(format!(
                "frame {id} \"{}\" changed no files since it started; there is nothing to roll back",
                frame.title
            )));
        }
        let paths: Vec<String> = last_change.keys().cloned().collect();
        let shadow = self.shadow(&workspace)?;
        let now = self.snapshot_and_record(
            &workspace,
            std::slice::from_ref(id),
            CheckpointReason::BeforeRollback,
            None,
            None,
        )?;
        let now =
            CommitId::parse(&now.commit).map_err(|e| checkpoint_error("read a checkpoint", e))?;
        let start_commit = commit_of(&start)?;
        let read = |e| checkpoint_error("read a checkpoint", e);
        let at_start = shadow.states(&start_commit, &paths).map_err(read)?;
        let current = shadow.states(&now, &paths).map_err(read)?;
        let same = |a: &BTreeMap<String, PathState>, b: &BTreeMap<String, PathState>, p: &str| {
            a.get(p).zip(b.get(p)).is_some_and(|(a, b)| a.same_as(b))
        };
        let pending: Vec<String> =
            paths.iter().filter(|p| !same(&at_start, &current, p)).cloned().collect();
        let unchanged: Vec<String> =
            paths.iter().filter(|p| same(&at_start, &current, p)).cloned().collect();

        // Later work on the same files: by frames outside the subtree, after the frame started.
        let later = self.store().changes_after(&workspace, start.id, &pending)?;
        let mut conflicts: BTreeMap<String, BTreeSet<FrameId>> = BTreeMap::new();
        for change in later.iter().filter(|c| !subtree.contains(&c.frame)) {
            conflicts.entry(change.path.clone()).or_default().insert(change.frame.clone());
        }
        // Changes from outside Flame: the file is not known to be as the subtree left it. A file
        // the snapshots cannot see now (ignored, or changed since and left out without a
        // signature) is not known to be either.
        let mut by_commit: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for path in pending.iter().filter(|p| !conflicts.contains_key(*p)) {
            by_commit.entry(last_change[path].commit.as_str()).or_default().push(path.clone());
        }
        let mut outside: Vec<(String, &str)> = Vec::new();
        for (commit, paths) in by_commit {
            let commit = CommitId::parse(commit).map_err(read)?;
            let left = shadow.states(&commit, &paths).map_err(read)?;
            for path in paths {
                let on_disk = std::fs::symlink_metadata(Path::new(&workspace).join(&path)).is_ok();
                if matches!(current.get(&path), Some(PathState::Absent)) && on_disk {
                    outside.push((path, IGNORED_NOW));
                } else if !same(&left, &current, &path) {
                    outside.push((path, CHANGED_OUTSIDE));
                }
            }
        }
        // A file absent from the start snapshot is deleted by the rollback; if a .gitignore
        // changed since, it may have been there, ignored, and is not deleted.
        let to_delete: Vec<&String> = pending
            .iter()
            .filter(|p| matches!(at_start.get(*p), Some(PathState::Absent)))
            .collect();
        if !to_delete.is_empty() && self.ignore_rules_changed(&shadow, &start_commit, &now)? {
            outside.extend(to_delete.into_iter().map(|p| (p.clone(), MAYBE_IGNORED_AT_START)));
        }
        outside.sort();
        outside.dedup_by(|a, b| a.0 == b.0);
        if !conflicts.is_empty() || !outside.is_empty() {
            return Err(refused(self.conflict_message(&frame, &conflicts, &outside)?));
        }

        // A file left out now whose name is not on disk (not UTF-8) cannot be put back by name.
        let (pending, unnamed): (Vec<String>, Vec<String>) = pending.into_iter().partition(|p| {
            !matches!(current.get(p), Some(PathState::Skipped(_)))
                || std::fs::symlink_metadata(Path::new(&workspace).join(p)).is_ok()
        });
        let restored = shadow
            .restore(&start_commit, &pending)
            .map_err(|e| checkpoint_error("roll the files back", e))?;
        self.checkpoint(id, CheckpointReason::AfterRollback, None)?;
        let mut not_restored: Vec<String> =
            restored.not_restored.iter().map(|s| s.path.clone()).chain(unnamed).collect();
        not_restored.sort();
        let record = RollbackRecord {
            restored: restored.written.clone(),
            deleted: restored.deleted.clone(),
            not_restored,
        };
        let frame =
            self.write(actor, |store, change, _| store.record_rollback(change, id, &record))?;
        Ok(RollbackOutcome {
            frame,
            restored: restored.written,
            deleted: restored.deleted,
            unchanged: unchanged.into_iter().chain(restored.unchanged).collect(),
            not_restored: record.not_restored,
        })
    }

    /// Whether any `.gitignore` differs between the two snapshots: what the walk left out of
    /// them, and so what their absence means, differs too.
    fn ignore_rules_changed(
        &self,
        shadow: &Shadow,
        from: &CommitId,
        to: &CommitId,
    ) -> Result<bool, ApiError> {
        let changed =
            shadow.changed(from, to).map_err(|e| checkpoint_error("compare checkpoints", e))?;
        Ok(changed.iter().any(|c| c.path.rsplit('/').next() == Some(".gitignore")))
    }

    fn conflict_message(
        &self,
        frame: &Frame,
        conflicts: &BTreeMap<String, BTreeSet<FrameId>>,
        outside: &[(String, &str)],
    ) -> Result<String, ApiError> {
        let store = self.store();
        let mut lines = vec![format!(
            "frame {} \"{}\" was not rolled back, and no file was changed: files it changed were changed again since, and rolling back would overwrite that work",
            frame.id, frame.title
        )];
        for (path, frames) in conflicts {
            let mut names = Vec::new();
            for id in frames {
                let other = store.frame(id)?;
                names.push(format!("{id} \"{}\"", other.title));
            }
            lines.push(format!("- {path}: changed by {}", names.join(", ")));
        }
        for (path, why) in outside {
            lines.push(format!("- {path}: {why}"));
        }
        Ok(lines.join("\n"))
    }

    /// Rolls frame `id` back, then retries it: the retry starts from the files as they were
    /// when the failed frame started. Nothing is retried when the rollback is refused.
    pub fn retry_from_start(&self, actor: Actor, id: &FrameId) -> Result<Frame, ApiError> {
        self.rollback(actor, id)?;
        self.retry(actor, id)
    }

    /// The storage each workspace's checkpoints take.
    pub fn checkpoint_storage(&self) -> Result<Vec<CheckpointStorage>, ApiError> {
        let workspaces = self.store().checkpoint_workspaces()?;
        let mut storage = Vec::new();
        for (workspace, checkpoints) in workspaces {
            // Measured without opening the shadow: the workspace folder may be gone.
            let bytes = flame_checkpoint::size_on_disk(&self.shadow_folder(&workspace))
                .map_err(|e| checkpoint_error("measure checkpoints", e))?;
            storage.push(CheckpointStorage { workspace, bytes, checkpoints });
        }
        Ok(storage)
    }

    /// Prunes `workspace`'s oldest checkpoints while they take more than the cap. A failure is
    /// logged: the checkpoint just taken is kept either way.
    fn keep_under_cap(&self, workspace: &str, shadow: &Shadow) {
        let cap = self.config.checkpoint_cap_bytes();
        let result = (|| -> Result<(), ApiError> {
            let size =
                shadow.size_on_disk().map_err(|e| checkpoint_error("measure checkpoints", e))?;
            if size <= cap {
                return Ok(());
            }
            let rows = self.store().checkpoints_of_workspace(workspace)?;
            // The oldest quarter at a time (at least one, never the newest), so one pass
            // usually suffices and the newest work stays undoable.
            let mut kept = rows.len();
            while kept > 1 {
                let drop = (kept / 4).max(1).min(kept - 1);
                let (gone, _) = rows[rows.len() - kept..].split_at(drop);
                self.forget_checkpoints(shadow, gone)?;
                kept -= drop;
                let size =
                    shadow.collect().map_err(|e| checkpoint_error("prune checkpoints", e))?;
                if size <= cap {
                    break;
                }
            }
            Ok(())
        })();
        if let Err(err) = result {
            tracing::warn!(workspace, "checkpoints over the cap were not pruned: {}", err.message);
        }
    }

    fn forget_checkpoints(&self, shadow: &Shadow, rows: &[CheckpointRow]) -> Result<(), ApiError> {
        let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        let at = self.now();
        self.store().delete_checkpoints(Change { actor: Actor::Agent, at }, &ids)?;
        let commits = rows.iter().map(commit_of).collect::<Result<Vec<_>, _>>()?;
        shadow.forget(&commits).map_err(|e| checkpoint_error("prune checkpoints", e))
    }

    /// Frees the snapshots of a tree that was deleted (`rows`, read before), then what nothing
    /// keeps. Logged on failure: the tree is gone either way.
    pub(crate) fn collect_deleted(&self, rows: Vec<CheckpointRow>) {
        let mut by_workspace: BTreeMap<String, Vec<CommitId>> = BTreeMap::new();
        for row in &rows {
            if let Ok(commit) = commit_of(row) {
                by_workspace.entry(row.workspace.clone()).or_default().push(commit);
            }
        }
        for (workspace, commits) in by_workspace {
            let result = self.shadow(&workspace).and_then(|shadow| {
                shadow.forget(&commits).map_err(|e| checkpoint_error("prune checkpoints", e))?;
                shadow.collect().map_err(|e| checkpoint_error("prune checkpoints", e))
            });
            if let Err(err) = result {
                tracing::warn!(
                    workspace,
                    "a deleted tree's checkpoints were not freed: {}",
                    err.message
                );
            }
        }
    }
}
