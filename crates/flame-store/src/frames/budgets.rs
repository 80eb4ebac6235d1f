//! Frames' budgets (migration 17: `frame_budgets`) and what subtrees spent.
//!
//! A subtree's spend is summed from the `messages_usage` index alone — each reply's usage and
//! its `tool_call_count` — through the frames' parent index, so reading it never reads a message
//! row. The facade keeps the sums of a tree's budgeted frames and brings them up to date one
//! reply at a time ([`Store::reply_usage`]), so a check before each model call reads the new
//! replies only.

use flame_model::budget::FrameBudget;
use flame_model::cost::ModelUsage;
use flame_model::{EventDetail, EventKind, FrameId, MessageId, TreeId};
use rusqlite::{OptionalExtension as _, params};

use super::reads::model_usage;
use super::writer::{Change, Writer};
use crate::{Store, StoreError};

/// What a subtree's replies recorded: their usage by model, and the tool calls they made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubtreeUsage {
    pub by_model: Vec<ModelUsage>,
    pub tool_calls: u64,
}

/// What one reply recorded, and in which frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyUsage {
    pub frame: FrameId,
    pub usage: ModelUsage,
    pub tool_calls: u64,
}

/// A tree's budgets, each with its subtree's usage, as of one moment: every event up to `seq`
/// is in the sums and none after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BudgetSnapshot {
    pub seq: i64,
    pub budgets: Vec<(FrameId, FrameBudget, SubtreeUsage)>,
}

impl Store {
    /// Sets frame `frame`'s budget (`None`, or one that limits nothing: clears it), recording a
    /// `budget_set` event; returns the budget it had. Any frame may have one, whatever its
    /// status: a finished frame's budget still shows what it was given.
    pub fn set_budget(
        &mut self,
        change: Change,
        frame: &FrameId,
        budget: Option<&FrameBudget>,
    ) -> Result<Option<FrameBudget>, StoreError> {
        self.write(change, |w| {
            let target = w.frame(frame)?;
            w.set_budget_row(&target.tree, frame, budget)
        })
    }

    /// Frame `frame`'s own budget.
    pub fn budget(&self, frame: &FrameId) -> Result<Option<FrameBudget>, StoreError> {
        Ok(read_budget(&self.conn, frame)?)
    }

    /// Every budget of tree `tree`, by frame.
    pub fn budgets_of_tree(
        &self,
        tree: &TreeId,
    ) -> Result<Vec<(FrameId, FrameBudget)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT frame_id, micro_usd, tokens, tool_calls FROM frame_budgets
             WHERE tree_id = ?1 ORDER BY frame_id",
        )?;
        let rows = stmt.query_map([tree.as_str()], |row| {
            Ok((FrameId::from_trusted(row.get(0)?), budget_of_row(row, 1)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// What frame `frame`'s subtree (it and every frame under it) recorded.
    pub fn subtree_usage(&self, frame: &FrameId) -> Result<SubtreeUsage, StoreError> {
        let mut stmt = self.conn.prepare_cached(SUBTREE_USAGE)?;
        let mut usage = SubtreeUsage::default();
        let rows = stmt.query_map([frame.as_str()], |row| {
            Ok((model_usage(row, 0)?, row.get::<_, i64>(6)?.max(0) as u64))
        })?;
        for row in rows {
            let (by_model, calls) = row?;
            usage.tool_calls = usage.tool_calls.saturating_add(calls);
            usage.by_model.push(by_model);
        }
        Ok(usage)
    }

    /// What reply `id` recorded, once it is finished; `None` for any other message (a person's,
    /// a tool result, a note, a reply still open) or one that is gone.
    pub fn reply_usage(&self, id: MessageId) -> Result<Option<ReplyUsage>, StoreError> {
        let mut stmt = self.conn.prepare_cached(REPLY_USAGE)?;
        Ok(stmt
            .query_row([id.0], |row| {
                Ok(ReplyUsage {
                    frame: FrameId::from_trusted(row.get(0)?),
                    usage: model_usage(row, 1)?,
                    tool_calls: row.get::<_, i64>(7)?.max(0) as u64,
                })
            })
            .optional()?)
    }

    /// Tree `tree`'s budgets with their subtrees' usage and the newest event seq, read in one
    /// read transaction, so that the events after `seq` are exactly what the sums lack.
    pub fn budget_snapshot(&self, tree: &TreeId) -> Result<BudgetSnapshot, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        let seq = self.latest_event_seq()?;
        let mut budgets = Vec::new();
        for (frame, budget) in self.budgets_of_tree(tree)? {
            let usage = self.subtree_usage(&frame)?;
            budgets.push((frame, budget, usage));
        }
        tx.commit()?;
        Ok(BudgetSnapshot { seq, budgets })
    }
}

impl Writer<'_> {
    /// Writes frame `frame`'s (of tree `tree`) budget row and its event, inside the caller's
    /// transaction; returns the budget it had.
    pub(super) fn set_budget_row(
        &self,
        tree: &TreeId,
        frame: &FrameId,
        budget: Option<&FrameBudget>,
    ) -> Result<Option<FrameBudget>, StoreError> {
        let previous = read_budget(self.tx, frame)?;
        let budget = budget.filter(|b| !b.is_empty());
        match budget {
            Some(b) => {
                let as_sql = |n: Option<u64>| n.map(|n| n.min(i64::MAX as u64) as i64);
                self.tx
                    .prepare_cached(
                        "INSERT INTO frame_budgets (frame_id, tree_id, micro_usd, tokens, tool_calls)
                         VALUES (?1, ?2, ?3, ?4, ?5)
                         ON CONFLICT (frame_id) DO UPDATE SET micro_usd = excluded.micro_usd,
                             tokens = excluded.tokens, tool_calls = excluded.tool_calls",
                    )?
                    .execute(params![
                        frame.as_str(),
                        tree.as_str(),
                        as_sql(b.micro_usd),
                        as_sql(b.tokens),
                        as_sql(b.tool_calls)
                    ])?;
            }
            None => {
                self.tx
                    .prepare_cached("DELETE FROM frame_budgets WHERE frame_id = ?1")?
                    .execute([frame.as_str()])?;
            }
        }
        let detail = EventDetail::BudgetSet { budget: budget.copied(), previous_budget: previous };
        self.event(tree, frame, EventKind::BudgetSet, &detail)?;
        Ok(previous)
    }
}

fn read_budget(
    conn: &rusqlite::Connection,
    frame: &FrameId,
) -> rusqlite::Result<Option<FrameBudget>> {
    conn.prepare_cached(
        "SELECT micro_usd, tokens, tool_calls FROM frame_budgets WHERE frame_id = ?1",
    )?
    .query_row([frame.as_str()], |row| budget_of_row(row, 0))
    .optional()
}

fn budget_of_row(row: &rusqlite::Row, first: usize) -> rusqlite::Result<FrameBudget> {
    let limit = |i: usize| row.get::<_, Option<i64>>(first + i).map(|n| n.map(|n| n.max(0) as u64));
    Ok(FrameBudget { micro_usd: limit(0)?, tokens: limit(1)?, tool_calls: limit(2)? })
}

/// Frame ?1's subtree, walked down the parent index, and its replies' usage and tool calls by
/// model, from the usage index (the counts as `reads.rs` sums them: capped columns, none as 0).
/// `CROSS JOIN` keeps the subtree the outer loop: without statistics SQLite would rather scan
/// every reply and look each one's frame up in the subtree.
const SUBTREE_USAGE: &str = "WITH RECURSIVE subtree(id) AS (
         SELECT ?1
         UNION ALL
         SELECT f.id FROM frames f JOIN subtree s ON f.parent_id = s.id
     )
     SELECT model, sum(coalesce(usage_input, 0)), sum(coalesce(usage_output, 0)),
            sum(coalesce(usage_cache_read, 0)), sum(coalesce(usage_cache_write, 0)),
            sum(coalesce(usage_cache_write_long, 0)), sum(tool_call_count)
     FROM subtree CROSS JOIN messages m ON m.frame_id = subtree.id
     WHERE m.role = 'assistant' GROUP BY model";

/// One finished reply's frame, usage and tool calls.
const REPLY_USAGE: &str = "SELECT frame_id, model, coalesce(usage_input, 0),
         coalesce(usage_output, 0), coalesce(usage_cache_read, 0), coalesce(usage_cache_write, 0),
         coalesce(usage_cache_write_long, 0), tool_call_count
     FROM messages WHERE id = ?1 AND role = 'assistant' AND open = 0";

#[cfg(test)]
mod tests {
    use super::*;

    /// A subtree's usage is read from the parent index and the usage index alone.
    #[test]
    fn a_subtrees_usage_is_read_from_indexes_alone() {
        let plan = crate::query_plan(SUBTREE_USAGE, ["f0000000000"]);
        assert!(plan.contains("frames_by_parent (parent_id=?)"), "{plan}");
        assert!(plan.contains("COVERING INDEX messages_usage (frame_id=?)"), "{plan}");
        assert!(!plan.contains("SCAN m"), "a full scan of messages:\n{plan}");
    }
}
