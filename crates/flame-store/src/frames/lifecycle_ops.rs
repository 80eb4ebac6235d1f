//! The lifecycle of started work: push, start, pop, resume, retry and invalidate, and the
//! partial results of a frame in progress.

use std::collections::HashSet;

use flame_model::budget::FrameBudget;
use flame_model::lifecycle::{self, Operation, PopStatus};
use flame_model::{EventDetail, EventKind, Frame, FrameError, FrameId, Status};
use rusqlite::params;

use crate::rows;
use crate::{Store, StoreError};

use super::Change;
use super::reads::read_open_ancestors;
use super::writer::Writer;

/// What a pop records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pop {
    pub status: PopStatus,
    pub results: Option<String>,
    pub results_compacted: Option<String>,
    pub artifacts: Vec<String>,
    pub decisions: Vec<String>,
    pub reason: Option<String>,
}

impl Store {
    /// Pushes a new `in_progress` child under `parent` and focuses it. A planned parent is
    /// started first, with its planned ancestors.
    pub fn push(
        &mut self,
        change: Change,
        id: &FrameId,
        parent: &FrameId,
        title: &str,
        criteria: &str,
    ) -> Result<Frame, StoreError> {
        self.push_budgeted(change, id, parent, title, criteria, None)
    }

    /// [`Store::push`], the child given `budget` in the same transaction.
    pub fn push_budgeted(
        &mut self,
        change: Change,
        id: &FrameId,
        parent: &FrameId,
        title: &str,
        criteria: &str,
        budget: Option<&FrameBudget>,
    ) -> Result<Frame, StoreError> {
        lifecycle::check_identity(title, criteria)?;
        self.write(change, |w| {
            let parent = w.frame(parent)?;
            let ancestors = w.open_ancestors(&parent)?;
            w.start_frames(&lifecycle::check_push(&parent, &ancestors)?)?;
            let position = w.child_count(&parent.id)?;
            w.insert_frame(
                id,
                &parent.tree,
                Some(&parent.id),
                position,
                title,
                criteria,
                Status::InProgress,
                None,
            )?;
            let detail = EventDetail::Placed {
                parent: parent.id.clone(),
                position,
                title: title.to_owned(),
                success_criteria: criteria.to_owned(),
            };
            w.event(&parent.tree, id, EventKind::Pushed, &detail)?;
            if budget.is_some_and(|b| !b.is_empty()) {
                w.set_budget_row(&parent.tree, id, budget)?;
            }
            w.set_focus(&parent.tree, id)?;
            w.frame(id)
        })
    }

    /// Starts a planned frame and its planned ancestors, and focuses it.
    pub fn start(&mut self, change: Change, id: &FrameId) -> Result<Frame, StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            let ancestors = w.open_ancestors(&frame)?;
            w.start_frames(&lifecycle::check_start(&frame, &ancestors)?)?;
            w.set_focus(&frame.tree, id)?;
            w.frame(id)
        })
    }

    /// Pops an in-progress frame as completed, failed or blocked. Its remaining planned
    /// children (and their subtrees) become invalidated; a focus inside it returns to its parent.
    /// The files its own tool calls changed join its artifacts, after those `pop` names.
    pub fn pop(&mut self, change: Change, id: &FrameId, pop: &Pop) -> Result<Frame, StoreError> {
        lifecycle::check_pop_input(id, pop.status, pop.results.as_deref(), pop.reason.as_deref())?;
        self.write(change, |w| w.pop(id, pop))
    }

    /// [`Store::pop`] for a caller that means its tree's focus and names it: `id` is popped only
    /// if it is still the focus, read in the same transaction. When another process or client
    /// has moved the focus since (popped it, pushed, focused elsewhere), nothing changes and the
    /// refusal names the frame focused now.
    pub fn pop_focused(
        &mut self,
        change: Change,
        id: &FrameId,
        pop: &Pop,
    ) -> Result<Frame, StoreError> {
        lifecycle::check_pop_input(id, pop.status, pop.results.as_deref(), pop.reason.as_deref())?;
        self.write(change, |w| {
            let frame = w.frame(id)?;
            let focus = w.tree(&frame.tree)?.focus;
            if focus != frame.id {
                let focused = w.frame(&focus)?;
                return Err(FrameError::Refused {
                    op: "pop",
                    frame: frame.id,
                    title: frame.title,
                    status: frame.status,
                    allowed: format!(
                        "the pop named it as the focus, but the focus has moved to {} \"{}\" ({}), so nothing was popped; look at the tree and name the frame you mean",
                        focused.id, focused.title, focused.status
                    ),
                }
                .into());
            }
            w.pop(id, pop)
        })
    }

    /// Resumes a blocked frame under an in-progress parent, and focuses it.
    pub fn resume(&mut self, change: Change, id: &FrameId) -> Result<Frame, StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            lifecycle::check_resume(&frame, w.parent(&frame)?.as_ref())?;
            w.tx.execute(
                "UPDATE frames SET status = 'in_progress', status_reason = NULL, ended_at = NULL WHERE id = ?1",
                [id.as_str()],
            )?;
            w.event(&frame.tree, id, EventKind::Resumed, &EventDetail::Nothing {})?;
            w.set_focus(&frame.tree, id)?;
            w.frame(id)
        })
    }

    /// Retries a failed frame: a new in-progress sibling right after it, with the same identity
    /// and `retry_of`, focused. The failed attempt stays as it is.
    pub fn retry(
        &mut self,
        change: Change,
        id: &FrameId,
        new_id: &FrameId,
    ) -> Result<Frame, StoreError> {
        self.write(change, |w| {
            let failed = w.frame(id)?;
            let parent = w.parent(&failed)?;
            let parent = lifecycle::check_retry(&failed, parent.as_ref())?.id.clone();
            w.shift_positions(&parent, failed.position + 1, 1)?;
            w.insert_frame(
                new_id,
                &failed.tree,
                Some(&parent),
                failed.position + 1,
                &failed.title,
                &failed.success_criteria,
                Status::InProgress,
                Some(id),
            )?;
            w.tx.execute(
                "UPDATE frames SET success_criteria_compacted = ?2 WHERE id = ?1",
                params![new_id.as_str(), failed.success_criteria_compacted],
            )?;
            w.event(
                &failed.tree,
                id,
                EventKind::Retried,
                &EventDetail::RetriedAs { retried_as: new_id.clone() },
            )?;
            let detail = EventDetail::RetryOf {
                retry_of: id.clone(),
                title: failed.title.clone(),
                success_criteria: failed.success_criteria.clone(),
            };
            w.event(&failed.tree, new_id, EventKind::Retried, &detail)?;
            w.set_focus(&failed.tree, new_id)?;
            w.frame(new_id)
        })
    }

    /// Invalidates a frame and every planned, in-progress or blocked frame below it; completed
    /// and failed descendants keep their status. Returns the frames invalidated.
    pub fn invalidate(
        &mut self,
        change: Change,
        id: &FrameId,
        reason: Option<&str>,
    ) -> Result<Vec<FrameId>, StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            lifecycle::check(Operation::Invalidate, &frame.id, &frame.title, frame.status)?;
            let reason =
                reason.map(str::trim).filter(|r| !r.is_empty()).unwrap_or("no longer relevant");
            w.mark_invalidated(&frame, reason)?;
            let mut invalidated = vec![frame.id.clone()];
            for child in w.children(id)? {
                invalidated.extend(w.invalidate_subtree(&child, &format!("{id} was invalidated"))?);
            }
            w.focus_out_of(&frame)?;
            Ok(invalidated)
        })
    }

    /// Merges `text` into section `section` of an in-progress frame's partial results.
    pub fn update_results(
        &mut self,
        change: Change,
        id: &FrameId,
        section: &str,
        text: &str,
    ) -> Result<Frame, StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            if frame.status != Status::InProgress {
                return Err(FrameError::Refused {
                    op: "update the results of",
                    frame: frame.id.clone(),
                    title: frame.title.clone(),
                    status: frame.status,
                    allowed: "partial results are written only while a frame is in_progress; a finished frame's results are set when it is popped".to_owned(),
                }
                .into());
            }
            let merged = lifecycle::merge_section(frame.results.as_deref(), section, text)?;
            w.tx.prepare_cached("UPDATE frames SET results = ?2 WHERE id = ?1")?.execute(params![id.as_str(), merged])?;
            let detail = EventDetail::ResultsUpdated {
                section: section.trim().to_owned(),
                text: text.trim().to_owned(),
            };
            w.event(&frame.tree, id, EventKind::ResultsUpdated, &detail)?;
            w.frame(id)
        })
    }

    /// Sets a frame's compacted success criteria (generated after it was created).
    pub fn set_criteria_compacted(
        &mut self,
        change: Change,
        id: &FrameId,
        compacted: &str,
    ) -> Result<(), StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            w.tx.prepare_cached("UPDATE frames SET success_criteria_compacted = ?2 WHERE id = ?1")?
                .execute(params![id.as_str(), compacted])?;
            // Recorded so that other processes, and the facade's kept context parts, see it.
            let detail =
                EventDetail::CriteriaCompacted { success_criteria_compacted: compacted.to_owned() };
            w.event(&frame.tree, id, EventKind::CriteriaCompacted, &detail)?;
            Ok(())
        })
    }
}

/// A popped frame's artifacts: the list the popper gave, then each file the frame's own calls
/// changed (sorted) that the list does not already name.
fn merge_artifacts(given: &[String], changed: Vec<String>) -> Vec<String> {
    let mut artifacts = given.to_vec();
    let named: HashSet<&str> = given.iter().map(String::as_str).collect();
    let added: Vec<String> = changed.into_iter().filter(|p| !named.contains(p.as_str())).collect();
    artifacts.extend(added);
    artifacts
}

impl Writer<'_> {
    /// Pops `id` (see [`Store::pop`]) inside the caller's transaction.
    fn pop(&self, id: &FrameId, pop: &Pop) -> Result<Frame, StoreError> {
        let frame = self.frame(id)?;
        let children = self.children(id)?;
        lifecycle::check_pop(&frame, &children)?;
        let status = pop.status.status();
        let artifacts = merge_artifacts(&pop.artifacts, self.changed_paths(id)?);
        self.tx.execute(
            "UPDATE frames SET status = ?2, results = ?3, results_compacted = ?4, artifacts = ?5,
                 decisions = ?6, status_reason = ?7, ended_at = ?8 WHERE id = ?1",
            params![
                id.as_str(),
                status.as_str(),
                pop.results.as_deref().or(frame.results.as_deref()),
                pop.results_compacted.as_deref().or(frame.results_compacted.as_deref()),
                rows::json_list(&artifacts),
                rows::json_list(&pop.decisions),
                pop.reason,
                self.change.at,
            ],
        )?;
        let detail = EventDetail::Popped {
            status,
            results: pop.results.clone(),
            results_compacted: pop.results_compacted.clone(),
            artifacts,
            decisions: pop.decisions.clone(),
            reason: pop.reason.clone(),
        };
        self.event(&frame.tree, id, EventKind::Popped, &detail)?;
        for child in self.children(id)? {
            if child.status == Status::Planned {
                self.invalidate_subtree(
                    &child,
                    &format!("its parent {id} was popped as {status}"),
                )?;
            }
        }
        self.focus_out_of(&frame)?;
        self.frame(id)
    }

    fn mark_invalidated(&self, frame: &Frame, reason: &str) -> Result<(), StoreError> {
        self.tx
            .prepare_cached("UPDATE frames SET status = 'invalidated', status_reason = ?2, ended_at = ?3 WHERE id = ?1")?
            .execute(params![frame.id.as_str(), reason, self.change.at])?;
        self.event(
            &frame.tree,
            &frame.id,
            EventKind::Invalidated,
            &EventDetail::Invalidated { reason: reason.to_owned() },
        )?;
        Ok(())
    }

    /// Invalidates `frame` if it is still open, and every open frame below it.
    fn invalidate_subtree(&self, frame: &Frame, reason: &str) -> Result<Vec<FrameId>, StoreError> {
        let mut invalidated = Vec::new();
        for f in self.subtree(&frame.id)? {
            if lifecycle::invalidation_reaches(f.status) {
                self.mark_invalidated(&f, reason)?;
                invalidated.push(f.id);
            }
        }
        Ok(invalidated)
    }

    /// Starts `frames` (as `lifecycle::start_order` gives them: top down) and records it.
    fn start_frames(&self, frames: &[&Frame]) -> Result<(), StoreError> {
        for f in frames {
            self.tx
                .prepare_cached(
                    "UPDATE frames SET status = 'in_progress', started_at = ?2 WHERE id = ?1",
                )?
                .execute(params![f.id.as_str(), self.change.at])?;
            self.event(&f.tree, &f.id, EventKind::Started, &EventDetail::Nothing {})?;
        }
        Ok(())
    }

    /// `frame`'s parent, `None` for a root.
    fn parent(&self, frame: &Frame) -> Result<Option<Frame>, StoreError> {
        frame.parent.as_ref().map(|id| self.frame(id)).transpose()
    }

    /// `frame`'s ancestors as `lifecycle::OpenAncestors` describes them.
    fn open_ancestors(&self, frame: &Frame) -> Result<Vec<Frame>, StoreError> {
        read_open_ancestors(self.tx, frame)
    }

    /// After `frame` was popped or invalidated: a focus on it or below it moves to its parent.
    fn focus_out_of(&self, frame: &Frame) -> Result<(), StoreError> {
        let Some(parent) = &frame.parent else { return Ok(()) };
        let tree = self.tree(&frame.tree)?;
        if self.path_to_root(&tree.focus)?.contains(&frame.id) {
            self.set_focus(&frame.tree, parent)?;
        }
        Ok(())
    }
}
