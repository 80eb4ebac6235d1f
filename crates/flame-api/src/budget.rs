//! Budgets (DESIGN.md §11): what a frame's subtree may spend, what it has spent, and what a
//! frame has left by the budgets on its path (`flame_model::budget`).
//!
//! The agent asks what its frame has left before every model call ([`Flame::allowance`]), and
//! every `flame chat` asks first in a process that has read nothing yet. The store keeps what
//! each budgeted frame's subtree spent, as usage by model and tool calls, in the transaction of
//! every reply, budget and move (`flame_store`'s `frames/budgets.rs`), so a check reads the
//! budgets on the frame's path with their spends (`Store::budgets_on_path`): in proportion to
//! the path's depth, whatever the tree's size, and the same in any process. Spends are priced
//! when asked, at the prices in use, so new prices apply at once.
//!
//! A budget given to a frame is checked against what its parent has left
//! ([`Allowance::admits`]) just before it is stored, in another transaction: two processes
//! giving budgets at the same moment may together give a little more than the parent has, which
//! costs nothing, since what any frame has left is bounded by every budget on its path.

use flame_model::budget::{Allowance, BudgetedFrame, FrameBudget, Spend};
use flame_model::cost::PriceTable;
use flame_model::{Actor, Frame, FrameId, TreeId};
use flame_store::{BudgetedSpend, Store, StoreError};
use serde::Serialize;

use crate::frames::{default_to_focus, resolve_tree, with_fresh_ids};
use crate::{ApiError, ErrorCode, Flame};

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

/// A budgeted frame's spend at `prices`.
fn priced(budgeted: BudgetedSpend, prices: &PriceTable) -> BudgetedFrame {
    let usage = &budgeted.usage;
    BudgetedFrame {
        frame: budgeted.frame,
        budget: budgeted.budget,
        spent: Spend::priced(&usage.by_model, usage.tool_calls, prices),
    }
}

impl Flame {
    /// What frame `frame` has left by the budgets on its path: the agent's check before each
    /// model call. Reads the budgets on the frame's path and their kept spends alone.
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
        let budgets = store.budgets_on_path(frame)?;
        let on_path: Vec<BudgetedFrame> = self
            .config
            .with_prices(|prices| budgets.into_iter().map(|b| priced(b, prices)).collect());
        Ok(read(&on_path))
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
        let budgeted = store.tree_budgets(tree)?;
        budgeted.iter().map(|b| self.budget_view(store, &b.frame)).collect()
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
