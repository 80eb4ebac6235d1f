//! Budgets through the facade (issue 32): over random trees, random replies and random budgets,
//! a child's spend counts against every ancestor, whatever frame's budget is asked for, by this
//! process or by another that wrote the replies; and a child is never given more than its parent
//! has left.

use flame_api::{ErrorCode, Flame};
use flame_model::budget::{BudgetUnit, FrameBudget};
use flame_model::{Actor, FrameId, NewMessage, Role, ToolCall, Usage};
use proptest::prelude::*;

use crate::Scratch;

const A: Actor = Actor::Agent;

/// Priced at $3 per million input tokens: 3 micro-dollars a token.
const MODEL: &str = "claude-sonnet-4-5";

#[derive(Debug, Clone)]
enum Op {
    /// Pushes a child of the frame at this index.
    Push(usize),
    /// A reply in the frame at this index: its input tokens and tool calls.
    Reply { frame: usize, input: u64, calls: usize },
    /// Gives the frame at this index a budget in tokens, tool calls and dollars, or clears it.
    Budget { frame: usize, limit: Option<u64> },
    /// The same reply, written by another process.
    ReplyElsewhere { frame: usize, input: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    let i = || 0usize..32;
    prop_oneof![
        3 => i().prop_map(Op::Push),
        4 => (i(), 1u64..5_000, 0usize..4).prop_map(|(frame, input, calls)| Op::Reply { frame, input, calls }),
        2 => (i(), prop::option::of(0u64..40_000)).prop_map(|(frame, limit)| Op::Budget { frame, limit }),
        1 => (i(), 1u64..5_000).prop_map(|(frame, input)| Op::ReplyElsewhere { frame, input }),
    ]
}

fn reply(input: u64, calls: usize) -> NewMessage {
    let mut m = NewMessage::text(Role::Assistant, "working");
    m.model = Some(MODEL.to_owned());
    m.usage = Some(Usage { input_tokens: input, ..Usage::default() });
    let call = |n: usize| ToolCall {
        arguments: serde_json::json!({}),
        id: format!("call_{n}"),
        name: "frame_status".to_owned(),
    };
    m.tool_calls = (calls > 0).then(|| (0..calls).map(call).collect());
    m
}

/// What the test knows of the tree: each frame's parent (by index) and own spend in tokens and
/// tool calls, and each frame's budget.
struct Known {
    ids: Vec<FrameId>,
    parent: Vec<Option<usize>>,
    tokens: Vec<u64>,
    calls: Vec<u64>,
    budget: Vec<Option<u64>>,
}

impl Known {
    fn ancestors_and_self(&self, mut i: usize) -> Vec<usize> {
        let mut path = vec![i];
        while let Some(p) = self.parent[i] {
            path.push(p);
            i = p;
        }
        path
    }

    /// A frame's subtree's spend: tokens and tool calls.
    fn subtree(&self, root: usize) -> (u64, u64) {
        (0..self.ids.len())
            .filter(|&i| self.ancestors_and_self(i).contains(&root))
            .fold((0, 0), |(t, c), i| (t + self.tokens[i], c + self.calls[i]))
    }

    /// What frame `i` has left in tool calls by every budget on its path: the least of them.
    fn left_in_calls(&self, i: usize) -> Option<u64> {
        self.ancestors_and_self(i)
            .into_iter()
            .filter_map(|a| Some((self.budget[a]? / 100).saturating_sub(self.subtree(a).1)))
            .min()
    }
}

/// The budget a limit stands for: `limit` tokens, as many dollars as they cost, and a hundredth
/// as many tool calls.
fn budget_of(limit: u64) -> FrameBudget {
    FrameBudget { micro_usd: Some(limit * 3), tokens: Some(limit), tool_calls: Some(limit / 100) }
}

fn check(flame: &Flame, known: &Known) {
    for (i, id) in known.ids.iter().enumerate() {
        let view = flame.frame_budget(id).unwrap();
        let (tokens, calls) = known.subtree(i);
        match known.budget[i] {
            Some(limit) => {
                assert_eq!(view.budget, Some(budget_of(limit)));
                let spent = view.spent.unwrap();
                assert_eq!((spent.tokens, spent.tool_calls), (tokens, calls), "frame {i}");
                assert_eq!(spent.micro_usd, tokens * 3, "frame {i}");
            }
            None => assert_eq!((view.budget, view.spent), (None, None)),
        }
        // Every budgeted ancestor's subtree spend bounds the frame.
        let left = flame.allowance(id).unwrap();
        let calls_left = left.bound(BudgetUnit::ToolCalls).map(|b| b.left());
        assert_eq!(calls_left, known.left_in_calls(i), "frame {i}");
        for a in known.ancestors_and_self(i) {
            let Some(limit) = known.budget[a] else { continue };
            let tokens_left = left.bound(BudgetUnit::Tokens).unwrap().left();
            assert!(tokens_left <= limit.saturating_sub(known.subtree(a).0), "frame {i}, {a}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn a_childs_spend_counts_against_every_ancestor(ops in prop::collection::vec(op(), 1..40)) {
        let s = Scratch::new(81);
        let other = s.reopen(82);
        let root = s.flame.create_tree(Actor::Person, "Build", "It works", None).unwrap().root;
        let mut known = Known {
            ids: vec![root],
            parent: vec![None],
            tokens: vec![0],
            calls: vec![0],
            budget: vec![None],
        };
        for op in &ops {
            let n = known.ids.len();
            match *op {
                Op::Push(p) => {
                    let p = p % n;
                    let child = s.flame.push(A, Some(&known.ids[p]), "Child", "Done").unwrap();
                    known.ids.push(child.id);
                    known.parent.push(Some(p));
                    known.tokens.push(0);
                    known.calls.push(0);
                    known.budget.push(None);
                }
                Op::Reply { frame, input, calls } => {
                    let i = frame % n;
                    s.flame.add_message(A, &known.ids[i], &reply(input, calls)).unwrap();
                    known.tokens[i] += input;
                    known.calls[i] += calls as u64;
                }
                Op::ReplyElsewhere { frame, input } => {
                    let i = frame % n;
                    other.add_message(A, &known.ids[i], &reply(input, 1)).unwrap();
                    known.tokens[i] += input;
                    known.calls[i] += 1;
                }
                Op::Budget { frame, limit } => {
                    let i = frame % n;
                    let given = s.flame.set_budget(Actor::Person, &known.ids[i], limit.map(budget_of));
                    // A budget is refused exactly when it gives more tokens or tool calls than
                    // the parent has left beyond the frame's own subtree's spend (dollars are in
                    // proportion to tokens).
                    let over = |limit: u64| known.parent[i].is_some_and(|p| {
                        let (tokens, calls) = known.subtree(i);
                        known.ancestors_and_self(p).into_iter().any(|a| {
                            let Some(given) = known.budget[a] else { return false };
                            let (a_tokens, a_calls) = known.subtree(a);
                            limit > given.saturating_sub(a_tokens) + tokens
                                || limit / 100 > (given / 100).saturating_sub(a_calls) + calls
                        })
                    });
                    match limit {
                        Some(limit) if over(limit) => {
                            let err = given.unwrap_err();
                            prop_assert_eq!(err.code, ErrorCode::Refused);
                            prop_assert!(err.message.contains("more than the parent has left"), "{}", err.message);
                        }
                        _ => {
                            given.unwrap();
                            known.budget[i] = limit;
                        }
                    }
                }
            }
            check(&s.flame, &known);
        }
    }
}

/// Planned frames are held to what the frame they are planned under has left, and a planned
/// child to its planned parent's budget; a refused plan plans nothing.
#[test]
fn a_plan_giving_more_than_is_left_is_refused_whole() {
    let s = Scratch::new(83);
    let root = s.flame.create_tree(Actor::Person, "Build", "It works", None).unwrap().root;
    let calls = |n: u64| Some(FrameBudget { tool_calls: Some(n), ..FrameBudget::default() });
    s.flame.set_budget(Actor::Person, &root, calls(10)).unwrap();
    let spec = |title: &str, budget, children| flame_api::PlanSpec {
        title: title.into(),
        success_criteria: "done".into(),
        budget,
        children,
    };
    let before = s.flame.status(None).unwrap().frames.len();
    let err = s.flame.plan(A, Some(&root), None, &[spec("Big", calls(11), vec![])]).unwrap_err();
    assert_eq!(err.code, ErrorCode::Refused);
    assert!(err.message.contains("planned frame \"Big\""), "{}", err.message);
    assert!(err.message.contains("give at most 10 tool calls"), "{}", err.message);
    let nested = spec("Outer", calls(6), vec![spec("Inner", calls(7), vec![])]);
    let err = s.flame.plan(A, Some(&root), None, &[nested]).unwrap_err();
    assert!(err.message.contains("its planned parent \"Outer\" is given (6 tool calls)"));
    assert_eq!(s.flame.status(None).unwrap().frames.len(), before, "nothing was planned");
    let fits = spec("Outer", calls(6), vec![spec("Inner", calls(6), vec![])]);
    let planned = s.flame.plan(A, Some(&root), None, &[fits]).unwrap();
    assert_eq!(s.flame.frame_budget(&planned[0].id).unwrap().budget, calls(6));
}
