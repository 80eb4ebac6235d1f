//! Fitting the context to the token budget.
//!
//! The budget is the model's context window minus the reply reserve and the tool schemas. When
//! the whole context does not fit, parts give way in this fixed order, one at a time, until it
//! fits:
//!
//! 1. relatives (children of ancestors above F's parent) shrink to their titles, those of the
//!    farthest ancestors first, and among one ancestor's children the farthest from the path;
//! 2. ancestors between the root and F's parent shrink to their titles, farthest first;
//! 3. siblings shrink to their titles, the farthest from F first;
//! 4. F's children give their full results way to their compacted results, first child first;
//! 5. F's oldest messages are left out, one line saying how many and where the log is;
//! 6. relatives, then siblings, then F's children are left out entirely, in the same orders;
//! 7. ancestors between the root and F's parent keep only the element that holds the path;
//! 8. the line that says how many messages were left out goes too.
//!
//! Never given away: the preamble (with its sentence about the workspace), the project
//! instructions (bounded by their own limit), F itself (title, full criteria, partial results, log), the
//! root (the overall goal), F's parent, and F's newest message. If even those do not fit, the
//! context is what is left and the report says it does not fit.
//!
//! A context's cost is the sum of its parts' counts (the preamble, the instructions, each frame's XML, each
//! message's stored count plus [`crate::MESSAGE_OVERHEAD`]); parts are counted separately, so the
//! sum is what the budget is held to.

use serde::{Deserialize, Serialize};

use flame_model::OpeningReason;

use crate::mask::Masked;
use crate::render::Plan;
use crate::{
    ContextDoc, ContextInput, ContextReport, MESSAGE_OVERHEAD, OpeningReport, Section, SectionKind,
    SectionState,
};

/// The tokens a context may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Budget {
    /// The model's context window.
    pub context_window: u64,
    /// Tokens kept free for the reply.
    pub reply_reserve: u64,
    /// Tokens the tool definitions take.
    pub tool_schemas: u64,
}

impl Budget {
    /// A budget of exactly `tokens` for the context.
    pub fn of(tokens: u64) -> Budget {
        Budget { context_window: tokens, reply_reserve: 0, tool_schemas: 0 }
    }

    /// What is left for the context.
    pub fn available(&self) -> u64 {
        self.context_window.saturating_sub(self.reply_reserve).saturating_sub(self.tool_schemas)
    }
}

/// One step of the give-way order: a unit to a new state, or the oldest included message out.
#[derive(Debug, Clone, Copy)]
enum Step {
    Unit(usize, SectionState),
    DropOldestMessage,
    DropOmissionLine,
}

/// Fits the document `plan` and the focus's messages as `masked` sends them to the budget.
pub(crate) fn fit(input: &ContextInput<'_>, plan: &Plan<'_>, mut masked: Masked) -> ContextDoc {
    let budget = input.budget.available();
    let messages = masked.messages.as_slice();
    let preamble = crate::preamble(input.workspace);
    let preamble_tokens = crate::memo::count(input.encoding, &preamble);
    // The project instructions open the opening and never give way: their size is bounded.
    let instructions = input.instructions.map(crate::instructions::render);
    let instructions_text = instructions.as_ref().and_then(|i| i.text.as_deref());
    let instructions_tokens =
        instructions_text.map_or(0, |text| crate::memo::count(input.encoding, text));
    // What every context of this opening sends whatever gives way.
    let fixed = preamble_tokens + instructions_tokens;
    let mut states = vec![SectionState::Full; plan.units.len()];
    let message_cost = |m: &flame_model::Message| m.tokens + MESSAGE_OVERHEAD;
    let mut first_message = 0usize;
    let mut omission_line_kept = true;
    let log = input.log_paths.get(input.focus).cloned().unwrap_or_default();
    let omission_line = |omitted: usize| {
        format!(
            "[{omitted} earlier message{} of this frame {} left out to fit the context budget; the full history is in {log}]",
            if omitted == 1 { "" } else { "s" },
            if omitted == 1 { "was" } else { "were" },
        )
    };

    let units_total = |states: &[SectionState]| -> u64 {
        (0..states.len()).map(|u| plan.tokens(u, states[u])).sum()
    };
    // The omission line, when it is sent, costs at least its overhead.
    let line_floor =
        |first: usize, line: bool| if first > 0 && line { MESSAGE_OVERHEAD } else { 0 };
    // `kept` is the cost of messages[first..], kept as a running sum while messages go.
    let messages_total = |first: usize, kept: u64, line: bool| -> u64 {
        let note = if first > 0 && line {
            crate::memo::count(input.encoding, &omission_line(first)) + MESSAGE_OVERHEAD
        } else {
            0
        };
        kept + note
    };

    let steps = give_way_order(plan, messages.len());
    let mut next = 0;
    let mut unit_tokens = units_total(&states);
    let mut kept: u64 = messages.iter().map(|m| message_cost(m)).sum();
    let mut total = fixed + unit_tokens + messages_total(first_message, kept, omission_line_kept);
    while total > budget && next < steps.len() {
        match steps[next] {
            Step::Unit(u, state) => {
                // A later step never takes a unit back to a fuller state.
                if state > states[u] {
                    unit_tokens = unit_tokens - plan.tokens(u, states[u]) + plan.tokens(u, state);
                    states[u] = state;
                }
            }
            Step::DropOldestMessage => {
                kept -= message_cost(&messages[first_message]);
                first_message += 1;
            }
            Step::DropOmissionLine => omission_line_kept = false,
        }
        next += 1;
        // The omission line names how many messages were left out, so each step that leaves
        // one more out has a new line to count. While the rest is over the budget without it,
        // no line can make the context fit, and the line is not counted.
        let floor = fixed + unit_tokens + kept + line_floor(first_message, omission_line_kept);
        total = if floor > budget {
            floor
        } else {
            fixed + unit_tokens + messages_total(first_message, kept, omission_line_kept)
        };
    }
    // The total in full, the line counted, whichever way the loop ended.
    let total = fixed + unit_tokens + messages_total(first_message, kept, omission_line_kept);

    let document = plan.document(&states);
    let xml = match instructions_text {
        Some(text) => format!("{text}{document}"),
        None => document,
    };
    let mut sections = vec![Section {
        kind: SectionKind::Preamble,
        frame: None,
        label: "Preamble".to_owned(),
        tokens: preamble_tokens,
        state: SectionState::Full,
    }];
    if let Some(instructions) = &instructions
        && instructions_text.is_some()
    {
        let sent: Vec<&str> =
            instructions.files.iter().filter(|f| f.sent > 0).map(|f| f.path.as_str()).collect();
        sections.push(Section {
            kind: SectionKind::Instructions,
            frame: None,
            label: sent.join(", "),
            tokens: instructions_tokens,
            // A file cut at the limit is said in the text and the opening's report: the budget
            // did not cut it.
            state: SectionState::Full,
        });
    }
    for u in document_order(plan) {
        let unit = &plan.units[u];
        sections.push(Section {
            kind: unit.kind,
            frame: Some(unit.frame.id.clone()),
            label: unit.frame.title.clone(),
            tokens: plan.tokens(u, states[u]),
            state: states[u],
        });
    }
    sections.push(Section {
        kind: SectionKind::History,
        frame: Some(input.focus.clone()),
        label: format!("{} of {} messages", messages.len() - first_message, messages.len()),
        tokens: messages_total(first_message, kept, omission_line_kept),
        state: if first_message == 0 { SectionState::Full } else { SectionState::Compacted },
    });

    // A linear chat sends the instructions too.
    let linear_tokens = fixed + input.linear_message_tokens;
    let omission = (first_message > 0 && omission_line_kept).then(|| omission_line(first_message));
    let (masked_results, masked_calls, masked_tokens_saved) = masked.counts_from(first_message);
    ContextDoc {
        system: preamble,
        xml,
        omission,
        // The masked copy is the assembly's own: the messages sent are moved out of it.
        messages: masked.messages.split_off(first_message),
        previous_end: None,
        system_shared: crate::shared_preamble(input.workspace.is_some()).len(),
        is_parent: crate::focus_is_parent(input),
        report: ContextReport {
            focus: input.focus.clone(),
            budget,
            total_tokens: total,
            fits: total <= budget,
            sections,
            omitted_messages: first_message as u32,
            linear_tokens,
            masked_results,
            masked_calls,
            masked_tokens_saved,
            // A fresh opening; `next_call` says what it is to the frame.
            opening: OpeningReport {
                generation: 1,
                reason: OpeningReason::Entered,
                reason_text: OpeningReason::Entered.describe().to_owned(),
                made_at: 0,
                made_now: true,
                tokens: instructions_tokens + unit_tokens,
                noted_frames: 0,
                newly_masked: 0,
                cache_read_tokens: 0,
                cache_written_tokens: total,
                instructions: instructions.map(|i| i.files),
            },
            cache_hit_per_mille: None,
        },
    }
}

/// Units in the order they appear in the document.
pub(crate) fn document_order(plan: &Plan<'_>) -> Vec<usize> {
    fn walk(plan: &Plan<'_>, u: usize, out: &mut Vec<usize>) {
        out.push(u);
        for &child in &plan.units[u].children {
            if plan.units[child].on_path {
                walk(plan, child, out);
            } else {
                out.push(child);
            }
        }
    }
    let mut out = Vec::with_capacity(plan.units.len());
    walk(plan, plan.path[0], &mut out);
    out
}

/// The fixed give-way order of the module documentation, as steps.
fn give_way_order(plan: &Plan<'_>, messages: usize) -> Vec<Step> {
    let of_kind = |kind: SectionKind| {
        let mut units: Vec<usize> = (0..plan.units.len())
            .filter(|&u| plan.units[u].kind == kind && !plan.units[u].on_path)
            .collect();
        // Farthest first: the higher the ancestor, then the farther from the path, then the
        // later position (so the order is total and the same every time).
        units.sort_by(|&a, &b| {
            let (ua, ub) = (&plan.units[a], &plan.units[b]);
            ub.distance.cmp(&ua.distance).then(ub.frame.position.cmp(&ua.frame.position))
        });
        units
    };
    let relatives = of_kind(SectionKind::Relative);
    let siblings = of_kind(SectionKind::Sibling);
    let mut children: Vec<usize> =
        (0..plan.units.len()).filter(|&u| plan.units[u].kind == SectionKind::Child).collect();
    children.sort_by_key(|&u| plan.units[u].frame.position);
    // Ancestors strictly between the root and F's parent, farthest (closest to the root) first.
    let middle: Vec<usize> =
        if plan.path.len() > 3 { plan.path[1..plan.path.len() - 2].to_vec() } else { vec![] };

    let mut steps = Vec::new();
    steps.extend(relatives.iter().map(|&u| Step::Unit(u, SectionState::TitleOnly)));
    steps.extend(middle.iter().map(|&u| Step::Unit(u, SectionState::TitleOnly)));
    steps.extend(siblings.iter().map(|&u| Step::Unit(u, SectionState::TitleOnly)));
    steps.extend(children.iter().map(|&u| Step::Unit(u, SectionState::Compacted)));
    steps.extend((1..messages).map(|_| Step::DropOldestMessage));
    steps.extend(relatives.iter().map(|&u| Step::Unit(u, SectionState::Dropped)));
    steps.extend(siblings.iter().map(|&u| Step::Unit(u, SectionState::Dropped)));
    steps.extend(children.iter().map(|&u| Step::Unit(u, SectionState::Dropped)));
    steps.extend(middle.iter().map(|&u| Step::Unit(u, SectionState::Bare)));
    steps.push(Step::DropOmissionLine);
    steps
}
