//! Frames' budgets (migration 17: `frame_budgets`) and what their subtrees spent (migration 18:
//! `budget_spends`).
//!
//! The agent checks what its frame has left before every model call, and every `flame chat`
//! makes a first check in a process that has read nothing yet: that check must not sum the
//! subtree of a budget on the root, which is the whole tree. So what each budgeted frame's subtree
//! spent is kept in `budget_spends`, one row per model (each reply's usage columns and its
//! `tool_call_count`, the counts as `reads.rs` sums them: capped columns, none as 0), written in
//! the transaction that changes it:
//!
//! - a reply stored (`Writer::spend_reply`: an added message, a finished reply, a followed
//!   session's message) adds its usage to every budgeted frame on its frame's path;
//! - a frame newly budgeted (`Writer::set_budget_row`) sums its subtree once, from the usage
//!   index; a budget cleared deletes its rows (`ON DELETE CASCADE`, with a deleted tree's too);
//! - a move (`Writer::move_spends`) takes the moved subtree's spend from the budgeted frames it
//!   left and gives it to those it joined.
//!
//! Nothing else changes which replies lie under a budgeted frame: imports make new trees (no
//! budget comes with them), a followed session adds frames without messages and messages one at
//! a time, and a deleted frame has no messages. A row that comes to hold nothing is deleted, so
//! the rows are exactly the non-empty ones `SUBTREE_USAGE` would sum. A check then reads the
//! budgets on the frame's path and their rows ([`Store::budgets_on_path`]): as many rows as the
//! path is deep, whatever the tree's size (a test counts SQLite's steps).

use flame_model::budget::FrameBudget;
use flame_model::cost::ModelUsage;
use flame_model::{EventDetail, EventKind, FrameError, FrameId, MessageId, TreeId};
use rusqlite::{Connection, OptionalExtension as _, params};

use super::reads::model_usage;
use super::writer::{Change, Writer};
use crate::{Store, StoreError};

/// What a subtree's replies recorded: their usage by model, and the tool calls they made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubtreeUsage {
    pub by_model: Vec<ModelUsage>,
    pub tool_calls: u64,
}

/// A budgeted frame, its budget and what its subtree spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetedSpend {
    pub frame: FrameId,
    pub budget: FrameBudget,
    pub usage: SubtreeUsage,
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

    /// What frame `frame`'s subtree (it and every frame under it) recorded, summed from the
    /// usage index: read in proportion to the subtree. A budgeted frame's is kept
    /// ([`Store::budgets_on_path`]).
    pub fn subtree_usage(&self, frame: &FrameId) -> Result<SubtreeUsage, StoreError> {
        let mut usage = SubtreeUsage::default();
        for (by_model, calls) in summed_subtree_usage(&self.conn, frame)? {
            usage.tool_calls = usage.tool_calls.saturating_add(calls);
            usage.by_model.push(by_model);
        }
        Ok(usage)
    }

    /// The budgets on the path from the root to frame `frame` (root first, `frame` last when it
    /// has one), each with what its subtree spent: read in one read transaction, in proportion
    /// to the path's depth.
    pub fn budgets_on_path(&self, frame: &FrameId) -> Result<Vec<BudgetedSpend>, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        // Most trees have no budget: one look at the frame and its tree's budgets says so.
        let budgeted: Option<bool> = tx
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM frame_budgets b WHERE b.tree_id = f.tree_id)
                 FROM frames f WHERE f.id = ?1",
            )?
            .query_row([frame.as_str()], |row| row.get(0))
            .optional()?;
        match budgeted {
            None => return Err(FrameError::NoSuchFrame(frame.clone()).into()),
            Some(false) => return Ok(Vec::new()),
            Some(true) => {}
        }
        let mut path = Vec::new();
        let mut stmt = tx.prepare_cached(BUDGETS_ON_PATH)?;
        let rows = stmt.query_map([frame.as_str()], |row| {
            let id = FrameId::from_trusted(row.get(0)?);
            let budgeted: Option<i64> = row.get(1)?;
            Ok((id, budgeted.map(|_| budget_of_row(row, 2)).transpose()?))
        })?;
        for row in rows {
            path.push(row?);
        }
        if path.is_empty() {
            return Err(FrameError::NoSuchFrame(frame.clone()).into());
        }
        let mut budgets = Vec::new();
        for (frame, budget) in path.into_iter().rev() {
            let Some(budget) = budget else { continue };
            let usage = kept_spend(&tx, &frame)?;
            budgets.push(BudgetedSpend { frame, budget, usage });
        }
        drop(stmt);
        tx.commit()?;
        Ok(budgets)
    }

    /// Every budget of tree `tree`, by frame id, each with what its subtree spent.
    pub fn tree_budgets(&self, tree: &TreeId) -> Result<Vec<BudgetedSpend>, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        let mut stmt = tx.prepare_cached(
            "SELECT frame_id, micro_usd, tokens, tool_calls FROM frame_budgets
             WHERE tree_id = ?1 ORDER BY frame_id",
        )?;
        let rows = stmt.query_map([tree.as_str()], |row| {
            Ok((FrameId::from_trusted(row.get(0)?), budget_of_row(row, 1)?))
        })?;
        let budgets: Vec<(FrameId, FrameBudget)> = rows.collect::<Result<_, _>>()?;
        let mut spends = Vec::with_capacity(budgets.len());
        for (frame, budget) in budgets {
            let usage = kept_spend(&tx, &frame)?;
            spends.push(BudgetedSpend { frame, budget, usage });
        }
        drop(stmt);
        tx.commit()?;
        Ok(spends)
    }
}

impl Writer<'_> {
    /// Writes frame `frame`'s (of tree `tree`) budget row and its event, inside the caller's
    /// transaction; returns the budget it had. A frame newly budgeted has its subtree's spend
    /// summed and kept; a budget cleared takes its kept spend with it.
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
                if previous.is_none() {
                    for row in spend_rows(&summed_subtree_usage(self.tx, frame)?) {
                        add_spend(self.tx, frame, &row, Sign::Add)?;
                    }
                }
            }
            None => {
                // Its `budget_spends` rows go with it (`ON DELETE CASCADE`).
                self.tx
                    .prepare_cached("DELETE FROM frame_budgets WHERE frame_id = ?1")?
                    .execute([frame.as_str()])?;
            }
        }
        let detail = EventDetail::BudgetSet { budget: budget.copied(), previous_budget: previous };
        self.event(tree, frame, EventKind::BudgetSet, &detail)?;
        Ok(previous)
    }

    /// Adds what message `id` (just stored or finished in frame `frame` of tree `tree`)
    /// recorded to the kept spend of every budgeted frame on `frame`'s path. A message that is
    /// not a reply, or records nothing, adds nothing; a tree without budgets is one look.
    pub(super) fn spend_reply(
        &self,
        tree: &TreeId,
        frame: &FrameId,
        id: MessageId,
    ) -> Result<(), StoreError> {
        if !tree_has_budgets(self.tx, tree)? {
            return Ok(());
        }
        let row: Option<SpendRow> =
            self.tx.prepare_cached(REPLY_SPEND)?.query_row([id.0], SpendRow::of_row).optional()?;
        let Some(row) = row.filter(|r| !r.is_empty()) else { return Ok(()) };
        for budgeted in budgeted_on_path(self.tx, frame)? {
            add_spend(self.tx, &budgeted, &row, Sign::Add)?;
        }
        Ok(())
    }

    /// Moves the spend of frame `frame`'s subtree from the budgeted frames on `from`'s path to
    /// those on `to`'s (`frame` leaves `from` for `to`); frames on both paths keep theirs. Called
    /// before the move is written.
    pub(super) fn move_spends(
        &self,
        tree: &TreeId,
        frame: &FrameId,
        from: &FrameId,
        to: &FrameId,
    ) -> Result<(), StoreError> {
        if !tree_has_budgets(self.tx, tree)? {
            return Ok(());
        }
        let rows = spend_rows(&summed_subtree_usage(self.tx, frame)?);
        if rows.is_empty() {
            return Ok(());
        }
        let (left, joined) = (budgeted_on_path(self.tx, from)?, budgeted_on_path(self.tx, to)?);
        for budgeted in left.iter().filter(|b| !joined.contains(b)) {
            for row in &rows {
                add_spend(self.tx, budgeted, row, Sign::Take)?;
            }
        }
        for budgeted in joined.iter().filter(|b| !left.contains(b)) {
            for row in &rows {
                add_spend(self.tx, budgeted, row, Sign::Add)?;
            }
        }
        Ok(())
    }
}

/// One row of a spend: a model's usage counts and tool calls, as `budget_spends` holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SpendRow {
    model: Option<String>,
    /// Input, output, cache read, cache write, long cache write, tool calls.
    counts: [i64; 6],
}

impl SpendRow {
    /// Reads the model and the six counts from column 0 on.
    fn of_row(row: &rusqlite::Row) -> rusqlite::Result<SpendRow> {
        let mut counts = [0; 6];
        for (i, count) in counts.iter_mut().enumerate() {
            *count = row.get(i + 1)?;
        }
        Ok(SpendRow { model: row.get(0)?, counts })
    }

    fn is_empty(&self) -> bool {
        self.counts.iter().all(|&n| n == 0)
    }
}

/// The non-empty rows of a summed usage, as `budget_spends` keeps them.
fn spend_rows(usage: &[(ModelUsage, u64)]) -> Vec<SpendRow> {
    let count = |n: u64| n.min(i64::MAX as u64) as i64;
    usage
        .iter()
        .map(|(m, calls)| SpendRow {
            model: m.model.clone(),
            counts: [
                count(m.usage.input_tokens),
                count(m.usage.output_tokens),
                count(m.usage.cache_read_tokens),
                count(m.usage.cache_write_tokens),
                count(m.usage.cache_write_long_tokens),
                count(*calls),
            ],
        })
        .filter(|row| !row.is_empty())
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sign {
    Add,
    Take,
}

/// Adds `row` to (or takes it from) budgeted frame `frame`'s kept spend; a row left holding
/// nothing is deleted.
fn add_spend(
    conn: &Connection,
    frame: &FrameId,
    row: &SpendRow,
    sign: Sign,
) -> Result<(), StoreError> {
    let by = |n: i64| if sign == Sign::Add { n } else { -n };
    let [input, output, cache_read, cache_write, cache_write_long, calls] = row.counts.map(by);
    let values = params![
        frame.as_str(),
        row.model,
        input,
        output,
        cache_read,
        cache_write,
        cache_write_long,
        calls
    ];
    let changed = conn
        .prepare_cached(
            "UPDATE budget_spends SET input = input + ?3, output = output + ?4,
                 cache_read = cache_read + ?5, cache_write = cache_write + ?6,
                 cache_write_long = cache_write_long + ?7, tool_calls = tool_calls + ?8
             WHERE frame_id = ?1 AND model IS ?2",
        )?
        .execute(values)?;
    match (changed, sign) {
        (0, Sign::Add) => {
            conn.prepare_cached(
                "INSERT INTO budget_spends (frame_id, model, input, output, cache_read,
                     cache_write, cache_write_long, tool_calls)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(values)?;
        }
        (_, Sign::Take) => {
            conn.prepare_cached(
                "DELETE FROM budget_spends WHERE frame_id = ?1 AND model IS ?2 AND input = 0
                     AND output = 0 AND cache_read = 0 AND cache_write = 0
                     AND cache_write_long = 0 AND tool_calls = 0",
            )?
            .execute(params![frame.as_str(), row.model])?;
        }
        _ => {}
    }
    Ok(())
}

/// Whether tree `tree` has a budget: one look at `frame_budgets_by_tree`.
fn tree_has_budgets(conn: &Connection, tree: &TreeId) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM frame_budgets WHERE tree_id = ?1)")?
        .query_row([tree.as_str()], |row| row.get(0))
}

/// The budgeted frames among frame `frame` and its ancestors.
fn budgeted_on_path(conn: &Connection, frame: &FrameId) -> rusqlite::Result<Vec<FrameId>> {
    let mut stmt = conn.prepare_cached(BUDGETS_ON_PATH)?;
    let rows = stmt.query_map([frame.as_str()], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, Option<i64>>(1)?))
    })?;
    let mut budgeted = Vec::new();
    for row in rows {
        if let (id, Some(_)) = row? {
            budgeted.push(FrameId::from_trusted(id));
        }
    }
    Ok(budgeted)
}

/// Budgeted frame `frame`'s kept spend.
fn kept_spend(conn: &Connection, frame: &FrameId) -> rusqlite::Result<SubtreeUsage> {
    let mut stmt = conn.prepare_cached(
        "SELECT model, input, output, cache_read, cache_write, cache_write_long, tool_calls
         FROM budget_spends WHERE frame_id = ?1",
    )?;
    let rows = stmt.query_map([frame.as_str()], |row| {
        Ok((model_usage(row, 0)?, row.get::<_, i64>(6)?.max(0) as u64))
    })?;
    let mut usage = SubtreeUsage::default();
    for row in rows {
        let (by_model, calls) = row?;
        usage.tool_calls = usage.tool_calls.saturating_add(calls);
        usage.by_model.push(by_model);
    }
    Ok(usage)
}

/// Frame `frame`'s subtree's usage by model, each with its replies' tool calls, summed from the
/// usage index.
fn summed_subtree_usage(
    conn: &Connection,
    frame: &FrameId,
) -> rusqlite::Result<Vec<(ModelUsage, u64)>> {
    let mut stmt = conn.prepare_cached(SUBTREE_USAGE)?;
    let rows = stmt.query_map([frame.as_str()], |row| {
        Ok((model_usage(row, 0)?, row.get::<_, i64>(6)?.max(0) as u64))
    })?;
    rows.collect()
}

fn read_budget(conn: &Connection, frame: &FrameId) -> rusqlite::Result<Option<FrameBudget>> {
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

/// Frame ?1 and its ancestors, the frame first, each with its budget when it has one: the
/// budget's columns from 2 on, and column 1 not null. Walks up the primary key, one row a level.
const BUDGETS_ON_PATH: &str = "WITH RECURSIVE up(id, depth) AS (
         SELECT id, 0 FROM frames WHERE id = ?1
         UNION ALL
         SELECT f.parent_id, up.depth + 1 FROM frames f JOIN up ON f.id = up.id
         WHERE f.parent_id IS NOT NULL
     )
     SELECT up.id, b.rowid, b.micro_usd, b.tokens, b.tool_calls
     FROM up LEFT JOIN frame_budgets b ON b.frame_id = up.id ORDER BY up.depth";

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

/// One reply's model, usage and tool calls, as a [`SpendRow`].
const REPLY_SPEND: &str = "SELECT model, coalesce(usage_input, 0), coalesce(usage_output, 0),
         coalesce(usage_cache_read, 0), coalesce(usage_cache_write, 0),
         coalesce(usage_cache_write_long, 0), tool_call_count
     FROM messages WHERE id = ?1 AND role = 'assistant'";

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use flame_model::{Actor, IdSource, NewMessage, Role, Usage};

    use super::*;

    /// How many SQLite virtual-machine steps reading the budgets on a frame's path takes, in a
    /// tree whose root and the frame's parent have budgets and whose root has `others` other
    /// (planned) children, each with two replies.
    fn steps_on_path(others: usize) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let mut ids = IdSource::seeded(5);
        let change = Change { actor: Actor::Agent, at: 1 };
        let (tree, root) = (ids.tree_id(), ids.frame_id());
        store.create_tree(change, &tree, &root, "Build", "It works", None).unwrap();
        let ample = FrameBudget { tokens: Some(1 << 40), ..FrameBudget::default() };
        store.set_budget(change, &root, Some(&ample)).unwrap();
        let mut reply = NewMessage::text(Role::Assistant, "done");
        reply.model = Some("gpt-4o".into());
        reply.usage = Some(Usage { input_tokens: 10, ..Usage::default() });
        let planned: Vec<crate::PlanItem> = (0..others)
            .map(|_| crate::PlanItem {
                id: ids.frame_id(),
                title: "Other".into(),
                success_criteria: "Done".into(),
                budget: None,
                children: vec![],
            })
            .collect();
        store.plan(change, &root, None, &planned).unwrap();
        for other in &planned {
            store.add_message(change, &other.id, &reply, 1).unwrap();
            store.add_message(change, &other.id, &reply, 1).unwrap();
        }
        let mut frame = root.clone();
        for _ in 0..6 {
            let child = ids.frame_id();
            store.push(change, &child, &frame, "Deeper", "Done").unwrap();
            frame = child;
        }
        let parent = store.frame(&frame).unwrap().parent.unwrap();
        store.set_budget(change, &parent, Some(&ample)).unwrap();
        store.add_message(change, &frame, &reply, 1).unwrap();
        let steps = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&steps);
        store
            .conn
            .progress_handler(
                1,
                Some(move || {
                    counted.fetch_add(1, Ordering::Relaxed);
                    false
                }),
            )
            .unwrap();
        let on_path = store.budgets_on_path(&frame).unwrap();
        store.conn.progress_handler(1, None::<fn() -> bool>).unwrap();
        let spent: Vec<u64> = on_path
            .iter()
            .map(|b| b.usage.by_model.iter().map(|r| r.usage.input_tokens).sum())
            .collect();
        assert_eq!(spent, [10 + 20 * others as u64, 10]);
        steps.load(Ordering::Relaxed)
    }

    /// The check before a model call reads the budgets on the frame's path and what they
    /// kept, never their subtrees: the same steps in a tree of 10 frames as in one of 400, with a
    /// budget on the root that spans them all.
    #[test]
    fn the_budgets_on_a_path_are_read_in_steps_that_do_not_grow_with_the_tree() {
        let small = steps_on_path(3);
        let large = steps_on_path(400);
        assert_eq!(small, large, "{small} steps with 3 other frames, {large} with 400");
    }

    /// A subtree's usage is read from the parent index and the usage index alone.
    #[test]
    fn a_subtrees_usage_is_read_from_indexes_alone() {
        let plan = crate::query_plan(SUBTREE_USAGE, ["f0000000000"]);
        assert!(plan.contains("frames_by_parent (parent_id=?)"), "{plan}");
        assert!(plan.contains("COVERING INDEX messages_usage (frame_id=?)"), "{plan}");
        assert!(!plan.contains("SCAN m"), "a full scan of messages:\n{plan}");
    }

    /// The budgets on a path are found by walking up the frames' primary key and looking each
    /// frame up in `frame_budgets`: no table is scanned.
    #[test]
    fn the_budgets_on_a_path_are_found_by_key() {
        let plan = crate::query_plan(BUDGETS_ON_PATH, ["f0000000000"]);
        assert!(!plan.contains("SCAN f") && !plan.contains("SCAN b"), "{plan}");
        assert!(plan.contains("frame_budgets") && plan.contains("(frame_id=?)"), "{plan}");
    }
}
