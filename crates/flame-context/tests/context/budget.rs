//! The give-way order under a tight budget, the never-dropped items, and the report.

use flame_context::{SectionKind, SectionState};
use flame_model::{FrameId, Status};

use crate::{context, marked, message};

/// Root with two relatives (U1, U2) and a path Root → P → F; F has two siblings (S1, S2) and a
/// child (C), and ten messages of 100 tokens each.
fn family() -> (Vec<flame_model::Frame>, FrameId, Vec<flame_model::Message>) {
    let long = |mut f: flame_model::Frame| {
        f.results_compacted = Some(format!(
            "{} {}",
            f.results_compacted.clone().unwrap_or_default(),
            "compact words ".repeat(30)
        ));
        f.results = Some(format!(
            "{} {}",
            f.results.clone().unwrap_or_default(),
            "many more words in the full results ".repeat(60)
        ));
        f
    };
    let frames = vec![
        marked("f000000r00t", None, 0, Status::InProgress),
        long(marked("f00000000v1", Some("f000000r00t"), 0, Status::Completed)),
        long(marked("f00000000v2", Some("f000000r00t"), 1, Status::Completed)),
        marked("f00000000p0", Some("f000000r00t"), 2, Status::InProgress),
        long(marked("f00000000s1", Some("f00000000p0"), 0, Status::Completed)),
        marked("f00000000f0", Some("f00000000p0"), 1, Status::InProgress),
        long(marked("f00000000s2", Some("f00000000p0"), 2, Status::Completed)),
        long(marked("f00000000c0", Some("f00000000f0"), 0, Status::Completed)),
    ];
    let focus = FrameId::parse("f00000000f0").unwrap();
    let messages = (0..10).map(|i| message(i, &focus, &format!("message {i}"), 100)).collect();
    (frames, focus, messages)
}

fn state_of(doc: &flame_context::ContextDoc, id: &str) -> SectionState {
    doc.report
        .sections
        .iter()
        .find(|s| {
            s.frame.as_ref().map(FrameId::as_str) == Some(id) && s.kind != SectionKind::History
        })
        .unwrap()
        .state
}

#[test]
fn with_room_everything_is_full_and_the_sections_add_up() {
    let (frames, focus, messages) = family();
    let doc = context(&frames, &focus, &messages, 1_000_000);
    assert!(doc.report.fits);
    assert_eq!(doc.report.omitted_messages, 0);
    assert!(doc.report.sections.iter().all(|s| s.state == SectionState::Full));
    let sum: u64 = doc.report.sections.iter().map(|s| s.tokens).sum();
    assert_eq!(sum, doc.report.total_tokens);
    assert_eq!(doc.messages.len(), 10);
}

#[test]
fn parts_give_way_in_the_documented_order() {
    let (frames, focus, messages) = family();
    let full = context(&frames, &focus, &messages, 1_000_000).report.total_tokens;
    let mut previous_order = 0;
    // Squeeze step by step and check that each part only gives way after the ones before it.
    for budget in (0..=full).rev().step_by(25) {
        let doc = context(&frames, &focus, &messages, budget);
        let order = [
            state_of(&doc, "f00000000v1") >= SectionState::TitleOnly
                && state_of(&doc, "f00000000v2") >= SectionState::TitleOnly,
            state_of(&doc, "f00000000s1") >= SectionState::TitleOnly
                && state_of(&doc, "f00000000s2") >= SectionState::TitleOnly,
            state_of(&doc, "f00000000c0") >= SectionState::Compacted,
            doc.report.omitted_messages > 0,
        ];
        let reached = order.iter().take_while(|&&done| done).count();
        // A later stage never starts before every earlier one is complete.
        assert!(order.iter().skip(reached).all(|&done| !done), "budget {budget}: {order:?}");
        assert!(
            reached >= previous_order,
            "budget {budget}: went back from {previous_order} to {reached}"
        );
        previous_order = reached;
        if doc.report.fits {
            assert!(doc.report.total_tokens <= budget);
        }
    }
    assert_eq!(previous_order, 4, "the smallest budgets should reach the messages");
}

#[test]
fn never_dropped_items_stay_and_the_omission_line_names_the_log() {
    let (frames, focus, messages) = family();
    let doc = context(&frames, &focus, &messages, 600);
    assert!(doc.xml.contains("title-f000000r00t") && doc.xml.contains("criteria-f00000000f0"));
    assert!(doc.xml.contains("title-f00000000p0") && doc.xml.contains("criteria-f00000000p0"));
    assert_eq!(
        doc.messages.last().unwrap().content,
        "message 9",
        "the newest message is never dropped"
    );
    let omission = doc.omission.as_deref().unwrap();
    assert!(
        omission.contains(&format!("{} earlier messages", doc.report.omitted_messages)),
        "{omission}"
    );
    assert!(omission.contains("logs/t0000000000/f00000000f0.md"), "{omission}");
}

#[test]
fn a_budget_below_the_essentials_is_reported_as_not_fitting() {
    let (frames, focus, messages) = family();
    let doc = context(&frames, &focus, &messages, 50);
    assert!(!doc.report.fits);
    assert_eq!(doc.messages.len(), 1);
    assert!(doc.xml.contains("criteria-f00000000f0"));
}

#[test]
fn the_budget_subtracts_the_reply_reserve_and_tool_schemas() {
    let budget = flame_context::Budget {
        context_window: 128_000,
        reply_reserve: 8_000,
        tool_schemas: 1_500,
    };
    assert_eq!(budget.available(), 118_500);
    assert_eq!(
        flame_context::Budget { context_window: 10, reply_reserve: 20, tool_schemas: 0 }
            .available(),
        0
    );
}

/// What the omission line costs when `omitted` messages are left out, as the assembler counts it.
fn omission_cost(omitted: usize, log: &str) -> u64 {
    if omitted == 0 {
        return 0;
    }
    let line = format!(
        "[{omitted} earlier message{} of this frame {} left out to fit the context budget; the full history is in {log}]",
        if omitted == 1 { "" } else { "s" },
        if omitted == 1 { "was" } else { "were" },
    );
    flame_tokens::count(flame_tokens::Encoding::O200kBase, &line) + flame_context::MESSAGE_OVERHEAD
}

#[test]
fn the_fewest_messages_are_left_out_and_the_history_costs_what_is_sent() {
    let (frames, focus, _) = family();
    // Many small messages of uneven size, so the line's own cost (which grows with its count's
    // digits) decides some budgets.
    let messages: Vec<flame_model::Message> =
        (0..240).map(|i| message(i, &focus, &format!("m{i}"), 1 + (i as u64 * 7) % 13)).collect();
    let cost = |m: &flame_model::Message| m.tokens + flame_context::MESSAGE_OVERHEAD;
    let log = format!("logs/t0000000000/{focus}.md");
    let everything = context(&frames, &focus, &messages, 1_000_000).report.total_tokens;
    let mut omitted_seen = std::collections::BTreeSet::new();
    for budget in (0..everything).rev().step_by(7) {
        let doc = context(&frames, &focus, &messages, budget);
        let k = doc.report.omitted_messages as usize;
        let history = doc.report.sections.iter().find(|s| s.kind == SectionKind::History).unwrap();
        let sent: u64 = messages[k..].iter().map(cost).sum();
        let line = if doc.omission.is_some() { omission_cost(k, &log) } else { 0 };
        assert_eq!(history.tokens, sent + line, "budget {budget}");
        if !doc.report.fits || doc.omission.is_none() {
            continue;
        }
        assert!(doc.report.total_tokens <= budget);
        omitted_seen.insert(k);
        // Once messages are left out, only later steps (frames left out) change the rest.
        let later_steps = doc
            .report
            .sections
            .iter()
            .any(|s| matches!(s.state, SectionState::Dropped | SectionState::Bare));
        if k > 0 && !later_steps {
            // One message fewer left out would not have fitted.
            let one_fewer = doc.report.total_tokens - line
                + cost(&messages[k - 1])
                + omission_cost(k - 1, &log);
            assert!(
                one_fewer > budget,
                "budget {budget}: {k} left out, {k_1} would fit",
                k_1 = k - 1
            );
        }
    }
    assert!(omitted_seen.len() > 50, "{omitted_seen:?}");
}
