//! Planned frames: planning them (with nested children), and editing, moving and deleting them
//! while they are still only planned.

use flame_model::budget::FrameBudget;
use flame_model::lifecycle::{self, Operation};
use flame_model::{EventDetail, EventKind, Frame, FrameError, FrameId, Status, TreeId};
use rusqlite::params;

use crate::{Store, StoreError};

use super::Change;
use super::writer::Writer;

/// A planned frame to create, with its own planned children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanItem {
    pub id: FrameId,
    pub title: String,
    pub success_criteria: String,
    /// The frame's budget, if it is given one.
    pub budget: Option<FrameBudget>,
    pub children: Vec<PlanItem>,
}

impl Store {
    /// Plans frames (with nested planned children) under `parent`, at `position` among its
    /// children (default: after the last). Returns the created frames, parents before children.
    pub fn plan(
        &mut self,
        change: Change,
        parent: &FrameId,
        position: Option<u32>,
        items: &[PlanItem],
    ) -> Result<Vec<Frame>, StoreError> {
        if items.is_empty() {
            return Err(
                FrameError::Invalid("nothing to plan: give at least one frame".to_owned()).into()
            );
        }
        check_plan_items(items)?;
        self.write(change, |w| {
            let parent = w.frame(parent)?;
            lifecycle::check_parent(
                "plan under",
                lifecycle::PLAN_PARENT,
                &parent.id,
                &parent.title,
                parent.status,
            )?;
            let count = w.child_count(&parent.id)?;
            let at = w.insertion_position(&parent, position, count)?;
            w.shift_positions(&parent.id, at, items.len() as i64)?;
            let mut created = Vec::new();
            for (offset, item) in items.iter().enumerate() {
                w.insert_plan(&parent.tree, &parent.id, at + offset as u32, item, &mut created)?;
            }
            created.iter().map(|id| w.frame(id)).collect()
        })
    }

    /// Changes a planned frame's title and/or success criteria.
    pub fn edit(
        &mut self,
        change: Change,
        id: &FrameId,
        title: Option<&str>,
        criteria: Option<&str>,
    ) -> Result<Frame, StoreError> {
        if title.is_none() && criteria.is_none() {
            return Err(FrameError::Invalid(
                "nothing to edit: give --title and/or --criteria".to_owned(),
            )
            .into());
        }
        self.write(change, |w| {
            let frame = w.frame(id)?;
            lifecycle::check(Operation::Edit, &frame.id, &frame.title, frame.status)?;
            let title = title.unwrap_or(&frame.title);
            let criteria = criteria.unwrap_or(&frame.success_criteria);
            lifecycle::check_identity(title, criteria)?;
            w.tx.execute(
                "UPDATE frames SET title = ?2, success_criteria = ?3, success_criteria_compacted = NULL WHERE id = ?1",
                params![id.as_str(), title, criteria],
            )?;
            let detail = EventDetail::Edited { title: title.to_owned(), success_criteria: criteria.to_owned() };
            w.event(&frame.tree, id, EventKind::Edited, &detail)?;
            w.frame(id)
        })
    }

    /// Moves a planned frame: to `position` among its siblings, or under `new_parent` (any
    /// planned, in-progress or blocked frame of the same tree outside its own subtree).
    pub fn move_frame(
        &mut self,
        change: Change,
        id: &FrameId,
        new_parent: Option<&FrameId>,
        position: Option<u32>,
    ) -> Result<Frame, StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            lifecycle::check(Operation::Move, &frame.id, &frame.title, frame.status)?;
            let old_parent = frame.parent.clone().ok_or_else(|| {
                FrameError::Invalid(format!("{id} is a root frame and has nowhere to move"))
            })?;
            let target = w.frame(new_parent.unwrap_or(&old_parent))?;
            if target.tree != frame.tree {
                return Err(FrameError::Invalid(format!(
                    "cannot move {id} into another tree: {} belongs to tree {}",
                    target.id, target.tree
                ))
                .into());
            }
            lifecycle::check_parent(
                "move under",
                lifecycle::PLAN_PARENT,
                &target.id,
                &target.title,
                target.status,
            )?;
            if w.path_to_root(&target.id)?.contains(id) {
                return Err(FrameError::Invalid(format!(
                    "cannot move {id} under {}: that is inside {id}'s own subtree",
                    target.id
                ))
                .into());
            }
            if target.id != old_parent {
                w.move_spends(&frame.tree, id, &old_parent, &target.id)?;
            }
            // Take the frame out of its old place, then put it in the new one.
            w.shift_positions(&old_parent, frame.position + 1, -1)?;
            let count = w.child_count(&target.id)? - u32::from(target.id == old_parent);
            let at = w.insertion_position(&target, position, count)?;
            w.shift_positions_except(&target.id, at, 1, id)?;
            w.tx.execute(
                "UPDATE frames SET parent_id = ?2, position = ?3 WHERE id = ?1",
                params![id.as_str(), target.id.as_str(), at],
            )?;
            w.event(
                &frame.tree,
                id,
                EventKind::Moved,
                &EventDetail::Moved {
                    from_parent: old_parent.clone(),
                    from_position: frame.position,
                    to_parent: target.id.clone(),
                    to_position: at,
                },
            )?;
            w.frame(id)
        })
    }

    /// Deletes a planned frame and its planned subtree, if none of them has messages.
    pub fn delete(&mut self, change: Change, id: &FrameId) -> Result<Vec<FrameId>, StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            lifecycle::check(Operation::Delete, &frame.id, &frame.title, frame.status)?;
            let parent = frame.parent.clone().ok_or_else(|| {
                FrameError::Invalid(format!("{id} is a root frame; a tree is not deleted this way"))
            })?;
            let subtree = w.subtree(id)?;
            if let Some(talked) = subtree.iter().find(|f| f.message_count > 0) {
                return Err(FrameError::Invalid(format!(
                    "cannot delete {id}: {} has messages, which are never deleted; invalidate it instead",
                    talked.id
                ))
                .into());
            }
            // Children before parents, so no row ever points at a deleted one.
            for gone in subtree.iter().rev() {
                w.event(&frame.tree, &gone.id, EventKind::Deleted, &EventDetail::Deleted { title: gone.title.clone() })?;
                w.tx.execute("DELETE FROM frame_budgets WHERE frame_id = ?1", [gone.id.as_str()])?;
                w.tx.execute("DELETE FROM frames WHERE id = ?1", [gone.id.as_str()])?;
            }
            w.shift_positions(&parent, frame.position + 1, -1)?;
            let tree = w.tree(&frame.tree)?;
            if subtree.iter().any(|f| f.id == tree.focus) {
                w.set_focus(&frame.tree, &parent)?;
            }
            Ok(subtree.into_iter().map(|f| f.id).collect())
        })
    }
}

fn check_plan_items(items: &[PlanItem]) -> Result<(), FrameError> {
    for item in items {
        lifecycle::check_identity(&item.title, &item.success_criteria)?;
        check_plan_items(&item.children)?;
    }
    Ok(())
}

impl Writer<'_> {
    fn insert_plan(
        &self,
        tree: &TreeId,
        parent: &FrameId,
        position: u32,
        item: &PlanItem,
        created: &mut Vec<FrameId>,
    ) -> Result<(), StoreError> {
        self.insert_frame(
            &item.id,
            tree,
            Some(parent),
            position,
            &item.title,
            &item.success_criteria,
            Status::Planned,
            None,
        )?;
        let detail = EventDetail::Placed {
            parent: parent.clone(),
            position,
            title: item.title.clone(),
            success_criteria: item.success_criteria.clone(),
        };
        self.event(tree, &item.id, EventKind::Planned, &detail)?;
        if item.budget.is_some_and(|b| !b.is_empty()) {
            self.set_budget_row(tree, &item.id, item.budget.as_ref())?;
        }
        created.push(item.id.clone());
        for (i, child) in item.children.iter().enumerate() {
            self.insert_plan(tree, &item.id, i as u32, child, created)?;
        }
        Ok(())
    }
}
