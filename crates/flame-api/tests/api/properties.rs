//! Random sequences of operations, checking after each one what must always hold: each tree has
//! one root and no cycles, positions are dense, terminal frames stay terminal, no in-progress
//! frame sits under one that is not in progress, the focus is a frame of the tree, cascades are
//! complete — and a refused operation changes nothing. The allowed actions a front end is shown
//! agree with what the operations then do.

use std::collections::HashMap;

use flame_api::{Flame, PlanSpec, PopRequest};
use flame_model::lifecycle::PopStatus;
use flame_model::{Actor, Frame, FrameId, FrameTree, Role, Status};
use proptest::prelude::*;

use crate::Scratch;

#[derive(Debug, Clone)]
enum Op {
    Push(usize),
    Plan { parent: usize, position: Option<u32>, nested: bool },
    Start(usize),
    Pop { frame: usize, status: u8 },
    Resume(usize),
    Retry(usize),
    Invalidate(usize),
    Move { frame: usize, parent: Option<usize>, position: Option<u32> },
    Delete(usize),
    Edit(usize),
    Focus(usize),
    Append(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let i = || 0usize..64;
    prop_oneof![
        3 => i().prop_map(Op::Push),
        3 => (i(), prop::option::of(0u32..4), any::<bool>()).prop_map(|(parent, position, nested)| Op::Plan { parent, position, nested }),
        2 => i().prop_map(Op::Start),
        3 => (i(), 0u8..3).prop_map(|(frame, status)| Op::Pop { frame, status }),
        1 => i().prop_map(Op::Resume),
        1 => i().prop_map(Op::Retry),
        1 => i().prop_map(Op::Invalidate),
        2 => (i(), prop::option::of(i()), prop::option::of(0u32..4)).prop_map(|(frame, parent, position)| Op::Move { frame, parent, position }),
        1 => i().prop_map(Op::Delete),
        1 => i().prop_map(Op::Edit),
        1 => i().prop_map(Op::Focus),
        1 => i().prop_map(Op::Append),
    ]
}

fn frames(flame: &Flame) -> Vec<Frame> {
    flame.status(None).unwrap().frames.into_iter().map(|e| e.frame).collect()
}

fn apply(flame: &Flame, known: &[FrameId], op: &Op) -> Result<(), flame_api::ApiError> {
    const A: Actor = Actor::Agent;
    let pick = |i: usize| &known[i % known.len()];
    let spec = |title: &str, children| PlanSpec {
        title: title.into(),
        success_criteria: "c".into(),
        budget: None,
        children,
    };
    match op {
        Op::Push(p) => flame.push(A, Some(pick(*p)), "pushed", "c").map(drop),
        Op::Plan { parent, position, nested } => {
            let children = if *nested { vec![spec("inner", vec![])] } else { vec![] };
            flame.plan(A, Some(pick(*parent)), *position, &[spec("planned", children)]).map(drop)
        }
        Op::Start(f) => flame.start(A, pick(*f)).map(drop),
        Op::Pop { frame, status } => {
            let status =
                [PopStatus::Completed, PopStatus::Failed, PopStatus::Blocked][*status as usize];
            let request = PopRequest {
                status,
                results: Some("r".into()),
                results_compacted: None,
                artifacts: vec![],
                decisions: vec![],
                reason: Some("why".into()),
            };
            flame.pop(A, Some(pick(*frame)), &request).map(drop)
        }
        Op::Resume(f) => flame.resume(A, pick(*f)).map(drop),
        Op::Retry(f) => flame.retry(A, pick(*f)).map(drop),
        Op::Invalidate(f) => flame.invalidate(A, pick(*f), None).map(drop),
        Op::Move { frame, parent, position } => {
            flame.move_frame(A, pick(*frame), parent.map(pick), *position).map(drop)
        }
        Op::Delete(f) => flame.delete(A, pick(*f)).map(drop),
        Op::Edit(f) => flame.edit(A, pick(*f), Some("edited"), None).map(drop),
        Op::Focus(f) => flame.focus(A, pick(*f)).map(drop),
        Op::Append(f) => flame.append(A, pick(*f), Role::Note, "note").map(drop),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_operation_keeps_the_tree_whole(ops in prop::collection::vec(op(), 1..40)) {
        let s = Scratch::new(99);
        s.flame.create_tree(Actor::Person, "Root", "r", None).unwrap();
        let mut known: Vec<FrameId> = frames(&s.flame).into_iter().map(|f| f.id).collect();
        for op in &ops {
            let before = s.flame.status(None).unwrap();
            let result = apply(&s.flame, &known, op);
            let after = s.flame.status(None).unwrap();

            if let Err(err) = &result {
                prop_assert_eq!(&before, &after, "refused {:?} ({}) changed the tree", op, err.message);
                continue;
            }
            let tree = FrameTree::new(after.tree.clone(), after.frames.iter().map(|e| e.frame.clone()).collect());
            if let Err(broken) = tree.check_invariants() {
                prop_assert!(false, "after {:?}: {}", op, broken);
            }
            let was: HashMap<&FrameId, Status> = before.frames.iter().map(|e| (&e.frame.id, e.frame.status)).collect();
            for entry in &after.frames {
                if let Some(old) = was.get(&entry.frame.id) {
                    prop_assert!(!old.is_terminal() || *old == entry.frame.status,
                        "{} went from {} to {} after {:?}", entry.frame.id, old, entry.frame.status, op);
                }
            }
            for entry in &after.frames {
                if !known.contains(&entry.frame.id) {
                    known.push(entry.frame.id.clone());
                }
            }
            known.retain(|id| after.frames.iter().any(|e| &e.frame.id == id));
        }
    }

    /// What `frame_detail` says may be done is what the operation then does: an action shown
    /// as not allowed is refused, and one shown as allowed is carried out wherever the actions
    /// see everything the operation checks (a move's target place and a delete's messages
    /// below are not, nor is a plan at a given position).
    #[test]
    fn allowed_actions_say_what_the_operations_do(ops in prop::collection::vec(op(), 1..40)) {
        let s = Scratch::new(98);
        s.flame.create_tree(Actor::Person, "Root", "r", None).unwrap();
        let mut known: Vec<FrameId> = frames(&s.flame).into_iter().map(|f| f.id).collect();
        for op in &ops {
            let pick = |i: usize| &known[i % known.len()];
            let target = match op {
                Op::Push(f) | Op::Start(f) | Op::Resume(f) | Op::Retry(f) | Op::Invalidate(f)
                | Op::Delete(f) | Op::Edit(f) | Op::Focus(f) | Op::Append(f) => pick(*f),
                Op::Plan { parent: f, .. } | Op::Pop { frame: f, .. } | Op::Move { frame: f, .. } => {
                    pick(*f)
                }
            };
            let actions = s.flame.frame_detail(target).unwrap().actions;
            let shown = match op {
                Op::Push(_) => Some(actions.push),
                Op::Start(_) => Some(actions.start),
                Op::Pop { .. } => Some(actions.pop),
                Op::Resume(_) => Some(actions.resume),
                Op::Retry(_) => Some(actions.retry),
                Op::Invalidate(_) => Some(actions.invalidate),
                Op::Edit(_) => Some(actions.edit),
                Op::Plan { position: None, .. } => Some(actions.plan),
                Op::Plan { .. } => (!actions.plan).then_some(false),
                Op::Move { .. } => (!actions.move_frame).then_some(false),
                Op::Delete(_) => (!actions.delete).then_some(false),
                Op::Focus(_) | Op::Append(_) => None,
            };
            let result = apply(&s.flame, &known, op);
            if let Some(shown) = shown {
                prop_assert_eq!(
                    result.is_ok(), shown,
                    "{:?} on a frame whose actions are {:?}: {:?}", op, actions, result.as_ref().err().map(|e| &e.message)
                );
            }
            let after = s.flame.status(None).unwrap();
            for entry in &after.frames {
                if !known.contains(&entry.frame.id) {
                    known.push(entry.frame.id.clone());
                }
            }
            known.retain(|id| after.frames.iter().any(|e| &e.frame.id == id));
        }
    }
}
