//! Over random trees and budgets: the context never exceeds its budget whenever what is never
//! dropped fits, and the same input always gives the same output.

use flame_model::{Frame, FrameId, Status};
use proptest::prelude::*;

use crate::{context, marked, message};

fn id(n: usize) -> String {
    format!("f{n:010}")
}

/// A random tree: frame i's parent is one of the frames before it. Statuses keep the rule that
/// an in-progress frame sits under an in-progress parent.
fn tree(parents: &[usize], statuses: &[u8]) -> Vec<Frame> {
    let mut frames: Vec<Frame> = vec![marked(&id(0), None, 0, Status::InProgress)];
    let mut children = vec![0u32];
    for (i, (&p, &s)) in parents.iter().zip(statuses).enumerate() {
        let parent = p % frames.len();
        let mut status = [
            Status::Completed,
            Status::Planned,
            Status::InProgress,
            Status::Failed,
            Status::Blocked,
            Status::Invalidated,
        ][s as usize % 6];
        if status == Status::InProgress && frames[parent].status != Status::InProgress {
            status = Status::Completed;
        }
        let position = children[parent];
        children[parent] += 1;
        children.push(0);
        frames.push(marked(&id(i + 1), Some(&id(parent)), position, status));
    }
    frames
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn contexts_stay_within_budget_and_are_deterministic(
        parents in prop::collection::vec(0usize..1000, 0..40),
        statuses in prop::collection::vec(0u8..6, 40),
        focus_pick in 0usize..1000,
        message_tokens in prop::collection::vec(1u64..400, 1..20),
        budget in 0u64..6000,
    ) {
        let frames = tree(&parents, &statuses);
        let focus: FrameId = frames[focus_pick % frames.len()].id.clone();
        let messages: Vec<_> = message_tokens.iter().enumerate().map(|(i, &t)| message(i as i64, &focus, &format!("m{i}"), t)).collect();
        let doc = context(&frames, &focus, &messages, budget);
        let again = context(&frames, &focus, &messages, budget);
        prop_assert_eq!(&doc, &again);

        // What is never dropped: the same context with every other part at its smallest.
        let essentials = context(&frames, &focus, &messages[messages.len() - 1..], 0).report.total_tokens;
        if essentials <= budget {
            prop_assert!(doc.report.fits, "essentials {} fit in {} but the context does not", essentials, budget);
            prop_assert!(doc.report.total_tokens <= budget);
        }
        prop_assert_eq!(doc.report.total_tokens, doc.report.sections.iter().map(|s| s.tokens).sum::<u64>());
        prop_assert_eq!(doc.messages.last().map(|m| m.id), messages.last().map(|m| m.id));
    }
}
