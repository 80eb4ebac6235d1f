//! Checkpoints: which snapshot of a workspace (a commit of its shadow repository, which the facade
//! takes) belongs to which frame and why, the files each call or rollback changed, and the
//! rollback itself as an event on the frame. The snapshots are files outside the database; a row
//! here only names one.

use std::collections::HashMap;

use flame_model::{
    CheckpointReason, EventDetail, FrameError, FrameId, RollbackRecord, Timestamp, TreeId,
};
use rusqlite::{OptionalExtension, Row, params};

use crate::{Store, StoreError};

use super::Change;

/// The most changed paths one checkpoint records. A command may rewrite far more (a build, a
/// generated tree); past this the row records only how many were left out, and a rollback of its
/// frame is refused rather than done in part.
pub const MAX_CHECKPOINT_PATHS: usize = 100_000;

/// How many checkpoints' files one statement reads, well under SQLite's limit on bound values.
const IDS_PER_QUERY: usize = 500;

/// A checkpoint as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRow {
    /// Orders checkpoints across every tree sharing the workspace.
    pub id: i64,
    pub workspace: String,
    pub tree: TreeId,
    pub frame: FrameId,
    pub reason: CheckpointReason,
    pub call_id: Option<String>,
    /// The snapshot's commit in the workspace's shadow repository.
    pub commit: String,
    pub at: Timestamp,
    /// Changed paths not recorded because of [`MAX_CHECKPOINT_PATHS`].
    pub files_left_out: u64,
}

/// A checkpoint to record: one snapshot, for one or more frames of one tree (a start that
/// started planned ancestors too records the same snapshot for each).
#[derive(Debug, Clone, Copy)]
pub struct NewCheckpoint<'a> {
    pub workspace: &'a str,
    pub frames: &'a [FrameId],
    pub reason: CheckpointReason,
    pub call_id: Option<&'a str>,
    pub commit: &'a str,
    /// What the call or rollback this checkpoint closes changed (empty for the other reasons).
    pub changed: &'a [String],
}

/// A change recorded after some checkpoint: which frame's call (or rollback) changed `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaterChange {
    pub path: String,
    pub checkpoint: i64,
    pub tree: TreeId,
    pub frame: FrameId,
}

const CHECKPOINT_COLUMNS: &str =
    "id, workspace, tree_id, frame_id, reason, call_id, commit_id, at, files_left_out";

fn checkpoint_row(row: &Row) -> rusqlite::Result<CheckpointRow> {
    let reason: String = row.get(4)?;
    Ok(CheckpointRow {
        id: row.get(0)?,
        workspace: row.get(1)?,
        tree: TreeId::from_trusted(row.get(2)?),
        frame: FrameId::from_trusted(row.get(3)?),
        reason: CheckpointReason::parse(&reason).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                4,
                rusqlite::types::Type::Text,
                format!("unknown checkpoint reason {reason:?}").into(),
            )
        })?,
        call_id: row.get(5)?,
        commit: row.get(6)?,
        at: row.get(7)?,
        files_left_out: row.get::<_, i64>(8)?.try_into().unwrap_or(0),
    })
}

impl Store {
    /// Records one snapshot as a checkpoint of each of `new.frames` (all of one tree), with the
    /// files the change it closes changed, in one transaction. Returns the rows' ids in the
    /// order of `new.frames`.
    pub fn record_checkpoint(
        &mut self,
        change: Change,
        new: NewCheckpoint<'_>,
    ) -> Result<Vec<i64>, StoreError> {
        if new.frames.is_empty() {
            return Ok(Vec::new());
        }
        if !new.reason.closes_a_change() && !new.changed.is_empty() {
            return Err(FrameError::Invalid(format!(
                "a {} checkpoint records no changed files",
                new.reason.as_str()
            ))
            .into());
        }
        let kept = new.changed.len().min(MAX_CHECKPOINT_PATHS);
        let left_out = (new.changed.len() - kept) as i64;
        self.write(change, |w| {
            let tree = w.frame(&new.frames[0])?.tree;
            let mut ids = Vec::with_capacity(new.frames.len());
            for frame in new.frames {
                let found = w.frame(frame)?;
                if found.tree != tree {
                    return Err(FrameError::Invalid(format!(
                        "one checkpoint is recorded for frames of one tree; {frame} is in {} and {} in {tree}",
                        found.tree, new.frames[0]
                    ))
                    .into());
                }
                w.tx.prepare_cached(
                    "INSERT INTO checkpoints (workspace, tree_id, frame_id, reason, call_id, commit_id, at, files_left_out)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )?
                .execute(params![
                    new.workspace,
                    tree.as_str(),
                    frame.as_str(),
                    new.reason.as_str(),
                    new.call_id,
                    new.commit,
                    w.change.at,
                    left_out
                ])?;
                let id = w.tx.last_insert_rowid();
                let mut insert = w.tx.prepare_cached(
                    "INSERT OR IGNORE INTO checkpoint_files (checkpoint_id, path) VALUES (?1, ?2)",
                )?;
                for path in &new.changed[..kept] {
                    insert.execute(params![id, path])?;
                }
                ids.push(id);
            }
            Ok(ids)
        })
    }

    /// The checkpoints of `frames`, oldest first.
    pub fn checkpoints_of(&self, frames: &[FrameId]) -> Result<Vec<CheckpointRow>, StoreError> {
        let mut rows = Vec::new();
        for chunk in frames.chunks(IDS_PER_QUERY) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let mut stmt = self.conn.prepare(&format!(
                "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE frame_id IN ({marks})"
            ))?;
            let found = stmt.query_map(
                rusqlite::params_from_iter(chunk.iter().map(FrameId::as_str)),
                checkpoint_row,
            )?;
            for row in found {
                rows.push(row?);
            }
        }
        rows.sort_by_key(|row| row.id);
        Ok(rows)
    }

    /// The checkpoints of `workspace` in order, oldest first: what collection prunes from.
    pub fn checkpoints_of_workspace(
        &self,
        workspace: &str,
    ) -> Result<Vec<CheckpointRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE workspace = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([workspace], checkpoint_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every workspace that has checkpoints, with how many.
    pub fn checkpoint_workspaces(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT workspace, count(*) FROM checkpoints GROUP BY workspace ORDER BY workspace",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?.try_into().unwrap_or(0)))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The checkpoints of tree `id`'s frames: what deleting it leaves for collection.
    pub fn checkpoints_of_tree(&self, id: &TreeId) -> Result<Vec<CheckpointRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE tree_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([id.as_str()], checkpoint_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The files each of the checkpoints `ids` recorded as changed, each list sorted.
    pub fn checkpoint_files(&self, ids: &[i64]) -> Result<HashMap<i64, Vec<String>>, StoreError> {
        let mut files: HashMap<i64, Vec<String>> = HashMap::new();
        for chunk in ids.chunks(IDS_PER_QUERY) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let mut stmt = self.conn.prepare(&format!(
                "SELECT checkpoint_id, path FROM checkpoint_files WHERE checkpoint_id IN ({marks})
                 ORDER BY checkpoint_id, path"
            ))?;
            let rows = stmt.query_map(rusqlite::params_from_iter(chunk.iter()), |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })?;
            for row in rows {
                let (id, path) = row?;
                files.entry(id).or_default().push(path);
            }
        }
        Ok(files)
    }

    /// The changes to any of `paths` that calls or rollbacks in `workspace` made after
    /// checkpoint `after`, oldest first: who touched those files since.
    pub fn changes_after(
        &self,
        workspace: &str,
        after: i64,
        paths: &[String],
    ) -> Result<Vec<LaterChange>, StoreError> {
        let mut changes = Vec::new();
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, c.tree_id, c.frame_id FROM checkpoint_files f
             JOIN checkpoints c ON c.id = f.checkpoint_id
             WHERE f.path = ?1 AND c.workspace = ?2 AND c.id > ?3
             ORDER BY c.id",
        )?;
        for path in paths {
            let rows = stmt.query_map(params![path, workspace, after], |row| {
                Ok(LaterChange {
                    path: path.clone(),
                    checkpoint: row.get(0)?,
                    tree: TreeId::from_trusted(row.get(1)?),
                    frame: FrameId::from_trusted(row.get(2)?),
                })
            })?;
            for row in rows {
                changes.push(row?);
            }
        }
        changes.sort_by(|a, b| (a.checkpoint, &a.path).cmp(&(b.checkpoint, &b.path)));
        Ok(changes)
    }

    /// Whether frame `id` has a start checkpoint in `workspace`.
    pub fn has_start_checkpoint(&self, id: &FrameId, workspace: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT 1 FROM checkpoints WHERE frame_id = ?1 AND workspace = ?2 AND reason = 'start' LIMIT 1",
            )?
            .query_row(params![id.as_str(), workspace], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Forgets the checkpoints `ids` (their snapshots are pruned by the caller) and the files
    /// they recorded, in one transaction.
    pub fn delete_checkpoints(&mut self, change: Change, ids: &[i64]) -> Result<(), StoreError> {
        self.write(change, |w| {
            let mut files =
                w.tx.prepare_cached("DELETE FROM checkpoint_files WHERE checkpoint_id = ?1")?;
            let mut rows = w.tx.prepare_cached("DELETE FROM checkpoints WHERE id = ?1")?;
            for id in ids {
                files.execute([id])?;
                rows.execute([id])?;
            }
            Ok(())
        })
    }

    /// Records that frame `id`'s changes were rolled back: its `rolled_back_at` and a
    /// `rolled_back` event naming the files, in one transaction.
    pub fn record_rollback(
        &mut self,
        change: Change,
        id: &FrameId,
        record: &RollbackRecord,
    ) -> Result<flame_model::Frame, StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            w.tx.execute(
                "UPDATE frames SET rolled_back_at = ?2 WHERE id = ?1",
                params![id.as_str(), w.change.at],
            )?;
            w.event(
                &frame.tree,
                id,
                flame_model::EventKind::RolledBack,
                &EventDetail::RolledBack(record.clone()),
            )?;
            w.frame(id)
        })
    }
}
