//! The write half of every operation: one `IMMEDIATE` transaction, and the row-level steps the
//! operations share (reads inside the transaction, positions, inserts, events, focus).

use flame_model::{
    Actor, EventDetail, EventKind, Frame, FrameError, FrameId, Status, Timestamp, Tree, TreeId,
};
use rusqlite::{Transaction, TransactionBehavior, params};

use crate::{Store, StoreError};

use super::reads::{read_children, read_frame, read_tree};

/// Who makes a change, and when. Every write takes one, so the store never reads a clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub actor: Actor,
    pub at: Timestamp,
}

impl Store {
    pub(super) fn write<T>(
        &mut self,
        change: Change,
        body: impl FnOnce(&mut Writer<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // The commit would wait for the file's check anyway (`damage_check.rs`): waiting first
        // says plainly why nothing was written.
        self.check.wait().map_err(StoreError::Unusable)?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let result = body(&mut Writer { tx: &tx, change })?;
        tx.commit()?;
        Ok(result)
    }
}

/// The write half of a transaction: reads see the transaction's own writes.
pub(super) struct Writer<'t> {
    pub(super) tx: &'t Transaction<'t>,
    pub(super) change: Change,
}

impl Writer<'_> {
    pub(super) fn frame(&self, id: &FrameId) -> Result<Frame, StoreError> {
        read_frame(self.tx, id)
    }

    pub(super) fn tree(&self, id: &TreeId) -> Result<Tree, StoreError> {
        read_tree(self.tx, id)
    }

    pub(super) fn children(&self, id: &FrameId) -> Result<Vec<Frame>, StoreError> {
        read_children(self.tx, id)
    }

    pub(super) fn child_count(&self, id: &FrameId) -> Result<u32, StoreError> {
        Ok(self
            .tx
            .prepare_cached("SELECT count(*) FROM frames WHERE parent_id = ?1")?
            .query_row([id.as_str()], |r| r.get(0))?)
    }

    /// `id` and everything below it, parents before children.
    pub(super) fn subtree(&self, id: &FrameId) -> Result<Vec<Frame>, StoreError> {
        let mut all = vec![self.frame(id)?];
        let mut next = 0;
        while next < all.len() {
            let children = self.children(&all[next].id)?;
            all.extend(children);
            next += 1;
        }
        Ok(all)
    }

    /// The ids from `id` up to the root, `id` first.
    pub(super) fn path_to_root(&self, id: &FrameId) -> Result<Vec<FrameId>, StoreError> {
        let mut path = vec![id.clone()];
        let mut stmt = self.tx.prepare_cached("SELECT parent_id FROM frames WHERE id = ?1")?;
        while let Some(parent) =
            stmt.query_row([path[path.len() - 1].as_str()], |r| r.get::<_, Option<String>>(0))?
        {
            path.push(FrameId::from_trusted(parent));
        }
        Ok(path)
    }

    /// The position to insert at among `count` children of `parent`: `position`, or the end.
    pub(super) fn insertion_position(
        &self,
        parent: &Frame,
        position: Option<u32>,
        count: u32,
    ) -> Result<u32, StoreError> {
        match position {
            None => Ok(count),
            Some(p) if p <= count => Ok(p),
            Some(p) => Err(FrameError::Invalid(format!(
                "position {p} is past the end: {} \"{}\" has {count} children, so positions run from 0 to {count}",
                parent.id, parent.title
            ))
            .into()),
        }
    }

    /// Adds `by` to the position of every child of `parent` at `from` or later.
    pub(super) fn shift_positions(
        &self,
        parent: &FrameId,
        from: u32,
        by: i64,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached("UPDATE frames SET position = position + ?3 WHERE parent_id = ?1 AND position >= ?2")?
            .execute(params![parent.as_str(), from, by])?;
        Ok(())
    }

    pub(super) fn shift_positions_except(
        &self,
        parent: &FrameId,
        from: u32,
        by: i64,
        except: &FrameId,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached("UPDATE frames SET position = position + ?3 WHERE parent_id = ?1 AND position >= ?2 AND id <> ?4")?
            .execute(params![parent.as_str(), from, by, except.as_str()])?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn insert_frame(
        &self,
        id: &FrameId,
        tree: &TreeId,
        parent: Option<&FrameId>,
        position: u32,
        title: &str,
        criteria: &str,
        status: Status,
        retry_of: Option<&FrameId>,
    ) -> Result<(), StoreError> {
        let started = (status == Status::InProgress).then_some(self.change.at);
        self.tx
            .prepare_cached(
                "INSERT INTO frames (id, tree_id, parent_id, position, title, success_criteria, status, retry_of, created_at, started_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                id.as_str(),
                tree.as_str(),
                parent.map(FrameId::as_str),
                position,
                title,
                criteria,
                status.as_str(),
                retry_of.map(FrameId::as_str),
                self.change.at,
                started,
            ])
            .map_err(|e| StoreError::taken_or(e, id.as_str()))?;
        Ok(())
    }

    /// Records an event and marks the frame's log as behind it.
    pub(super) fn event(
        &self,
        tree: &TreeId,
        frame: &FrameId,
        kind: EventKind,
        detail: &EventDetail,
    ) -> Result<i64, StoreError> {
        self.tx
            .prepare_cached("INSERT INTO events (tree_id, frame_id, kind, actor, at, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
            .execute(params![tree.as_str(), frame.as_str(), kind.as_str(), self.change.actor.as_str(), self.change.at, detail.to_json()])?;
        let seq = self.tx.last_insert_rowid();
        self.tx
            .prepare_cached(
                "INSERT INTO log_pending (frame_id, through_seq) VALUES (?1, ?2)
                 ON CONFLICT (frame_id) DO UPDATE SET through_seq = excluded.through_seq",
            )?
            .execute(params![frame.as_str(), seq])?;
        Ok(seq)
    }

    pub(super) fn set_focus(&self, tree: &TreeId, frame: &FrameId) -> Result<(), StoreError> {
        let current = self.tree(tree)?;
        if &current.focus != frame {
            self.tx
                .prepare_cached("UPDATE trees SET focus_id = ?2 WHERE id = ?1")?
                .execute(params![tree.as_str(), frame.as_str()])?;
            // Focus changes are recorded for live updates but not written to the frame's log.
            self.tx
                .prepare_cached("INSERT INTO events (tree_id, frame_id, kind, actor, at, detail) VALUES (?1, ?2, 'focused', ?3, ?4, ?5)")?
                .execute(params![tree.as_str(), frame.as_str(), self.change.actor.as_str(), self.change.at, EventDetail::Focused { from: current.focus.clone() }.to_json()])?;
        }
        Ok(())
    }

    pub(super) fn set_current_tree(&self, tree: &TreeId) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "INSERT INTO store_meta (key, value) VALUES ('current_tree', ?1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )?
            .execute([tree.as_str()])?;
        Ok(())
    }
}
