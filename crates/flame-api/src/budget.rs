//! Budgets (DESIGN.md §11): what a frame's subtree may spend, what it has spent, and what a
//! frame has left by the budgets on its path (`flame_model::budget`).
//!
//! The agent asks what its frame has left before every model call ([`Flame::allowance`]), so
//! the check must not add up a large tree's replies each time. The spend of each budgeted frame
//! of the tree last asked about is kept, as usage by model and tool calls, with the event seq it
//! is as of ([`BudgetLedger`]); the next check follows the events since: a reply adds what it
//! recorded to every budgeted frame above it (`Store::reply_usage`, then the frame's ancestors),
//! a budget set reads that frame's subtree alone, and a change to the tree's shape (a move, a
//! deletion, an import) reads the tree's budgets again. Trees without budgets cost one look at
//! the events. Spends are priced when asked, at the prices in use, so new prices apply at once.
//!
//! A budget given to a frame is checked against what its parent has left
//! ([`Allowance::admits`]) just before it is stored, in another transaction: two processes
//! giving budgets at the same moment may together give a little more than the parent has, which
//! costs nothing, since what any frame has left is bounded by every budget on its path.

use std::sync::{Mutex, PoisonError};

use flame_model::budget::{Allowance, BudgetedFrame, FrameBudget, Spend};
use flame_model::cost::PriceTable;
use flame_model::{Actor, EventDetail, EventKind, Frame, FrameId, TreeId};
use flame_store::{Store, StoreError, SubtreeUsage};
use serde::Serialize;

use crate::frames::{default_to_focus, resolve_tree, with_fresh_ids};
use crate::{ApiError, ErrorCode, Flame, MAX_EVENTS_FOLLOWED};

/// A frame's budget as the window, `flame budget` and `flame status` show it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct BudgetView {
    pub frame: FrameId,
    /// The frame's own budget.
    pub budget: Option<FrameBudget>,
    /// What the frame's subtree has spent, at the prices in use; kept for budgeted frames
    /// only (an unbudgeted frame's cost is its `FrameCost`).
    pub spent: Option<Spend>,
    /// What the frame has left by every budget on its path (its own and its ancestors').
    pub allowance: Allowance,
}

impl BudgetView {
    /// Whether the frame's own budget is spent in some unit.
    pub fn exceeded(&self) -> bool {
        let (Some(budget), Some(spent)) = (&self.budget, &self.spent) else { return false };
        budget.limits().any(|(unit, limit)| spent.of(unit) >= limit)
    }
}

/// The spends of one tree's budgeted frames, as of an event seq.
#[derive(Debug, Default)]
pub(crate) struct BudgetLedger(Mutex<Option<TreeLedger>>);

#[derive(Debug)]
struct TreeLedger {
    tree: TreeId,
    /// Every event up to this one is in the sums.
    seq: i64,
    /// The tree's budgeted frames, sorted by id.
    budgeted: Vec<Budgeted>,
}

#[derive(Debug)]
struct Budgeted {
    frame: FrameId,
    budget: FrameBudget,
    usage: SubtreeUsage,
}

impl TreeLedger {
    fn read(store: &Store, tree: &TreeId) -> Result<TreeLedger, StoreError> {
        let snapshot = store.budget_snapshot(tree)?;
        let budgeted = snapshot
            .budgets
            .into_iter()
            .map(|(frame, budget, usage)| Budgeted { frame, budget, usage })
            .collect();
        Ok(TreeLedger { tree: tree.clone(), seq: snapshot.seq, budgeted })
    }

    /// Brought up to date with the events since it was read (see the module's documentation).
    fn follow(mut self, store: &Store) -> Result<TreeLedger, StoreError> {
        let events = store.events_since(self.seq, MAX_EVENTS_FOLLOWED + 1)?;
        if events.len() > MAX_EVENTS_FOLLOWED as usize {
            return TreeLedger::read(store, &self.tree);
        }
        let Some(last) = events.last().map(|e| e.seq) else { return Ok(self) };
        for event in events.iter().filter(|e| e.tree == self.tree) {
            match (event.kind, &event.detail) {
                (EventKind::MessageAdded, EventDetail::MessageAdded { message }) => {
                    if self.budgeted.is_empty() {
                        continue;
                    }
                    let Some(reply) = store.reply_usage(*message)? else { continue };
                    for frame in store.frame_and_ancestor_ids(&reply.frame)? {
                        if let Ok(i) = self.budgeted.binary_search_by(|b| b.frame.cmp(&frame)) {
                            let usage = &mut self.budgeted[i].usage;
                            add_usage(usage, &reply.usage);
                            usage.tool_calls = usage.tool_calls.saturating_add(reply.tool_calls);
                        }
                    }
                }
                (EventKind::BudgetSet, _) => {
                    let at = self.budgeted.binary_search_by(|b| b.frame.cmp(&event.frame));
                    match (store.budget(&event.frame)?, at) {
                        (Some(budget), Ok(i)) => self.budgeted[i].budget = budget,
                        (None, Ok(i)) => {
                            self.budgeted.remove(i);
                        }
                        (None, Err(_)) => {}
                        // A frame newly budgeted: its subtree's spend is read with the rest,
                        // as of one moment, so that no later reply is counted twice.
                        (Some(_), Err(_)) => return TreeLedger::read(store, &self.tree),
                    }
                }
                // A frame left its parent, or frames came or went in bulk: the subtrees are no
                // longer what the sums were made of.
                (EventKind::Moved | EventKind::Deleted | EventKind::Imported, _)
                | (EventKind::TreeDeleted, _) => return TreeLedger::read(store, &self.tree),
                _ => {}
            }
        }
        self.seq = last;
        Ok(self)
    }

    /// The budgeted frames among `path` (root first), each with its spend at `prices`.
    fn on_path(&self, path: &[FrameId], prices: &PriceTable) -> Vec<BudgetedFrame> {
        path.iter()
            .filter_map(|frame| {
                let i = self.budgeted.binary_search_by(|b| b.frame.cmp(frame)).ok()?;
                Some(self.budgeted[i].priced(prices))
            })
            .collect()
    }
}

impl Budgeted {
    fn priced(&self, prices: &PriceTable) -> BudgetedFrame {
        BudgetedFrame {
            frame: self.frame.clone(),
            budget: self.budget,
            spent: Spend::priced(&self.usage.by_model, self.usage.tool_calls, prices),
        }
    }
}

/// Adds one reply's usage to a subtree's, in its model's row.
fn add_usage(usage: &mut SubtreeUsage, reply: &flame_model::cost::ModelUsage) {
    match usage.by_model.iter_mut().find(|row| row.model == reply.model) {
        Some(row) => row.usage.add(&reply.usage),
        None => usage.by_model.push(reply.clone()),
    }
}

impl BudgetLedger {
    /// Runs `read` on tree `tree`'s ledger, brought up to date first.
    fn with<T>(
        &self,
        store: &Store,
        tree: &TreeId,
        read: impl FnOnce(&TreeLedger) -> T,
    ) -> Result<T, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let ledger = match kept.take() {
            Some(ledger) if ledger.tree == *tree => ledger.follow(store)?,
            _ => TreeLedger::read(store, tree)?,
        };
        let result = read(&ledger);
        *kept = Some(ledger);
        Ok(result)
    }
}

impl Flame {
    /// What frame `frame` has left by the budgets on its path: the agent's check before each
    /// model call. Reads only what changed since the last check in its tree.
    pub fn allowance(&self, frame: &FrameId) -> Result<Allowance, ApiError> {
        let store = self.store();
        Ok(self.allowance_in(&store, frame)?)
    }

    pub(crate) fn allowance_in(
        &self,
        store: &Store,
        frame: &FrameId,
    ) -> Result<Allowance, StoreError> {
        self.on_path(store, frame, Allowance::over)
    }

    /// Runs `read` on the budgeted frames of the path from the root to `frame` (root first),
    /// each with its spend at the prices in use.
    fn on_path<T>(
        &self,
        store: &Store,
        frame: &FrameId,
        read: impl FnOnce(&[BudgetedFrame]) -> T,
    ) -> Result<T, StoreError> {
        let mut path = store.frame_and_ancestor_ids(frame)?;
        let Some(root) = path.last() else {
            return Err(flame_model::FrameError::NoSuchFrame(frame.clone()).into());
        };
        let tree = store.frame(root)?.tree;
        path.reverse();
        self.config.with_prices(|prices| {
            self.budgets.with(store, &tree, |ledger| read(&ledger.on_path(&path, prices)))
        })
    }

    /// How a frame is named in what Flame says of budgets: `frame f… "Title"`.
    pub fn frame_name(&self, id: &FrameId) -> String {
        frame_name(&self.store(), id)
    }

    /// Frame `frame`'s budget, what its subtree spent when it has one, and what it has left.
    pub fn frame_budget(&self, frame: &FrameId) -> Result<BudgetView, ApiError> {
        let store = self.store();
        Ok(self.budget_view(&store, frame)?)
    }

    fn budget_view(&self, store: &Store, frame: &FrameId) -> Result<BudgetView, StoreError> {
        self.on_path(store, frame, |on_path| {
            let own = on_path.last().filter(|b| &b.frame == frame);
            BudgetView {
                frame: frame.clone(),
                budget: own.map(|b| b.budget),
                spent: own.map(|b| b.spent),
                allowance: Allowance::over(on_path),
            }
        })
    }

    /// Every budgeted frame of a tree (the current one if `tree` is `None`) with its spend and
    /// what it has left, by frame id: what `flame status` and the graph show.
    pub fn tree_budgets(&self, tree: Option<&TreeId>) -> Result<Vec<BudgetView>, ApiError> {
        let store = self.store();
        let tree = resolve_tree(&store, tree)?;
        Ok(self.budgets_of(&store, &tree)?)
    }

    pub(crate) fn budgets_of(
        &self,
        store: &Store,
        tree: &TreeId,
    ) -> Result<Vec<BudgetView>, StoreError> {
        let frames: Vec<FrameId> = self
            .budgets
            .with(store, tree, |l| l.budgeted.iter().map(|b| b.frame.clone()).collect())?;
        frames.iter().map(|frame| self.budget_view(store, frame)).collect()
    }

    /// The first of tree `tree`'s budgets that is spent, in words for a followed tree: Flame
    /// does not drive that agent, so a spent budget there only warns.
    pub(crate) fn spent_budget_notice(&self, tree: &TreeId) -> Result<Option<String>, ApiError> {
        let store = self.store();
        let spent = self.budgets_of(&store, tree)?.into_iter().find(BudgetView::exceeded);
        Ok(spent.and_then(|view| {
            let (budget, used) = (view.budget?, view.spent?);
            Some(format!(
                "the budget of {} is spent ({}); Flame does not drive this agent, so it only warns",
                frame_name(&store, &view.frame),
                budget.describe_use(&used)
            ))
        }))
    }

    /// Gives frame `frame` the budget `budget` (`None`, or one that limits nothing, clears it).
    /// A budget is refused when it gives the frame more than its parent has left, beyond what
    /// its subtree spent already ([`Allowance::admits`]); the root's budget is the person's to
    /// choose.
    pub fn set_budget(
        &self,
        actor: Actor,
        frame: &FrameId,
        budget: Option<FrameBudget>,
    ) -> Result<BudgetView, ApiError> {
        let budget = budget.filter(|b| !b.is_empty());
        if let Some(budget) = &budget {
            let store = self.store();
            let entry = store.frame(frame)?;
            if let Some(parent) = &entry.parent {
                let usage = store.subtree_usage(frame)?;
                let spent = self
                    .config
                    .with_prices(|p| Spend::priced(&usage.by_model, usage.tool_calls, p));
                self.check_within(&store, parent, budget, &spent)?;
            }
        }
        self.write(actor, |store, change, _| store.set_budget(change, frame, budget.as_ref()))?;
        self.frame_budget(frame)
    }

    /// Refuses `budget` for a child of `parent` whose subtree spent `spent`, when it is more
    /// than `parent` has left.
    fn check_within(
        &self,
        store: &Store,
        parent: &FrameId,
        budget: &FrameBudget,
        spent: &Spend,
    ) -> Result<(), ApiError> {
        let left = self.allowance_in(store, parent)?;
        left.admits(budget, spent, |id| frame_name(store, id))
            .map_err(|why| ApiError::new(ErrorCode::Refused, why))
    }

    /// [`Flame::push`] with a budget for the child, out of what `parent` has left, stored in the
    /// push's transaction.
    pub fn push_with_budget(
        &self,
        actor: Actor,
        parent: Option<&FrameId>,
        title: &str,
        criteria: &str,
        budget: Option<FrameBudget>,
    ) -> Result<Frame, ApiError> {
        let budget = budget.filter(|b| !b.is_empty());
        let parent = default_to_focus(&self.store(), parent)?;
        if let Some(budget) = &budget {
            self.check_within(&self.store(), &parent, budget, &Spend::default())?;
        }
        let frame = self.write(actor, |store, change, env| {
            with_fresh_ids(|| {
                store.push_budgeted(
                    change,
                    &env.ids.frame_id(),
                    &parent,
                    title,
                    criteria,
                    budget.as_ref(),
                )
            })
        })?;
        self.checkpoint_started(&frame);
        Ok(frame)
    }

    /// Refuses planned frames' budgets that give one more than `parent` (where they are
    /// planned) has left, or a planned child more than its planned parent is given.
    pub(crate) fn check_planned_budgets(
        &self,
        parent: &FrameId,
        specs: &[crate::PlanSpec],
    ) -> Result<(), ApiError> {
        if !has_budgets(specs) {
            return Ok(());
        }
        let store = self.store();
        let left = self.allowance_in(&store, parent)?;
        check_specs(&store, &left, None, specs)
    }
}

fn has_budgets(specs: &[crate::PlanSpec]) -> bool {
    specs.iter().any(|s| s.budget.is_some_and(|b| !b.is_empty()) || has_budgets(&s.children))
}

/// Checks each spec's budget against `left`, what the frame they are planned under has left
/// (nothing is spent in a planned subtree yet), and against `outer`, the budget of the planned
/// frame above them (its title and budget); then their children's.
fn check_specs(
    store: &Store,
    left: &Allowance,
    outer: Option<(&str, &FrameBudget)>,
    specs: &[crate::PlanSpec],
) -> Result<(), ApiError> {
    for spec in specs {
        let budget = spec.budget.filter(|b| !b.is_empty());
        if let Some(budget) = &budget {
            let refused = |why: String| {
                ApiError::new(
                    ErrorCode::Refused,
                    format!("planned frame \"{}\": {why}", spec.title),
                )
            };
            left.admits(budget, &Spend::default(), |id| frame_name(store, id)).map_err(refused)?;
            if let Some((title, given)) = outer {
                for (unit, limit) in budget.limits() {
                    let most = given.limits().find(|(u, _)| *u == unit).map(|(_, most)| most);
                    if let Some(most) = most.filter(|&most| limit > most) {
                        return Err(refused(format!(
                            "a budget of {} is more than its planned parent \"{title}\" is given ({}); give at most that",
                            unit.amount(limit),
                            unit.amount(most)
                        )));
                    }
                }
            }
        }
        let outer = budget.as_ref().map(|b| (spec.title.as_str(), b)).or(outer);
        check_specs(store, left, outer, &spec.children)?;
    }
    Ok(())
}

/// How a frame is named to a person or the model: `frame f… "Title"`.
pub(crate) fn frame_name(store: &Store, id: &FrameId) -> String {
    match store.frame(id) {
        Ok(frame) => format!("frame {id} \"{}\"", frame.title),
        Err(_) => format!("frame {id}"),
    }
}
