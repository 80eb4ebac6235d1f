//! Budgets: what a frame's subtree may spend, in dollars, tokens and tool calls (DESIGN.md §11).
//!
//! A frame's budget bounds its whole subtree: its *spend* is what every reply in it and under it
//! recorded — the usage priced as the rest of Flame prices it ([`crate::cost`], cache reads and
//! writes included), every token the replies counted, and every tool call they made. A frame
//! without a budget of its own draws on its ancestors'; one with a budget is still bound by
//! theirs, so what a frame *has left* ([`Allowance`]) is, in each unit, the least any budget on
//! its path has left. A child's budget is given out of what its parent has left
//! ([`Allowance::admits`]).
//!
//! Everything here is pure: the facade reads the budgets and the spends and prices them.

use serde::{Deserialize, Serialize};

use crate::FrameId;
use crate::cost::{Completeness, CostTotal, ModelUsage, PriceTable, format_usd, group_thousands};

/// A budget: any of a limit in dollars, in tokens and in tool calls (`None`: no limit in that
/// unit). On a frame it bounds the frame's subtree; in the settings, one turn of the agent.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(default)]
pub struct FrameBudget {
    /// Micro-dollars, priced as [`crate::cost`] prices usage.
    pub micro_usd: Option<u64>,
    /// Tokens the replies counted: input (read from the cache, written to it, or neither) and
    /// output.
    pub tokens: Option<u64>,
    /// Tool calls the replies made.
    pub tool_calls: Option<u64>,
}

impl FrameBudget {
    /// Whether it limits nothing.
    pub fn is_empty(&self) -> bool {
        self.limits().next().is_none()
    }

    /// Its limits, unit by unit.
    pub fn limits(&self) -> impl Iterator<Item = (BudgetUnit, u64)> {
        [
            (BudgetUnit::Usd, self.micro_usd),
            (BudgetUnit::Tokens, self.tokens),
            (BudgetUnit::ToolCalls, self.tool_calls),
        ]
        .into_iter()
        .filter_map(|(unit, limit)| Some((unit, limit?)))
    }

    /// What of it `spent` used, in words: `$0.42 of $2.00, 5 of 50 tool calls`.
    pub fn describe_use(&self, spent: &Spend) -> String {
        let parts: Vec<String> = self
            .limits()
            .map(|(unit, limit)| match unit {
                BudgetUnit::Usd => {
                    format!("{} of {}", format_usd(spent.micro_usd), format_usd(limit))
                }
                _ => format!("{} of {}", group_thousands(spent.of(unit)), unit.amount(limit)),
            })
            .collect();
        parts.join(", ")
    }

    /// The budget in words: `$2.00, 100,000 tokens, 50 tool calls`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self.limits().map(|(unit, limit)| unit.amount(limit)).collect();
        if parts.is_empty() { "no budget".to_owned() } else { parts.join(", ") }
    }
}

/// The largest dollar budget accepted, in micro-dollars (a million dollars): far above any
/// agent's run, so a slip of the decimal point is caught and no sum overflows.
pub const MAX_BUDGET_MICRO_USD: u64 = 1_000_000 * crate::cost::MICRO_USD_PER_USD;

/// `dollars` as micro-dollars, rounded to the nearest; refused when it is not a number, is
/// negative or is past [`MAX_BUDGET_MICRO_USD`].
pub fn micro_usd(dollars: f64) -> Result<u64, String> {
    let micro = (dollars * crate::cost::MICRO_USD_PER_USD as f64).round();
    if !micro.is_finite() || micro < 0.0 || micro > MAX_BUDGET_MICRO_USD as f64 {
        return Err(format!(
            "a budget in dollars is a number from 0 to {}, not {dollars}",
            format_usd(MAX_BUDGET_MICRO_USD)
        ));
    }
    Ok(micro as u64)
}

/// A unit a budget is counted in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum BudgetUnit {
    /// Micro-dollars.
    Usd,
    Tokens,
    ToolCalls,
}

impl BudgetUnit {
    /// `n` of this unit as people read it: `$0.42`, `1,200 tokens`, `1 tool call`.
    pub fn amount(self, n: u64) -> String {
        match self {
            BudgetUnit::Usd => format_usd(n),
            BudgetUnit::Tokens => format!("{} tokens", group_thousands(n)),
            BudgetUnit::ToolCalls if n == 1 => "1 tool call".to_owned(),
            BudgetUnit::ToolCalls => format!("{} tool calls", group_thousands(n)),
        }
    }
}

/// What a subtree (or a turn) has spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Spend {
    /// What the priced tokens cost, in micro-dollars.
    pub micro_usd: u64,
    /// Whether the dollars cover every token: tokens of a model with no known price are counted
    /// in `tokens` but cost nothing Flame knows of.
    pub priced: Completeness,
    pub tokens: u64,
    pub tool_calls: u64,
}

impl Spend {
    /// The spend of replies that recorded `usage` (by model) and made `tool_calls` calls, at
    /// `prices`.
    pub fn priced<'a>(
        usage: impl IntoIterator<Item = &'a ModelUsage>,
        tool_calls: u64,
        prices: &PriceTable,
    ) -> Spend {
        let mut total = CostTotal::default();
        for row in usage {
            let price = row.model.as_deref().and_then(|m| prices.get(m)).map(|p| p.price());
            total.add(row, price.as_ref());
        }
        let summary = total.summary();
        Spend {
            micro_usd: summary.micro_usd,
            priced: summary.completeness,
            tokens: crate::cost::total_tokens(&summary.usage),
            tool_calls,
        }
    }

    /// What was spent in `unit`.
    pub fn of(&self, unit: BudgetUnit) -> u64 {
        match unit {
            BudgetUnit::Usd => self.micro_usd,
            BudgetUnit::Tokens => self.tokens,
            BudgetUnit::ToolCalls => self.tool_calls,
        }
    }

    /// Adds what one reply spent.
    pub fn add(&mut self, more: &Spend) {
        self.micro_usd = self.micro_usd.saturating_add(more.micro_usd);
        self.tokens = self.tokens.saturating_add(more.tokens);
        self.tool_calls = self.tool_calls.saturating_add(more.tool_calls);
        self.priced = match (self.priced, more.priced) {
            (Completeness::None, other) | (other, Completeness::None) => other,
            (a, b) if a == b => a,
            _ => Completeness::Partial,
        };
    }
}

/// A frame on a path with its budget and its subtree's spend: what [`Allowance::over`] reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct BudgetedFrame {
    pub frame: FrameId,
    pub budget: FrameBudget,
    pub spent: Spend,
}

/// One limit that bounds a frame: a budget on its path (its own or an ancestor's), in one unit,
/// and what that budget's subtree has spent of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Bound {
    /// The frame whose budget it is.
    pub frame: FrameId,
    pub unit: BudgetUnit,
    pub limit: u64,
    pub spent: u64,
}

impl Bound {
    /// What is left of it (nothing once it is spent).
    pub fn left(&self) -> u64 {
        self.limit.saturating_sub(self.spent)
    }

    /// How much of it is spent, in thousandths (1,000 or more: spent).
    pub fn used_per_mille(&self) -> u64 {
        if self.limit == 0 {
            return 1_000;
        }
        (u128::from(self.spent) * 1_000 / u128::from(self.limit)).min(u128::from(u64::MAX)) as u64
    }

    /// Whether it is spent: the subtree spent all of it.
    pub fn is_spent(&self) -> bool {
        self.spent >= self.limit
    }

    /// `$1.58 left of $2.00`.
    fn describe_left(&self) -> String {
        format!("{} left of {}", self.unit.amount(self.left()), self.unit.amount(self.limit))
    }
}

/// How much of what bounds a frame is spent: what the agent is told, and when.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum BudgetLevel {
    /// Less than half.
    Plenty,
    /// Half or more.
    Half,
    /// [`LOW_PER_MILLE`] or more: the agent is told to finish or pop.
    Low,
    /// All of it: no further call is made.
    Spent,
}

/// The share of a budget at which the agent is told to finish or pop with what it has.
pub const LOW_PER_MILLE: u64 = 800;

/// What a frame has left: in each unit, the budget on its path (its own or an ancestor's) with
/// the least left. Empty when no budget bounds the frame.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, specta::Type)]
pub struct Allowance {
    /// At most one per unit, in unit order.
    pub bounds: Vec<Bound>,
}

impl Allowance {
    /// What the last frame of `path` has left, given every budgeted frame on the path from the
    /// root to it (the frame itself included when it has a budget), each with its subtree's
    /// spend. Of two budgets with as much left, the nearer one binds.
    pub fn over(path: &[BudgetedFrame]) -> Allowance {
        let mut bounds: Vec<Bound> = Vec::new();
        for budgeted in path {
            for (unit, limit) in budgeted.budget.limits() {
                let bound = Bound {
                    frame: budgeted.frame.clone(),
                    unit,
                    limit,
                    spent: budgeted.spent.of(unit),
                };
                match bounds.iter_mut().find(|b| b.unit == unit) {
                    Some(held) if bound.left() <= held.left() => *held = bound,
                    Some(_) => {}
                    None => bounds.push(bound),
                }
            }
        }
        bounds.sort_by_key(|b| b.unit);
        Allowance { bounds }
    }

    /// Whether no budget bounds the frame.
    pub fn is_unbounded(&self) -> bool {
        self.bounds.is_empty()
    }

    /// The bound in `unit`, if any.
    pub fn bound(&self, unit: BudgetUnit) -> Option<&Bound> {
        self.bounds.iter().find(|b| b.unit == unit)
    }

    /// The first bound that is spent: the reason no further call may be made.
    pub fn spent(&self) -> Option<&Bound> {
        self.bounds.iter().find(|b| b.is_spent())
    }

    /// The largest share spent of any bound, in thousandths.
    pub fn used_per_mille(&self) -> u64 {
        self.bounds.iter().map(Bound::used_per_mille).max().unwrap_or(0)
    }

    pub fn level(&self) -> BudgetLevel {
        match self.used_per_mille() {
            used if used >= 1_000 => BudgetLevel::Spent,
            used if used >= LOW_PER_MILLE => BudgetLevel::Low,
            used if used >= 500 => BudgetLevel::Half,
            _ => BudgetLevel::Plenty,
        }
    }

    /// What the frame has left, in words: `$1.58 left of $2.00 (frame f… "Title"'s budget),
    /// 40 tool calls left of 50`. `title` names a frame by its id.
    pub fn describe(&self, title: impl Fn(&FrameId) -> String) -> String {
        let parts: Vec<String> = self
            .bounds
            .iter()
            .map(|b| format!("{} (the budget of {})", b.describe_left(), title(&b.frame)))
            .collect();
        parts.join(", ")
    }

    /// Why a spent bound stops the agent, in words for the person and the model.
    pub fn spent_reason(bound: &Bound, title: impl Fn(&FrameId) -> String) -> String {
        format!(
            "the budget of {} is spent: {} of {}",
            title(&bound.frame),
            bound.unit.amount(bound.spent),
            bound.unit.amount(bound.limit)
        )
    }

    /// Whether this frame (the parent) may give a child the budget `budget`, when the child's
    /// subtree has spent `spent` already (nothing, for a new child): in each unit the budget
    /// limits, the child may not get more than the parent has left, beyond what it spent. The
    /// error says what the most is.
    pub fn admits(
        &self,
        budget: &FrameBudget,
        spent: &Spend,
        title: impl Fn(&FrameId) -> String,
    ) -> Result<(), String> {
        for (unit, limit) in budget.limits() {
            let Some(bound) = self.bound(unit) else { continue };
            let most = bound.left().saturating_add(spent.of(unit));
            if limit > most {
                return Err(format!(
                    "a budget of {} is more than the parent has left: {} (the budget of {}); give at most {}, or ask the person to raise that budget",
                    unit.amount(limit),
                    bound.describe_left(),
                    title(&bound.frame),
                    unit.amount(most)
                ));
            }
        }
        Ok(())
    }
}

/// What a frame's model was last told of its budget, kept with the frame's context so that a
/// note is appended only when it says something new: the limits that bound the frame, and how
/// much of them was spent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToldBudget {
    /// Each bound's frame, unit and limit.
    pub limits: Vec<(FrameId, BudgetUnit, u64)>,
    pub level: BudgetLevel,
}

impl ToldBudget {
    /// What telling the model of `allowance` tells it; `None` when no budget bounds the frame.
    pub fn of(allowance: &Allowance) -> Option<ToldBudget> {
        (!allowance.is_unbounded()).then(|| ToldBudget {
            limits: allowance.bounds.iter().map(|b| (b.frame.clone(), b.unit, b.limit)).collect(),
            level: allowance.level(),
        })
    }
}

/// The note that tells a frame's model of its budget, when what it would say is new since
/// `told` (what it was told last): the budget appeared, changed or went, or a larger share of
/// it is spent ([`BudgetLevel`]). `title` names a frame by its id.
pub fn budget_note(
    allowance: &Allowance,
    told: Option<&ToldBudget>,
    title: impl Fn(&FrameId) -> String,
) -> Option<(String, Option<ToldBudget>)> {
    let now = ToldBudget::of(allowance);
    let changed = match (&now, told) {
        (None, None) => return None,
        (Some(now), Some(told)) if now.limits == told.limits => {
            if now.level <= told.level {
                return None;
            }
            false
        }
        _ => true,
    };
    let Some(level) = now.as_ref().map(|n| n.level) else {
        let text = "[Flame] Budget: no budget bounds this frame any more.".to_owned();
        return Some((text, None));
    };
    let left = allowance.describe(title);
    let text = match level {
        BudgetLevel::Low | BudgetLevel::Spent => format!(
            "[Flame] Budget: {}% of it is spent; this frame has {left}. Finish now, or pop this frame with pop_frame with what you have (completed with the results so far, or blocked saying what remains); when it is spent, Flame stops before the next call.",
            allowance.used_per_mille() / 10
        ),
        BudgetLevel::Half if !changed => {
            format!("[Flame] Budget: half of it is spent; this frame has {left}.")
        }
        _ => format!(
            "[Flame] Budget: this frame has {left}. A child you push or plan may be given part of it (the budget field); at 80% you will be told to finish, and when it is spent Flame stops before the next call."
        ),
    };
    Some((text, now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Usage;

    fn id(n: u32) -> FrameId {
        FrameId::from_trusted(format!("f{n:010}"))
    }

    fn budgeted(n: u32, budget: FrameBudget, spent: Spend) -> BudgetedFrame {
        BudgetedFrame { frame: id(n), budget, spent }
    }

    fn usd(micro: u64) -> FrameBudget {
        FrameBudget { micro_usd: Some(micro), ..FrameBudget::default() }
    }

    fn spent_usd(micro: u64) -> Spend {
        Spend { micro_usd: micro, ..Spend::default() }
    }

    fn name(frame: &FrameId) -> String {
        frame.to_string()
    }

    #[test]
    fn the_bound_with_least_left_binds_in_each_unit() {
        let root = FrameBudget { micro_usd: Some(2_000_000), tool_calls: Some(50), tokens: None };
        let path = [
            budgeted(1, root, Spend { micro_usd: 1_500_000, tool_calls: 10, ..Spend::default() }),
            budgeted(2, usd(1_000_000), spent_usd(100_000)),
        ];
        let allowance = Allowance::over(&path);
        let usd = allowance.bound(BudgetUnit::Usd).unwrap();
        assert_eq!((usd.frame.clone(), usd.left()), (id(1), 500_000));
        let calls = allowance.bound(BudgetUnit::ToolCalls).unwrap();
        assert_eq!((calls.frame.clone(), calls.left()), (id(1), 40));
        assert!(allowance.bound(BudgetUnit::Tokens).is_none());
        assert_eq!(allowance.used_per_mille(), 750);
        assert_eq!(allowance.level(), BudgetLevel::Half);
        assert!(allowance.spent().is_none());
        assert!(Allowance::over(&[]).is_unbounded());
    }

    #[test]
    fn a_budget_spent_to_its_limit_stops() {
        let allowance = Allowance::over(&[budgeted(1, usd(1_000), spent_usd(1_000))]);
        assert_eq!(allowance.level(), BudgetLevel::Spent);
        assert_eq!(allowance.spent().map(Bound::left), Some(0));
        let zero = Allowance::over(&[budgeted(1, usd(0), Spend::default())]);
        assert!(zero.spent().is_some(), "a budget of nothing allows nothing");
    }

    #[test]
    fn a_child_gets_at_most_what_its_parent_has_left_beyond_its_own_spend() {
        let parent = Allowance::over(&[budgeted(1, usd(2_000_000), spent_usd(1_200_000))]);
        assert!(parent.admits(&usd(800_000), &Spend::default(), name).is_ok());
        let err = parent.admits(&usd(800_001), &Spend::default(), name).unwrap_err();
        assert!(err.contains("give at most $0.80"), "{err}");
        assert!(err.contains("$0.80 left of $2.00"), "{err}");
        // A child that spent $0.50 already (counted in the parent's spend) may hold $1.30.
        assert!(parent.admits(&usd(1_300_000), &spent_usd(500_000), name).is_ok());
        // Units the parent does not limit are the child's to choose.
        let tokens = FrameBudget { tokens: Some(1_000_000_000), ..FrameBudget::default() };
        assert!(parent.admits(&tokens, &Spend::default(), name).is_ok());
        assert!(Allowance::default().admits(&usd(u64::MAX), &Spend::default(), name).is_ok());
    }

    #[test]
    fn a_note_is_made_only_when_it_says_something_new() {
        let at = |spent| Allowance::over(&[budgeted(1, usd(1_000_000), spent_usd(spent))]);
        let (first, told) = budget_note(&at(0), None, name).unwrap();
        assert!(first.contains("$1.00 left of $1.00"), "{first}");
        assert!(budget_note(&at(100_000), told.as_ref(), name).is_none(), "nothing new");
        let (half, told) = budget_note(&at(600_000), told.as_ref(), name).unwrap();
        assert!(half.contains("half of it is spent"), "{half}");
        assert!(budget_note(&at(700_000), told.as_ref(), name).is_none());
        let (low, told) = budget_note(&at(850_000), told.as_ref(), name).unwrap();
        assert!(low.contains("85% of it is spent") && low.contains("pop_frame"), "{low}");
        assert!(budget_note(&at(900_000), told.as_ref(), name).is_none());
        // A raised budget is new, whatever share of it is spent.
        let raised = Allowance::over(&[budgeted(1, usd(2_000_000), spent_usd(900_000))]);
        let (again, told) = budget_note(&raised, told.as_ref(), name).unwrap();
        assert!(again.contains("$1.10 left of $2.00"), "{again}");
        let (gone, told) = budget_note(&Allowance::default(), told.as_ref(), name).unwrap();
        assert!(gone.contains("no budget"), "{gone}");
        assert!(budget_note(&Allowance::default(), told.as_ref(), name).is_none());
    }

    #[test]
    fn spends_add_up_with_what_their_dollars_cover() {
        let prices = PriceTable::default();
        let rows = [
            ModelUsage {
                model: Some("claude-sonnet-4-5".to_owned()),
                usage: Usage { input_tokens: 1_000_000, output_tokens: 10, ..Usage::default() },
            },
            ModelUsage {
                model: Some("a-model-nobody-prices".to_owned()),
                usage: Usage { input_tokens: 5, ..Usage::default() },
            },
        ];
        let spend = Spend::priced(&rows, 3, &prices);
        assert_eq!(spend.tokens, 1_000_015);
        assert_eq!(spend.tool_calls, 3);
        assert_eq!(spend.priced, Completeness::Partial);
        assert_eq!(spend.micro_usd, 3_000_150);
        let mut sum = Spend::default();
        sum.add(&spend);
        sum.add(&Spend::priced(&rows[..1], 1, &prices));
        assert_eq!((sum.tool_calls, sum.priced), (4, Completeness::Partial));
    }

    #[test]
    fn dollars_are_read_to_the_micro_dollar_within_the_limit() {
        assert_eq!(micro_usd(2.5), Ok(2_500_000));
        assert_eq!(micro_usd(0.0000004), Ok(0));
        assert_eq!(micro_usd(1_000_000.0), Ok(MAX_BUDGET_MICRO_USD));
        for bad in [-0.01, 1_000_000.01, f64::NAN, f64::INFINITY] {
            let err = micro_usd(bad).unwrap_err();
            assert!(err.contains("from 0 to $1000000.00"), "{err}");
        }
    }

    #[test]
    fn budgets_are_described_unit_by_unit() {
        let budget =
            FrameBudget { micro_usd: Some(2_000_000), tokens: Some(100_000), tool_calls: Some(1) };
        assert_eq!(budget.describe(), "$2.00, 100,000 tokens, 1 tool call");
        assert_eq!(FrameBudget::default().describe(), "no budget");
        let spent = Spend { micro_usd: 420_000, tokens: 12_000, tool_calls: 1, ..Spend::default() };
        assert_eq!(
            budget.describe_use(&spent),
            "$0.42 of $2.00, 12,000 of 100,000 tokens, 1 of 1 tool call"
        );
        assert!(FrameBudget::default().is_empty());
    }
}
