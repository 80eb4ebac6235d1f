//! What budgeted frames' subtrees spent, as the store keeps it (`frames/budgets.rs`): after any
//! sequence of pushes, plans, replies (added, or streamed and finished), moves and budgets given
//! and cleared, the spend kept for every budget on every frame's path is what summing its
//! subtree from the usage index gives.

use flame_model::budget::FrameBudget;
use flame_model::cost::ModelUsage;
use flame_model::{Actor, FrameId, IdSource, NewMessage, Role, ToolCall, Usage};
use flame_store::{BudgetedSpend, Change, PlanItem, ReplyOwner, Store, SubtreeUsage};

const WRITER: ReplyOwner = ReplyOwner { pid: 4242, started: Some(1) };

const MODELS: [Option<&str>; 3] = [Some("claude-sonnet-4-5"), Some("gpt-4o"), None];

/// A small deterministic generator (a linear congruential one), so that a failure repeats.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: usize) -> usize {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % sides as u64) as usize
    }
}

/// A reply of `model` with usage from the dice (sometimes none at all) and 0 to 2 tool calls.
fn reply(dice: &mut Dice) -> NewMessage {
    let mut m = NewMessage::text(Role::Assistant, "working");
    m.model = MODELS[dice.roll(3)].map(str::to_owned);
    let n = |dice: &mut Dice| [0, 0, 1, 7, 300, 5_000][dice.roll(6)];
    m.usage = (dice.roll(4) > 0).then(|| Usage {
        input_tokens: n(dice),
        output_tokens: n(dice),
        cache_read_tokens: n(dice),
        cache_write_tokens: n(dice),
        cache_write_long_tokens: n(dice),
    });
    let calls = dice.roll(3);
    m.tool_calls = (calls > 0).then(|| {
        (0..calls)
            .map(|k| ToolCall {
                arguments: serde_json::json!({}),
                id: format!("call_{k}"),
                name: "frame_status".to_owned(),
            })
            .collect()
    });
    m
}

/// A usage's rows that hold some usage, by model, and its tool calls: what a spend is priced
/// from (a row of no usage adds nothing to a price).
fn priced_part(usage: &SubtreeUsage) -> (Vec<ModelUsage>, u64) {
    let mut rows: Vec<ModelUsage> =
        usage.by_model.iter().filter(|r| r.usage != Usage::default()).cloned().collect();
    rows.sort_by(|a, b| a.model.cmp(&b.model));
    (rows, usage.tool_calls)
}

/// Every frame's budgets on its path, with what each kept, against each budgeted frame's
/// subtree summed afresh.
fn check(store: &Store, frames: &[FrameId], step: usize) {
    for frame in frames {
        let Ok(on_path) = store.budgets_on_path(frame) else { continue };
        let mut ancestors = Vec::new();
        for BudgetedSpend { frame: budgeted, budget, usage } in &on_path {
            assert_eq!(store.budget(budgeted).unwrap().as_ref(), Some(budget), "step {step}");
            let summed = store.subtree_usage(budgeted).unwrap();
            assert_eq!(priced_part(usage), priced_part(&summed), "step {step}: {budgeted}");
            ancestors.push(budgeted.clone());
        }
        // Root first, each an ancestor of the next.
        let path = store.frame_and_ancestor_ids(frame).unwrap();
        let expected: Vec<FrameId> =
            path.iter().rev().filter(|f| store.budget(f).unwrap().is_some()).cloned().collect();
        assert_eq!(ancestors, expected, "step {step}: {frame}");
    }
}

#[test]
fn a_kept_spend_is_always_its_subtrees_sum() {
    for seed in 1..=6 {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let mut ids = IdSource::seeded(seed);
        let mut dice = Dice(seed);
        let tree = ids.tree_id();
        let root = ids.frame_id();
        let mut at = 1;
        let mut change = || {
            at += 1;
            Change { actor: Actor::Agent, at }
        };
        store.create_tree(change(), &tree, &root, "Build", "It works", None).unwrap();
        let mut frames = vec![root];
        for step in 0..160 {
            let pick =
                |dice: &mut Dice, frames: &[FrameId]| frames[dice.roll(frames.len())].clone();
            let frame = pick(&mut dice, &frames);
            // Refused operations (a push under a finished frame, a move of a started one) change
            // nothing; the invariant holds either way.
            match dice.roll(8) {
                0 => {
                    let id = ids.frame_id();
                    if store.push(change(), &id, &frame, "Child", "Done").is_ok() {
                        frames.push(id);
                    }
                }
                1 => {
                    let (id, child) = (ids.frame_id(), ids.frame_id());
                    let given = (dice.roll(2) == 0)
                        .then_some(FrameBudget { tokens: Some(1 << 40), ..FrameBudget::default() });
                    let item = PlanItem {
                        id: id.clone(),
                        title: "Planned".into(),
                        success_criteria: "Done".into(),
                        budget: given,
                        children: vec![PlanItem {
                            id: child.clone(),
                            title: "Planned child".into(),
                            success_criteria: "Done".into(),
                            budget: None,
                            children: vec![],
                        }],
                    };
                    if store.plan(change(), &frame, None, &[item]).is_ok() {
                        frames.extend([id, child]);
                    }
                }
                2 | 3 => {
                    let _ = store.add_message(change(), &frame, &reply(&mut dice), 1);
                }
                4 => {
                    let finished = reply(&mut dice);
                    let model = finished.model.as_deref();
                    if let Ok(id) = store.begin_reply(change(), &frame, model, WRITER) {
                        store.finish_reply(change(), id, &finished, 1).unwrap();
                    }
                }
                5 => {
                    let to = pick(&mut dice, &frames);
                    let _ = store.move_frame(change(), &frame, Some(&to), None);
                }
                6 => {
                    let budget = (dice.roll(3) > 0).then_some(FrameBudget {
                        tool_calls: Some(1 << 40),
                        ..FrameBudget::default()
                    });
                    store.set_budget(change(), &frame, budget.as_ref()).unwrap();
                }
                _ => {
                    let note = NewMessage::text(Role::User, "go on");
                    let _ = store.add_message(change(), &frame, &note, 1);
                }
            }
            check(&store, &frames, step);
        }
        // The tree's budgets, listed whole, keep the same spends.
        for kept in store.tree_budgets(&tree).unwrap() {
            let summed = store.subtree_usage(&kept.frame).unwrap();
            assert_eq!(priced_part(&kept.usage), priced_part(&summed), "seed {seed}");
        }
    }
}

/// A frame that leaves a budgeted frame for another takes its subtree's spend along, and a
/// budget cleared and given again sums its subtree afresh.
#[test]
fn a_move_takes_its_spend_from_the_budgets_it_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let mut ids = IdSource::seeded(9);
    let (tree, root, left, right, moved) =
        (ids.tree_id(), ids.frame_id(), ids.frame_id(), ids.frame_id(), ids.frame_id());
    let change = Change { actor: Actor::Person, at: 1 };
    store.create_tree(change, &tree, &root, "Build", "It works", None).unwrap();
    let planned = |id: &FrameId| PlanItem {
        id: id.clone(),
        title: "Part".into(),
        success_criteria: "Done".into(),
        budget: Some(FrameBudget { tokens: Some(1_000_000), ..FrameBudget::default() }),
        children: vec![],
    };
    store.plan(change, &root, None, &[planned(&left), planned(&right)]).unwrap();
    store.plan(change, &left, None, &[planned(&moved)]).unwrap();
    let mut m = NewMessage::text(Role::Assistant, "planned ahead");
    m.model = Some("gpt-4o".into());
    m.usage = Some(Usage { input_tokens: 40, ..Usage::default() });
    store.add_message(change, &moved, &m, 1).unwrap();
    store
        .set_budget(
            change,
            &root,
            Some(&FrameBudget { tokens: Some(1 << 30), ..FrameBudget::default() }),
        )
        .unwrap();
    let input = |store: &Store, frame: &FrameId| -> u64 {
        let on_path = store.budgets_on_path(frame).unwrap();
        let own = on_path.iter().find(|b| &b.frame == frame).unwrap();
        own.usage.by_model.iter().map(|r| r.usage.input_tokens).sum()
    };
    assert_eq!(
        (input(&store, &root), input(&store, &left), input(&store, &right), input(&store, &moved)),
        (40, 40, 0, 40)
    );
    store.move_frame(change, &moved, Some(&right), None).unwrap();
    assert_eq!(
        (input(&store, &root), input(&store, &left), input(&store, &right), input(&store, &moved)),
        (40, 0, 40, 40)
    );
    // A row left holding nothing is gone, as no reply of that model is left under the frame.
    let left_rows = store.budgets_on_path(&left).unwrap().pop().unwrap().usage;
    assert_eq!(left_rows, SubtreeUsage::default());
    store.set_budget(change, &right, None).unwrap();
    store
        .set_budget(
            change,
            &right,
            Some(&FrameBudget { tokens: Some(9), ..FrameBudget::default() }),
        )
        .unwrap();
    assert_eq!(input(&store, &right), 40);
}
